package proxy

import (
	"context"
	"errors"
	"net/netip"
	"testing"
	"time"

	"github.com/datastax/go-cassandra-native-protocol/primitive"

	"github.com/cqld/cqld/batchlog"
	"github.com/cqld/cqld/cqlerr"
	"github.com/cqld/cqld/messaging"
	"github.com/cqld/cqld/mutation"
	"github.com/cqld/cqld/ring"
	"github.com/cqld/cqld/storage"
)

// twoPartitions is a logged batch writing v to partitions a and b.
func (c *cluster) twoPartitions(a, b int, v string) *mutation.Mutation {
	m := c.write(a, 0, v, 10)
	m.WriteCell(c.tbl, i32(b), storage.CellTarget{Clustering: [][]byte{i32(0)}, Column: "v"}, storage.Cell{Timestamp: 10, Value: []byte(v)})
	return m
}

// eventuallyEmpty waits, within a bound, for every batchlog to be empty.
func (w *wired) eventuallyEmpty(t *testing.T) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		left := 0
		for _, n := range w.logged(t) {
			left += n
		}
		if left == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("batchlogs still hold %v", w.logged(t))
		}
	}
}

// A logged batch of two partitions is stored in the batchlogs of two
// other nodes before its writes, and removed from them once written; a
// batch of one partition, or unlogged, does not touch the batchlog.
func TestLoggedBatchGoesThroughTheBatchlog(t *testing.T) {
	c := newCluster(t, []string{"dc1", "dc1", "dc1", "dc1"}, rf("3"))
	w := c.wire()
	p := w.proxies[0]
	ctx := context.Background()
	if err := p.Apply(ctx, primitive.ConsistencyLevelQuorum, c.twoPartitions(1, 2, "logged"), primitive.WriteTypeBatch, nil); err != nil {
		t.Fatal(err)
	}
	if n := w.sent(0, messaging.VerbBatchStore); n != 2 {
		t.Fatalf("%v batchlog writes sent, want 2", n)
	}
	if logged := w.logged(t); logged[0] != 0 {
		t.Fatalf("the coordinator logged its own batch: %v", logged)
	}
	w.eventuallyEmpty(t)
	if n := w.sent(0, messaging.VerbBatchRemove); n != 2 {
		t.Fatalf("%v batchlog removals sent, want 2", n)
	}
	p.Close()
	for _, k := range []int{1, 2} {
		for _, i := range c.replicasOf(k) {
			if c.rowsOf(i, k)[0] != "logged" {
				t.Fatalf("replica %d lacks partition %d", i, k)
			}
		}
	}
	for _, m := range []*mutation.Mutation{c.write(3, 0, "one", 10), c.write(3, 1, "one", 10)} {
		if err := p.Apply(ctx, primitive.ConsistencyLevelQuorum, m, primitive.WriteTypeBatch, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.Apply(ctx, primitive.ConsistencyLevelQuorum, c.twoPartitions(4, 5, "unlogged"), primitive.WriteTypeUnloggedBatch, nil); err != nil {
		t.Fatal(err)
	}
	if n := w.sent(0, messaging.VerbBatchStore); n != 2 {
		t.Fatalf("%v batchlog writes sent in all, want still 2", n)
	}
}

// A batchlog that does not answer is WRITE_TIMEOUT of type BATCH_LOG at
// TWO (the batchlog's level); replicas that do not answer after it is
// logged, of type BATCH at the request's level, and then the batch stays
// logged: a batchlog node replays it, and every replica has it.
func TestLoggedBatchTimeoutsAndReplay(t *testing.T) {
	c := newCluster(t, []string{"dc1", "dc1", "dc1", "dc1"}, rf("3"))
	w := c.wire()
	p := w.proxies[0]
	dropping := func(verb messaging.Verb) {
		w.net.SetFault(func(_, _ netip.AddrPort, v messaging.Verb, _ bool) messaging.Fault {
			return messaging.Fault{Drop: v == verb}
		})
	}
	short := func() context.Context {
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		t.Cleanup(cancel)
		return ctx
	}
	dropping(messaging.VerbBatchStore)
	err := p.Apply(short(), primitive.ConsistencyLevelQuorum, c.twoPartitions(1, 2, "x"), primitive.WriteTypeBatch, nil)
	var wt *cqlerr.WriteTimeout
	if !errors.As(err, &wt) || wt.WriteType != primitive.WriteTypeBatchLog || wt.Consistency != primitive.ConsistencyLevelTwo || wt.BlockFor != 2 {
		t.Fatalf("batchlog dropped: %v (%+v)", err, wt)
	}
	for _, k := range []int{1, 2} {
		for i := range c.nodes {
			if len(c.rowsOf(i, k)) != 0 {
				t.Fatalf("node %d holds partition %d of a batch that was never logged", i, k)
			}
		}
	}

	dropping(messaging.VerbMutation)
	err = p.Apply(short(), primitive.ConsistencyLevelAll, c.twoPartitions(1, 2, "replayed"), primitive.WriteTypeBatch, nil)
	if !errors.As(err, &wt) || wt.WriteType != primitive.WriteTypeBatch || wt.Consistency != primitive.ConsistencyLevelAll {
		t.Fatalf("writes dropped: %v (%+v)", err, wt)
	}
	p.Close()
	w.net.SetFault(nil)
	var holders []int
	for i, n := range w.logged(t) {
		if n == 1 {
			holders = append(holders, i)
		}
	}
	if len(holders) != 2 {
		t.Fatalf("batchlogs hold %v, want the batch on two nodes", w.logged(t))
	}
	// One of them replays it once it is old enough.
	r := holders[0]
	clk := time.Now().Add(time.Minute)
	m := batchlog.Start(batchlog.ManagerOptions{Store: w.batches[r], Replayer: w.proxies[r], ReplayAfter: time.Second,
		Tables: func(id [16]byte) (*storage.Table, bool) { return c.tbl, id == c.tbl.Def.ID },
		Now:    func() time.Time { return clk },
		// No timer rounds: the test runs one.
		After: func(time.Duration) <-chan time.Time { return nil }})
	defer m.Close()
	if err := m.Replay(context.Background()); err != nil {
		t.Fatal(err)
	}
	w.proxies[r].Close()
	for _, k := range []int{1, 2} {
		for _, i := range c.replicasOf(k) {
			if c.rowsOf(i, k)[0] != "replayed" {
				t.Fatalf("replica %d lacks partition %d after the replay", i, k)
			}
		}
	}
	if n := w.logged(t)[r]; n != 0 {
		t.Fatalf("the replaying node still holds %d batches", n)
	}
}

// The batchlog nodes are other live nodes of this data center, two of
// other racks when there are two, of two racks when there are several;
// this node when alone in its data center or, under ANY, when no other is
// up; UNAVAILABLE at ONE otherwise.
func TestBatchlogHosts(t *testing.T) {
	node := func(i byte, dc, rack string) ring.Node {
		return ring.Node{HostID: ring.HostID{i}, Addr: netip.AddrFrom4([4]byte{127, 0, 0, i}), DC: dc, Rack: rack, Tokens: []int64{int64(i) * 1000}}
	}
	hosts := func(ns ...ring.Node) (*Proxy, *liveness) {
		r, err := ring.New(ns)
		if err != nil {
			t.Fatal(err)
		}
		live := &liveness{down: map[ring.HostID]bool{}}
		seq := uint64(0)
		return New(Options{Topology: NewRingTopology(ns[0].HostID, ns[0].DC, RingState{Ring: r}), Liveness: live,
			Random: func() uint64 { seq++; return seq }}), live
	}
	racks := func(p *Proxy, any bool) ([]string, error) {
		hs, err := p.batchlogHosts(any)
		var out []string
		for _, h := range hs {
			for _, n := range p.opts.Topology.Nodes() {
				if n.HostID == h {
					out = append(out, n.Rack+string('0'+h[0]))
				}
			}
		}
		return out, err
	}
	// Alone in dc1 (dc2 has others): this node.
	p, _ := hosts(node(1, "dc1", "a"), node(2, "dc2", "a"), node(3, "dc2", "a"))
	if got, err := racks(p, false); err != nil || len(got) != 1 || got[0] != "a1" {
		t.Fatalf("alone in its data center: %v %v", got, err)
	}
	// Two others: both, whatever their racks.
	p, live := hosts(node(1, "dc1", "a"), node(2, "dc1", "a"), node(3, "dc1", "a"))
	if got, err := racks(p, false); err != nil || len(got) != 2 {
		t.Fatalf("two others: %v %v", got, err)
	}
	// One of them down: the other alone; both down: unavailable, or this
	// node under ANY.
	live.down[ring.HostID{2}] = true
	if got, err := racks(p, false); err != nil || len(got) != 1 || got[0] != "a3" {
		t.Fatalf("one other up: %v %v", got, err)
	}
	live.down[ring.HostID{3}] = true
	var ua *cqlerr.Unavailable
	if _, err := racks(p, false); !errors.As(err, &ua) || ua.Consistency != primitive.ConsistencyLevelOne || ua.Required != 1 || ua.Alive != 0 {
		t.Fatalf("no other up: %v", err)
	}
	if got, err := racks(p, true); err != nil || len(got) != 1 || got[0] != "a1" {
		t.Fatalf("no other up, ANY: %v %v", got, err)
	}
	// Other racks b and c have two nodes between them: those, not the
	// local rack's.
	p, _ = hosts(node(1, "dc1", "a"), node(2, "dc1", "a"), node(3, "dc1", "a"), node(4, "dc1", "b"), node(5, "dc1", "c"))
	if got, err := racks(p, false); err != nil || len(got) != 2 || got[0][0] == 'a' || got[1][0] == 'a' || got[0][0] == got[1][0] {
		t.Fatalf("other racks: %v %v", got, err)
	}
	// One other rack with one node: the local rack too, and the two come
	// from different racks.
	p, _ = hosts(node(1, "dc1", "a"), node(2, "dc1", "a"), node(3, "dc1", "a"), node(4, "dc1", "b"))
	if got, err := racks(p, false); err != nil || len(got) != 2 || got[0][0] == got[1][0] {
		t.Fatalf("one other rack: %v %v", got, err)
	}
	// All in one rack: two of them.
	p, _ = hosts(node(1, "dc1", "a"), node(2, "dc1", "a"), node(3, "dc1", "a"), node(4, "dc1", "a"))
	if got, err := racks(p, false); err != nil || len(got) != 2 || got[0] == got[1] {
		t.Fatalf("one rack: %v %v", got, err)
	}
}
