package proxy

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/datastax/go-cassandra-native-protocol/datatype"
	"github.com/datastax/go-cassandra-native-protocol/primitive"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/cqld/cqld/cqlerr"
	"github.com/cqld/cqld/messaging"
	"github.com/cqld/cqld/mutation"
	"github.com/cqld/cqld/storage"
)

func (c *cluster) applyOn(i int, m *mutation.Mutation) {
	c.t.Helper()
	if err := c.nodes[i].Local.Apply(context.Background(), m, nil); err != nil {
		c.t.Fatal(err)
	}
}

func (c *cluster) readAt(p *Proxy, cl primitive.ConsistencyLevel, k int) (map[int]string, error) {
	got := map[int]string{}
	err := p.ReadPartition(context.Background(), cl, c.tbl, i32(k), storage.ReadOptions{Now: 1}, func(r *storage.Row) bool {
		collect(got, r)
		return true
	})
	return got, err
}

// A replica that missed a write is made current by a read that sees it
// (blocking read repair), before the read answers: read back from the
// replica itself. A collection element is repaired too.
func TestReadRepairMakesStaleReplicaCurrent(t *testing.T) {
	c := newCluster(t, []string{"dc1", "dc1", "dc1"}, rf("3"))
	for i := range c.nodes {
		c.applyOn(i, c.write(7, 0, "old", 10))
	}
	fresh := c.write(7, 0, "new", 20)
	fresh.WriteCell(c.tbl, i32(7), storage.CellTarget{Clustering: [][]byte{i32(1)}, Column: "v"}, storage.Cell{Timestamp: 20, Value: []byte("added")})
	fresh.WriteCell(c.tbl, i32(7), storage.CellTarget{Clustering: [][]byte{i32(1)}, Column: "s", PathType: datatype.Int, Path: i32(42)}, storage.Cell{Timestamp: 20, Value: []byte{}})
	c.applyOn(1, fresh)

	got, err := c.readAt(c.proxies[0], primitive.ConsistencyLevelAll, 7)
	if err != nil {
		t.Fatal(err)
	}
	if got[0] != "new" || got[1] != "added" {
		t.Fatalf("read %v", got)
	}
	if n := testutil.ToFloat64(c.metrics.ReadRepairs); n != 2 {
		t.Fatalf("%v read repairs counted, want 2", n)
	}
	for i := range c.nodes {
		if r := c.rowsOf(i, 7); r[0] != "new" || r[1] != "added" {
			t.Fatalf("node %d after repair: %v", i, r)
		}
		part, err := c.nodes[i].Local.Read(context.Background(), c.tbl, i32(7), storage.Slice{})
		if err != nil {
			t.Fatal(err)
		}
		want, _ := c.nodes[1].Local.Read(context.Background(), c.tbl, i32(7), storage.Slice{})
		if !samePartition(part, want) {
			t.Fatalf("node %d holds %d keys after repair, node 1 %d", i, len(part.KVs), len(want.KVs))
		}
	}
}

// A tombstone on one replica shadows the data another still holds, at
// QUORUM, and the stale replica gets the tombstone.
func TestTombstoneShadowsAtQuorum(t *testing.T) {
	c := newCluster(t, []string{"dc1", "dc1", "dc1"}, rf("3"))
	for i := range c.nodes {
		c.applyOn(i, c.write(3, 0, "alive", 10))
	}
	del := &mutation.Mutation{}
	del.DeleteRow(c.tbl, i32(3), [][]byte{i32(0)}, storage.Cell{Timestamp: 20, Tombstone: true, LocalDeletionTime: 1})
	c.applyOn(1, del)
	c.setDown(2, true) // QUORUM from node 0 asks 0 and 1
	got, err := c.readAt(c.proxies[0], primitive.ConsistencyLevelQuorum, 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 0 {
		t.Fatalf("deleted row read back: %v", got)
	}
	if r := c.rowsOf(0, 3); len(r) != 0 {
		t.Fatalf("node 0 not repaired: %v", r)
	}
	if r := c.rowsOf(2, 3); r[0] != "alive" {
		t.Fatalf("node 2 was not asked, yet holds %v", r)
	}
	// A partition deletion shadows too, through Read.
	pd := &mutation.Mutation{}
	pd.DeletePartition(c.tbl, i32(3), storage.Cell{Timestamp: 30, Tombstone: true, LocalDeletionTime: 1})
	c.setDown(2, false)
	c.applyOn(2, c.write(3, 5, "late", 25))
	c.applyOn(0, pd)
	c.setDown(1, true)
	if got, err := c.readAt(c.proxies[2], primitive.ConsistencyLevelQuorum, 3); err != nil || len(got) != 0 {
		t.Fatalf("after the partition deletion: %v %v", got, err)
	}
}

// A replica that does not answer by the deadline is READ_TIMEOUT with what
// was received; one that fails is READ_FAILURE.
func TestReadTimeoutAndFailure(t *testing.T) {
	c := newCluster(t, []string{"dc1", "dc1", "dc1"}, rf("3"))
	c.nodes[1].mode.Store(int32(hanging))
	c.setDown(2, true)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	err := c.proxies[0].ReadPartition(ctx, primitive.ConsistencyLevelQuorum, c.tbl, i32(1), storage.ReadOptions{}, func(*storage.Row) bool { return true })
	var rt *cqlerr.ReadTimeout
	if !errors.As(err, &rt) || rt.Received != 1 || rt.BlockFor != 2 || !rt.DataPresent {
		t.Fatalf("%v (%+v)", err, rt)
	}
	c.nodes[1].mode.Store(int32(failing))
	err = c.proxies[0].ReadPartition(context.Background(), primitive.ConsistencyLevelQuorum, c.tbl, i32(1), storage.ReadOptions{}, func(*storage.Row) bool { return true })
	var rf *cqlerr.ReadFailure
	if !errors.As(err, &rf) || rf.BlockFor != 2 || len(rf.Reasons) != 1 {
		t.Fatalf("%v (%+v)", err, rf)
	}
}

// ANY reads are refused with Cassandra's words.
func TestRefusedReads(t *testing.T) {
	c := newCluster(t, []string{"dc1", "dc1", "dc1"}, rf("3"))
	for _, err := range []error{
		func() error { _, err := c.readAt(c.proxies[0], primitive.ConsistencyLevelAny, 1); return err }(),
		c.proxies[0].Scan(context.Background(), primitive.ConsistencyLevelAny, c.tbl, storage.ScanOptions{}, func([]byte, *storage.Row) bool { return true }),
	} {
		var ce *cqlerr.Error
		if !errors.As(err, &ce) || ce.Code != primitive.ErrorCodeInvalid || ce.Msg != "ANY ConsistencyLevel is only supported for writes" {
			t.Fatalf("ANY: %v", err)
		}
	}
}

// Increments through two coordinators at once are all counted.
func TestCountersThroughTwoProxies(t *testing.T) {
	c := newCluster(t, []string{"dc1", "dc1", "dc1"}, rf("3"))
	const perProxy = 40
	var wg sync.WaitGroup
	errs := make(chan error, 2*perProxy)
	for _, p := range c.proxies[:2] {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perProxy {
				m := &mutation.Mutation{}
				m.AddCounter(c.ctr, i32(1), storage.CellTarget{Column: "n"}, 1, int64(100+i))
				errs <- p.Apply(context.Background(), primitive.ConsistencyLevelQuorum, m, primitive.WriteTypeCounter, nil)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range c.proxies {
		p.Close()
	}
	for i := range c.nodes {
		var total int64
		err := c.nodes[i].Local.ReadPartition(context.Background(), c.ctr, i32(1), storage.ReadOptions{Now: 1}, func(r *storage.Row) bool {
			for _, cc := range r.Cells {
				total = int64(binary.BigEndian.Uint64(cc.Cell.Value))
			}
			return true
		})
		if err != nil {
			t.Fatal(err)
		}
		if total != 2*perProxy {
			t.Fatalf("node %d counts %d, want %d", i, total, 2*perProxy)
		}
	}
	m := &mutation.Mutation{}
	m.AddCounter(c.ctr, i32(1), storage.CellTarget{Column: "n"}, 1, 1)
	var ce *cqlerr.Error
	if err := c.proxies[0].Apply(context.Background(), primitive.ConsistencyLevelAny, m, primitive.WriteTypeCounter, nil); !errors.As(err, &ce) {
		t.Fatalf("counter at ANY: %v", err)
	}
}

// Two data centers: LOCAL_QUORUM and LOCAL_ONE need the local one alone,
// EACH_QUORUM a quorum in each, QUORUM a quorum of the sum.
func TestMultiDC(t *testing.T) {
	c := newCluster(t, []string{"dc1", "dc1", "dc1", "dc2", "dc2"},
		map[string]string{"class": "org.apache.cassandra.locator.NetworkTopologyStrategy", "dc1": "3", "dc2": "2"})
	c.setDown(3, true)
	c.setDown(4, true)
	ctx := context.Background()
	p := c.proxies[0]
	for _, cl := range []primitive.ConsistencyLevel{primitive.ConsistencyLevelLocalQuorum, primitive.ConsistencyLevelLocalOne, primitive.ConsistencyLevelQuorum} {
		if err := p.Apply(ctx, cl, c.write(1, 0, "x", 10), primitive.WriteTypeSimple, nil); err != nil {
			t.Fatalf("%v with dc2 down: %v", cl, err)
		}
		if _, err := c.readAt(p, cl, 1); err != nil {
			t.Fatalf("%v read with dc2 down: %v", cl, err)
		}
	}
	err := p.Apply(ctx, primitive.ConsistencyLevelEachQuorum, c.write(1, 0, "x", 10), primitive.WriteTypeSimple, nil)
	var ua *cqlerr.Unavailable
	if !errors.As(err, &ua) || ua.Required != 2 || ua.Alive != 0 {
		t.Fatalf("EACH_QUORUM with dc2 down: %v", err)
	}
	if _, err := c.readAt(p, primitive.ConsistencyLevelEachQuorum, 1); !errors.As(err, &ua) || ua.Required != 2 || ua.Alive != 0 {
		t.Fatalf("EACH_QUORUM read with dc2 down: %v", err)
	}
	// With every node up, an EACH_QUORUM read asks two replicas in each
	// data center and repairs what dc2 missed.
	c.setDown(3, false)
	c.setDown(4, false)
	if got, err := c.readAt(p, primitive.ConsistencyLevelEachQuorum, 1); err != nil || got[0] != "x" {
		t.Fatalf("EACH_QUORUM read: %v %v", got, err)
	}
	if c.rowsOf(3, 1)[0] != "x" || c.rowsOf(4, 1)[0] != "x" {
		t.Fatal("the EACH_QUORUM read did not repair dc2")
	}
	c.setDown(3, true)
	c.setDown(4, true)
	// From dc2, LOCAL_ONE with dc2 down is unavailable though dc1 is up.
	c.setDown(3, false)
	c.setDown(4, false)
	c.setDown(0, true)
	c.setDown(1, true)
	c.setDown(2, true)
	if err := c.proxies[3].Apply(ctx, primitive.ConsistencyLevelLocalQuorum, c.write(1, 0, "y", 20), primitive.WriteTypeSimple, nil); err != nil {
		t.Fatal(err)
	}
	c.setDown(4, true)
	err = c.proxies[3].Apply(ctx, primitive.ConsistencyLevelLocalQuorum, c.write(1, 0, "y", 20), primitive.WriteTypeSimple, nil)
	if !errors.As(err, &ua) || ua.Required != 2 || ua.Alive != 1 {
		t.Fatalf("LOCAL_QUORUM in dc2 with one of two up: %v", err)
	}
	if err := c.proxies[3].Apply(ctx, primitive.ConsistencyLevelEachQuorum, c.write(1, 0, "y", 20), primitive.WriteTypeSimple, nil); !errors.As(err, &ua) {
		t.Fatalf("EACH_QUORUM: %v", err)
	}
}

// TRUNCATE needs every replica up and reaches them all.
func TestTruncate(t *testing.T) {
	c := newCluster(t, []string{"dc1", "dc1", "dc1"}, rf("2"))
	for k := range 20 {
		if err := c.proxies[0].Apply(context.Background(), primitive.ConsistencyLevelAll, c.write(k, 0, "x", 10), primitive.WriteTypeSimple, nil); err != nil {
			t.Fatal(err)
		}
	}
	c.setDown(2, true)
	var ua *cqlerr.Unavailable
	if err := c.proxies[0].Truncate(context.Background(), c.tbl); !errors.As(err, &ua) || ua.Consistency != primitive.ConsistencyLevelAll || ua.Required != 3 || ua.Alive != 2 {
		t.Fatalf("truncate with a node down: %v", err)
	}
	c.setDown(2, false)
	// A replica that does not answer by the deadline: TRUNCATE_ERROR
	// naming the answers received, as Cassandra's.
	c.nodes[2].mode.Store(int32(hanging))
	short, cancel := context.WithTimeout(context.Background(), time.Second)
	err := c.proxies[0].Truncate(short, c.tbl)
	cancel()
	var ce *cqlerr.Error
	if !errors.As(err, &ce) || ce.Code != primitive.ErrorCodeTruncateError ||
		!regexp.MustCompile(`^Error during truncate: Truncate timed out - received only [012] responses$`).MatchString(ce.Msg) {
		t.Fatalf("truncate with a replica hanging: %v", err)
	}
	c.nodes[2].mode.Store(int32(healthy))
	if err := c.proxies[0].Truncate(context.Background(), c.tbl); err != nil {
		t.Fatal(err)
	}
	for i := range c.nodes {
		for k := range 20 {
			if r := c.rowsOf(i, k); len(r) != 0 {
				t.Fatalf("node %d still holds %d", i, k)
			}
		}
	}
}

// A conditional write at ANY, through a coordinator that is not the
// partition's primary replica, still reaches every replica.
func TestConditionalAnyReplicates(t *testing.T) {
	c := newCluster(t, []string{"dc1", "dc1", "dc1"}, rf("3"))
	k := 2
	other := (c.replicasOf(k)[0] + 1) % 3
	cas := c.cas(k, primitive.ConsistencyLevelAny, func(*storage.Partition) (*mutation.Update, error) {
		return c.write(k, 0, "any", 50).Updates[0], nil
	})
	if err := c.proxies[other].Conditional(context.Background(), cas); err != nil {
		t.Fatal(err)
	}
	c.proxies[other].Close()
	for i := range c.nodes {
		if c.rowsOf(i, k)[0] != "any" {
			t.Fatalf("node %d lacks the conditional write", i)
		}
	}
}

// A replica slower than the speculative retry delay has another asked in
// its place, and the read answers from the two that did; without
// speculation it times out.
func TestSpeculativeRetry(t *testing.T) {
	c := newCluster(t, []string{"dc1", "dc1", "dc1"}, rf("3"))
	for i := range c.nodes {
		c.applyOn(i, c.write(4, 0, "x", 10))
	}
	// Node 0 reads at QUORUM from itself and the next replica in
	// placement order: make that one hang.
	var second int
	for _, n := range c.replicasOf(4) {
		if n != 0 {
			second = n
			break
		}
	}
	c.nodes[second].mode.Store(int32(hanging))
	fired := make(chan time.Time)
	close(fired) // the delay has passed as soon as it is asked for
	c.tbl.Def.Options.SpeculativeRetry = "1ms"
	p := New(Options{Topology: c.topos[0], Liveness: c.live, Replicas: replicaMap{c.hosts[0]: c.nodes[0], c.hosts[1]: c.nodes[1], c.hosts[2]: c.nodes[2]},
		Keyspace: func(string) *storage.KeyspaceDef { return c.ks },
		Metrics:  c.metrics,
		After:    func(time.Duration) <-chan time.Time { return fired },
	})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	got := map[int]string{}
	if err := p.ReadPartition(ctx, primitive.ConsistencyLevelQuorum, c.tbl, i32(4), storage.ReadOptions{Now: 1}, func(r *storage.Row) bool { collect(got, r); return true }); err != nil {
		t.Fatal(err)
	}
	if got[0] != "x" {
		t.Fatalf("read %v", got)
	}
	if n := testutil.ToFloat64(c.metrics.SpeculativeRetries); n != 1 {
		t.Fatalf("%v speculative retries", n)
	}
	cancel() // releases the hanging read
	p.Close()
	c.tbl.Def.Options.SpeculativeRetry = "NEVER"

	short, cancel2 := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel2()
	var rt *cqlerr.ReadTimeout
	if err := c.proxies[0].ReadPartition(short, primitive.ConsistencyLevelQuorum, c.tbl, i32(4), storage.ReadOptions{}, func(*storage.Row) bool { return true }); !errors.As(err, &rt) {
		t.Fatalf("without speculation: %v", err)
	}
}

// A coordinator that is no replica of a counter hands the deltas to the
// leader; at RF 1 the leader is the one replica.
func TestCounterLeaderElsewhere(t *testing.T) {
	c := newCluster(t, []string{"dc1", "dc1", "dc1"}, rf("1"))
	for k := range 10 {
		for _, p := range c.proxies {
			m := &mutation.Mutation{}
			m.AddCounter(c.ctr, i32(k), storage.CellTarget{Column: "n"}, 2, 1)
			if err := p.Apply(context.Background(), primitive.ConsistencyLevelOne, m, primitive.WriteTypeCounter, nil); err != nil {
				t.Fatal(err)
			}
			if m.HasCounters() {
				t.Fatal("the mutation does not hold the totals written")
			}
		}
		owner := c.replicasOf(k)[0]
		var total int64
		err := c.nodes[owner].Local.ReadPartition(context.Background(), c.ctr, i32(k), storage.ReadOptions{Now: 1}, func(r *storage.Row) bool {
			total = int64(binary.BigEndian.Uint64(r.Cells[0].Cell.Value))
			return true
		})
		if err != nil || total != 6 {
			t.Fatalf("counter %d on its replica: %d %v", k, total, err)
		}
	}
}

// A read at QUORUM whose replicas agree moves one partition over the
// network: data from one replica, a digest from the other. When they
// differ, every replica asked is read in full and the stale ones are
// repaired.
func TestDigestReads(t *testing.T) {
	c := newCluster(t, []string{"dc1", "dc1", "dc1", "dc1"}, rf("3"))
	w := c.wire()
	// A partition node 0 holds no replica of, so both replicas a QUORUM
	// read asks are remote.
	k := 0
	for ; slices.Contains(c.replicasOf(k), 0); k++ {
	}
	big := strings.Repeat("x", 16<<10)
	for _, i := range c.replicasOf(k) {
		c.applyOn(i, c.write(k, 0, big, 10))
	}
	got, err := c.readAt(w.proxies[0], primitive.ConsistencyLevelQuorum, k)
	if err != nil || got[0] != big {
		t.Fatalf("read %d bytes, %v", len(got[0]), err)
	}
	msgs, bytes := w.received(0, messaging.VerbRead)
	if msgs != 2 || bytes < 16<<10 || bytes >= 2*16<<10 {
		t.Fatalf("the read received %v messages of %v bytes: want 2 with one 16 KiB partition", msgs, bytes)
	}
	if n := testutil.ToFloat64(c.metrics.DigestMismatches); n != 0 {
		t.Fatalf("%v digest mismatches", n)
	}

	// One replica takes a newer write the others missed: at ALL, its
	// data or digest differs, all three are read in full, and the two
	// stale ones repaired.
	fresh := c.replicasOf(k)[1]
	c.applyOn(fresh, c.write(k, 0, "new", 20))
	got, err = c.readAt(w.proxies[0], primitive.ConsistencyLevelAll, k)
	if err != nil || got[0] != "new" {
		t.Fatalf("read %q, %v", got[0], err)
	}
	if n := testutil.ToFloat64(c.metrics.DigestMismatches); n != 1 {
		t.Fatalf("%v digest mismatches, want 1", n)
	}
	if n := testutil.ToFloat64(c.metrics.ReadRepairs); n != 2 {
		t.Fatalf("%v read repairs, want 2", n)
	}
	for _, i := range c.replicasOf(k) {
		if r := c.rowsOf(i, k); r[0] != "new" {
			t.Fatalf("replica %d holds %.10q after the read", i, r[0])
		}
	}
}

// On a node alone, a read goes to this node's replica without placing
// its token (its sole replica is this node), and answers exactly as the
// placed read would: the same rows, the same partition, the same levels
// refused with the same figures, and no latencies kept for speculation.
func TestSoleReplicaReadsAnswerAsPlaced(t *testing.T) {
	for _, repl := range soleReplications {
		c, sole, placed := soleAndPlaced(t, repl)
		if err := sole.Apply(context.Background(), primitive.ConsistencyLevelAny, c.write(1, 0, "a", 10), primitive.WriteTypeSimple, nil); err != nil {
			t.Fatal(err)
		}
		for _, cl := range writeLevels {
			read := func(p *Proxy) (map[int]string, int, error) {
				rows := map[int]string{}
				err := p.ReadPartition(context.Background(), cl, c.tbl, i32(1), storage.ReadOptions{Now: 1}, func(r *storage.Row) bool {
					collect(rows, r)
					return true
				})
				part, err2 := p.Read(context.Background(), cl, c.tbl, i32(1), storage.Slice{})
				if fmt.Sprint(err) != fmt.Sprint(err2) {
					t.Fatalf("%v at %v: ReadPartition %v, Read %v", repl, cl, err, err2)
				}
				if part == nil {
					return rows, -1, err
				}
				return rows, len(part.KVs), err
			}
			rows1, kvs1, err1 := read(sole)
			rows2, kvs2, err2 := read(placed)
			if fmt.Sprint(err1) != fmt.Sprint(err2) || fmt.Sprint(rows1) != fmt.Sprint(rows2) || kvs1 != kvs2 {
				t.Fatalf("%v at %v: %v %v %d with the sole replica, %v %v %d placed", repl, cl, rows1, err1, kvs1, rows2, err2, kvs2)
			}
			if err1 == nil && rows1[0] != "a" {
				t.Fatalf("%v at %v: read %v", repl, cl, rows1)
			}
		}
		if _, ok := sole.tables.Load(c.tbl.Def.ID); ok {
			t.Fatalf("%v: reads on a node alone kept latencies", repl)
		}
	}
}

// A read the coordinator runs inline on a node alone (ReadLocal) answers
// this node's rows and is measured as one through ReadPartition.
func TestReadLocalMeasured(t *testing.T) {
	c := newCluster(t, []string{"dc1"}, rf("1"))
	p := c.proxies[0]
	if err := p.Apply(context.Background(), primitive.ConsistencyLevelOne, c.write(7, 0, "inline", 10), primitive.WriteTypeSimple, nil); err != nil {
		t.Fatal(err)
	}
	count := func() int { return testutil.CollectAndCount(c.metrics.Latency, "cqld_proxy_request_seconds") }
	before := count()
	got := map[int]string{}
	err := p.ReadLocal(context.Background(), primitive.ConsistencyLevelOne, c.tbl, i32(7), storage.ReadOptions{Now: 1}, func(r *storage.Row) bool {
		collect(got, r)
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	if got[0] != "inline" {
		t.Fatalf("ReadLocal of row 7: %v", got)
	}
	if after := count(); after != before+1 {
		t.Fatalf("%d latency series after the read, %d before", after, before)
	}
}
