package metalog

import (
	"bytes"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/cqld/cqld/messaging"
	"github.com/hashicorp/raft"
)

func TestSnapshotOverMaxMessageSizeIsRefused(t *testing.T) {
	net := messaging.NewInmemNetwork()
	addr := netip.MustParseAddrPort("127.0.0.1:7000")
	tr, err := net.NewTransport(messaging.Options{ClusterName: "test", Addr: addr})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	rt := newRaftTransport(tr, "a", addr, time.Second, 2*snapshotOverhead)
	defer rt.Close()
	size := rt.maxSnapshot + 1
	err = rt.InstallSnapshot("b", "127.0.0.2:7000", &raft.InstallSnapshotRequest{LastLogIndex: 9, Size: size},
		&raft.InstallSnapshotResponse{}, bytes.NewReader(make([]byte, size)))
	if err == nil || !strings.Contains(err.Error(), "more than the") {
		t.Errorf("oversized snapshot: %v, want an error naming the bound", err)
	}
}

func TestHeartbeatsTakeTheFastPath(t *testing.T) {
	a, b, _, ra, rb := raftTransportPair(t)
	// Nothing reads rb.Consumer(): only the heartbeat handler can answer.
	rb.SetHeartbeatHandler(func(rpc raft.RPC) {
		rpc.Respond(&raft.AppendEntriesResponse{Term: rpc.Command.(*raft.AppendEntriesRequest).Term, Success: true}, nil)
	})
	var resp raft.AppendEntriesResponse
	req := &raft.AppendEntriesRequest{RPCHeader: raft.RPCHeader{ID: []byte("a"), Addr: []byte(a.String())}, Term: 3}
	if err := ra.AppendEntries("b", raft.ServerAddress(b.String()), req, &resp); err != nil {
		t.Fatal(err)
	}
	if !resp.Success || resp.Term != 3 {
		t.Errorf("heartbeat response %+v", resp)
	}
}

// TestRaftRPCsNameTheirServer: an RPC for another server than the
// receiver is refused (codeWrongServer) and reported, before raft sees
// it; one that names no server is refused as malformed.
func TestRaftRPCsNameTheirServer(t *testing.T) {
	a, b, ta, ra, rb := raftTransportPair(t)
	type refusal struct {
		from netip.AddrPort
		to   raft.ServerID
	}
	refused := make(chan refusal, 1)
	rb.misaddressed = func(from netip.AddrPort, _ any, to raft.ServerID) { refused <- refusal{from, to} }
	rb.SetHeartbeatHandler(func(rpc raft.RPC) {
		t.Error("raft got an RPC for another server")
		rpc.Respond(&raft.AppendEntriesResponse{Success: true}, nil)
	})

	req := &raft.AppendEntriesRequest{RPCHeader: raft.RPCHeader{ID: []byte("a"), Addr: []byte(a.String())}, Term: 3}
	err := ra.AppendEntries("b-before-the-wipe", raft.ServerAddress(b.String()), req, &raft.AppendEntriesResponse{})
	if code, _ := remoteCode(err); code != codeWrongServer || !strings.Contains(err.Error(), "b-before-the-wipe") {
		t.Fatalf("RPC for another server: %v, want code %d naming it", err, codeWrongServer)
	}
	if r := <-refused; r.from != a || r.to != "b-before-the-wipe" {
		t.Fatalf("refusal reported as %+v", r)
	}

	bare, err := encodeMessage(req)
	if err != nil {
		t.Fatal(err)
	}
	_, err = ta.Request(t.Context(), b, messaging.VerbMetadata, bare)
	if code, _ := remoteCode(err); code != codeBadMessage {
		t.Fatalf("RPC naming no server: %v, want code %d", err, codeBadMessage)
	}
}

// raftTransportPair connects raft transports of servers "a" and "b" at
// addresses a and b over an in-memory network, b serving; ta is a's
// messaging transport.
func raftTransportPair(t *testing.T) (a, b netip.AddrPort, ta *messaging.InmemTransport, ra, rb *raftTransport) {
	t.Helper()
	net := messaging.NewInmemNetwork()
	a, b = netip.MustParseAddrPort("127.0.0.1:7000"), netip.MustParseAddrPort("127.0.0.2:7000")
	ta, err := net.NewTransport(messaging.Options{ClusterName: "test", Addr: a})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ta.Close() })
	tb, err := net.NewTransport(messaging.Options{ClusterName: "test", Addr: b})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tb.Close() })
	ra, rb = newRaftTransport(ta, "a", a, 5*time.Second, messaging.DefaultMaxMessageSize), newRaftTransport(tb, "b", b, 5*time.Second, messaging.DefaultMaxMessageSize)
	t.Cleanup(func() { ra.Close(); rb.Close() })
	tb.Handle(messaging.VerbMetadata, rb.handle)
	return a, b, ta, ra, rb
}

func TestRPCName(t *testing.T) {
	for m, want := range map[any]string{
		&addressed{rpc: &raft.AppendEntriesRequest{}}: "AppendEntriesRequest",
		&raft.RequestVoteRequest{}:                    "RequestVoteRequest",
		&probe{}:                                      "probe",
	} {
		if got := rpcName(m); got != want {
			t.Errorf("rpcName(%T) = %q, want %q", m, got, want)
		}
	}
}
