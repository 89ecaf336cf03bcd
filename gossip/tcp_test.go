package gossip

import (
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/cqld/cqld/messaging"
	"github.com/cqld/cqld/ring"
)

// listenTCP starts a messaging transport of cluster on ip, port picked by
// the kernel, announcing broadcast when it is set.
func listenTCP(t *testing.T, cluster, ip string, id ring.HostID, broadcast netip.AddrPort) (*messaging.TCPTransport, *messaging.Metrics) {
	t.Helper()
	m := messaging.NewMetrics(prometheus.NewRegistry())
	tr, err := messaging.ListenTCP(messaging.Options{ClusterName: cluster, HostID: id,
		Addr: netip.AddrPortFrom(netip.MustParseAddr(ip), 0), BroadcastAddr: broadcast, Metrics: m})
	if err != nil {
		t.Fatal(err)
	}
	return tr, m
}

// tcpCluster starts nodes on 127.0.0.1, .2 and .3, the first the seed,
// and waits until each sees the others up.
func tcpCluster(t *testing.T) []*node {
	t.Helper()
	var nodes []*node
	var seed netip.AddrPort
	for k := 1; k <= 3; k++ {
		tr, _ := listenTCP(t, "Test Cluster", netip.AddrFrom4([4]byte{127, 0, 0, byte(k)}).String(), hostID(k), netip.AddrPort{})
		if k == 1 {
			seed = tr.Addr()
		}
		nodes = append(nodes, startNode(t, tr, nodeConfig{id: hostID(k), seeds: []netip.AddrPort{seed}, meta: testMeta(k)}))
	}
	waitAllSee(t, nodes)
	return nodes
}

func TestTCPClusterRefusesForeignNode(t *testing.T) {
	nodes := tcpCluster(t)
	nodes[2].setMeta(func(m *Meta) { m.Load = 12345 })
	waitFor(t, "node 1 seeing node 3's load", func() bool {
		m, _ := nodes[0].member(nodes[2].id)
		return m.Meta.Load == 12345
	})

	tr, metrics := listenTCP(t, "Other Cluster", "127.0.0.1", hostID(66), netip.AddrPort{})
	foreign := startNode(t, tr, nodeConfig{id: hostID(66), seeds: []netip.AddrPort{nodes[0].tr.Addr()}, meta: testMeta(66)})
	waitFor(t, "the foreign node refused twice", func() bool {
		return testutil.ToFloat64(metrics.ConnectionErrors.WithLabelValues("refused")) >= 2 &&
			strings.Count(foreign.logs.String(), "unreachable, retrying in") >= 2
	})
	for _, n := range nodes {
		if _, ok := n.member(foreign.id); ok || len(n.g.Members()) != 3 {
			t.Errorf("%s has members %+v, the foreign node among them", n.tr.Addr(), n.g.Members())
		}
		if kinds := n.kindsFor(foreign.id); len(kinds) > 0 {
			t.Errorf("%s saw events %v about the foreign node", n.tr.Addr(), kinds)
		}
	}
	if got := foreign.g.Members(); len(got) != 1 {
		t.Errorf("the foreign node has members %+v", got)
	}
	select {
	case <-foreign.g.Joined():
		t.Error("the foreign node joined")
	default:
	}
}

func TestTCPAddressConflictRefused(t *testing.T) {
	nodes := tcpCluster(t)
	n1, n2 := nodes[0], nodes[1]
	// A node configured with node 2's broadcast address.
	tr, _ := listenTCP(t, "Test Cluster", "127.0.0.3", hostID(77), n2.tr.Addr())
	impostor := startNode(t, tr, nodeConfig{id: hostID(77), seeds: []netip.AddrPort{n1.tr.Addr()}, meta: testMeta(77)})
	waitFor(t, "node 1 refusing the impostor", func() bool {
		return testutil.ToFloat64(n1.metrics.Refused.WithLabelValues(RefusedAddress)) > 0
	})
	time.Sleep(5 * fastTiming().ProbeInterval)
	for _, n := range nodes {
		if _, ok := n.member(impostor.id); ok {
			t.Errorf("%s has the impostor among its members %+v", n.tr.Addr(), n.g.Members())
		}
	}
	if m, ok := n1.member(n2.id); !ok || !m.Up || m.Addr != n2.tr.Addr() {
		t.Errorf("node 1 holds node 2 as %+v (found %v)", m, ok)
	}
	if !strings.Contains(n1.logs.String(), "which live node "+n2.id.String()+" has") {
		t.Errorf("node 1 did not log the conflict naming node 2:\n%s", n1.logs.String())
	}
}

// TestTCPStoppedNodeDownThenUp stops a node without leaving, as a kill
// does, and starts it again at its address.
func TestTCPStoppedNodeDownThenUp(t *testing.T) {
	nodes := tcpCluster(t)
	a, c := nodes[0], nodes[2]
	addr := c.tr.Addr()
	c.g.Close()
	c.tr.Close()
	waitFor(t, "node 1 holding the stopped node down", func() bool { return !a.g.Alive(c.id) })
	m := messaging.NewMetrics(prometheus.NewRegistry())
	tr, err := messaging.ListenTCP(messaging.Options{ClusterName: "Test Cluster", HostID: c.id, Addr: addr, Metrics: m})
	if err != nil {
		t.Fatal(err)
	}
	c2 := startNode(t, tr, nodeConfig{id: c.id, seeds: []netip.AddrPort{a.tr.Addr()}, meta: testMeta(3)})
	waitAllSee(t, []*node{a, nodes[1], c2})
	waitFor(t, "node 1 delivering Up", func() bool { return slices.Contains(a.kindsFor(c.id), Up) })
}
