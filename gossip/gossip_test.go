package gossip

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/cqld/cqld/messaging"
)

func TestDiscoverFromOneSeed(t *testing.T) {
	_, nodes := inmemCluster(t, 3)
	for _, n := range nodes {
		members := n.g.Members()
		if len(members) != 3 {
			t.Fatalf("%s: %d members, want 3: %+v", n.tr.Addr(), len(members), members)
		}
		if members[0].HostID != n.id {
			t.Errorf("%s: first member %s, want itself", n.tr.Addr(), members[0].HostID)
		}
		for k, o := range nodes {
			m, ok := n.member(o.id)
			if !ok || !m.Up || m.Addr != o.tr.Addr() || m.Meta != testMeta(k+1) {
				t.Errorf("%s sees %s as %+v (found %v), want up at %s with %+v", n.tr.Addr(), o.id, m, ok, o.tr.Addr(), testMeta(k+1))
			}
			if o != n {
				waitFor(t, n.tr.Addr().String()+" delivering Joined", func() bool { return slices.Contains(n.kindsFor(o.id), Joined) })
			}
		}
		select {
		case <-n.g.Joined():
		default:
			t.Errorf("%s: Joined not closed", n.tr.Addr())
		}
	}
}

func TestMetaChangesPropagate(t *testing.T) {
	_, nodes := inmemCluster(t, 3)
	n2 := nodes[1]
	n2.setMeta(func(m *Meta) {
		m.SchemaVersion = [16]byte{0xab, 0xcd}
		m.Load = 1 << 40
		m.Status = "LEAVING"
	})
	want := n2.currentMeta()
	for _, n := range []*node{nodes[0], nodes[2]} {
		waitFor(t, n.tr.Addr().String()+" seeing node 2's new metadata", func() bool {
			m, ok := n.member(n2.id)
			return ok && m.Meta == want
		})
		waitFor(t, n.tr.Addr().String()+" delivering MetaChanged", func() bool {
			return slices.Contains(n.kindsFor(n2.id), MetaChanged)
		})
	}
	if m, _ := n2.member(n2.id); m.Meta != want {
		t.Errorf("node 2's own member has %+v, want %+v", m.Meta, want)
	}
}

// TestUpdateMetaDoesNotWaitForGossip has two nodes whose gossip rounds
// and probes, the packets news rides on, never come: UpdateMeta queues
// its news and returns, as a schema change applying must not stall on
// gossip's pace, and the news still reaches the peer, by the next
// full-state exchange.
func TestUpdateMetaDoesNotWaitForGossip(t *testing.T) {
	net := messaging.NewInmemNetwork()
	slow := fastTiming()
	slow.GossipInterval = time.Hour
	slow.ProbeInterval = time.Hour
	n1 := startNode(t, inmemTransport(t, net, 1, hostID(1)), nodeConfig{
		id: hostID(1), seeds: []netip.AddrPort{inmemAddr(1)}, meta: testMeta(1), timing: &slow})
	n2 := startNode(t, inmemTransport(t, net, 2, hostID(2)), nodeConfig{
		id: hostID(2), seeds: []netip.AddrPort{inmemAddr(1)}, meta: testMeta(2), timing: &slow})
	waitAllSee(t, []*node{n1, n2})

	done := make(chan struct{})
	go func() {
		defer close(done)
		n2.setMeta(func(m *Meta) { m.SchemaVersion = [16]byte{0x5c} })
	}()
	select {
	case <-done:
	case <-time.After(waitLimit):
		t.Fatalf("UpdateMeta still waiting after %v: it waits for gossip rounds", waitLimit)
	}
	want := n2.currentMeta()
	waitFor(t, "node 1 seeing node 2's new metadata", func() bool {
		m, ok := n1.member(n2.id)
		return ok && m.Meta == want
	})
}

// TestMetaChangesInQuickSuccession changes every node's metadata at
// once, round after round, as a schema change does on each node that
// applies it: every round's changes must reach every peer by gossip
// alone (no full-state exchange repairs a lost one here).
func TestMetaChangesInQuickSuccession(t *testing.T) {
	timing := fastTiming()
	timing.PushPullInterval = time.Hour
	net := messaging.NewInmemNetwork()
	var nodes []*node
	for k := 1; k <= 3; k++ {
		nodes = append(nodes, startNode(t, inmemTransport(t, net, k, hostID(k)), nodeConfig{
			id: hostID(k), seeds: []netip.AddrPort{inmemAddr(1)}, meta: testMeta(k), timing: &timing}))
	}
	waitAllSee(t, nodes)
	for round := 1; round <= 30; round++ {
		var wg sync.WaitGroup
		for _, n := range nodes {
			wg.Add(1)
			go func() {
				defer wg.Done()
				n.setMeta(func(m *Meta) { m.SchemaVersion = [16]byte{byte(round), 1} })
				n.setMeta(func(m *Meta) { m.SchemaVersion = [16]byte{byte(round), 2} })
			}()
		}
		wg.Wait()
		for _, n := range nodes {
			for _, o := range nodes {
				want := o.currentMeta()
				waitFor(t, fmt.Sprintf("round %d: %s seeing %s's metadata", round, n.tr.Addr(), o.tr.Addr()), func() bool {
					m, ok := n.member(o.id)
					return ok && m.Meta == want
				})
			}
		}
	}
	for _, n := range nodes {
		t.Logf("%s: changes queued again: %v", n.tr.Addr(), testutil.ToFloat64(n.metrics.MetaRespread))
	}
}

// TestPartitionedNodeDownThenUp cuts a node off, as a partition does
// (messages lost) and as refused connections do (sends fail at once).
func TestPartitionedNodeDownThenUp(t *testing.T) {
	for _, cut := range []string{"partition", "disconnect"} {
		t.Run(cut, func(t *testing.T) { testPartitionedNodeDownThenUp(t, cut) })
	}
}

func testPartitionedNodeDownThenUp(t *testing.T, cut string) {
	net, nodes := inmemCluster(t, 3)
	a, b, c := nodes[0], nodes[1], nodes[2]
	if cut == "partition" {
		net.Partition([]netip.AddrPort{c.tr.Addr()}, []netip.AddrPort{a.tr.Addr(), b.tr.Addr()})
	} else {
		net.Disconnect(c.tr.Addr(), a.tr.Addr())
		net.Disconnect(c.tr.Addr(), b.tr.Addr())
	}
	for _, n := range []*node{a, b} {
		waitFor(t, n.tr.Addr().String()+" holding the partitioned node down", func() bool { return !n.g.Alive(c.id) })
	}
	waitFor(t, "the partitioned node holding the others down", func() bool { return !c.g.Alive(a.id) && !c.g.Alive(b.id) })
	if m, ok := a.member(c.id); !ok || m.Up {
		t.Fatalf("a down node must stay a member, held down: %+v, %v", m, ok)
	}
	// Stay apart past GossipToTheDeadTime, so that only reconnection
	// brings the sides back together.
	time.Sleep(2 * fastTiming().GossipToTheDeadTime)
	net.Heal()
	waitAllSee(t, nodes)
	for _, n := range []*node{a, b} {
		// Events are delivered after the member's state changes: wait
		// for the Up that follows the Down.
		sawUp := func(kinds []EventKind) bool {
			down := slices.Index(kinds, Down)
			return down >= 0 && slices.Contains(kinds[down:], Up)
		}
		waitFor(t, n.tr.Addr().String()+" delivering Up after Down", func() bool { return sawUp(n.kindsFor(c.id)) })
		if kinds := n.kindsFor(c.id); kinds[0] != Joined || !sawUp(kinds) {
			t.Errorf("%s saw %v about the partitioned node, want joined, …, down, …, up", n.tr.Addr(), kinds)
		}
	}
	if got := testutil.ToFloat64(a.metrics.Members.WithLabelValues("up")); got != 3 {
		t.Errorf("members{state=up} = %v, want 3", got)
	}
}

func TestLeave(t *testing.T) {
	_, nodes := inmemCluster(t, 3)
	n3 := nodes[2]
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := n3.g.Leave(ctx); err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes[:2] {
		waitFor(t, n.tr.Addr().String()+" seeing node 3 leave", func() bool {
			_, ok := n.member(n3.id)
			return !ok && slices.Contains(n.kindsFor(n3.id), Left)
		})
	}
}

func TestSeedsUnreachableRetry(t *testing.T) {
	net := messaging.NewInmemNetwork()
	n2 := startNode(t, inmemTransport(t, net, 2, hostID(2)), nodeConfig{id: hostID(2), seeds: []netip.AddrPort{inmemAddr(1)}, meta: testMeta(2)})
	waitFor(t, "the retry logged", func() bool {
		return strings.Contains(n2.logs.String(), "seeds 127.0.0.1:7000 unreachable, retrying in 100ms")
	})
	select {
	case <-n2.g.Joined():
		t.Fatal("joined with no seed up")
	default:
	}
	n1 := startNode(t, inmemTransport(t, net, 1, hostID(1)), nodeConfig{id: hostID(1), seeds: []netip.AddrPort{inmemAddr(1)}, meta: testMeta(1)})
	waitAllSee(t, []*node{n1, n2})
	<-n2.g.Joined()
	if n := strings.Count(n2.logs.String(), "unreachable, retrying in 50ms"); n != 1 {
		t.Errorf("the first backoff step logged %d times, want once", n)
	}
}

func TestSeedStartsAlone(t *testing.T) {
	net := messaging.NewInmemNetwork()
	n1 := startNode(t, inmemTransport(t, net, 1, hostID(1)), nodeConfig{id: hostID(1),
		seeds: []netip.AddrPort{inmemAddr(1), inmemAddr(2)}, meta: testMeta(1)})
	waitFor(t, "the seed starting alone", func() bool {
		select {
		case <-n1.g.Joined():
			return true
		default:
			return false
		}
	})
	// The other seed comes up later and the two find each other.
	n2 := startNode(t, inmemTransport(t, net, 2, hostID(2)), nodeConfig{id: hostID(2),
		seeds: []netip.AddrPort{inmemAddr(1), inmemAddr(2)}, meta: testMeta(2)})
	waitAllSee(t, []*node{n1, n2})
}

func TestHostIDConflictRefused(t *testing.T) {
	net, nodes := inmemCluster(t, 2)
	n1, n2 := nodes[0], nodes[1]
	// A third node claims node 2's host id from another address.
	impostor := startNode(t, inmemTransport(t, net, 3, n2.id), nodeConfig{id: n2.id, seeds: []netip.AddrPort{inmemAddr(1)}, meta: testMeta(3)})
	waitFor(t, "node 1 refusing the impostor", func() bool {
		return testutil.ToFloat64(n1.metrics.Refused.WithLabelValues(RefusedHostID)) > 0
	})
	waitFor(t, "the refusal logged", func() bool { return strings.Contains(n1.logs.String(), "node refused") })
	// Some more rounds, and node 1 still knows node 2 at its own address.
	time.Sleep(5 * fastTiming().ProbeInterval)
	if m, ok := n1.member(n2.id); !ok || m.Addr != n2.tr.Addr() || !m.Up {
		t.Errorf("node 1 holds node 2 as %+v (found %v), want up at %s", m, ok, n2.tr.Addr())
	}
	if len(n1.g.Members()) != 2 {
		t.Errorf("node 1 has members %+v, want 2", n1.g.Members())
	}
	_ = impostor
}

func TestGarbageDroppedAndCounted(t *testing.T) {
	net, nodes := inmemCluster(t, 3)
	n1 := nodes[0]
	raw := inmemTransport(t, net, 9, hostID(9))
	defer raw.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	garbage := [][]byte{
		{},
		{kindPacket},
		{99, 0, 1, 2},
		{kindPacket, 200, 1, 2, 3},
		{kindStream, 250},
	}
	for _, g := range garbage {
		if err := raw.Send(ctx, n1.tr.Addr(), messaging.VerbGossip, g); err != nil {
			t.Fatal(err)
		}
		if _, err := raw.Request(ctx, n1.tr.Addr(), messaging.VerbGossip, g); err == nil {
			t.Errorf("a stream of %x got an answer", g)
		}
	}
	// Envelopes whose memberlist bytes do not decode reach memberlist,
	// which drops them: packets and a stream.
	for _, g := range [][]byte{{kindPacket, 0, 0xc1, 0xc1}, {kindPacket, 7, 0xff, 0xff, 0xff}, {kindPacket, 9, 1}} {
		if err := raw.Send(ctx, n1.tr.Addr(), messaging.VerbGossip, g); err != nil {
			t.Fatal(err)
		}
	}
	if resp, err := raw.Request(ctx, n1.tr.Addr(), messaging.VerbGossip, []byte{kindStream, 6, 0xc1}); err != nil {
		t.Logf("garbage push/pull: %v", err)
	} else {
		t.Logf("garbage push/pull answered %d bytes", len(resp))
	}
	waitFor(t, "every malformed message counted", func() bool {
		return testutil.ToFloat64(n1.metrics.Dropped.WithLabelValues(DropMalformed)) == float64(2*len(garbage))
	})
	time.Sleep(5 * fastTiming().ProbeInterval)
	waitAllSee(t, nodes)
	if len(n1.g.Members()) != 3 {
		t.Errorf("node 1 has members %+v, want 3", n1.g.Members())
	}
}

func TestCloseLeavesNoGoroutines(t *testing.T) {
	net := messaging.NewInmemNetwork()
	var nodes []*node
	for k := 1; k <= 3; k++ {
		nodes = append(nodes, startNode(t, inmemTransport(t, net, k, hostID(k)), nodeConfig{
			id: hostID(k), seeds: []netip.AddrPort{inmemAddr(1)}, meta: testMeta(k)}))
	}
	waitAllSee(t, nodes)
	for _, n := range nodes {
		if err := n.g.Close(); err != nil {
			t.Fatal(err)
		}
		if err := n.g.Close(); err != nil {
			t.Fatal("a second Close:", err)
		}
	}
	var left []string
	deadline := time.Now().Add(waitLimit)
	for left = leftoverGoroutines(); len(left) > 0 && time.Now().Before(deadline); left = leftoverGoroutines() {
		time.Sleep(20 * time.Millisecond)
	}
	if len(left) > 0 {
		t.Fatalf("%d goroutines left after Close:\n%s", len(left), strings.Join(left, "\n\n"))
	}
	for _, n := range nodes {
		n.tr.Close()
	}
}

func TestForget(t *testing.T) {
	net, nodes := inmemCluster(t, 3)
	a, c := nodes[0], nodes[2]
	if a.g.Forget(c.id) {
		t.Fatal("an up node was forgotten")
	}
	net.Partition([]netip.AddrPort{c.tr.Addr()}, []netip.AddrPort{a.tr.Addr(), nodes[1].tr.Addr()})
	waitFor(t, "node 1 holding node 3 down", func() bool { return !a.g.Alive(c.id) })
	if !a.g.Forget(c.id) {
		t.Fatal("a down node was not forgotten")
	}
	if _, ok := a.member(c.id); ok || len(a.g.Members()) != 2 {
		t.Errorf("members after Forget: %+v", a.g.Members())
	}
}

func TestAfterClose(t *testing.T) {
	_, nodes := inmemCluster(t, 1)
	n := nodes[0]
	n.g.Close()
	if err := n.g.UpdateMeta(); err == nil {
		t.Error("UpdateMeta after Close succeeded")
	}
	if err := n.g.Leave(context.Background()); err == nil {
		t.Error("Leave after Close succeeded")
	}
}

func TestSlowOnEventDoesNotBlockGossip(t *testing.T) {
	net := messaging.NewInmemNetwork()
	release := make(chan struct{})
	delivered := make(chan Event, 16)
	tr1 := inmemTransport(t, net, 1, hostID(1))
	defer tr1.Close()
	g1, err := Start(Options{
		Transport: tr1,
		HostID:    hostID(1),
		Seeds:     []netip.AddrPort{inmemAddr(1)},
		Meta:      func() Meta { return testMeta(1) },
		OnEvent: func(e Event) {
			<-release
			delivered <- e
		},
		Timing: fastTiming(),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer g1.Close()
	n2 := startNode(t, inmemTransport(t, net, 2, hostID(2)), nodeConfig{id: hostID(2), seeds: []netip.AddrPort{inmemAddr(1)}, meta: testMeta(2)})
	n3 := startNode(t, inmemTransport(t, net, 3, hostID(3)), nodeConfig{id: hostID(3), seeds: []netip.AddrPort{inmemAddr(1)}, meta: testMeta(3)})
	waitFor(t, "node 1, its OnEvent stuck, seeing the others up", func() bool { return g1.Alive(n2.id) && g1.Alive(n3.id) })
	waitFor(t, "the others seeing node 1 up", func() bool { return n2.g.Alive(hostID(1)) && n3.g.Alive(hostID(1)) })
	close(release)
	for range 2 {
		if e := <-delivered; e.Kind != Joined {
			t.Errorf("event %v, want joined", e.Kind)
		}
	}
}

// restart stops n's gossip and transport, and starts a node with id at
// the same address.
func restart(t *testing.T, net *messaging.InmemNetwork, n *node, k int, cfg nodeConfig) *node {
	t.Helper()
	n.g.Close()
	n.tr.Close()
	return startNode(t, inmemTransport(t, net, k, cfg.id), cfg)
}

func TestRestartedNodeDownThenUp(t *testing.T) {
	net, nodes := inmemCluster(t, 3)
	a, c := nodes[0], nodes[2]
	c.g.Close()
	c.tr.Close()
	waitFor(t, "node 1 holding the stopped node down", func() bool { return !a.g.Alive(c.id) })
	meta := testMeta(3)
	meta.Load = 999
	c2 := startNode(t, inmemTransport(t, net, 3, c.id), nodeConfig{id: c.id, seeds: []netip.AddrPort{inmemAddr(1)}, meta: meta})
	waitAllSee(t, []*node{a, nodes[1], c2})
	waitFor(t, "node 1 delivering Up with the new metadata", func() bool {
		m, _ := a.member(c.id)
		return m.Meta == meta && slices.Contains(a.kindsFor(c.id), Up)
	})
}

func TestNewHostIDOnAnAddressTakesOver(t *testing.T) {
	net, nodes := inmemCluster(t, 3)
	a, b, c := nodes[0], nodes[1], nodes[2]
	// Node 3 comes back at its address with its data wiped: a new host
	// id. Its address is refused while node 3 is held up, then taken.
	c2 := restart(t, net, c, 3, nodeConfig{id: hostID(33), seeds: []netip.AddrPort{inmemAddr(1)}, meta: testMeta(3)})
	waitAllSee(t, []*node{a, b, c2})
	for _, n := range []*node{a, b} {
		if n.g.Alive(c.id) {
			t.Errorf("%s holds the old host id up", n.tr.Addr())
		}
	}
}

func TestDownSince(t *testing.T) {
	net, nodes := inmemCluster(t, 3)
	a, c := nodes[0], nodes[2]
	if _, down := a.g.DownSince(c.id); down {
		t.Fatal("an up node is down")
	}
	if _, down := a.g.DownSince(a.id); down {
		t.Fatal("this node is down")
	}
	if since, down := a.g.DownSince(hostID(99)); !down || since != a.g.started {
		t.Errorf("an unknown node: %v, %v; want down since Start (%v)", since, down, a.g.started)
	}
	cutAt := time.Now()
	net.Partition([]netip.AddrPort{c.tr.Addr()}, []netip.AddrPort{a.tr.Addr(), nodes[1].tr.Addr()})
	waitFor(t, "node 1 holding node 3 down", func() bool { return !a.g.Alive(c.id) })
	since, down := a.g.DownSince(c.id)
	if m, _ := a.member(c.id); !down || since.Before(cutAt) || since.After(time.Now()) || m.DownSince != since {
		t.Errorf("DownSince = %v, %v (member: %v); want down since after the cut at %v", since, down, m.DownSince, cutAt)
	}
	net.Heal()
	waitFor(t, "node 1 holding node 3 up", func() bool { return a.g.Alive(c.id) })
	if since, down := a.g.DownSince(c.id); down || !since.IsZero() {
		t.Errorf("DownSince after the heal = %v, %v", since, down)
	}
}
