package cluster

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	mrand "math/rand/v2"
	"net/netip"
	"path/filepath"
	"slices"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/cqld/cqld/gossip"
	"github.com/cqld/cqld/messaging"
	"github.com/cqld/cqld/metalog"
	"github.com/cqld/cqld/ring"
)

// NodeOptions configure this node's membership of the cluster.
type NodeOptions struct {
	ClusterName string
	HostID      ring.HostID
	// Addr is the internode address peers reach this node at
	// (broadcast_address:storage_port); Listen is where it listens
	// (listen_address:storage_port).
	Addr, Listen netip.AddrPort
	// Seeds are the seed nodes' internode addresses. The first seed
	// starts a new cluster when it has no metadata yet; every other node
	// joins through the seeds.
	Seeds      []netip.AddrPort
	DataCenter string
	Rack       string
	// NumTokens and AllocationRF are num_tokens and
	// allocate_tokens_for_local_replication_factor; Tokens are the tokens
	// the node already has, kept when it is the first member of a new
	// cluster (a node that ran alone before keeps its ranges).
	NumTokens    int
	AllocationRF int
	Tokens       []int64
	// AutoBootstrap is auto_bootstrap: a new node that is not a seed and
	// joins a ring that has members enters it JOINING, to stream its
	// ranges before it becomes NORMAL (Bootstrapping, SetStatus); without
	// it, or as a seed, it is NORMAL at once.
	AutoBootstrap bool
	// Dir holds the metadata log and the state machine's record.
	Dir string
	FS  vfs.FS
	// Schema applies schema entries to this node's catalog; HasSchema
	// reports whether the catalog holds a user schema already.
	Schema    SchemaApplier
	HasSchema bool
	// Auth applies role entries to this node's role state; nil when it
	// keeps none.
	Auth AuthApplier
	// Meta is this node's gossip metadata, read when it changes.
	Meta func() gossip.Meta
	// OnTopology is called after each topology change the log applies;
	// OnGossip with each membership event of another node.
	OnTopology func(before, after *Topology)
	OnGossip   func(gossip.Event)
	// OnFailure is told when this node cannot write the state an entry of
	// the metadata log changes (StateOptions.OnFailure): it must stop.
	OnFailure func(error)
	// OnConflict is told when this node, having started a cluster of its
	// own, finds its address is another node's in a running cluster
	// (metalog.Options.OnConflict): it must stop.
	OnConflict func(error)
	// DeferGossip leaves gossip to the caller's StartGossip, once it
	// serves its peers' requests: its peers hold it up, and send it
	// writes, only from then on.
	DeferGossip bool
	// CatchUpTimeout bounds the wait of a member restarting for the
	// metadata log entries the other members have applied
	// (DefaultCatchUpTimeout if zero); past it the node starts anyway.
	CatchUpTimeout time.Duration
	// InjectedDelay is internode_injected_delay.
	InjectedDelay time.Duration
	// TLS encrypts the internode transport (server_encryption_options);
	// nil leaves it plaintext.
	TLS *messaging.TLS
	// Timing of the metadata log and of gossip; zero fields take defaults
	// suited to nodes on one network.
	LogTiming    metalog.Timing
	GossipTiming gossip.Timing
	Registry     prometheus.Registerer
	Logger       *slog.Logger
}

// Node is this node's membership of the cluster: the internode transport,
// gossip (who is up) and the metadata log (schema and topology). Its
// methods are safe for concurrent use.
type Node struct {
	opts      NodeOptions
	transport *messaging.TCPTransport
	state     *State
	log       *metalog.Log
	// gossip is set once StartGossip has started it.
	gossip atomic.Pointer[gossip.Gossip]
	// ring is the ring's collector, when it is registered.
	ring *ringCollector
}

// metadataTiming is the metadata log's default timing: nodes a few
// milliseconds apart, so that a node alone elects itself quickly.
var metadataTiming = metalog.Timing{
	HeartbeatTimeout:   300 * time.Millisecond,
	ElectionTimeout:    300 * time.Millisecond,
	LeaderLeaseTimeout: 150 * time.Millisecond,
}

// gossipInterval is gossip's default round: a node's new schema version
// or status reaches its peers within one round, and drivers wait for
// schema agreement after each DDL, so a DDL's cost to a client is about
// a round. A round with no news sends nothing.
const gossipInterval = 50 * time.Millisecond

// StartNode opens the transport, the metadata log and gossip, joins the
// cluster through the seeds when this node is new (retrying, with a log
// line per failure, until ctx ends), and makes sure the topology lists this
// node with its tokens. On error nothing is left running.
func StartNode(ctx context.Context, o NodeOptions) (_ *Node, err error) {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Registry == nil {
		o.Registry = prometheus.NewRegistry()
	}
	if o.LogTiming == (metalog.Timing{}) {
		o.LogTiming = metadataTiming
	}
	if o.GossipTiming.GossipInterval <= 0 {
		o.GossipTiming.GossipInterval = gossipInterval
	}
	if o.CatchUpTimeout <= 0 {
		o.CatchUpTimeout = DefaultCatchUpTimeout
	}
	n := &Node{opts: o}
	defer func() {
		if err != nil {
			n.Close()
		}
	}()
	if o.InjectedDelay > 0 {
		o.Logger.Warn("internode_injected_delay is set: every internode message this node sends is held back", "delay", o.InjectedDelay)
	}
	n.transport, err = messaging.ListenTCP(messaging.Options{
		ClusterName:   o.ClusterName,
		HostID:        o.HostID,
		Addr:          o.Listen,
		BroadcastAddr: o.Addr,
		InjectedDelay: o.InjectedDelay,
		TLS:           o.TLS,
		Metrics:       messaging.NewMetrics(o.Registry),
		Logger:        o.Logger,
	})
	if errors.Is(err, syscall.EADDRINUSE) {
		return nil, fmt.Errorf("cluster: internode transport on %s: %w: is another node running with this "+
			"listen_address and storage_port?", o.Listen, err)
	}
	if err != nil {
		return nil, fmt.Errorf("cluster: internode transport on %s: %w", o.Listen, err)
	}
	n.state, err = OpenState(StateOptions{FS: o.FS, Dir: o.Dir, Schema: o.Schema, Auth: o.Auth, OnTopology: o.OnTopology,
		OnFailure: o.OnFailure, Self: o.HostID, Logger: o.Logger})
	if err != nil {
		return nil, err
	}
	if c := newRingCollector(n); o.Registry.Register(c) == nil {
		// NB: a registry that already has one (another node of a test)
		// keeps the first.
		n.ring = c
	}
	if n.state.Left() {
		return nil, ErrDecommissioned
	}
	n.transport.Handle(messaging.VerbTopology, n.serveTopology)
	n.log, err = metalog.Open(metalog.Options{
		Dir:        filepath.Join(o.Dir, "log"),
		Transport:  n.transport,
		HostID:     o.HostID,
		Addr:       o.Addr,
		FSM:        n.state,
		Bootstrap:  len(o.Seeds) > 0 && o.Seeds[0] == o.Addr,
		Seeds:      o.Seeds,
		OnConflict: o.OnConflict,
		OnFailure:  o.OnFailure,
		FS:         o.FS,
		Logger:     o.Logger,
		Metrics:    o.Registry,
		Timing:     o.LogTiming,
	})
	if err != nil {
		return nil, err
	}
	bootstrap := n.log.Bootstrapped()
	_, restarted := n.state.Topology().Member(o.HostID)
	if restarted {
		// A member restarting serves the schema and ring the others
		// serve: the entries committed while it was down (or committed
		// and not yet applied here) first.
		n.catchUpAtStart(ctx)
	}
	if !bootstrap {
		// At once if this node is a member already.
		if err := n.log.Join(ctx); err != nil {
			return nil, err
		}
	}
	if err := n.ensureMember(ctx, bootstrap); err != nil {
		return nil, err
	}
	if !o.DeferGossip {
		if err := n.StartGossip(); err != nil {
			return nil, err
		}
	}
	return n, nil
}

// StartGossip starts this node's gossip, by which its peers hold it up:
// at the end of StartNode, or once the caller serves its peers' requests
// when NodeOptions.DeferGossip is set. Call it once.
func (n *Node) StartGossip() error {
	o := n.opts
	var known []netip.AddrPort
	for _, m := range n.Topology().Members() {
		if m.HostID != o.HostID {
			known = append(known, m.Addr)
		}
	}
	g, err := gossip.Start(gossip.Options{
		Transport: n.transport,
		HostID:    o.HostID,
		Seeds:     o.Seeds,
		Known:     known,
		Meta:      o.Meta,
		OnEvent:   o.OnGossip,
		Logger:    o.Logger,
		Metrics:   gossip.NewMetrics(o.Registry),
		Timing:    o.GossipTiming,
	})
	if err != nil {
		return fmt.Errorf("cluster: gossip: %w", err)
	}
	n.gossip.Store(g)
	return nil
}

// ErrDecommissioned is the refusal to start a node that left the cluster.
var ErrDecommissioned = errors.New("This node was decommissioned and will not rejoin the ring unless " +
	"all existing data is removed and the node is bootstrapped again")

// movementRetry is how long a node that must wait for another node's
// join or leave waits between two attempts.
const movementRetry = 2 * time.Second

// ensureMember proposes this node's member record when the topology lacks
// it or records another address, retrying when a concurrent join took a
// token it chose, and waiting while another node joins or leaves. A node
// whose data center or rack differs from the one recorded is refused, as
// Cassandra refuses it: its replicas would move without streaming.
func (n *Node) ensureMember(ctx context.Context, founder bool) error {
	o := n.opts
	if founder && o.HasSchema && n.state.Applied() == 0 {
		snap, err := o.Schema.SchemaSnapshot()
		if err != nil {
			return fmt.Errorf("cluster: %w", err)
		}
		if _, err := n.Propose(ctx, Entry{Kind: KindSchemaReset, Schema: snap}); err != nil {
			return fmt.Errorf("cluster: recording the schema in the new cluster's log: %w", err)
		}
	}
	if _, ok := n.state.Topology().Member(o.HostID); !ok && !founder {
		// A new node chooses its tokens and whether it bootstraps on the
		// ring as it is, not as far as its log has caught up yet.
		if err := n.catchUp(ctx, false); err != nil {
			return err
		}
	}
	rnd := mrand.New(mrand.NewPCG(seedOf(o.HostID)))
	for attempt := 1; ; {
		t := n.state.Topology()
		m, ok := t.Member(o.HostID)
		if ok && m.DataCenter != o.DataCenter {
			return fmt.Errorf("Cannot start node if snitch's data center (%s) differs from previous data center (%s). "+
				"Please fix the snitch configuration, decommission and rebootstrap this node", o.DataCenter, m.DataCenter)
		}
		if ok && m.Rack != o.Rack {
			return fmt.Errorf("Cannot start node if snitch's rack (%s) differs from previous rack (%s). "+
				"Please fix the snitch configuration, decommission and rebootstrap this node", o.Rack, m.Rack)
		}
		if ok && m.Addr == o.Addr {
			return nil
		}
		if ok {
			m.Addr = o.Addr
		} else {
			m = Member{HostID: o.HostID, Addr: o.Addr, DataCenter: o.DataCenter, Rack: o.Rack, Status: StatusNormal}
			if o.AutoBootstrap && !founder && !slices.Contains(o.Seeds, o.Addr) && t.Ring().Len() > 0 {
				m.Status = StatusJoining
			}
			if t.Ring().Len() == 0 && len(o.Tokens) > 0 {
				m.Tokens = slices.Clone(o.Tokens)
			} else {
				toks, err := ring.AllocateTokens(t.Ring(), m.ringNode(), o.NumTokens, o.AllocationRF, rnd)
				if err != nil {
					return fmt.Errorf("cluster: choosing tokens: %w", err)
				}
				m.Tokens = toks
			}
		}
		_, err := n.Propose(ctx, Entry{Kind: KindMember, Member: m})
		if err == nil {
			n.opts.Logger.Info("this node is a member of the ring", "host_id", o.HostID, "addr", o.Addr, "tokens", len(m.Tokens), "status", m.Status)
			return nil
		}
		if errors.Is(err, ErrMovementInProgress) {
			n.opts.Logger.Warn("waiting to join the ring: another node is joining or leaving", "reason", err, "retry_in", movementRetry)
			select {
			case <-time.After(movementRetry):
				continue
			case <-ctx.Done():
				return fmt.Errorf("cluster: joining the ring: %w", err)
			}
		}
		if ctx.Err() != nil || attempt == 5 {
			return fmt.Errorf("cluster: joining the ring: %w", err)
		}
		attempt++
		n.opts.Logger.Warn("joining the ring failed; retrying with the current topology", "attempt", attempt, "err", err)
	}
}

func seedOf(id ring.HostID) (uint64, uint64) {
	var b [16]byte
	_, _ = rand.Read(b[:])
	var a, c uint64
	for i := range 8 {
		a = a<<8 | uint64(id[i]^b[i])
		c = c<<8 | uint64(id[8+i]^b[8+i])
	}
	return a, c
}

// Propose appends e to the metadata log and returns the result of applying
// it here, once this node has applied it.
func (n *Node) Propose(ctx context.Context, e Entry) (any, error) {
	r, err := n.propose(ctx, e)
	return r.Value, err
}

func (n *Node) propose(ctx context.Context, e Entry) (Result, error) {
	if _, err := rand.Read(e.Proposal[:]); err != nil {
		return Result{}, err
	}
	b, err := AppendEntry(nil, e)
	if err != nil {
		return Result{}, err
	}
	done := n.state.Expect(e.Proposal)
	defer n.state.Forget(e.Proposal)
	// The log returns once this node has applied the entry, so its result
	// is already waiting unless the entry did not get that far.
	_, err = n.log.Propose(ctx, b)
	select {
	case r := <-done:
		return r, r.Err
	default:
		if err == nil {
			err = errors.New("cluster: the metadata log applied a proposal without its result")
		}
		return Result{}, err
	}
}

// Topology is the topology this node has applied.
func (n *Node) Topology() *Topology { return n.state.Topology() }

// Transport is the node's internode transport.
func (n *Node) Transport() messaging.Transport { return n.transport }

// Alive reports whether node id answers, by gossip; this node always does.
func (n *Node) Alive(id ring.HostID) bool {
	if id == n.opts.HostID {
		return true
	}
	g := n.gossip.Load()
	return g != nil && g.Alive(id)
}

// Gossip is the node's membership view, for metadata of other nodes.
func (n *Node) Gossip() *gossip.Gossip { return n.gossip.Load() }

// UpdateMeta spreads a change of this node's gossip metadata.
func (n *Node) UpdateMeta() {
	if g := n.gossip.Load(); g != nil {
		if err := g.UpdateMeta(); err != nil {
			n.opts.Logger.Warn("cannot spread this node's gossip metadata", "err", err)
		}
	}
}

// StopGossip stops this node's gossip without leaving: its peers see it
// down (a node that fail-stopped). Close still closes the rest.
func (n *Node) StopGossip() {
	if g := n.gossip.Load(); g != nil {
		_ = g.Close()
	}
}

// LogStats are the metadata log's figures.
func (n *Node) LogStats() metalog.Stats { return n.log.Stats() }

// Close leaves gossip and stops the log and the transport.
func (n *Node) Close() error {
	var errs []error
	if n.ring != nil {
		n.opts.Registry.Unregister(n.ring)
	}
	if g := n.gossip.Load(); g != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_ = g.Leave(ctx)
		cancel()
		errs = append(errs, g.Close())
	}
	if n.log != nil {
		errs = append(errs, n.log.Close())
	}
	if n.transport != nil {
		errs = append(errs, n.transport.Close())
	}
	return errors.Join(errs...)
}
