package gossip

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/cqld/cqld/messaging"
	"github.com/cqld/cqld/ring"
)

// fastTiming runs failure detection in tenths of seconds.
func fastTiming() Timing {
	return Timing{
		ProbeInterval:       100 * time.Millisecond,
		ProbeTimeout:        50 * time.Millisecond,
		GossipInterval:      20 * time.Millisecond,
		PushPullInterval:    500 * time.Millisecond,
		StreamTimeout:       time.Second,
		SuspicionMult:       2,
		GossipToTheDeadTime: 500 * time.Millisecond,
		JoinBackoff:         50 * time.Millisecond,
		MaxJoinBackoff:      200 * time.Millisecond,
		ReconnectInterval:   200 * time.Millisecond,
	}
}

// waitLimit bounds every wait for a condition; the conditions take well
// under a second on an idle machine.
const waitLimit = 30 * time.Second

func hostID(k int) ring.HostID {
	return ring.HostID{0x6e, 0x6f, 0x64, 0x65, 14: byte(k >> 8), 15: byte(k)}
}

func inmemAddr(k int) netip.AddrPort {
	return netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, 0, byte(k)}), 7000)
}

// logBuffer collects a node's log lines for tests that look for one.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// node is one cluster member of a test, with the events it saw.
type node struct {
	t       *testing.T
	id      ring.HostID
	tr      messaging.Transport
	g       *Gossip
	metrics *Metrics
	logs    *logBuffer

	mu     sync.Mutex
	meta   Meta
	events []Event
}

type nodeConfig struct {
	id    ring.HostID
	seeds []netip.AddrPort
	meta  Meta
	// timing, when set, replaces fastTiming.
	timing *Timing
}

// startNode starts gossip on tr, closing both when the test ends.
func startNode(t *testing.T, tr messaging.Transport, cfg nodeConfig) *node {
	t.Helper()
	n := &node{t: t, id: cfg.id, tr: tr, meta: cfg.meta, metrics: NewMetrics(prometheus.NewRegistry()), logs: &logBuffer{}}
	timing := fastTiming()
	if cfg.timing != nil {
		timing = *cfg.timing
	}
	var w io.Writer = n.logs
	pw := &prefixWriter{t: t, prefix: tr.Addr().String()}
	if testing.Verbose() {
		w = io.MultiWriter(n.logs, pw)
	}
	g, err := Start(Options{
		Transport: tr,
		HostID:    cfg.id,
		Seeds:     cfg.seeds,
		Meta:      n.currentMeta,
		OnEvent:   n.record,
		Logger:    slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Metrics:   n.metrics,
		Timing:    timing,
	})
	if err != nil {
		t.Fatal(err)
	}
	n.g = g
	t.Cleanup(func() {
		g.Close()
		tr.Close()
		// memberlist's goroutines may still log after its shutdown (an
		// indirect ping's nack, say), and t.Log after the test panics.
		pw.stop()
	})
	return n
}

type prefixWriter struct {
	t      *testing.T
	prefix string

	mu      sync.Mutex
	stopped bool
}

func (w *prefixWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.stopped {
		w.t.Log(w.prefix, strings.TrimSpace(string(p)))
	}
	return len(p), nil
}

// stop drops the lines written from now on.
func (w *prefixWriter) stop() {
	w.mu.Lock()
	w.stopped = true
	w.mu.Unlock()
}

func (n *node) currentMeta() Meta {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.meta
}

func (n *node) setMeta(f func(*Meta)) {
	n.mu.Lock()
	f(&n.meta)
	n.mu.Unlock()
	if err := n.g.UpdateMeta(); err != nil {
		n.t.Fatal(err)
	}
}

func (n *node) record(e Event) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.events = append(n.events, e)
}

// kindsFor returns the kinds of the events n saw about id, in order.
func (n *node) kindsFor(id ring.HostID) []EventKind {
	n.mu.Lock()
	defer n.mu.Unlock()
	var out []EventKind
	for _, e := range n.events {
		if e.Member.HostID == id {
			out = append(out, e.Kind)
		}
	}
	return out
}

// member returns what n knows of id.
func (n *node) member(id ring.HostID) (Member, bool) {
	for _, m := range n.g.Members() {
		if m.HostID == id {
			return m, true
		}
	}
	return Member{}, false
}

// sees reports whether n holds every node of others up.
func (n *node) sees(others ...*node) bool {
	for _, o := range others {
		if !n.g.Alive(o.id) {
			return false
		}
	}
	return true
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitLimit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("after %v: still not %s", waitLimit, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// inmemCluster starts n nodes on one InmemNetwork, the first the seed of
// all, and waits until each sees all the others up.
func inmemCluster(t *testing.T, count int) (*messaging.InmemNetwork, []*node) {
	t.Helper()
	net := messaging.NewInmemNetwork()
	var nodes []*node
	for k := 1; k <= count; k++ {
		nodes = append(nodes, startNode(t, inmemTransport(t, net, k, hostID(k)), nodeConfig{
			id: hostID(k), seeds: []netip.AddrPort{inmemAddr(1)}, meta: testMeta(k)}))
	}
	waitAllSee(t, nodes)
	return net, nodes
}

func waitAllSee(t *testing.T, nodes []*node) {
	t.Helper()
	for _, n := range nodes {
		waitFor(t, fmt.Sprintf("%s seeing every node up", n.tr.Addr()), func() bool { return n.sees(nodes...) })
	}
}

func inmemTransport(t *testing.T, net *messaging.InmemNetwork, k int, id ring.HostID) *messaging.InmemTransport {
	t.Helper()
	tr, err := net.NewTransport(messaging.Options{ClusterName: "Test Cluster", HostID: id, Addr: inmemAddr(k),
		Metrics: messaging.NewMetrics(prometheus.NewRegistry())})
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

func testMeta(k int) Meta {
	return Meta{
		RPCAddr:        netip.AddrFrom4([4]byte{127, 0, 0, byte(k)}),
		NativePort:     9042,
		DataCenter:     "datacenter1",
		Rack:           "rack1",
		ReleaseVersion: "4.0.11",
		SchemaVersion:  [16]byte{0x5c, 15: byte(k)},
		Load:           uint64(k) << 20,
		Status:         "NORMAL",
	}
}

// leftoverGoroutines returns the stacks of goroutines running gossip's or
// memberlist's code.
func leftoverGoroutines() []string {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var out []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "hashicorp/memberlist") || strings.Contains(g, "cqld/gossip.") && !strings.Contains(g, "gossip.leftoverGoroutines") && !strings.Contains(g, "testing.tRunner") {
			out = append(out, g)
		}
	}
	return out
}
