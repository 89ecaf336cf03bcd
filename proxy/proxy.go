package proxy

import (
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
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
	// Keyspace returns the current definition of keyspace name, nil when
	// there is none.
	Keyspace func(name string) *storage.KeyspaceDef
	Logger   *slog.Logger
	// Metrics, when set, get the proxy's latencies and counters.
	Metrics *Metrics
	// SpeculativeRetry, when set, is how long a read waits for a replica
	// before it asks another one in its place (the table's
	// speculative_retry: a fixed time, or a percentile of its latencies);
	// zero or less is never.
	SpeculativeRetry func(t *storage.Table) time.Duration
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
	opts    Options
	log     *slog.Logger
	wg      sync.WaitGroup
	ballots *ballots
	// nextBallot is ballots.next, made once (a method value allocates).
	nextBallot func(after replica.Ballot) replica.Ballot
	queue      partitionQueue
	repeats    repeats
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
	if o.Jitter == nil {
		o.Jitter = func(d time.Duration) time.Duration {
			if d <= 0 {
				return 0
			}
			return rand.N(d)
		}
	}
	local, _ := o.Topology.Local()
	p := &Proxy{opts: o, log: o.Logger, ballots: newBallots(local, o.Now)}
	p.nextBallot = p.ballots.next
	return p
}

// jitter is a random duration in [0, d).
func (p *Proxy) jitter(d time.Duration) time.Duration { return p.opts.Jitter(d) }

// Close waits for the writes and hints still running for requests already
// answered. REQUIRES: no other call running or starting meanwhile; the
// proxy may be used again once Close returns.
func (p *Proxy) Close() { p.wg.Wait() }

// goBackground runs fn on a goroutine Close waits for.
func (p *Proxy) goBackground(fn func()) {
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		fn()
	}()
}

func (p *Proxy) keyspace(t *storage.Table) (*storage.KeyspaceDef, error) {
	ks := p.opts.Keyspace(t.Def.Keyspace)
	if ks == nil {
		return nil, fmt.Errorf("proxy: keyspace %s does not exist", t.Def.Keyspace)
	}
	return ks, nil
}

func (p *Proxy) local() ring.HostID {
	h, _ := p.opts.Topology.Local()
	return h
}

// alive reports whether h is up; this node always is.
func (p *Proxy) alive(h ring.HostID) bool {
	return h == p.local() || p.opts.Liveness.Alive(h)
}

func (p *Proxy) replica(h ring.HostID) (replica.Replica, error) {
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
	natural, pending, err := p.opts.Topology.Replicas(ks, tok)
	if err != nil || len(natural) != 1 || len(pending) != 0 || natural[0] != p.local() {
		return false
	}
	st, err := p.strategy(ks)
	if err != nil {
		return false
	}
	n := p.needFor(cl, st, nil, false)
	return n.total() <= 1 && (n.dc == "" || n.dc == p.localDC())
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
