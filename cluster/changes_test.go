package cluster

import (
	"encoding/binary"
	"errors"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/cqld/cqld/ring"
)

// A member's status moves as a join, a leave and a given-up leave move it,
// one node at a time; every node applying the same entries refuses the
// same ones.
func TestStatusTransitions(t *testing.T) {
	s, err := OpenState(StateOptions{FS: vfs.NewMem(), Dir: "system", Schema: &listSchema{}})
	if err != nil {
		t.Fatal(err)
	}
	index := uint64(0)
	apply := func(e Entry) error {
		index++
		_, err := s.Apply(index, mustEntry(t, e))
		return err
	}
	member := func(m Member) Entry { return Entry{Kind: KindMember, Member: m} }
	for _, tc := range []struct {
		name     string
		entry    Entry
		want     error // nil: applies; errAny: any error
		statuses map[byte]Status
	}{
		{"first node normal", member(testMember(1, StatusNormal, 10)), nil, map[byte]Status{1: StatusNormal}},
		{"a new node cannot be leaving", member(testMember(2, StatusLeaving, 20)), errAny, nil},
		{"second joins", member(testMember(2, StatusJoining, 20)), nil, map[byte]Status{1: StatusNormal, 2: StatusJoining}},
		{"third cannot join meanwhile", member(testMember(3, StatusJoining, 30)), ErrMovementInProgress, nil},
		{"first cannot leave meanwhile", member(testMember(1, StatusLeaving, 10)), ErrMovementInProgress, nil},
		{"joining node cannot change tokens", member(testMember(2, StatusNormal, 21)), errAny, nil},
		{"joining node cannot leave", member(testMember(2, StatusLeaving, 20)), errAny, nil},
		{"second becomes normal", member(testMember(2, StatusNormal, 20)), nil, map[byte]Status{1: StatusNormal, 2: StatusNormal}},
		{"normal cannot join again", member(testMember(2, StatusJoining, 20)), errAny, nil},
		{"a node joins normal at once", member(testMember(3, StatusNormal, 30)), nil, nil},
		{"first leaves", member(testMember(1, StatusLeaving, 10)), nil, map[byte]Status{1: StatusLeaving, 2: StatusNormal, 3: StatusNormal}},
		{"no join while one leaves", member(testMember(4, StatusJoining, 40)), ErrMovementInProgress, nil},
		{"leave given up", member(testMember(1, StatusNormal, 10)), nil, map[byte]Status{1: StatusNormal, 2: StatusNormal, 3: StatusNormal}},
		{"leaves again", member(testMember(1, StatusLeaving, 10)), nil, nil},
		{"left", Entry{Kind: KindRemove, Member: Member{HostID: ring.HostID{1}}}, nil, map[byte]Status{2: StatusNormal, 3: StatusNormal}},
		{"now another may join", member(testMember(4, StatusJoining, 40)), nil, map[byte]Status{2: StatusNormal, 3: StatusNormal, 4: StatusJoining}},
	} {
		err := apply(tc.entry)
		switch {
		case tc.want == nil && err != nil:
			t.Fatalf("%s: %v", tc.name, err)
		case tc.want == errAny && err == nil, tc.want != nil && tc.want != errAny && !errors.Is(err, tc.want):
			t.Fatalf("%s: got %v, want %v", tc.name, err, tc.want)
		}
		if tc.statuses != nil {
			got := map[byte]Status{}
			for _, m := range s.Topology().Members() {
				got[m.HostID[0]] = m.Status
			}
			if len(got) != len(tc.statuses) {
				t.Fatalf("%s: members %v, want %v", tc.name, got, tc.statuses)
			}
			for id, st := range tc.statuses {
				if got[id] != st {
					t.Fatalf("%s: members %v, want %v", tc.name, got, tc.statuses)
				}
			}
		}
	}
	if m, ok := s.Topology().Moving(); !ok || m.HostID != (ring.HostID{4}) {
		t.Errorf("Moving = %v, %v", m.HostID, ok)
	}
}

var errAny = errors.New("any error")

// A node that applies its own removal records that it left, across a
// restart; another node's removal does not.
func TestStateRecordsLeaving(t *testing.T) {
	fs := vfs.NewMem()
	open := func() *State {
		s, err := OpenState(StateOptions{FS: fs, Dir: "system", Schema: &listSchema{}, Self: ring.HostID{1}})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	s := open()
	for i, e := range []Entry{
		{Kind: KindMember, Member: testMember(1, StatusNormal, 10)},
		{Kind: KindMember, Member: testMember(2, StatusNormal, 20)},
		{Kind: KindRemove, Member: Member{HostID: ring.HostID{2}}},
	} {
		if _, err := s.Apply(uint64(i+1), mustEntry(t, e)); err != nil {
			t.Fatal(err)
		}
	}
	if s.Left() || open().Left() {
		t.Fatal("another node's removal recorded as this node's")
	}
	if _, err := s.Apply(4, mustEntry(t, Entry{Kind: KindRemove, Member: Member{HostID: ring.HostID{1}}})); err != nil {
		t.Fatal(err)
	}
	if !s.Left() || !open().Left() {
		t.Fatal("this node's removal is not recorded")
	}
}

func FuzzTopologyMessages(f *testing.F) {
	f.Add([]byte{topologyVersion, topologyApplied})
	f.Add(binary.AppendUvarint(nil, 1<<40))
	f.Add([]byte{0x80})
	f.Fuzz(func(t *testing.T, b []byte) {
		if decodeTopologyRequest(b) == nil && (len(b) != 2 || b[1] != topologyApplied) {
			t.Fatalf("request % x accepted", b)
		}
		if v, err := decodeApplied(b); err == nil {
			if out := binary.AppendUvarint(nil, v); string(out) != string(b) && len(out) == len(b) {
				t.Fatalf("applied % x decodes to %d, encodes as % x", b, v, out)
			}
		}
	})
}
