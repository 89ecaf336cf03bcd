package proxy

import (
	"cmp"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/netip"
	"sync"
	"time"

	"github.com/datastax/go-cassandra-native-protocol/primitive"

	"github.com/cqld/cqld/cqlerr"
	"github.com/cqld/cqld/mutation"
	"github.com/cqld/cqld/replica"
	"github.com/cqld/cqld/ring"
	"github.com/cqld/cqld/storage"
)

// Liveness says which nodes are up (gossip's failure detector).
// Implementations are safe for concurrent use.
type Liveness interface {
	Alive(h ring.HostID) bool
}

// Replicas reaches a node's replica: replica.Local for this node, a
// remote one for the others. Implementations are safe for concurrent use.
// This node's replica is asked for once, by New, and kept: it must not
// change afterwards.
type Replicas interface {
	Replica(h ring.HostID) (replica.Replica, error)
}

// Hints keeps writes for replicas that are down or did not answer in time,
// to replay when they are back. Store does not keep m after it returns.
// Implementations are safe for concurrent use.
type Hints interface {
	Store(target ring.HostID, m *mutation.Mutation) error
}

// Options are a Proxy's seams.
type Options struct {
	Topology Topology
	Liveness Liveness
	Replicas Replicas
	// Hints is nil when hinted handoff is off: a replica that misses a
	// write then gets it only from read repair.
	Hints Hints
	// Batchlog, when set, keeps logged batches that span partitions until
	// their writes are done (batchlog.Client); without it they are written
	// as unlogged ones. AfterBatchlog, when set, runs once a batch is
	// logged and before its writes: a test's way to kill the coordinator
	// there.
	Batchlog      Batchlog
	AfterBatchlog func()
	// Random draws the random bits of batch ids and of the choice of
	// batchlog nodes; rand.Uint64 when nil.
	Random func() uint64
	// Keyspace returns the current definition of keyspace name, nil when
	// there is none.
	Keyspace func(name string) *storage.KeyspaceDef
	Logger   *slog.Logger
	// Metrics, when set, get the proxy's latencies and counters.
	Metrics *Metrics
	// ReadTimeout is read_request_timeout (DefaultReadTimeout when
	// zero): a read does not speculate when its table's threshold is past
	// it, and the thresholds are recomputed once per ReadTimeout.
	ReadTimeout time.Duration
	// Now is the clock of the latencies and of the Paxos ballots, After
	// the timer of speculative retries and of contention back-offs:
	// time.Now and time.After when nil. Jitter draws a random duration in
	// [0, d) for the back-offs; uniform from math/rand/v2 when nil.
	Now    func() time.Time
	After  func(time.Duration) <-chan time.Time
	Jitter func(d time.Duration) time.Duration

	// CASMetrics, when set, get the lightweight transactions' counters.
	CASMetrics *CASMetrics
	// CASContentionTimeout is how long a lightweight transaction retries
	// rounds lost to other proposers (cas_contention_timeout);
	// DefaultCASContentionTimeout when zero.
	CASContentionTimeout time.Duration
	// PaxosVariant is PaxosV2 (the default, when empty), PaxosV2NoRepeat
	// or PaxosV1, the four round trips kept as a benchmark's baseline.
	PaxosVariant string
	// RepeatWindow is how close a coordinator's transactions on one
	// partition must follow each other for the repeat proposer's one
	// round trip; DefaultRepeatWindow when zero. Tests that count round
	// trips widen it, so that a slow machine does not change the count.
	RepeatWindow time.Duration
	// MaxHintsInProgress bounds the hints being written off the
	// requests' paths (hintLoad); DefaultMaxHintsInProgress when zero.
	MaxHintsInProgress int
	// PaxosUnsafeSkipInProgress skips finishing the proposals a prepare
	// finds in progress: a deliberately broken Paxos, for showing that
	// the linearizability test catches it. Never set it otherwise.
	PaxosUnsafeSkipInProgress bool
}

// Proxy is the coordinator's side of replication (Cassandra's
// StorageProxy). It is safe for concurrent use. Work that outlives a
// request, writes to replicas after the level was met and the hints of
// those that fail, runs on goroutines that Close waits for.
type Proxy struct {
	opts Options
	log  *slog.Logger
	// wg counts the background tasks, which workers run.
	wg      sync.WaitGroup
	workers *workers
	// rangePage is how many partitions a reconciled scan reads from each
	// replica at a time.
	rangePage int
	// tables holds each table's *tableReads, by table id.
	tables  sync.Map
	ballots *ballots
	// nextBallot is ballots.next, made once (a method value allocates).
	nextBallot func(after replica.Ballot) replica.Ballot
	queue      partitionQueue
	repeats    repeats
	// sole is opts.Topology when it is a SoleReplicaTopology.
	sole SoleReplicaTopology
	// localID and localDCName are this node's (Topology.Local).
	localID     ring.HostID
	localDCName string
	// localRep is this node's replica (Replicas.Replica of localID), nil
	// when New could not have it: each request then asks for it.
	localRep replica.Replica
	// hintLoad counts the hints being written in the background.
	hintLoad *hintLoad
}

// New returns a proxy over o's seams.
func New(o Options) *Proxy {
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.After == nil {
		o.After = time.After
	}
	if o.Random == nil {
		o.Random = rand.Uint64
	}
	if o.ReadTimeout <= 0 {
		o.ReadTimeout = DefaultReadTimeout
	}
	if o.Jitter == nil {
		o.Jitter = func(d time.Duration) time.Duration {
			if d <= 0 {
				return 0
			}
			return rand.N(d)
		}
	}
	p := &Proxy{opts: o, log: o.Logger, rangePage: pagePartitions, workers: newWorkers(),
		hintLoad: newHintLoad(cmp.Or(o.MaxHintsInProgress, DefaultMaxHintsInProgress))}
	p.sole, _ = o.Topology.(SoleReplicaTopology)
	p.localID, p.localDCName = o.Topology.Local()
	if o.Replicas != nil {
		if r, err := o.Replicas.Replica(p.localID); err == nil {
			p.localRep = r
		}
	}
	p.ballots = newBallots(p.localID, o.Now)
	p.repeats.window = cmp.Or(o.RepeatWindow, DefaultRepeatWindow)
	p.nextBallot = p.ballots.next
	return p
}

// jitter is a random duration in [0, d).
func (p *Proxy) jitter(d time.Duration) time.Duration { return p.opts.Jitter(d) }

// Close waits for the writes and hints still running for requests already
// answered, and for the goroutines that ran them. REQUIRES: no other call
// running or starting meanwhile; the proxy may be used again once Close
// returns.
func (p *Proxy) Close() {
	p.wg.Wait()
	p.workers.stop()
}

// goBackground runs fn on a worker goroutine; Close waits for it.
func (p *Proxy) goBackground(fn func()) {
	p.wg.Add(1)
	p.workers.run(func() {
		defer p.wg.Done()
		fn()
	})
}

func (p *Proxy) keyspace(t *storage.Table) (*storage.KeyspaceDef, error) {
	ks := p.opts.Keyspace(t.Def.Keyspace)
	if ks == nil {
		return nil, fmt.Errorf("proxy: keyspace %s does not exist", t.Def.Keyspace)
	}
	return ks, nil
}

func (p *Proxy) local() ring.HostID { return p.localID }

// alive reports whether h is up; this node always is.
func (p *Proxy) alive(h ring.HostID) bool {
	return h == p.local() || p.opts.Liveness.Alive(h)
}

func (p *Proxy) replica(h ring.HostID) (replica.Replica, error) {
	if h == p.localID && p.localRep != nil {
		return p.localRep, nil
	}
	return p.askReplica(h)
}

// localReplica is replica(p.localID), inlined where a request knows it
// reads or writes this node's replica.
func (p *Proxy) localReplica() (replica.Replica, error) {
	if p.localRep != nil {
		return p.localRep, nil
	}
	return p.askReplica(p.localID)
}

// askReplica is replica past the kept local one.
func (p *Proxy) askReplica(h ring.HostID) (replica.Replica, error) {
	r, err := p.opts.Replicas.Replica(h)
	if err != nil {
		return nil, fmt.Errorf("proxy: replica %s: %w", h, err)
	}
	return r, nil
}

// AllLocal reports whether a request on token tok of keyspace ks at level
// cl needs this node's replica alone: it is the only replica, natural or
// pending, and cl asks for no more. The coordinator may then run the
// request inline, on replica.Local, as on a node of its own.
func (p *Proxy) AllLocal(ks *storage.KeyspaceDef, tok int64, cl primitive.ConsistencyLevel) bool {
	var st ring.Strategy
	if a := p.localAlone(ks); a != nil {
		if inline, known := a.inlines(cl); known {
			return inline
		}
		st = a.Strategy
	} else {
		natural, pending, err := p.opts.Topology.Replicas(ks, tok)
		if err != nil || len(natural) != 1 || len(pending) != 0 || natural[0] != p.local() {
			return false
		}
		if st, err = p.strategy(ks); err != nil {
			return false
		}
	}
	n := p.needFor(cl, st, nil, false)
	return n.total() <= 1 && (n.dc == "" || n.dc == p.localDC())
}

// localAlone is SoleReplicaTopology.LocalAlone, nil when the topology
// cannot tell.
func (p *Proxy) localAlone(ks *storage.KeyspaceDef) *LocalAlone {
	if p.sole == nil {
		return nil
	}
	return p.sole.LocalAlone(ks)
}

// soleHere reports whether this node is the sole replica of every token
// of t's keyspace (SoleReplicaTopology), so that a request there needs no
// placement; when it is, the error is level cl's being more than this
// replica can meet (available), counted as a write when write is set.
func (p *Proxy) soleHere(cl primitive.ConsistencyLevel, t *storage.Table, write bool) (bool, error) {
	if p.sole == nil {
		return false, nil
	}
	ks, err := p.keyspace(t)
	if err != nil {
		return false, err
	}
	a := p.sole.LocalAlone(ks)
	switch {
	case a == nil:
		return false, nil
	case a.meets(cl):
		return true, nil
	}
	n := p.needFor(cl, a.Strategy, nil, write)
	return true, p.available(&n, []ring.HostID{p.local()})
}

// failureReasons names the failed replicas for protocol v5's reason map.
func (p *Proxy) failureReasons(hosts []ring.HostID) []*primitive.FailureReason {
	out := make([]*primitive.FailureReason, len(hosts))
	for i, h := range hosts {
		out[i] = &primitive.FailureReason{Endpoint: p.address(h), Code: primitive.FailureCodeUnknown}
	}
	return out
}

// unavailable is the error of a level that cannot be met with alive of
// the required replicas up.
func unavailable(cl primitive.ConsistencyLevel, required, alive int) error {
	return &cqlerr.Unavailable{Consistency: cl, Required: int32(required), Alive: int32(alive)}
}

// address is h's broadcast address as the protocol's reason map carries
// it, nil when h is unknown.
func (p *Proxy) address(h ring.HostID) net.IP {
	a := p.opts.Topology.Addr(h)
	if !a.IsValid() {
		return nil
	}
	return net.IP(a.AsSlice())
}

// RangeOwners is a token range of the ring with keyspace ks's natural
// replicas there, in placement order (the primary first), and their
// broadcast addresses (invalid for a host not known).
type RangeOwners struct {
	Range    ring.Range
	Replicas []ring.HostID
	Addrs    []netip.Addr
}

// Owners returns every range of the ring with ks's replicas: what
// DESCRIBE CLUSTER shows as range ownership, and which ranges this node
// is the primary replica of. It is safe for concurrent use.
func (p *Proxy) Owners(ks *storage.KeyspaceDef) ([]RangeOwners, error) {
	ranges, err := p.opts.Topology.Ranges(ks)
	if err != nil {
		return nil, err
	}
	out := make([]RangeOwners, len(ranges))
	for i, r := range ranges {
		out[i] = RangeOwners{Range: r.Range, Replicas: r.Replicas, Addrs: make([]netip.Addr, len(r.Replicas))}
		for j, h := range r.Replicas {
			out[i].Addrs[j] = p.opts.Topology.Addr(h)
		}
	}
	return out, nil
}
