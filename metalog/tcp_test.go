package metalog

import (
	"context"
	"errors"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cqld/cqld/messaging"
)

// Two nodes over real TCP transports on 127.0.0.1 and 127.0.0.2.
func TestOverTCP(t *testing.T) {
	var logs []*Log
	var fsms []*testFSM
	var seed netip.AddrPort
	for i := range 2 {
		host := testNodeHost(i + 1)
		tr, err := messaging.ListenTCP(messaging.Options{ClusterName: "test", HostID: host,
			Addr: netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, 0, byte(i + 1)}), 0)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { tr.Close() })
		fsm := newTestFSM()
		opts := Options{Dir: t.TempDir(), Transport: tr, HostID: host, FSM: fsm, Bootstrap: i == 0, Timing: testTiming}
		if i > 0 {
			opts.Seeds = []netip.AddrPort{seed}
		}
		l, err := Open(opts)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close() })
		seed = tr.Addr()
		logs, fsms = append(logs, l), append(fsms, fsm)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := logs[1].Join(ctx); err != nil {
		t.Fatal(err)
	}
	propose(t, logs[1], "a")
	propose(t, logs[0], "b")
	eventually(t, func() bool {
		return slices.Equal(fsms[0].state(), []string{"a", "b"}) && slices.Equal(fsms[1].state(), []string{"a", "b"})
	}, "both nodes to apply [a b]")
}

// A node whose seeds all belong to another cluster gives up its Join
// with an error naming both cluster names, rather than retrying forever.
func TestJoinRefusedByAForeignCluster(t *testing.T) {
	open := func(cluster string, host int, seeds []netip.AddrPort) (*Log, *messaging.TCPTransport) {
		tr, err := messaging.ListenTCP(messaging.Options{ClusterName: cluster, HostID: testNodeHost(host),
			Addr: netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, 0, byte(host)}), 0)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { tr.Close() })
		l, err := Open(Options{Dir: t.TempDir(), Transport: tr, HostID: testNodeHost(host), FSM: newTestFSM(),
			Bootstrap: seeds == nil, Seeds: seeds, Timing: testTiming})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close() })
		return l, tr
	}
	_, seed := open("prod", 1, nil)
	l, _ := open("staging", 2, []netip.AddrPort{seed.Addr()})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	err := l.Join(ctx)
	if !errors.Is(err, messaging.ErrClusterMismatch) || !strings.Contains(err.Error(), `"prod"`) ||
		!strings.Contains(err.Error(), `"staging"`) || ctx.Err() != nil {
		t.Fatalf("join through a seed of another cluster: %v, want ErrClusterMismatch naming both, before the deadline", err)
	}
}
