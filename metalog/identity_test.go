package metalog

import (
	"context"
	"errors"
	"net/netip"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/cqld/cqld/messaging"
	"github.com/cqld/cqld/ring"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// wipe stops node i and restarts its transport at the same address with
// host id host and no data: a node whose data directory was wiped gets a
// new host id. Its Log is not opened.
func (c *testCluster) wipe(i int, host ring.HostID) {
	c.t.Helper()
	nd := c.nodes[i]
	if nd.log != nil {
		c.close(i)
	}
	nd.trans.Close()
	if err := os.RemoveAll(nd.dir); err != nil {
		c.t.Fatal(err)
	}
	tr, err := c.net.NewTransport(messaging.Options{ClusterName: "test", HostID: host, Addr: nd.addr})
	if err != nil {
		c.t.Fatal(err)
	}
	c.t.Cleanup(func() { tr.Close() })
	nd.trans, nd.host, nd.fsm = tr, host, newTestFSM()
}

// openWith opens node i's Log with options of its own.
func (c *testCluster) openWith(i int, mod func(*Options)) *Log {
	c.t.Helper()
	nd := c.nodes[i]
	nd.reg = prometheus.NewRegistry()
	opts := Options{Dir: nd.dir, Transport: nd.trans, HostID: nd.host, FSM: nd.fsm, Metrics: nd.reg, Timing: c.timing}
	mod(&opts)
	l, err := Open(opts)
	if err != nil {
		c.t.Fatalf("open node %d: %v", i+1, err)
	}
	nd.log = l
	return l
}

func (c *testCluster) addrs(is ...int) []netip.AddrPort {
	var out []netip.AddrPort
	for _, i := range is {
		out = append(out, c.nodes[i].addr)
	}
	return out
}

func join(l *Log) error {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	return l.Join(ctx)
}

// waitReached waits until the cluster's leader has reached l at the
// address it knows another server by: l refused an RPC for another
// server, or (the hazard) took entries into its log.
func waitReached(t *testing.T, l *Log) {
	t.Helper()
	eventually(t, func() bool { return testutil.ToFloat64(l.misaddressedRPCs) > 0 || l.raft.LastIndex() > 0 },
		"an RPC for another server")
}

// TestWipedNodeAtAMembersAddress: a node restarted without its data, so
// with a new host id, at the address of a member is refused when it
// joins, naming the member, and never follows the leader's RPCs for the
// member: its log stays empty while the cluster goes on.
func TestWipedNodeAtAMembersAddress(t *testing.T) {
	c := newCluster(t, 3, testTiming)
	c.start()
	propose(t, c.nodes[0].log, "a")
	c.waitConverged([]string{"a"})

	old := c.nodes[2].host
	c.wipe(2, testNodeHost(9))
	l := c.openWith(2, func(o *Options) { o.Seeds = c.addrs(0) })
	err := join(l)
	if !errors.Is(err, ErrAddressTaken) || !strings.Contains(err.Error(), "A node with address "+c.nodes[2].addr.String()+" already exists") ||
		!strings.Contains(err.Error(), old.String()) {
		t.Fatalf("join of the wiped node: %v, want ErrAddressTaken naming the address and %s", err, old)
	}
	waitReached(t, l)
	propose(t, c.nodes[0].log, "b")
	if n := l.raft.LastIndex(); n != 0 {
		t.Fatalf("the wiped node's log has %d entries: it followed the leader's RPCs for %s", n, old)
	}
	if got := c.nodes[2].fsm.state(); len(got) != 0 {
		t.Fatalf("the wiped node applied %q", got)
	}
}

// TestSecondNodeOnAMembersIP: a node on a member's IP with another
// storage port (a second cqld on one machine) is refused when it joins,
// naming the member; the cluster's configuration is unchanged and it goes
// on committing.
func TestSecondNodeOnAMembersIP(t *testing.T) {
	c := newCluster(t, 2, testTiming)
	c.start()
	propose(t, c.nodes[0].log, "a")

	addr := netip.AddrPortFrom(c.nodes[0].addr.Addr(), 7001)
	tr, err := c.net.NewTransport(messaging.Options{ClusterName: "test", HostID: testNodeHost(9), Addr: addr})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tr.Close() })
	l, err := Open(Options{Dir: t.TempDir(), Transport: tr, HostID: testNodeHost(9), FSM: newTestFSM(),
		Metrics: prometheus.NewRegistry(), Timing: c.timing, Seeds: c.addrs(0)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	err = join(l)
	if !errors.Is(err, ErrAddressTaken) || !strings.Contains(err.Error(), "one node per IP address") ||
		!strings.Contains(err.Error(), c.nodes[0].host.String()) {
		t.Fatalf("join on node 1's IP: %v, want ErrAddressTaken naming node 1", err)
	}
	f := c.nodes[0].log.raft.GetConfiguration()
	if err := f.Error(); err != nil {
		t.Fatal(err)
	}
	if n := len(f.Configuration().Servers); n != 2 {
		t.Fatalf("%d servers after the refused join, want 2: %+v", n, f.Configuration().Servers)
	}
	propose(t, c.nodes[1].log, "b")
	c.waitConverged([]string{"a", "b"})
}

// TestWipedFirstSeedJoinsRatherThanBootstraps: the first seed restarted
// without its data asks the other seeds before it bootstraps; one is a
// member of the running cluster, so it joins instead, and is refused
// because its address is its old self's.
func TestWipedFirstSeedJoinsRatherThanBootstraps(t *testing.T) {
	c := newCluster(t, 3, testTiming)
	c.start()
	propose(t, c.nodes[1].log, "a")
	c.waitConverged([]string{"a"})

	c.wipe(0, testNodeHost(9))
	conflicts := make(chan error, 1)
	l := c.openWith(0, func(o *Options) {
		o.Bootstrap, o.Seeds = true, c.addrs(0, 1, 2)
		o.OnConflict = func(err error) { conflicts <- err }
	})
	if l.Bootstrapped() {
		t.Fatal("the wiped first seed bootstrapped a cluster of its own")
	}
	if err := join(l); !errors.Is(err, ErrAddressTaken) {
		t.Fatalf("join of the wiped first seed: %v, want ErrAddressTaken", err)
	}
	waitReached(t, l)
	if n := l.raft.LastIndex(); n != 0 {
		t.Fatalf("the wiped first seed's log has %d entries", n)
	}
	select {
	case err := <-conflicts:
		t.Fatalf("a node with no configuration reported a conflict: %v", err)
	default:
	}
}

// TestWipedSoleSeedStops: a first seed that is its nodes' only seed has
// nobody to ask, bootstraps a cluster of its own, and learns of the
// running one when its leader reaches the address: it reports the
// conflict (the node must stop) and follows none of its RPCs.
func TestWipedSoleSeedStops(t *testing.T) {
	c := newCluster(t, 3, testTiming)
	c.start()
	propose(t, c.nodes[0].log, "a")
	c.waitConverged([]string{"a"})

	old := c.nodes[0].host
	c.wipe(0, testNodeHost(9))
	conflicts := make(chan error, 1)
	l := c.openWith(0, func(o *Options) {
		o.Bootstrap, o.Seeds = true, c.addrs(0)
		o.OnConflict = func(err error) { conflicts <- err }
	})
	if !l.Bootstrapped() {
		t.Fatal("a first seed with no other seed did not bootstrap")
	}
	// The survivors elect a leader, which reaches node1's address.
	leader := c.waitLeader(c.nodes[1:])
	propose(t, c.nodes[leader].log, "b")
	select {
	case err := <-conflicts:
		if !errors.Is(err, ErrAddressTaken) || !strings.Contains(err.Error(), old.String()) {
			t.Fatalf("conflict %v, want ErrAddressTaken naming %s", err, old)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the sole seed restarted wiped reported no conflict")
	}
	if got := c.nodes[0].fsm.state(); len(got) != 0 {
		t.Fatalf("the wiped seed applied the other cluster's %q", got)
	}
}

// TestFirstSeedBootstrapsBesideFreshSeeds: at a new cluster's first
// start, the other seeds are down or have no log yet, so the first seed
// bootstraps, and they join it.
func TestFirstSeedBootstrapsBesideFreshSeeds(t *testing.T) {
	c := newCluster(t, 3, testTiming)
	second := c.openWith(1, func(o *Options) { o.Seeds = c.addrs(0, 1, 2) })
	// node3's transport is up with no log on it: a probe gets no answer.
	first := c.openWith(0, func(o *Options) { o.Bootstrap, o.Seeds = true, c.addrs(0, 1, 2) })
	if !first.Bootstrapped() {
		t.Fatal("the first seed did not bootstrap")
	}
	if err := join(second); err != nil {
		t.Fatal(err)
	}
	propose(t, second, "a")
	c.waitConverged([]string{"a"})
}
