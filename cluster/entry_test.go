package cluster

import (
	"bytes"
	"net/netip"
	"reflect"
	"testing"

	"github.com/cqld/cqld/auth"
	"github.com/cqld/cqld/ring"
)

func testMember(i byte, status Status, tokens ...int64) Member {
	return Member{
		HostID:     ring.HostID{i},
		Addr:       netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, 0, i}), 7000),
		DataCenter: "datacenter1",
		Rack:       "rack1",
		Tokens:     tokens,
		Status:     status,
	}
}

func TestEntryRoundTrip(t *testing.T) {
	for _, e := range []Entry{
		{Kind: KindSchema, Proposal: [16]byte{1}, Schema: []byte("CREATE KEYSPACE ks")},
		{Kind: KindSchema},
		{Kind: KindMember, Member: testMember(2, StatusJoining, -5, 7, 1<<62)},
		{Kind: KindMember, Proposal: [16]byte{9}, Member: testMember(3, StatusNormal)},
		{Kind: KindRemove, Member: Member{HostID: ring.HostID{4}}},
		{Kind: KindAuth, Proposal: [16]byte{7}, Auth: auth.AppendChanges(nil, []auth.Change{{Op: auth.OpCreateRole, Role: "r"}})},
		{Kind: KindAuthReset, Auth: auth.EncodeSnapshot(auth.Empty())},
	} {
		b, err := AppendEntry(nil, e)
		if err != nil {
			t.Fatal(err)
		}
		got, err := DecodeEntry(b)
		if err != nil {
			t.Fatalf("%+v: %v", e, err)
		}
		if e.Kind == KindMember && len(e.Member.Tokens) == 0 {
			e.Member.Tokens = []int64{}
		}
		if e.Kind == KindSchema && e.Schema == nil {
			e.Schema = nil
		}
		if !reflect.DeepEqual(got, e) {
			t.Errorf("round trip: got %+v, want %+v", got, e)
		}
		for n := range len(b) {
			opaque := e.Kind == KindSchema || e.Kind == KindAuth || e.Kind == KindAuthReset
			if _, err := DecodeEntry(b[:n]); err == nil && (!opaque || n < entryHeaderLen) {
				t.Errorf("%d of %d bytes decoded", n, len(b))
			}
		}
	}
}

func FuzzDecodeEntry(f *testing.F) {
	for _, e := range []Entry{
		{Kind: KindSchema, Schema: []byte("x")},
		{Kind: KindMember, Member: testMember(2, StatusNormal, 1, 2, 3)},
		{Kind: KindRemove, Member: Member{HostID: ring.HostID{4}}},
		{Kind: KindAuth, Auth: auth.AppendChanges(nil, []auth.Change{{Op: auth.OpGrantRole, Role: "a", Grantee: "b"}})},
	} {
		b, _ := AppendEntry(nil, e)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		e, err := DecodeEntry(b)
		if err != nil {
			return
		}
		again, err := AppendEntry(nil, e)
		if err != nil {
			t.Fatalf("decoded %+v does not encode: %v", e, err)
		}
		if !bytes.Equal(again, b) {
			t.Fatalf("re-encoding differs:\n%x\n%x", again, b)
		}
	})
}
