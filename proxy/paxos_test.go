package proxy

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"math"
	"net/netip"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/datastax/go-cassandra-native-protocol/primitive"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"

	"github.com/cqld/cqld/commitlog"
	"github.com/cqld/cqld/cqlerr"
	"github.com/cqld/cqld/messaging"
	"github.com/cqld/cqld/mutation"
	"github.com/cqld/cqld/replica"
	"github.com/cqld/cqld/ring"
	"github.com/cqld/cqld/storage"
)

// A Paxos test cluster: nodes with real engines, serving their replicas
// over messaging's in-memory network, whose links tests cut and whose
// messages they drop; each node's proxy reaches its own replica directly
// and the others through replica.Remote.
type paxosCluster struct {
	t       *testing.T
	net     *messaging.InmemNetwork
	hosts   []ring.HostID
	addrs   []netip.AddrPort
	locals  []*replica.Local
	proxies []*Proxy
	live    *liveness
	metrics *CASMetrics
	ring    *ring.Ring
	tbl     *storage.Table
	ks      *storage.KeyspaceDef
}

func newPaxosCluster(t *testing.T, n int, replication map[string]string) *paxosCluster {
	t.Helper()
	dcs := make([]string, n)
	for i := range dcs {
		dcs[i] = "dc1"
	}
	return newPaxosClusterIn(t, dcs, replication)
}

// newPaxosClusterIn is a cluster of one node per entry of dcs, in that
// data center.
func newPaxosClusterIn(t *testing.T, dcs []string, replication map[string]string) *paxosCluster {
	t.Helper()
	n := len(dcs)
	c := &paxosCluster{t: t, net: messaging.NewInmemNetwork(), live: &liveness{down: map[ring.HostID]bool{}}}
	c.ks = &storage.KeyspaceDef{Name: "ks", Replication: replication}
	c.tbl = table(t, &storage.TableDef{Keyspace: "ks", Name: "t", ID: [16]byte{1}, Columns: []storage.ColumnDef{
		{Name: "k", Type: "int", Kind: storage.KindPartitionKey, Position: 0, Order: "none"},
		{Name: "c", Type: "int", Kind: storage.KindClustering, Position: 0, Order: "asc"},
		{Name: "v", Type: "text", Kind: storage.KindRegular, Position: -1, Order: "none"},
	}})
	tables := func(id [16]byte) (*storage.Table, bool) { return c.tbl, id == c.tbl.Def.ID }
	var members []ring.Node
	step := uint64(math.MaxUint64 / uint64(n*4))
	var trs []*messaging.InmemTransport
	for i := range n {
		h := ring.HostID{byte(i + 1)}
		addr := netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, 11, byte(i + 1)}), 7000)
		c.hosts, c.addrs = append(c.hosts, h), append(c.addrs, addr)
		nd := ring.Node{HostID: h, Addr: addr.Addr(), DC: dcs[i], Rack: "r1"}
		for j := range 4 {
			nd.Tokens = append(nd.Tokens, int64(uint64(1<<63)+step*uint64(j*n+i)+12345))
		}
		members = append(members, nd)
		fs := vfs.NewMem()
		e, err := storage.OpenEngine(storage.EngineOptions{
			FS: fs, Dir: "data", CacheSize: 1 << 20, MemTableSize: 1 << 20,
			Log:    commitlog.Options{Dir: "commitlog", Sync: "periodic", SegmentSize: 1 << 20},
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = e.Close() })
		l := replica.NewLocal(e)
		// Requests across a partition end at the timeout, which the tests
		// with one wait out when their proxies close; long enough that a
		// request answered on a loaded machine (-race, other tests) does
		// not time out.
		tr, err := c.net.NewTransport(messaging.Options{ClusterName: "test", HostID: h, Addr: addr, RequestTimeout: 3 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = tr.Close() })
		replica.Serve(tr, l, tables, nil)
		c.locals, trs = append(c.locals, l), append(trs, tr)
	}
	r, err := ring.New(members)
	if err != nil {
		t.Fatal(err)
	}
	c.ring = r
	c.metrics = NewCASMetrics(prometheus.NewRegistry())
	for i, h := range c.hosts {
		reps := replicaMap{}
		for j, o := range c.hosts {
			if j == i {
				reps[o] = c.locals[j]
			} else {
				rem := replica.NewRemote(trs[i], c.addrs[j], replica.RemoteOptions{})
				t.Cleanup(rem.Close)
				reps[o] = rem
			}
		}
		p := New(Options{
			Topology:   NewRingTopology(h, dcs[i], RingState{Ring: r}),
			Liveness:   c.live,
			Replicas:   reps,
			CASMetrics: c.metrics,
			// Round trips are counted: a slow run must not leave the
			// repeat proposer's window.
			RepeatWindow: time.Hour,
			// Nor past cas_contention_timeout's default while it waits for
			// a CPU: tests that want a timeout give a context one.
			CASContentionTimeout: 10 * time.Second,
			Keyspace: func(name string) *storage.KeyspaceDef {
				if name == "ks" {
					return c.ks
				}
				return nil
			},
		})
		t.Cleanup(p.Close)
		c.proxies = append(c.proxies, p)
	}
	return c
}

// replicasOf are the indexes of partition k's replicas, in placement
// order.
func (c *paxosCluster) replicasOf(k int) []int { return replicaIndexes(c.t, c.ks, c.ring, c.hosts, k) }

// set is the update of row (k, 0) to v.
func (c *paxosCluster) set(k int, v string) *mutation.Update {
	m := &mutation.Mutation{}
	m.WriteCell(c.tbl, i32(k), storage.CellTarget{Clustering: [][]byte{i32(0)}, Column: "v"}, storage.Cell{Timestamp: 1, Value: []byte(v)})
	return m.Updates[0]
}

// value is row (k, 0)'s v in data ("" when none).
func (c *paxosCluster) value(data *storage.Partition) string {
	v := ""
	err := c.tbl.Resolve(data, storage.ReadOptions{Now: 1}, func(r *storage.Row) bool {
		for _, cc := range r.Cells {
			if cc.Column == "v" {
				v = string(cc.Cell.Value)
			}
		}
		return true
	})
	if err != nil {
		c.t.Fatal(err)
	}
	return v
}

// casSet is the CAS on partition k: v becomes to if it is from.
func (c *paxosCluster) casSet(k int, from, to string, cl primitive.ConsistencyLevel, applied *bool) *CAS {
	return &CAS{Table: c.tbl, Key: i32(k), Serial: primitive.ConsistencyLevelSerial, Commit: cl,
		Decide: func(data *storage.Partition) (*mutation.Update, error) {
			*applied = c.value(data) == from
			if !*applied {
				return nil, nil
			}
			return c.set(k, to), nil
		}}
}

// serial reads partition k's v at SERIAL through proxy i.
func (c *paxosCluster) serial(i, k int) (string, error) {
	data, err := c.proxies[i].Read(context.Background(), primitive.ConsistencyLevelSerial, c.tbl, i32(k), storage.Slice{})
	if err != nil {
		return "", err
	}
	return c.value(data), nil
}

// onReplica is row (k, 0)'s v on node i's own replica.
func (c *paxosCluster) onReplica(i, k int) string {
	p, err := c.locals[i].Read(context.Background(), c.tbl, i32(k), storage.Slice{})
	if err != nil {
		c.t.Fatal(err)
	}
	return c.value(p)
}

func isTimeout(err error) bool {
	_, w := errors.AsType[*cqlerr.WriteTimeout](err)
	_, r := errors.AsType[*cqlerr.ReadTimeout](err)
	_, u := errors.AsType[*cqlerr.CasWriteUnknown](err)
	return w || r || u
}

// Two coordinators incrementing one value at once: every increment
// applied is counted once, whichever coordinator won each round.
func TestPaxosTwoCoordinatorsContend(t *testing.T) {
	c := newPaxosCluster(t, 3, rf("3"))
	const k, perProxy = 1, 20
	var (
		mu               sync.Mutex
		applied, unknown int
		wg               sync.WaitGroup
	)
	for _, p := range c.proxies[:2] {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for done := 0; done < perProxy; {
				var ok bool
				var seen int
				err := p.Conditional(context.Background(), &CAS{Table: c.tbl, Key: i32(k), Serial: primitive.ConsistencyLevelSerial, Commit: primitive.ConsistencyLevelQuorum,
					Decide: func(data *storage.Partition) (*mutation.Update, error) {
						seen, _ = strconv.Atoi(c.value(data))
						ok = true
						return c.set(k, strconv.Itoa(seen+1)), nil
					}})
				mu.Lock()
				switch {
				case isTimeout(err):
					unknown++
				case err != nil:
					t.Error(err)
					mu.Unlock()
					return
				case ok:
					applied++
					done++
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	got, err := c.serial(2, k)
	if err != nil {
		t.Fatal(err)
	}
	n, _ := strconv.Atoi(got)
	if n < applied || n > applied+unknown {
		t.Fatalf("value %d after %d increments applied and %d unknown", n, applied, unknown)
	}
	t.Logf("%d applied, %d unknown, %v rounds contended", applied, unknown, testutil.ToFloat64(c.metrics.Contended.WithLabelValues("write")))
}

// A coordinator that dies once a quorum accepted its proposal, before
// committing it: the next round, through another coordinator, finishes it.
func TestPaxosFinishesAProposalAQuorumAccepted(t *testing.T) {
	c := newPaxosCluster(t, 3, rf("3"))
	const k = 2
	reps := c.replicasOf(k)
	b := replica.NewBallot(time.Now().UnixMicro(), [8]byte{9})
	p := replica.Proposal{Ballot: b, Update: c.set(k, "orphan")}
	p.Update.SetTimestamp(b.Micros())
	ctx := context.Background()
	for _, i := range reps[:2] {
		if pr, err := c.locals[i].Prepare(ctx, c.tbl, i32(k), b, nil); err != nil || !pr.OK {
			t.Fatal(pr, err)
		}
		if ok, _, err := propose(ctx, c.locals[i], p, replica.ProposeOptions{}); !ok || err != nil {
			t.Fatal(ok, err)
		}
	}
	// Through the coordinator that holds no acceptance, and whose own
	// promise may be in the quorum.
	got, err := c.serial(reps[2], k)
	if err != nil || got != "orphan" {
		t.Fatalf("SERIAL read: %q, %v", got, err)
	}
	if n := testutil.ToFloat64(c.metrics.Reproposals.WithLabelValues("read")); n != 1 {
		t.Fatalf("%v re-proposals", n)
	}
	var applied bool
	if err := c.proxies[reps[2]].Conditional(ctx, c.casSet(k, "orphan", "next", primitive.ConsistencyLevelAll, &applied)); err != nil || !applied {
		t.Fatalf("CAS from the finished value: %v, %v", applied, err)
	}
	for _, i := range reps {
		if v := c.onReplica(i, k); v != "next" {
			t.Fatalf("replica %d holds %q", i, v)
		}
	}
}

// A coordinator that dies once a minority accepted its proposal: a read
// whose quorum misses it does not see it, a later round may finish it,
// and once one round has, every later one sees it.
func TestPaxosAMinorityAcceptance(t *testing.T) {
	c := newPaxosCluster(t, 3, rf("3"))
	const k = 3
	reps := c.replicasOf(k)
	ctx := context.Background()
	b := replica.NewBallot(time.Now().UnixMicro(), [8]byte{9})
	p := replica.Proposal{Ballot: b, Update: c.set(k, "orphan")}
	p.Update.SetTimestamp(b.Micros())
	if ok, _, err := propose(ctx, c.locals[reps[0]], p, replica.ProposeOptions{}); !ok || err != nil {
		t.Fatal(ok, err)
	}
	// With the accepting replica cut off, the others do not see it.
	var others []netip.AddrPort
	for _, i := range reps[1:] {
		others = append(others, c.addrs[i])
	}
	c.net.Partition([]netip.AddrPort{c.addrs[reps[0]]}, others)
	got, err := c.serial(reps[1], k)
	if err != nil || got != "" {
		t.Fatalf("SERIAL read without the acceptor: %q, %v", got, err)
	}
	c.net.Heal()
	// A round whose quorum includes the acceptor finishes it: the read's
	// promise was later than the acceptance, but the proposal is still the
	// latest accepted, newer than any commit.
	got, err = c.serial(reps[0], k)
	if err != nil || got != "orphan" {
		t.Fatalf("SERIAL read through the acceptor: %q, %v", got, err)
	}
	for i := range c.proxies {
		if got, err := c.serial(i, k); err != nil || got != "orphan" {
			t.Fatalf("SERIAL read through %d afterwards: %q, %v", i, got, err)
		}
	}
}

// A proposal a quorum accepted and whose commit (at ANY) was lost is
// finished by the next round: the client was answered, the write is not
// lost.
func TestPaxosCommitAtAnyLostIsFinished(t *testing.T) {
	c := newPaxosCluster(t, 3, rf("3"))
	const k = 4
	c.net.SetFault(func(_, _ netip.AddrPort, verb messaging.Verb, response bool) messaging.Fault {
		return messaging.Fault{Drop: verb == messaging.VerbPaxosCommit && !response}
	})
	var applied bool
	if err := c.proxies[0].Conditional(context.Background(), c.casSet(k, "", "kept", primitive.ConsistencyLevelAny, &applied)); err != nil || !applied {
		t.Fatalf("CAS at ANY: %v, %v", applied, err)
	}
	c.net.SetFault(nil)
	// The coordinator, whose own replica committed, dies: the others
	// finish the proposal a quorum of them accepted.
	c.net.Partition(c.addrs[:1], c.addrs[1:])
	c.setDown(0, true)
	for _, i := range []int{1, 2} {
		if got, err := c.serial(i, k); err != nil || got != "kept" {
			t.Fatalf("SERIAL read through %d: %q, %v", i, got, err)
		}
	}
}

// A replica that missed a commit is sent it along with the next proposal,
// so every replica accepting that proposal holds what it was decided on.
func TestPaxosLaggardCatchesUp(t *testing.T) {
	c := newPaxosCluster(t, 3, rf("3"))
	const k = 5
	lag := c.replicasOf(k)[2]
	coord := c.replicasOf(k)[0]
	c.net.SetFault(func(_, to netip.AddrPort, verb messaging.Verb, response bool) messaging.Fault {
		return messaging.Fault{Drop: verb == messaging.VerbPaxosCommit && to == c.addrs[lag] && !response}
	})
	var applied bool
	if err := c.proxies[coord].Conditional(context.Background(), c.casSet(k, "", "first", primitive.ConsistencyLevelQuorum, &applied)); err != nil || !applied {
		t.Fatalf("first CAS: %v, %v", applied, err)
	}
	if v := c.onReplica(lag, k); v != "" {
		t.Fatalf("the laggard got the dropped commit: %q", v)
	}
	if err := c.proxies[coord].Conditional(context.Background(), c.casSet(k, "first", "second", primitive.ConsistencyLevelQuorum, &applied)); err != nil || !applied {
		t.Fatalf("second CAS: %v, %v", applied, err)
	}
	// The second commit was dropped too, but the proposal carried the
	// first. The CAS is answered once a quorum accepted, which need not
	// include the laggard: its proposal may still be on its way.
	deadline := time.Now().Add(10 * time.Second)
	for v := c.onReplica(lag, k); v != "first"; v = c.onReplica(lag, k) {
		if time.Now().After(deadline) {
			t.Fatalf("the laggard holds %q", v)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if n := testutil.ToFloat64(c.metrics.CatchUps.WithLabelValues("write")); n < 1 {
		t.Fatalf("%v catch-ups", n)
	}
}

// A coordinator cut off from the other replicas times out (write type
// CAS, its own promise received); the others go on.
func TestPaxosPartitionedCoordinator(t *testing.T) {
	c := newPaxosCluster(t, 3, rf("3"))
	const k = 6
	c.net.Partition([]netip.AddrPort{c.addrs[2]}, c.addrs[:2])
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	var applied bool
	err := c.proxies[2].Conditional(ctx, c.casSet(k, "", "cut", primitive.ConsistencyLevelQuorum, &applied))
	wt, ok := errors.AsType[*cqlerr.WriteTimeout](err)
	if !ok || wt.WriteType != primitive.WriteTypeCas || wt.Consistency != primitive.ConsistencyLevelSerial || wt.BlockFor != 2 || wt.Received > 1 {
		t.Fatalf("CAS through the cut-off node: %v (%+v)", err, wt)
	}
	if err := c.proxies[0].Conditional(context.Background(), c.casSet(k, "", "majority", primitive.ConsistencyLevelQuorum, &applied)); err != nil || !applied {
		t.Fatalf("CAS through the majority: %v, %v", applied, err)
	}
	if _, err := c.serial(2, k); !isTimeout(err) {
		t.Fatalf("SERIAL read through the cut-off node: %v", err)
	}
	c.net.Heal()
	if got, err := c.serial(2, k); err != nil || got != "majority" {
		t.Fatalf("SERIAL read once healed: %q, %v", got, err)
	}
}

// Too few participants up is UNAVAILABLE at the serial level, before
// anything is sent.
func TestPaxosUnavailable(t *testing.T) {
	c := newPaxosCluster(t, 3, rf("3"))
	c.setDown(1, true)
	c.setDown(2, true)
	var applied bool
	err := c.proxies[0].Conditional(context.Background(), c.casSet(7, "", "x", primitive.ConsistencyLevelOne, &applied))
	ua, ok := errors.AsType[*cqlerr.Unavailable](err)
	if !ok || ua.Consistency != primitive.ConsistencyLevelSerial || ua.Required != 2 || ua.Alive != 1 {
		t.Fatalf("%v (%+v)", err, ua)
	}
}

func (c *paxosCluster) setDown(i int, down bool) {
	c.live.mu.Lock()
	defer c.live.mu.Unlock()
	c.live.down[c.hosts[i]] = down
}

// A partition with one replica: through that node, the whole transaction
// is the replica's (no round trip); through another, the proposal is
// committed as it is accepted.
func TestPaxosOneReplica(t *testing.T) {
	c := newPaxosCluster(t, 3, rf("1"))
	const k = 8
	owner := c.replicasOf(k)[0]
	other := (owner + 1) % 3
	var applied bool
	if err := c.proxies[owner].Conditional(context.Background(), c.casSet(k, "", "a", primitive.ConsistencyLevelQuorum, &applied)); err != nil || !applied {
		t.Fatal(applied, err)
	}
	if err := c.proxies[other].Conditional(context.Background(), c.casSet(k, "a", "b", primitive.ConsistencyLevelQuorum, &applied)); err != nil || !applied {
		t.Fatal(applied, err)
	}
	if v := c.onReplica(owner, k); v != "b" {
		t.Fatalf("owner holds %q", v)
	}
	if err := c.proxies[owner].Conditional(context.Background(), c.casSet(k, "a", "c", primitive.ConsistencyLevelQuorum, &applied)); err != nil || applied {
		t.Fatal(applied, err)
	}
	for _, i := range []int{owner, other} {
		if got, err := c.serial(i, k); err != nil || got != "b" {
			t.Fatalf("SERIAL through %d: %q, %v", i, got, err)
		}
	}
	if m := testutil.CollectAndCount(c.metrics.RoundTrips); m == 0 {
		t.Fatal("no round trips recorded")
	}
}

// roundTrips is the sum and count of the round trips recorded for op.
func (c *paxosCluster) roundTrips(op string) (sum float64, n uint64) {
	var m dto.Metric
	if err := c.metrics.RoundTrips.WithLabelValues(op).(prometheus.Histogram).Write(&m); err != nil {
		c.t.Fatal(err)
	}
	return m.GetHistogram().GetSampleSum(), m.GetHistogram().GetSampleCount()
}

// Uncontended, a SERIAL read is one round trip, a CAS committed at ANY
// two and at QUORUM three.
func TestPaxosRoundTrips(t *testing.T) {
	c := newPaxosCluster(t, 3, rf("3"))
	const k = 9
	coord := c.replicasOf(k)[0]
	if _, err := c.serial(coord, k); err != nil {
		t.Fatal(err)
	}
	if sum, n := c.roundTrips("read"); sum != 1 || n != 1 {
		t.Fatalf("SERIAL read: %v round trips in %d reads", sum, n)
	}
	var applied bool
	if err := c.proxies[coord].Conditional(context.Background(), c.casSet(k, "", "a", primitive.ConsistencyLevelAny, &applied)); err != nil || !applied {
		t.Fatal(applied, err)
	}
	if sum, _ := c.roundTrips("write"); sum != 2 {
		t.Fatalf("CAS at ANY: %v round trips", sum)
	}
	c.proxies[coord].Close() // the commits at ANY land
	if err := c.proxies[coord].Conditional(context.Background(), c.casSet(k, "a", "b", primitive.ConsistencyLevelQuorum, &applied)); err != nil || !applied {
		t.Fatal(applied, err)
	}
	if sum, _ := c.roundTrips("write"); sum != 5 {
		t.Fatalf("CAS at QUORUM: %v round trips", sum-2)
	}
}

// propose is p.Propose answered as accepted and promise.
func propose(ctx context.Context, px replica.Paxos, p replica.Proposal, o replica.ProposeOptions) (bool, replica.Ballot, error) {
	a, err := px.Propose(ctx, p, o)
	if err != nil {
		return false, replica.Ballot{}, err
	}
	return a.OK, a.Promise, nil
}

// A coordinator's transactions on one partition in a row: the second asks
// for the next promise in advance, the third uses it and takes one round
// trip. A plain write, or another coordinator's transaction, in between
// sends the next one the usual way, deciding on the data as it is.
func TestPaxosRepeatProposer(t *testing.T) {
	c := newPaxosCluster(t, 3, rf("3"))
	coord := c.replicasOf(10)[0]
	other := c.replicasOf(10)[1]
	step := func(k int, p int, from, to string, wantApplied bool, wantRoundTrips float64) {
		t.Helper()
		before, _ := c.roundTrips("write")
		var applied bool
		if err := c.proxies[p].Conditional(context.Background(), c.casSet(k, from, to, primitive.ConsistencyLevelQuorum, &applied)); err != nil || applied != wantApplied {
			t.Fatalf("%s→%s: applied %v, %v", from, to, applied, err)
		}
		if after, _ := c.roundTrips("write"); after-before != wantRoundTrips {
			t.Fatalf("%s→%s: %v round trips, want %v", from, to, after-before, wantRoundTrips)
		}
	}
	const k = 10
	step(k, coord, "", "a", true, 3)
	step(k, coord, "a", "b", true, 3)
	step(k, coord, "b", "c", true, 2)
	step(k, coord, "c", "d", true, 2)
	step(k, coord, "x", "e", false, 1) // nothing to propose: the usual first round
	if n := testutil.ToFloat64(c.metrics.Repeats.WithLabelValues("chosen")); n != 2 {
		t.Fatalf("%v repeats chosen", n)
	}
	// A plain write in between: the promise given in advance is refused,
	// and the transaction decides on the plain write. The write is let
	// reach every replica first: one it has not reached yet would accept
	// (its data is the view), and one acceptance is an unknown outcome.
	// Among the replicas it reached may be one that promised after it
	// (the proposal reached it after the quorum had answered): its data
	// holds the write, the view does not, and it refuses too.
	step(k, coord, "d", "e", true, 3)
	step(k, coord, "e", "f", true, 2)
	if err := c.proxies[other].Apply(context.Background(), primitive.ConsistencyLevelQuorum, &mutation.Mutation{Updates: []*mutation.Update{c.plain(k, "plain")}}, primitive.WriteTypeSimple, nil); err != nil {
		t.Fatal(err)
	}
	for _, i := range c.replicasOf(k) {
		for deadline := time.Now().Add(10 * time.Second); c.onReplica(i, k) != "plain"; time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("the plain write never reached replica %d", i)
			}
		}
	}
	var applied bool
	if err := c.proxies[coord].Conditional(context.Background(), c.casSet(k, "f", "g", primitive.ConsistencyLevelAny, &applied)); err != nil || applied {
		t.Fatalf("CAS from f after a plain write: applied %v, %v", applied, err)
	}
	if n := testutil.ToFloat64(c.metrics.Repeats.WithLabelValues("refused")); n != 1 {
		t.Fatalf("%v repeats refused", n)
	}
	// Another coordinator's transaction in between.
	step(k, coord, "plain", "h", true, 3)
	step(k, coord, "h", "i", true, 2)
	step(k, other, "i", "j", true, 3)
	// On its promise given in advance, with the data as it was, the
	// coordinator proposes; the replicas refuse it (another proposer came),
	// and the usual first round finds the condition false.
	step(k, coord, "i", "x", false, 2)
	if n := testutil.ToFloat64(c.metrics.Repeats.WithLabelValues("refused")); n != 2 {
		t.Fatalf("%v repeats refused", n)
	}
	step(k, coord, "j", "k", true, 3)
	step(k, coord, "k", "l", true, 2)
	for i := range c.proxies {
		if got, err := c.serial(i, k); err != nil || got != "l" {
			t.Fatalf("SERIAL read through %d: %q, %v", i, got, err)
		}
	}
}

// plain is a plain write of row (k, 0) now.
func (c *paxosCluster) plain(k int, v string) *mutation.Update {
	u := c.set(k, v)
	u.SetTimestamp(time.Now().UnixMicro())
	return u
}

// fastAccept leaves a proposal of v made on a promise given in advance
// accepted on the replicas of partition k at idx, as a coordinator that
// died after proposing would.
func (c *paxosCluster) fastAccept(k int, v string, idx ...int) replica.Proposal {
	c.t.Helper()
	ctx := context.Background()
	now := time.Now().UnixMicro()
	b := replica.Proposal{Ballot: replica.NewBallot(now, [8]byte{9}), Update: c.set(k, "before")}
	b.Update.SetTimestamp(b.Ballot.Micros())
	n := replica.NewBallot(now+1, [8]byte{9})
	fast := replica.Proposal{Ballot: n, Update: c.set(k, v)}
	fast.Update.SetTimestamp(n.Micros())
	var view storage.Digest
	for _, i := range c.replicasOf(k) {
		a, err := c.locals[i].Propose(ctx, b, replica.ProposeOptions{Next: n, Read: &storage.Slice{}})
		if err != nil || !a.OK || !a.Next {
			c.t.Fatal(a, err)
		}
		data, err := b.Update.Over(a.Data)
		if err != nil {
			c.t.Fatal(err)
		}
		view = storage.PartitionDigest(data)
		if err := c.locals[i].Commit(ctx, b, nil); err != nil {
			c.t.Fatal(err)
		}
	}
	for _, i := range idx {
		if a, err := c.locals[i].Propose(ctx, fast, replica.ProposeOptions{Fast: true, CatchUp: b, View: view}); err != nil || !a.OK {
			c.t.Fatal(a, err)
		}
	}
	return fast
}

// A proposal made on a promise given in advance is finished by another
// round only once seen accepted by a quorum: accepted by a minority it
// can never be chosen, and is passed over once every replica answered;
// while one cannot answer, rounds cannot tell and time out.
func TestPaxosFastProposalsAreFinishedOnlyFromAQuorum(t *testing.T) {
	c := newPaxosCluster(t, 3, rf("3"))
	ctx := context.Background()
	const quorum, minority, unsure = 11, 12, 13
	reps := func(k int) []int { return c.replicasOf(k) }
	c.fastAccept(quorum, "chosen", reps(quorum)[:2]...)
	c.fastAccept(minority, "orphan", reps(minority)[:1]...)
	c.fastAccept(unsure, "orphan", reps(unsure)[:1]...)
	if got, err := c.serial(reps(quorum)[2], quorum); err != nil || got != "chosen" {
		t.Fatalf("quorum: %q, %v", got, err)
	}
	for i := range c.proxies {
		if got, err := c.serial(i, minority); err != nil || got != "before" {
			t.Fatalf("minority through %d: %q, %v", i, got, err)
		}
	}
	// A replica that did not accept it is down: the others cannot tell
	// whether a quorum did.
	down := reps(unsure)[2]
	c.setDown(down, true)
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	_, err := c.proxies[reps(unsure)[0]].Read(short, primitive.ConsistencyLevelSerial, c.tbl, i32(unsure), storage.Slice{})
	if !isTimeout(err) {
		t.Fatalf("with a replica down: %v", err)
	}
	c.setDown(down, false)
	if got, err := c.serial(reps(unsure)[0], unsure); err != nil || got != "before" {
		t.Fatalf("once it is back: %q, %v", got, err)
	}
}

// LOCAL_SERIAL runs Paxos among the local data center's replicas alone:
// with the other data center cut off, transactions and LOCAL_SERIAL reads
// through either go on,
// each deciding on its own data center's quorum; the commit still goes to
// every replica, so once healed a QUORUM read sees both.
func TestPaxosLocalSerial(t *testing.T) {
	c := newPaxosClusterIn(t, []string{"dc1", "dc1", "dc1", "dc2", "dc2", "dc2"},
		map[string]string{"class": "NetworkTopologyStrategy", "dc1": "3", "dc2": "3"})
	var dc1, dc2 []netip.AddrPort
	for i, a := range c.addrs {
		if i < 3 {
			dc1 = append(dc1, a)
		} else {
			dc2 = append(dc2, a)
		}
	}
	c.net.Partition(dc1, dc2)
	for _, tc := range []struct {
		k, coord int
	}{{20, 0}, {21, 4}} {
		var applied bool
		cas := c.casSet(tc.k, "", "local", primitive.ConsistencyLevelLocalQuorum, &applied)
		cas.Serial = primitive.ConsistencyLevelLocalSerial
		if err := c.proxies[tc.coord].Conditional(context.Background(), cas); err != nil || !applied {
			t.Fatalf("LOCAL_SERIAL through node %d: %v, %v", tc.coord, applied, err)
		}
		data, err := c.proxies[tc.coord].Read(context.Background(), primitive.ConsistencyLevelLocalSerial, c.tbl, i32(tc.k), storage.Slice{})
		if err != nil || c.value(data) != "local" {
			t.Fatalf("LOCAL_SERIAL read through node %d: %v", tc.coord, err)
		}
		// SERIAL needs a quorum of all six: the cut-off side times out.
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		cas = c.casSet(tc.k, "local", "global", primitive.ConsistencyLevelLocalQuorum, &applied)
		if err := c.proxies[tc.coord].Conditional(ctx, cas); !isTimeout(err) {
			t.Fatalf("SERIAL through node %d with the other data center cut off: %v", tc.coord, err)
		}
		cancel()
	}
	c.net.Heal()
	for _, k := range []int{20, 21} {
		data, err := c.proxies[0].Read(context.Background(), primitive.ConsistencyLevelQuorum, c.tbl, i32(k), storage.Slice{})
		if err != nil {
			t.Fatal(err)
		}
		if v := c.value(data); v != "local" {
			t.Fatalf("partition %d at QUORUM: %q", k, v)
		}
	}
}

// A transaction that times out waiting for its turn behind another of
// the same coordinator on its partition is counted with the timeouts, as
// one that timed out in its rounds is.
func TestPaxosQueueTimeoutIsCounted(t *testing.T) {
	c := newPaxosCluster(t, 3, rf("3"))
	const k = 4
	p := c.proxies[0]
	unlock, err := p.queue.lock(context.Background(), c.tbl, i32(k))
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	var applied bool
	err = p.Conditional(ctx, c.casSet(k, "", "a", primitive.ConsistencyLevelQuorum, &applied))
	if wt, ok := errors.AsType[*cqlerr.WriteTimeout](err); !ok || wt.WriteType != primitive.WriteTypeCas {
		t.Fatalf("a transaction behind another's turn: %v", err)
	}
	if n := testutil.ToFloat64(c.metrics.Timeouts.WithLabelValues("write")); n != 1 {
		t.Fatalf("%v timeouts counted", n)
	}
}

// Committed at ONE through one of its replicas, a transaction's commit is
// the coordinator's own: answered with no remote commit acknowledged
// (two round trips), where QUORUM then waits for one.
func TestPaxosCommitAtOneIsTheCoordinators(t *testing.T) {
	c := newPaxosCluster(t, 3, rf("3"))
	const k = 14
	coord := c.replicasOf(k)[0]
	c.net.SetFault(func(_, _ netip.AddrPort, verb messaging.Verb, response bool) messaging.Fault {
		return messaging.Fault{Drop: verb == messaging.VerbPaxosCommit && !response}
	})
	var applied bool
	if err := c.proxies[coord].Conditional(context.Background(), c.casSet(k, "", "one", primitive.ConsistencyLevelOne, &applied)); err != nil || !applied {
		t.Fatalf("CAS at ONE with every remote commit lost: %v, %v", applied, err)
	}
	if sum, _ := c.roundTrips("write"); sum != 2 {
		t.Fatalf("CAS at ONE: %v round trips", sum)
	}
	if v := c.onReplica(coord, k); v != "one" {
		t.Fatalf("the coordinator's replica holds %q", v)
	}
	// Long enough for the rounds before the commit on a loaded machine.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	err := c.proxies[coord].Conditional(ctx, c.casSet(k, "one", "quorum", primitive.ConsistencyLevelQuorum, &applied))
	if wt, ok := errors.AsType[*cqlerr.WriteTimeout](err); !ok || wt.Consistency != primitive.ConsistencyLevelQuorum || wt.Received != 1 {
		t.Fatalf("CAS at QUORUM with every remote commit lost: %v (%+v)", err, wt)
	}
}

// A transaction answered at QUORUM was committed on a quorum: a plain
// QUORUM read that misses the coordinator, through the replica whose
// commit was lost, sees it, on the replica whose commit came late.
func TestPaxosQuorumReadSeesAQuorumCommit(t *testing.T) {
	c := newPaxosCluster(t, 3, rf("3"))
	const k = 15
	reps := c.replicasOf(k)
	coord, late, lost := reps[0], reps[1], reps[2]
	c.net.SetFault(func(_, to netip.AddrPort, verb messaging.Verb, response bool) messaging.Fault {
		if verb != messaging.VerbPaxosCommit || response {
			return messaging.Fault{}
		}
		return messaging.Fault{Drop: to == c.addrs[lost], Delay: map[bool]time.Duration{true: 300 * time.Millisecond}[to == c.addrs[late]]}
	})
	var applied bool
	if err := c.proxies[coord].Conditional(context.Background(), c.casSet(k, "", "seen", primitive.ConsistencyLevelQuorum, &applied)); err != nil || !applied {
		t.Fatalf("CAS at QUORUM: %v, %v", applied, err)
	}
	c.net.Partition(c.addrs[coord:coord+1], []netip.AddrPort{c.addrs[late], c.addrs[lost]})
	c.setDown(coord, true)
	data, err := c.proxies[lost].Read(context.Background(), primitive.ConsistencyLevelQuorum, c.tbl, i32(k), storage.Slice{})
	if err != nil {
		t.Fatal(err)
	}
	if v := c.value(data); v != "seen" {
		t.Fatalf("QUORUM read after a CAS answered at QUORUM: %q", v)
	}
}

// rival is a replica on which another proposer prepares a ballot one
// microsecond after each of the coordinator's, just before it: every
// round the coordinator starts is lost to contention.
type rival struct{ *replica.Local }

func (r rival) Prepare(ctx context.Context, t *storage.Table, pk []byte, b replica.Ballot, read *storage.Slice) (*replica.Promise, error) {
	if _, err := r.Local.Prepare(ctx, t, pk, replica.NewBallot(b.Micros()+1, [8]byte{0xee}), nil); err != nil {
		return nil, err
	}
	return r.Local.Prepare(ctx, t, pk, b, read)
}

// A transaction that keeps losing its rounds backs off and retries until
// cas_contention_timeout, then answers WRITE_TIMEOUT of write type CAS at
// the serial level with its contentions (a SERIAL read, READ_TIMEOUT),
// and the metrics count both.
func TestPaxosContentionTimesOut(t *testing.T) {
	c := newPaxosCluster(t, 3, rf("3"))
	m := NewCASMetrics(prometheus.NewRegistry())
	p := c.rivalled(Options{CASMetrics: m, CASContentionTimeout: 200 * time.Millisecond})
	const k = 16
	var applied bool
	err := p.Conditional(context.Background(), c.casSet(k, "", "never", primitive.ConsistencyLevelQuorum, &applied))
	wt, ok := errors.AsType[*cqlerr.WriteTimeout](err)
	if !ok || wt.WriteType != primitive.WriteTypeCas || wt.Consistency != primitive.ConsistencyLevelSerial || wt.BlockFor != 2 || wt.Contentions < 1 {
		t.Fatalf("a CAS losing every round: %v (%+v)", err, wt)
	}
	_, err = p.Read(context.Background(), primitive.ConsistencyLevelSerial, c.tbl, i32(k), storage.Slice{})
	if rt, ok := errors.AsType[*cqlerr.ReadTimeout](err); !ok || rt.Consistency != primitive.ConsistencyLevelSerial {
		t.Fatalf("a SERIAL read losing every round: %v", err)
	}
	if n := testutil.ToFloat64(m.Contended.WithLabelValues("write")); n != float64(wt.Contentions) {
		t.Fatalf("%v write rounds counted contended, %d answered", n, wt.Contentions)
	}
	for _, op := range []string{"write", "read"} {
		if n := testutil.ToFloat64(m.Timeouts.WithLabelValues(op)); n != 1 {
			t.Fatalf("%v %s timeouts counted", n, op)
		}
	}
	for _, i := range c.replicasOf(k) {
		if v := c.onReplica(i, k); v != "" {
			t.Fatalf("replica %d holds %q", i, v)
		}
	}
}

// rivalled is a proxy of node 0 whose every replica is a rival's, with o's
// contention settings.
func (c *paxosCluster) rivalled(o Options) *Proxy {
	reps := replicaMap{}
	for i, h := range c.hosts {
		reps[h] = rival{c.locals[i]}
	}
	o.Topology = NewRingTopology(c.hosts[0], "dc1", RingState{Ring: c.ring})
	o.Liveness, o.Replicas = c.live, reps
	o.Keyspace = func(name string) *storage.KeyspaceDef {
		if name == "ks" {
			return c.ks
		}
		return nil
	}
	p := New(o)
	c.t.Cleanup(p.Close)
	return p
}

// The back-off after a lost round is drawn at random below a limit that
// doubles with each loss, from twice the last round's time (at least a
// millisecond: here, with the clock standing still, exactly that), up to
// 32 times it and at most 100 ms.
func TestPaxosContentionBacksOff(t *testing.T) {
	c := newPaxosCluster(t, 3, rf("3"))
	var (
		mu     sync.Mutex
		limits []time.Duration
	)
	still := time.Now()
	p := c.rivalled(Options{
		Now: func() time.Time { return still },
		Jitter: func(d time.Duration) time.Duration {
			mu.Lock()
			defer mu.Unlock()
			limits = append(limits, d)
			return d
		}})
	// The clock standing still, cas_contention_timeout never passes: the
	// request's deadline ends the transaction.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	var applied bool
	if err := p.Conditional(ctx, c.casSet(17, "", "never", primitive.ConsistencyLevelQuorum, &applied)); err == nil {
		t.Fatal("a CAS losing every round answered")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(limits) < 3 {
		t.Fatalf("%d back-offs drawn: %v", len(limits), limits)
	}
	for i, d := range limits {
		if want := time.Millisecond << min(i+1, 5); d != want {
			t.Fatalf("back-off %d drawn below %v, want %v (all: %v)", i+1, d, want, limits)
		}
	}
}
