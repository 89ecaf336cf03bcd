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
	rt := newRaftTransport(tr, addr, time.Second, 2*snapshotOverhead)
	defer rt.Close()
	size := rt.maxSnapshot + 1
	err = rt.InstallSnapshot("b", "127.0.0.2:7000", &raft.InstallSnapshotRequest{LastLogIndex: 9, Size: size},
		&raft.InstallSnapshotResponse{}, bytes.NewReader(make([]byte, size)))
	if err == nil || !strings.Contains(err.Error(), "more than the") {
		t.Errorf("oversized snapshot: %v, want an error naming the bound", err)
	}
}

func TestHeartbeatsTakeTheFastPath(t *testing.T) {
	net := messaging.NewInmemNetwork()
	a, b := netip.MustParseAddrPort("127.0.0.1:7000"), netip.MustParseAddrPort("127.0.0.2:7000")
	ta, err := net.NewTransport(messaging.Options{ClusterName: "test", Addr: a})
	if err != nil {
		t.Fatal(err)
	}
	defer ta.Close()
	tb, err := net.NewTransport(messaging.Options{ClusterName: "test", Addr: b})
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	ra, rb := newRaftTransport(ta, a, 5*time.Second, messaging.DefaultMaxMessageSize), newRaftTransport(tb, b, 5*time.Second, messaging.DefaultMaxMessageSize)
	defer ra.Close()
	defer rb.Close()
	tb.Handle(messaging.VerbMetadata, rb.handle)
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
