package proxy

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/datastax/go-cassandra-native-protocol/primitive"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/cqld/cqld/cqlerr"
	"github.com/cqld/cqld/mutation"
	"github.com/cqld/cqld/ring"
	"github.com/cqld/cqld/storage"
)

func rf(n string) map[string]string {
	return map[string]string{"class": "org.apache.cassandra.locator.SimpleStrategy", "replication_factor": n}
}

var writeLevels = []primitive.ConsistencyLevel{
	primitive.ConsistencyLevelAny, primitive.ConsistencyLevelOne, primitive.ConsistencyLevelTwo,
	primitive.ConsistencyLevelThree, primitive.ConsistencyLevelQuorum, primitive.ConsistencyLevelAll,
	primitive.ConsistencyLevelLocalOne, primitive.ConsistencyLevelLocalQuorum, primitive.ConsistencyLevelEachQuorum,
}

// Every write level lands the write on every replica (the proxy sends to
// all of them, whatever the level waits for), and reads back at every
// read level, at RF 1 and RF 3.
func TestEveryLevelWritesAndReads(t *testing.T) {
	for _, tc := range []struct {
		rf    string
		nodes int
	}{{"1", 3}, {"3", 3}, {"3", 4}} {
		t.Run("rf"+tc.rf, func(t *testing.T) {
			dcs := make([]string, tc.nodes)
			for i := range dcs {
				dcs[i] = "dc1"
			}
			c := newCluster(t, dcs, rf(tc.rf))
			p := c.proxies[0]
			ctx := context.Background()
			for i, cl := range writeLevels {
				err := p.Apply(ctx, cl, c.write(i, 0, cl.String(), 10), primitive.WriteTypeSimple, nil)
				want := tc.rf == "3" || (cl != primitive.ConsistencyLevelTwo && cl != primitive.ConsistencyLevelThree)
				var ua *cqlerr.Unavailable
				switch {
				case want && err != nil:
					t.Fatalf("%v: %v", cl, err)
				case !want && !errors.As(err, &ua):
					t.Fatalf("%v at RF 1: %v, want UNAVAILABLE", cl, err)
				case !want:
					continue
				}
				p.Close() // the writes the level did not wait for
				for _, n := range c.replicasOf(i) {
					if got := c.rowsOf(n, i)[0]; got != cl.String() {
						t.Fatalf("%v: node %d holds %q", cl, n, got)
					}
				}
				for _, rcl := range writeLevels {
					if rcl == primitive.ConsistencyLevelAny || rcl == primitive.ConsistencyLevelEachQuorum {
						continue
					}
					if tc.rf == "1" && (rcl == primitive.ConsistencyLevelTwo || rcl == primitive.ConsistencyLevelThree) {
						continue
					}
					got := map[int]string{}
					if err := p.ReadPartition(ctx, rcl, c.tbl, i32(i), storage.ReadOptions{Now: 1}, func(r *storage.Row) bool { collect(got, r); return true }); err != nil {
						t.Fatalf("read at %v: %v", rcl, err)
					}
					if got[0] != cl.String() {
						t.Fatalf("read at %v: %q", rcl, got[0])
					}
				}
			}
		})
	}
}

// Too few replicas up is UNAVAILABLE, with Cassandra's fields, and nothing
// is sent or hinted.
func TestUnavailableBeforeSending(t *testing.T) {
	c := newCluster(t, []string{"dc1", "dc1", "dc1"}, rf("3"))
	c.setDown(1, true)
	c.setDown(2, true)
	ctx := context.Background()
	for _, tc := range []struct {
		cl              primitive.ConsistencyLevel
		required, alive int32
	}{
		{primitive.ConsistencyLevelQuorum, 2, 1},
		{primitive.ConsistencyLevelAll, 3, 1},
		{primitive.ConsistencyLevelTwo, 2, 1},
		{primitive.ConsistencyLevelLocalQuorum, 2, 1},
	} {
		err := c.proxies[0].Apply(ctx, tc.cl, c.write(1, 0, "x", 10), primitive.WriteTypeSimple, nil)
		var ua *cqlerr.Unavailable
		if !errors.As(err, &ua) || ua.Consistency != tc.cl || ua.Required != tc.required || ua.Alive != tc.alive {
			t.Fatalf("%v: %v (%+v)", tc.cl, err, ua)
		}
		if err.Error() != "Cannot achieve consistency level "+cqlerr.ConsistencyName(tc.cl) {
			t.Fatalf("message %q", err)
		}
	}
	c.proxies[0].Close()
	for i := range c.nodes {
		if n := c.nodes[i].calls.Load(); n != 0 {
			t.Fatalf("node %d got %d calls", i, n)
		}
		if h := c.hints.count(c.hosts[i]); h != 0 {
			t.Fatalf("node %d got %d hints", i, h)
		}
	}
	// ONE still works, and the replicas down get hints.
	if err := c.proxies[0].Apply(ctx, primitive.ConsistencyLevelOne, c.write(1, 0, "x", 10), primitive.WriteTypeSimple, nil); err != nil {
		t.Fatal(err)
	}
	c.proxies[0].Close()
	if c.hints.count(c.hosts[1]) != 1 || c.hints.count(c.hosts[2]) != 1 {
		t.Fatalf("hints %v", c.hints.byFor)
	}
	// Reads too.
	err := c.proxies[0].ReadPartition(ctx, primitive.ConsistencyLevelQuorum, c.tbl, i32(1), storage.ReadOptions{}, func(*storage.Row) bool { return true })
	var ua *cqlerr.Unavailable
	if !errors.As(err, &ua) || ua.Required != 2 || ua.Alive != 1 {
		t.Fatalf("QUORUM read: %v", err)
	}
}

// ANY is met by hints alone when every replica is down.
func TestAnyCountsHints(t *testing.T) {
	c := newCluster(t, []string{"dc1", "dc1", "dc1"}, rf("3"))
	// A partition this node does not replicate... with RF 3 on 3 nodes
	// each is; take every node but the coordinator down and make its own
	// replica fail.
	c.setDown(1, true)
	c.setDown(2, true)
	c.nodes[0].mode.Store(int32(hanging))
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if err := c.proxies[0].Apply(ctx, primitive.ConsistencyLevelAny, c.write(1, 0, "x", 10), primitive.WriteTypeSimple, nil); err != nil {
		t.Fatal(err)
	}
	c.proxies[0].Close()
	if c.hints.count(c.hosts[1]) != 1 || c.hints.count(c.hosts[2]) != 1 {
		t.Fatalf("hints %v", c.hints.byFor)
	}
	cancel()

	// Without hinted handoff nothing can answer: the timeout, at once
	// (the context has no deadline).
	c.setDown(0, true) // as seen from node 1, which is up
	c.setDown(1, false)
	c.nodes[0].mode.Store(int32(healthy))
	p := New(Options{Topology: c.topos[1], Liveness: &liveness{down: map[ring.HostID]bool{c.hosts[0]: true, c.hosts[2]: true}},
		Replicas: replicaMap{c.hosts[1]: failingReplica{c.nodes[1]}}, Keyspace: func(string) *storage.KeyspaceDef { return c.ks }})
	err := p.Apply(context.Background(), primitive.ConsistencyLevelAny, c.write(1, 0, "x", 10), primitive.WriteTypeSimple, nil)
	var wt *cqlerr.WriteTimeout
	if !errors.As(err, &wt) || wt.Received != 0 || wt.BlockFor != 1 {
		t.Fatalf("ANY without hints: %v", err)
	}
	p.Close()
}

// Hints written more slowly than writes come pile up only to
// MaxHintsInProgress: past it, a write that would hint a target with
// hints in progress is refused OVERLOADED before it is sent anywhere, and
// once the hints are written, writes are taken again.
func TestHintsInProgressBounded(t *testing.T) {
	c := newCluster(t, []string{"dc1", "dc1", "dc1"}, rf("3"))
	gate := make(chan struct{})
	c.hints.gate = gate
	c.setDown(2, true)
	reps := replicaMap{}
	for i, h := range c.hosts {
		reps[h] = c.nodes[i]
	}
	const most = 4
	p := New(Options{Topology: c.topos[0], Liveness: c.live, Replicas: reps, Hints: c.hints, Metrics: c.metrics,
		MaxHintsInProgress: most, Keyspace: func(string) *storage.KeyspaceDef { return c.ks }})
	released := false
	defer func() {
		if !released {
			close(gate)
		}
		p.Close()
	}()
	write := func(k int) error {
		return p.Apply(context.Background(), primitive.ConsistencyLevelOne, c.write(k, 0, "x", 10), primitive.WriteTypeSimple, nil)
	}
	for k := range most + 1 {
		if err := write(k); err != nil {
			t.Fatalf("write %d, %d hints in progress: %v", k, k, err)
		}
	}
	err := write(most + 1)
	var ce *cqlerr.Error
	if !errors.As(err, &ce) || ce.Code != primitive.ErrorCodeOverloaded || !strings.Contains(ce.Msg, "Too many in flight hints: 5") {
		t.Fatalf("a write with %d hints in progress, at most %d: %v", most+1, most, err)
	}
	if n := testutil.ToFloat64(c.metrics.Errors.WithLabelValues("write", "ONE", "overloaded")); n != 1 {
		t.Errorf("overloaded writes counted %v, want 1", n)
	}
	for i := range 2 {
		if rows := c.rowsOf(i, most+1); len(rows) != 0 {
			t.Fatalf("the refused write reached node %d: %v", i, rows)
		}
	}
	close(gate)
	released = true
	deadline := time.Now().Add(10 * time.Second)
	for c.hints.count(c.hosts[2]) < most+1 {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d hints written", c.hints.count(c.hosts[2]), most+1)
		}
		time.Sleep(time.Millisecond)
	}
	// The counts drop once each hint's write returns.
	for {
		err := write(most + 2)
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a write once the hints were written: %v", err)
		}
		time.Sleep(time.Millisecond)
	}
}

// failingReplica fails every write as unreachable.
type failingReplica struct{ *faulty }

func (f failingReplica) Apply(context.Context, *mutation.Mutation, func() error) error {
	return errDown
}

// A deadline passing before the level is met answers WRITE_TIMEOUT with
// what was received, what the level blocks for and the write type; the
// replicas that did not answer get hints.
func TestWriteTimeoutFields(t *testing.T) {
	c := newCluster(t, []string{"dc1", "dc1", "dc1"}, rf("3"))
	c.nodes[1].mode.Store(int32(hanging))
	c.nodes[2].mode.Store(int32(hanging))
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	err := c.proxies[0].Apply(ctx, primitive.ConsistencyLevelQuorum, c.write(1, 0, "x", 10), primitive.WriteTypeUnloggedBatch, nil)
	var wt *cqlerr.WriteTimeout
	if !errors.As(err, &wt) || wt.Received != 1 || wt.BlockFor != 2 || wt.WriteType != primitive.WriteTypeUnloggedBatch || wt.Consistency != primitive.ConsistencyLevelQuorum {
		t.Fatalf("%v (%+v)", err, wt)
	}
	if err.Error() != "Operation timed out - received only 1 responses." {
		t.Fatalf("message %q", err)
	}
	c.proxies[0].Close()
	if c.hints.count(c.hosts[1]) != 1 || c.hints.count(c.hosts[2]) != 1 || c.hints.count(c.hosts[0]) != 0 {
		t.Fatalf("hints %v", c.hints.byFor)
	}
	if n := testutil.ToFloat64(c.metrics.Hints.WithLabelValues("late")); n != 2 {
		t.Fatalf("%v late hints counted", n)
	}
	if n := testutil.ToFloat64(c.metrics.Errors.WithLabelValues("write", "QUORUM", "timeout")); n != 1 {
		t.Fatalf("%v write timeouts counted", n)
	}
}

// Replicas refusing the write so the level cannot be met is WRITE_FAILURE,
// at once, naming them; a refusal is not hinted.
func TestWriteFailure(t *testing.T) {
	c := newCluster(t, []string{"dc1", "dc1", "dc1"}, rf("3"))
	c.nodes[1].mode.Store(int32(failing))
	c.nodes[2].mode.Store(int32(failing))
	err := c.proxies[0].Apply(context.Background(), primitive.ConsistencyLevelQuorum, c.write(1, 0, "x", 10), primitive.WriteTypeSimple, nil)
	var wf *cqlerr.WriteFailure
	if !errors.As(err, &wf) || wf.BlockFor != 2 || len(wf.Reasons) != 2 || !errors.Is(err, errDisk) {
		t.Fatalf("%v (%+v)", err, wf)
	}
	c.proxies[0].Close()
	if len(c.hints.byFor) != 0 {
		t.Fatalf("hints %v", c.hints.byFor)
	}
	// ONE is met by the one that did not fail.
	if err := c.proxies[0].Apply(context.Background(), primitive.ConsistencyLevelOne, c.write(1, 0, "x", 10), primitive.WriteTypeSimple, nil); err != nil {
		t.Fatal(err)
	}
}

// One node at RF 1: the write is the local replica's Apply of the very
// mutation, once; the read its ReadPartition; the scan one Scan.
func TestOneNodeIsTheLocalCall(t *testing.T) {
	c := newCluster(t, []string{"dc1"}, rf("1"))
	p, n := c.proxies[0], c.nodes[0]
	ctx := context.Background()
	m := c.write(1, 0, "x", 10)
	if err := p.Apply(ctx, primitive.ConsistencyLevelOne, m, primitive.WriteTypeSimple, nil); err != nil {
		t.Fatal(err)
	}
	if len(n.applied) != 1 || n.applied[0] != m {
		t.Fatalf("applied %v, want the mutation itself", n.applied)
	}
	tok := storage.Token(i32(1))
	if !p.AllLocal(c.ks, tok, primitive.ConsistencyLevelQuorum) || p.AllLocal(c.ks, tok, primitive.ConsistencyLevelTwo) {
		t.Fatal("AllLocal")
	}
	before := n.calls.Load()
	if err := p.ReadPartition(ctx, primitive.ConsistencyLevelOne, c.tbl, i32(1), storage.ReadOptions{}, func(*storage.Row) bool { return true }); err != nil {
		t.Fatal(err)
	}
	if err := p.Scan(ctx, primitive.ConsistencyLevelOne, c.tbl, storage.ScanOptions{}, func([]byte, *storage.Row) bool { return true }); err != nil {
		t.Fatal(err)
	}
	if got := n.calls.Load() - before; got != 2 {
		t.Fatalf("%d replica calls for a read and a scan", got)
	}
}

// Levels as ConsistencyLevel.blockFor and blockForWrite count them.
func TestBlockFor(t *testing.T) {
	c := newCluster(t, []string{"dc1", "dc1", "dc2"}, rf("1"))
	p := c.proxies[0]
	nts := ring.NetworkTopologyStrategy{RF: map[string]int{"dc1": 3, "dc2": 2}}
	simple := ring.SimpleStrategy{RF: 3}
	pendingDC2 := []ring.HostID{c.hosts[2]}
	for _, tc := range []struct {
		cl      primitive.ConsistencyLevel
		st      ring.Strategy
		pending []ring.HostID
		want    int
	}{
		{primitive.ConsistencyLevelAny, nts, pendingDC2, 1},
		{primitive.ConsistencyLevelOne, nts, pendingDC2, 2},
		{primitive.ConsistencyLevelQuorum, nts, nil, 3},
		{primitive.ConsistencyLevelQuorum, simple, nil, 2},
		{primitive.ConsistencyLevelAll, nts, nil, 5},
		{primitive.ConsistencyLevelLocalQuorum, nts, nil, 2},
		{primitive.ConsistencyLevelLocalQuorum, nts, pendingDC2, 2}, // a pending replica elsewhere does not count
		{primitive.ConsistencyLevelLocalOne, nts, nil, 1},
		{primitive.ConsistencyLevelEachQuorum, nts, nil, 4},
		{primitive.ConsistencyLevelEachQuorum, nts, pendingDC2, 5},
		{primitive.ConsistencyLevelEachQuorum, simple, nil, 2},
		{primitive.ConsistencyLevelThree, simple, pendingDC2, 4},
	} {
		n := p.needFor(tc.cl, tc.st, tc.pending, true)
		if got := n.total(); got != tc.want {
			t.Errorf("%v %v pending %d: blockFor %d, want %d", tc.cl, tc.st.Options(), len(tc.pending), got, tc.want)
		}
	}
}

// A joining node gets the writes of the ranges it takes over, and counts
// toward blockFor as Cassandra's pending replicas do.
func TestPendingReplicas(t *testing.T) {
	c := newCluster(t, []string{"dc1", "dc1", "dc1", "dc1"}, rf("2"))
	joining, _ := c.ring.Node(c.hosts[3])
	members, err := c.ring.Without(c.hosts[3])
	if err != nil {
		t.Fatal(err)
	}
	for _, topo := range c.topos {
		topo.Publish(RingState{Ring: members, Joining: []ring.Node{joining}})
	}
	p := c.proxies[0]
	k := -1
	for i := range 100 {
		if _, pending, _ := c.topos[0].Replicas(c.ks, storage.Token(i32(i))); len(pending) == 1 {
			k = i
			break
		}
	}
	if k < 0 {
		t.Fatal("no partition with a pending replica")
	}
	if err := p.Apply(context.Background(), primitive.ConsistencyLevelOne, c.write(k, 0, "x", 10), primitive.WriteTypeSimple, nil); err != nil {
		t.Fatal(err)
	}
	p.Close()
	if c.rowsOf(3, k)[0] != "x" {
		t.Fatal("the joining node missed the write")
	}
	c.nodes[3].mode.Store(int32(hanging))
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	err = p.Apply(ctx, primitive.ConsistencyLevelQuorum, c.write(k, 0, "y", 20), primitive.WriteTypeSimple, nil)
	var wt *cqlerr.WriteTimeout
	if !errors.As(err, &wt) || wt.BlockFor != 3 || wt.Received != 2 {
		t.Fatalf("QUORUM at RF 2 with a pending replica hanging: %v (%+v)", err, wt)
	}
}

// onlyTopology hides a topology's optional abilities.
type onlyTopology struct{ Topology }

// soleReplications are keyspaces whose sole replica a ring of one member
// is, at levels it meets and at levels it does not.
var soleReplications = []map[string]string{rf("1"), rf("3"),
	{"class": "org.apache.cassandra.locator.NetworkTopologyStrategy", "dc1": "1", "dc2": "2"}}

// soleAndPlaced is a ring of one member holding a keyspace replicated as
// repl, with the member's proxy, which knows its sole replica, and a
// proxy over the same node that places each partition.
func soleAndPlaced(t *testing.T, repl map[string]string) (c *cluster, sole, placed *Proxy) {
	t.Helper()
	c = newCluster(t, []string{"dc1"}, repl)
	placed = New(Options{Topology: onlyTopology{c.topos[0]}, Liveness: c.live, Replicas: replicaMap{c.hosts[0]: c.nodes[0]},
		Keyspace: func(string) *storage.KeyspaceDef { return c.ks }})
	if _, _, ok := c.topos[0].SoleReplica(c.ks); !ok {
		t.Fatalf("%v: no sole replica on a ring of one", repl)
	}
	return c, c.proxies[0], placed
}

// On a node alone, a write is checked once per keyspace (its sole replica
// is this node) rather than per partition, and answers exactly as the
// placement of each partition would: the same writes land, the same
// levels are UNAVAILABLE with the same figures, AllLocal says the same.
func TestSoleReplicaWritesAnswerAsPlaced(t *testing.T) {
	for _, repl := range soleReplications {
		c, sole, placed := soleAndPlaced(t, repl)
		for i, cl := range writeLevels {
			m := func() *mutation.Mutation {
				m := c.write(i, 0, "a", 10)
				m.Updates = append(m.Updates, c.write(i+100, 0, "b", 10).Updates...)
				return m
			}
			err1 := sole.Apply(context.Background(), cl, m(), primitive.WriteTypeSimple, nil)
			err2 := placed.Apply(context.Background(), cl, m(), primitive.WriteTypeSimple, nil)
			if fmt.Sprint(err1) != fmt.Sprint(err2) {
				t.Fatalf("%v at %v: %v with the sole replica, %v placed", repl, cl, err1, err2)
			}
			if err1 == nil && c.rowsOf(0, i+100)[0] != "b" {
				t.Fatalf("%v at %v: the write did not land", repl, cl)
			}
			tok := storage.Token(i32(i))
			if a, b := sole.AllLocal(c.ks, tok, cl), placed.AllLocal(c.ks, tok, cl); a != b {
				t.Fatalf("%v at %v: AllLocal %v with the sole replica, %v placed", repl, cl, a, b)
			}
		}
	}
}

// A write the coordinator runs inline on a node alone (ApplyLocal) lands
// and is measured as one through Apply.
func TestApplyLocalMeasured(t *testing.T) {
	c := newCluster(t, []string{"dc1"}, rf("1"))
	p := c.proxies[0]
	count := func() int { return testutil.CollectAndCount(c.metrics.Latency, "cqld_proxy_request_seconds") }
	before := count()
	done := make(chan error, 1)
	pending, err := p.ApplyLocal(primitive.ConsistencyLevelOne, c.write(7, 0, "inline", 10), nil, func(err error) { done <- err })
	if pending {
		err = <-done
	}
	if err != nil {
		t.Fatal(err)
	}
	if got := c.rowsOf(0, 7)[0]; got != "inline" {
		t.Fatalf("row 7 holds %q", got)
	}
	if after := count(); after != before+1 {
		t.Fatalf("%d latency series after the write, %d before", after, before)
	}
}

// What a node alone meets by itself is worked out once per keyspace
// definition and ring (LocalAlone), and the next request sees a ring
// published or a keyspace altered after it: a write that the ring of two
// places on the other node goes there, a keyspace altered to RF 3 is
// UNAVAILABLE at QUORUM.
func TestLocalAloneFollowsRingAndSchema(t *testing.T) {
	c := newCluster(t, []string{"dc1", "dc1"}, rf("1"))
	p, topo, two := c.proxies[0], c.topos[0], c.ring
	one, _ := two.Without(c.hosts[1])
	st, _ := ring.ParseStrategy("ks", c.ks.Replication)
	k := 0
	for ; st.Replicas(two, storage.Token(i32(k)))[0] != c.hosts[1]; k++ {
	}
	tok := storage.Token(i32(k))
	quorum, ctx := primitive.ConsistencyLevelQuorum, context.Background()

	topo.Publish(RingState{Ring: one})
	if !p.AllLocal(c.ks, tok, quorum) {
		t.Fatal("a ring of one: not AllLocal")
	}
	if err := p.Apply(ctx, quorum, c.write(k, 0, "alone", 10), primitive.WriteTypeSimple, nil); err != nil {
		t.Fatal(err)
	}
	topo.Publish(RingState{Ring: two})
	if p.AllLocal(c.ks, tok, quorum) {
		t.Fatal("the ring of two published after: still AllLocal")
	}
	if err := p.Apply(ctx, quorum, c.write(k, 0, "placed", 11), primitive.WriteTypeSimple, nil); err != nil {
		t.Fatal(err)
	}
	p.Close()
	if a, b := c.rowsOf(0, k)[0], c.rowsOf(1, k)[0]; a != "alone" || b != "placed" {
		t.Fatalf("this node holds %q, its replica on the ring of two %q", a, b)
	}

	topo.Publish(RingState{Ring: one})
	if err := p.Apply(ctx, quorum, c.write(k, 0, "alone", 12), primitive.WriteTypeSimple, nil); err != nil {
		t.Fatal(err)
	}
	c.ks = &storage.KeyspaceDef{Name: "ks", Replication: rf("3")}
	err := p.Apply(ctx, quorum, c.write(k, 0, "rf3", 13), primitive.WriteTypeSimple, nil)
	if u, ok := errors.AsType[*cqlerr.Unavailable](err); !ok || u.Required != 2 || u.Alive != 1 {
		t.Fatalf("RF 3 at QUORUM on a node alone: %v", err)
	}
	if p.AllLocal(c.ks, tok, quorum) {
		t.Fatal("RF 3 at QUORUM: AllLocal")
	}
}

// On a node alone a counter write goes to this node's replica, which adds
// the deltas (Replica.Apply), and answers at every level as the leader's
// path (applyCounters) does: the same errors, the same totals.
func TestSoleReplicaCountersAnswerAsLeader(t *testing.T) {
	for _, repl := range soleReplications {
		c, sole, placed := soleAndPlaced(t, repl)
		for i, cl := range writeLevels {
			add := func() *mutation.Mutation {
				m := &mutation.Mutation{}
				m.AddCounter(c.ctr, i32(i), storage.CellTarget{Column: "n"}, 1, int64(10+i))
				return m
			}
			err1 := sole.Apply(context.Background(), cl, add(), primitive.WriteTypeCounter, nil)
			err2 := placed.applyCounters(context.Background(), cl, add(), primitive.WriteTypeCounter, nil)
			if fmt.Sprint(err1) != fmt.Sprint(err2) {
				t.Fatalf("%v at %v: %v with the sole replica, %v by the leader's path", repl, cl, err1, err2)
			}
			if err1 != nil {
				continue
			}
			var total int64
			if err := c.nodes[0].Local.ReadPartition(context.Background(), c.ctr, i32(i), storage.ReadOptions{Now: 1}, func(r *storage.Row) bool {
				for _, cc := range r.Cells {
					total = int64(binary.BigEndian.Uint64(cc.Cell.Value))
				}
				return true
			}); err != nil || total != 2 {
				t.Fatalf("%v at %v: counter %d, %v", repl, cl, total, err)
			}
		}
	}
}
