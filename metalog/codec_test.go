package metalog

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

func testHeader() raft.RPCHeader {
	return raft.RPCHeader{ProtocolVersion: raft.ProtocolVersionMax, ID: []byte("ab000000-0000-0000-0000-000000000001"), Addr: []byte("127.0.0.1:7000")}
}

func testConfiguration() raft.Configuration {
	return raft.Configuration{Servers: []raft.Server{
		{Suffrage: raft.Voter, ID: "a", Address: "127.0.0.1:7000"},
		{Suffrage: raft.Nonvoter, ID: "b", Address: "127.0.0.2:7000"},
	}}
}

// testMessages are one of each message, as encodeMessage takes them.
func testMessages() []any {
	h := testHeader()
	when := time.Unix(0, 1_700_000_000_123_456_789)
	return []any{
		&raft.AppendEntriesRequest{RPCHeader: h, Term: 7, Leader: []byte("127.0.0.1:7000"), PrevLogEntry: 41, PrevLogTerm: 6,
			LeaderCommitIndex: 40, Entries: []*raft.Log{
				{Index: 42, Term: 7, Type: raft.LogCommand, Data: []byte("entry"), AppendedAt: when},
				{Index: 43, Term: 7, Type: raft.LogNoop},
				{Index: 44, Term: 7, Type: raft.LogConfiguration, Data: raft.EncodeConfiguration(testConfiguration()), Extensions: []byte("x")},
			}},
		&raft.AppendEntriesRequest{RPCHeader: h, Term: 7, Leader: []byte("127.0.0.1:7000")},
		&raft.AppendEntriesResponse{RPCHeader: h, Term: 7, LastLog: 44, Success: true, NoRetryBackoff: true},
		&raft.RequestVoteRequest{RPCHeader: h, Term: 8, Candidate: []byte("c"), LastLogIndex: 44, LastLogTerm: 7, LeadershipTransfer: true},
		&raft.RequestVoteResponse{RPCHeader: h, Term: 8, Granted: true},
		&raft.RequestPreVoteRequest{RPCHeader: h, Term: 9, LastLogIndex: 44, LastLogTerm: 7},
		&raft.RequestPreVoteResponse{RPCHeader: h, Term: 9, Granted: true},
		&installSnapshot{req: raft.InstallSnapshotRequest{RPCHeader: h, SnapshotVersion: 1, Term: 9, Leader: []byte("l"),
			LastLogIndex: 50, LastLogTerm: 9, Configuration: raft.EncodeConfiguration(testConfiguration()),
			ConfigurationIndex: 44, Size: 5}, data: []byte("state")},
		&raft.InstallSnapshotResponse{RPCHeader: h, Term: 9, Success: true},
		&raft.TimeoutNowRequest{RPCHeader: h},
		&raft.TimeoutNowResponse{RPCHeader: h},
		&forward{kind: kindPropose, hops: 1, entry: seal(proposalID{1, 2, 3}, []byte("create table"))},
		&forward{kind: kindJoin, id: "ab000000-0000-0000-0000-000000000002", addr: "127.0.0.2:7000"},
		&forward{kind: kindRemove, id: "ab000000-0000-0000-0000-000000000003"},
		&indexResponse{index: 1 << 40},
		&addressed{to: "ab000000-0000-0000-0000-000000000002", rpc: &raft.AppendEntriesRequest{RPCHeader: h, Term: 7,
			Leader: []byte("127.0.0.1:7000"), Entries: []*raft.Log{{Index: 1, Term: 7, Type: raft.LogNoop}}}},
		&addressed{to: "ab000000-0000-0000-0000-000000000003", rpc: &raft.RequestPreVoteRequest{RPCHeader: h, Term: 9}},
		&addressed{to: "ab000000-0000-0000-0000-000000000003", rpc: &installSnapshot{req: raft.InstallSnapshotRequest{
			RPCHeader: h, SnapshotVersion: 1, Term: 9, Configuration: raft.EncodeConfiguration(testConfiguration()), Size: 2},
			data: []byte("st")}},
		&probe{},
		&configuration{cfg: testConfiguration()},
	}
}

func TestAddressedCarriesOnlyRPCRequests(t *testing.T) {
	for _, inner := range []any{&raft.AppendEntriesResponse{}, &probe{}, &indexResponse{}, &forward{kind: kindRemove, id: "x"},
		&addressed{to: "a", rpc: &raft.TimeoutNowRequest{}}} {
		if _, err := encodeMessage(&addressed{to: "a", rpc: inner}); err == nil {
			t.Errorf("an addressed %T encodes", inner)
		}
		e := &encoder{}
		e.byte(codecVersion)
		e.byte(byte(kindAddressed))
		e.string("a")
		b, err := encodeMessage(inner)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := decodeMessage(append(e.b, b...)); !errors.Is(err, ErrBadMessage) {
			t.Errorf("an addressed %T decodes: %v", inner, err)
		}
	}
}

func TestMessagesRoundTrip(t *testing.T) {
	for _, m := range testMessages() {
		b, err := encodeMessage(m)
		if err != nil {
			t.Fatalf("encode %T: %v", m, err)
		}
		got, err := decodeMessage(b)
		if err != nil {
			t.Fatalf("decode %T: %v", m, err)
		}
		if !reflect.DeepEqual(got, m) {
			t.Errorf("%T round trip:\n got %+v\nwant %+v", m, got, m)
		}
		// Every proper prefix is refused, never a panic.
		for n := range len(b) {
			if _, err := decodeMessage(b[:n]); !errors.Is(err, ErrBadMessage) {
				t.Errorf("%T cut to %d of %d bytes: %v, want ErrBadMessage", m, n, len(b), err)
			}
		}
		if _, err := decodeMessage(append(b, 0)); !errors.Is(err, ErrBadMessage) {
			t.Errorf("%T with a trailing byte: %v, want ErrBadMessage", m, err)
		}
	}
}

func TestDecodeRefusesWhatRaftWouldPanicOn(t *testing.T) {
	// A configuration entry's data is never raft's msgpack from a peer:
	// it is this codec's, re-encoded for raft.
	e := &encoder{}
	e.byte(codecVersion)
	e.byte(byte(kindAppendEntries))
	e.header(testHeader())
	for range 5 {
		e.uint(1)
	}
	e.uint(1) // one entry
	e.uint(1)
	e.uint(1)
	e.byte(byte(raft.LogConfiguration))
	e.uint(1 << 30) // a count of servers that the bytes cannot hold
	if _, err := decodeMessage(e.b); !errors.Is(err, ErrBadMessage) {
		t.Errorf("configuration with a huge count: %v, want ErrBadMessage", err)
	}

	for _, tc := range []struct {
		name string
		m    any
	}{
		{"deprecated log type", &raft.AppendEntriesRequest{Entries: []*raft.Log{{Type: raft.LogAddPeerDeprecated}}}},
		{"snapshot version 0", &installSnapshot{req: raft.InstallSnapshotRequest{Configuration: raft.EncodeConfiguration(raft.Configuration{})}}},
		{"two hops", &forward{kind: kindRemove, hops: 2, id: "x"}},
	} {
		b, err := encodeMessage(tc.m)
		if err != nil {
			t.Fatalf("%s: encode: %v", tc.name, err)
		}
		if _, err := decodeMessage(b); !errors.Is(err, ErrBadMessage) {
			t.Errorf("%s: %v, want ErrBadMessage", tc.name, err)
		}
	}
}

func TestEnvelope(t *testing.T) {
	id := proposalID{9, 8, 7}
	gotID, entry, err := unseal(seal(id, []byte("e")))
	if err != nil || gotID != id || string(entry) != "e" {
		t.Errorf("unseal(seal) = %v, %q, %v", gotID, entry, err)
	}
	for _, b := range [][]byte{nil, {codecVersion}, append([]byte{2}, make([]byte, 16)...)} {
		if _, _, err := unseal(b); !errors.Is(err, ErrBadMessage) {
			t.Errorf("unseal(%x): %v, want ErrBadMessage", b, err)
		}
	}
}

func TestParseHostID(t *testing.T) {
	h := testNodeHost(3)
	got, err := parseHostID(h.String())
	if err != nil || got != h {
		t.Errorf("parseHostID(%s) = %v, %v", h, got, err)
	}
	for _, s := range []string{"", "x", "ab000000-0000-0000-0000-00000000000g", "ab0000000000-0000-0000-0000-00000000"} {
		if _, err := parseHostID(s); err == nil {
			t.Errorf("parseHostID(%q) succeeded", s)
		}
	}
}

func TestFullAppendEntriesFitsInAMessage(t *testing.T) {
	const maxMessage = 1 << 20
	entry := seal(proposalID{}, make([]byte, maxEntrySize(maxMessage)))
	req := &raft.AppendEntriesRequest{RPCHeader: testHeader(), Term: 1 << 40, Leader: make([]byte, maxNameLen),
		PrevLogEntry: 1 << 62, PrevLogTerm: 1 << 40, LeaderCommitIndex: 1 << 62}
	for i := range maxAppendEntries {
		req.Entries = append(req.Entries, &raft.Log{Index: 1<<62 + uint64(i), Term: 1 << 40, Data: entry,
			AppendedAt: time.Unix(1<<33, 999_999_999)})
	}
	b, err := encodeMessage(req)
	if err != nil {
		t.Fatal(err)
	}
	// The messaging header is 25 bytes.
	if len(b)+25 > maxMessage {
		t.Errorf("%d full entries encode to %d bytes, over the %d-byte message", maxAppendEntries, len(b), maxMessage)
	}
}
