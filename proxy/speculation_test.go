package proxy

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/datastax/go-cassandra-native-protocol/primitive"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/cqld/cqld/storage"
)

// fakeTime is a clock tests move by hand and a timer that records the
// delays asked of it and fires at once.
type fakeTime struct {
	mu     sync.Mutex
	now    time.Time
	waited []time.Duration
}

func (f *fakeTime) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

func (f *fakeTime) advance(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.now = f.now.Add(d)
}

func (f *fakeTime) After(d time.Duration) <-chan time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.waited = append(f.waited, d)
	ch := make(chan time.Time)
	close(ch)
	return ch
}

func (f *fakeTime) asked() []time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]time.Duration(nil), f.waited...)
}

// speculationProxy is a proxy on node 0 of c with clock f and metrics of
// its own, and the partition k whose second replica (in the order node 0
// asks them) hangs.
func speculationProxy(t *testing.T, c *cluster, f *fakeTime) (*Proxy, *Metrics, int) {
	t.Helper()
	m := NewMetrics(prometheus.NewRegistry())
	p := New(Options{Topology: c.topos[0], Liveness: c.live, Replicas: replicaMap{c.hosts[0]: c.nodes[0], c.hosts[1]: c.nodes[1], c.hosts[2]: c.nodes[2]},
		Keyspace: func(string) *storage.KeyspaceDef { return c.ks },
		Metrics:  m, Now: f.Now, After: f.After, ReadTimeout: 5 * time.Second,
	})
	t.Cleanup(p.Close)
	k := 4
	for i := range c.nodes {
		c.applyOn(i, c.write(k, 0, "x", 10))
	}
	return p, m, k
}

func (c *cluster) hangSecond(k int) {
	for _, n := range c.replicasOf(k) {
		if n != 0 {
			c.nodes[n].mode.Store(int32(hanging))
			return
		}
	}
}

// Under a percentile policy (99p, the default) a read waits half the
// read timeout while the table has no latencies, then the 99th
// percentile of its recent reads, recomputed once per read timeout; past
// it, another replica is asked and the read answers from it.
func TestSpeculationFollowsPercentile(t *testing.T) {
	c := newCluster(t, []string{"dc1", "dc1", "dc1"}, rf("3"))
	c.tbl.Def.Options.SpeculativeRetry = "99p"
	f := &fakeTime{now: time.Unix(1e6, 0)}
	p, m, k := speculationProxy(t, c, f)
	read := func() {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel() // releases a hanging replica
		got := map[int]string{}
		if err := p.ReadPartition(ctx, primitive.ConsistencyLevelQuorum, c.tbl, i32(k), storage.ReadOptions{Now: 1}, func(r *storage.Row) bool { collect(got, r); return true }); err != nil || got[0] != "x" {
			t.Fatalf("read %v: %v", got, err)
		}
	}
	read()
	if got := f.asked(); len(got) != 1 || got[0] != 2500*time.Millisecond {
		t.Fatalf("waited %v before any latency, want half the read timeout", got)
	}
	// A hundred reads: 99 of 2 ms, one of 400 ms.
	for i := range 100 {
		start := f.Now()
		f.advance(map[bool]time.Duration{true: 400 * time.Millisecond, false: 2 * time.Millisecond}[i == 99])
		p.readDone(c.tbl, start)
	}
	read()
	if got := f.asked(); got[len(got)-1] != 2500*time.Millisecond {
		t.Fatalf("threshold %v before the read timeout passed: recomputed too soon", got[len(got)-1])
	}
	f.advance(5 * time.Second)
	c.hangSecond(k)
	read()
	got := f.asked()[len(f.asked())-1]
	if got < 2*time.Millisecond || got > 3*time.Millisecond {
		t.Fatalf("threshold %v, want the 99th percentile, about 2 ms", got)
	}
	if n := testutil.ToFloat64(m.SpeculativeRetries); n != 3 {
		t.Fatalf("%v speculative retries, want one per read", n)
	}
	// ALTER TABLE ... WITH speculative_retry = '99.5p' counts the 400 ms
	// one, at once.
	c.tbl.Def.Options.SpeculativeRetry = "99.5PERCENTILE"
	read()
	if got := f.asked()[len(f.asked())-1]; got < 400*time.Millisecond || got > 480*time.Millisecond {
		t.Fatalf("threshold %v under 99.5p, want about 400 ms", got)
	}
}

// A fixed time is waited as it is; NEVER waits for nothing and asks no
// other replica; ALWAYS asks one more replica, for data, from the start;
// a threshold past the read timeout is no speculation.
func TestSpeculationKinds(t *testing.T) {
	c := newCluster(t, []string{"dc1", "dc1", "dc1"}, rf("3"))
	f := &fakeTime{now: time.Unix(1e6, 0)}
	p, m, k := speculationProxy(t, c, f)
	// read waits for the replicas it asked beyond those it needed too.
	read := func(ctx context.Context) error {
		defer p.Close()
		return p.ReadPartition(ctx, primitive.ConsistencyLevelQuorum, c.tbl, i32(k), storage.ReadOptions{Now: 1}, func(*storage.Row) bool { return true })
	}
	c.tbl.Def.Options.SpeculativeRetry = "50ms"
	if err := read(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := f.asked(); len(got) != 1 || got[0] != 50*time.Millisecond {
		t.Fatalf("waited %v, want 50ms", got)
	}

	c.tbl.Def.Options.SpeculativeRetry = "ALWAYS"
	before, retries := callsOn(c), testutil.ToFloat64(m.SpeculativeRetries)
	if err := read(context.Background()); err != nil {
		t.Fatal(err)
	}
	if asked := callsOn(c) - before; asked != 3 || len(f.asked()) != 1 {
		t.Fatalf("ALWAYS asked %d replicas and waited %v, want all three at once", asked, f.asked()[1:])
	}
	if n := testutil.ToFloat64(m.SpeculativeRetries) - retries; n != 1 {
		t.Fatalf("%v speculative retries under ALWAYS", n)
	}

	for _, policy := range []string{"NEVER", "6000ms"} {
		c.tbl.Def.Options.SpeculativeRetry = policy
		c.hangSecond(k)
		before = callsOn(c)
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		err := read(ctx)
		cancel()
		if err == nil {
			t.Fatalf("%s: read answered with a replica hanging and no speculation", policy)
		}
		if asked := callsOn(c) - before; asked != 2 || len(f.asked()) != 1 {
			t.Fatalf("%s: asked %d replicas, waited %v", policy, asked, f.asked()[1:])
		}
		c.nodes[1].mode.Store(int32(healthy))
		c.nodes[2].mode.Store(int32(healthy))
	}
}

func callsOn(c *cluster) int64 {
	n := int64(0)
	for _, f := range c.nodes {
		n += f.calls.Load()
	}
	return n
}
