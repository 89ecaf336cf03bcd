package metalog

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cqld/cqld/messaging"
	"github.com/cqld/cqld/ring"
	"github.com/prometheus/client_golang/prometheus"
)

// testFSM is a state machine of strings. "create:x" fails with
// errExists when x was created before, "fail" always fails; any other
// entry is appended. It stands for a durable FSM: a test reopening a Log
// gives it the same testFSM, whose Applied is where it got to.
type testFSM struct {
	mu       sync.Mutex
	entries  []string // applied, in order
	indexes  []uint64 // their indexes
	created  map[string]bool
	applied  uint64
	restores int
	// reapplied counts Apply calls at or below an index already applied.
	reapplied int
}

var errExists = errors.New("already exists")

func newTestFSM() *testFSM { return &testFSM{created: map[string]bool{}} }

func (f *testFSM) Apply(index uint64, entry []byte) ([]byte, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if index <= f.applied {
		f.reapplied++
	}
	f.applied = index
	s := string(entry)
	switch {
	case s == "fail":
		return nil, fmt.Errorf("entry %d: %w", index, errors.New("told to fail"))
	case strings.HasPrefix(s, "create:"):
		if f.created[s] {
			return nil, fmt.Errorf("%s: %w", s, errExists)
		}
		f.created[s] = true
	}
	f.entries = append(f.entries, s)
	f.indexes = append(f.indexes, index)
	return []byte("ok " + s), nil
}

func (f *testFSM) Snapshot() ([]byte, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var b []byte
	for i, e := range f.entries {
		b = binary.AppendUvarint(b, f.indexes[i])
		b = binary.AppendUvarint(b, uint64(len(e)))
		b = append(b, e...)
	}
	return b, nil
}

func (f *testFSM) Restore(index uint64, b []byte) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.entries, f.indexes, f.created = nil, nil, map[string]bool{}
	for len(b) > 0 {
		i, n := binary.Uvarint(b)
		l, m := binary.Uvarint(b[n:])
		if n <= 0 || m <= 0 || uint64(len(b)-n-m) < l {
			return errors.New("bad test snapshot")
		}
		e := string(b[n+m : n+m+int(l)])
		b = b[n+m+int(l):]
		f.entries = append(f.entries, e)
		f.indexes = append(f.indexes, i)
		if strings.HasPrefix(e, "create:") {
			f.created[e] = true
		}
	}
	f.applied = index
	f.restores++
	return nil
}

func (f *testFSM) Applied() uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.applied
}

// counts returns how many snapshots the FSM restored and how many
// entries it was given a second time.
func (f *testFSM) counts() (restores, reapplied int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.restores, f.reapplied
}

func (f *testFSM) state() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.entries)
}

// testTiming is raft's timing for tests: fast, with room for a loaded
// machine.
var testTiming = Timing{
	HeartbeatTimeout:   100 * time.Millisecond,
	ElectionTimeout:    100 * time.Millisecond,
	LeaderLeaseTimeout: 100 * time.Millisecond,
	CommitTimeout:      5 * time.Millisecond,
	RPCTimeout:         500 * time.Millisecond,
	RetryInterval:      10 * time.Millisecond,
	MaxRetryInterval:   200 * time.Millisecond,
}

// testNode is one member of a test cluster.
type testNode struct {
	addr  netip.AddrPort
	host  ring.HostID
	dir   string
	trans *messaging.InmemTransport
	fsm   *testFSM
	log   *Log
	reg   *prometheus.Registry
}

// testNodeHost is test node k's host id.
func testNodeHost(k int) ring.HostID {
	var h ring.HostID
	h[0], h[15] = 0xab, byte(k)
	return h
}

type testCluster struct {
	t      *testing.T
	net    *messaging.InmemNetwork
	nodes  []*testNode
	timing Timing
}

// newCluster makes n nodes on one InmemNetwork, none of them open.
func newCluster(t *testing.T, n int, timing Timing) *testCluster {
	t.Helper()
	c := &testCluster{t: t, net: messaging.NewInmemNetwork(), timing: timing}
	base := t.TempDir()
	for i := range n {
		nd := &testNode{
			addr: netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, 0, byte(i + 1)}), 7000),
			dir:  filepath.Join(base, fmt.Sprintf("node%d", i+1)),
			fsm:  newTestFSM(),
		}
		nd.host = testNodeHost(i + 1)
		tr, err := c.net.NewTransport(messaging.Options{ClusterName: "test", HostID: nd.host, Addr: nd.addr})
		if err != nil {
			t.Fatal(err)
		}
		nd.trans = tr
		t.Cleanup(func() { tr.Close() })
		c.nodes = append(c.nodes, nd)
	}
	t.Cleanup(func() {
		for _, nd := range c.nodes {
			if nd.log != nil {
				nd.log.Close()
			}
		}
	})
	return c
}

// open opens node i's Log; the first node bootstraps, the others have
// the node before them as their seed.
func (c *testCluster) open(i int) *Log {
	c.t.Helper()
	nd := c.nodes[i]
	nd.reg = prometheus.NewRegistry()
	opts := Options{Dir: nd.dir, Transport: nd.trans, HostID: nd.host, FSM: nd.fsm,
		Bootstrap: i == 0, Metrics: nd.reg, Timing: c.timing}
	if i > 0 {
		opts.Seeds = []netip.AddrPort{c.nodes[i-1].addr}
	}
	l, err := Open(opts)
	if err != nil {
		c.t.Fatalf("open node %d: %v", i+1, err)
	}
	nd.log = l
	return l
}

func (c *testCluster) close(i int) {
	c.t.Helper()
	if err := c.nodes[i].log.Close(); err != nil {
		c.t.Fatalf("close node %d: %v", i+1, err)
	}
	c.nodes[i].log = nil
}

// start opens every node and joins all but the first.
func (c *testCluster) start() {
	c.t.Helper()
	for i := range c.nodes {
		c.open(i)
	}
	c.waitLeader(c.nodes[:1])
	for i := 1; i < len(c.nodes); i++ {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		err := c.nodes[i].log.Join(ctx)
		cancel()
		if err != nil {
			c.t.Fatalf("node %d joins: %v", i+1, err)
		}
	}
}

// waitLeader waits for one of nodes to lead, as every one of them sees
// it, and returns its position in c.nodes.
func (c *testCluster) waitLeader(nodes []*testNode) int {
	c.t.Helper()
	var leader int
	eventually(c.t, func() bool {
		leader = -1
		for _, nd := range nodes {
			h, _ := nd.log.Leader()
			idx := c.indexOf(h)
			if idx < 0 || (leader >= 0 && idx != leader) {
				return false
			}
			leader = idx
		}
		return slices.ContainsFunc(nodes, func(nd *testNode) bool { return nd == c.nodes[leader] })
	}, "a leader among %d nodes", len(nodes))
	return leader
}

func (c *testCluster) indexOf(h ring.HostID) int {
	return slices.IndexFunc(c.nodes, func(nd *testNode) bool { return nd.host == h })
}

// waitConverged waits for every open node's FSM to hold want.
func (c *testCluster) waitConverged(want []string) {
	c.t.Helper()
	eventually(c.t, func() bool {
		for _, nd := range c.nodes {
			if nd.log != nil && !slices.Equal(nd.fsm.state(), want) {
				return false
			}
		}
		return true
	}, "every node to apply %q", want)
}

func propose(t *testing.T, l *Log, entry string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := l.Propose(ctx, []byte(entry))
	if err != nil {
		t.Fatalf("propose %q: %v", entry, err)
	}
	return res
}

// eventually polls cond until it holds; it fails the test after a bound
// meant for a loaded machine, not as a timing assertion.
func eventually(t *testing.T, cond func() bool, format string, args ...any) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for "+format, args...)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
