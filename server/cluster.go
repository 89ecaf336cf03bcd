package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"

	"github.com/cqld/cqld/batchlog"
	"github.com/cqld/cqld/cluster"
	"github.com/cqld/cqld/coordinator"
	"github.com/cqld/cqld/gossip"
	"github.com/cqld/cqld/hints"
	"github.com/cqld/cqld/metrics"
	"github.com/cqld/cqld/mutation"
	"github.com/cqld/cqld/proxy"
	"github.com/cqld/cqld/replica"
	"github.com/cqld/cqld/ring"
	"github.com/cqld/cqld/schema"
	"github.com/cqld/cqld/storage"
	"github.com/cqld/cqld/systables"
)

// members is the node's view of the cluster's other nodes for the data
// path: their replicas, whether they are up and since when they are down,
// and what the coordinator shows of them in system.peers. It turns gossip
// and topology changes into the events drivers register for.
type members struct {
	self  ring.HostID
	local *replica.Local
	// node is set once StartNode returns; the log applies entries (and
	// calls onTopology) before that.
	node    atomic.Pointer[cluster.Node]
	topo    *proxy.RingTopology
	hints   *hints.Store // nil when hinted handoff is off
	publish func(message.Message)
	log     *slog.Logger
	// nativePort is this node's native_transport_port, the port of peers
	// whose gossip has not told theirs yet.
	nativePort int
	// saved is what gossip last said of each peer, kept across restarts,
	// for the peers gossip has not told of since this node started.
	saved *savedPeers

	// background are the hint deletions of removed nodes under way;
	// closeCluster waits for them once the log has stopped (a deletion
	// after the hints store closed fails, logged).
	background sync.WaitGroup

	mu      sync.Mutex
	remotes map[ring.HostID]*replica.Remote
	down    map[ring.HostID]time.Time
	aloneIn atomic.Pointer[aloneIn]
}

var (
	_ proxy.Liveness          = (*members)(nil)
	_ proxy.Replicas          = (*members)(nil)
	_ hints.Liveness          = (*members)(nil)
	_ coordinator.ClusterView = (*members)(nil)
)

// Alive implements proxy.Liveness.
func (m *members) Alive(h ring.HostID) bool { return m.node.Load().Alive(h) }

// DownSince implements hints.Liveness.
func (m *members) DownSince(h ring.HostID) (time.Time, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t, ok := m.down[h]
	return t, ok
}

// Replica implements proxy.Replicas.
func (m *members) Replica(h ring.HostID) (replica.Replica, error) {
	if h == m.self {
		return m.local, nil
	}
	return m.remote(h)
}

func (m *members) remote(h ring.HostID) (*replica.Remote, error) {
	mem, ok := m.node.Load().Topology().Member(h)
	if !ok {
		return nil, fmt.Errorf("server: node %s is not a member of the cluster", h)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	r := m.remotes[h]
	if r == nil || r.Peer() != mem.Addr {
		r = replica.NewRemote(m.node.Load().Transport(), mem.Addr, replica.RemoteOptions{})
		m.remotes[h] = r
	}
	return r, nil
}

// addr is the internode address of member h.
func (m *members) addr(h ring.HostID) (netip.AddrPort, bool) {
	mem, ok := m.node.Load().Topology().Member(h)
	return mem.Addr, ok
}

// streamer is host h's replica as a stream's source or sink.
func (m *members) streamer(h ring.HostID) (interface {
	replica.StreamSource
	replica.StreamSink
}, error) {
	if h == m.self {
		return m.local, nil
	}
	return m.remote(h)
}

// deliverHint is the hints store's Deliver.
func (m *members) deliverHint(timeout time.Duration) hints.Deliver {
	return func(ctx context.Context, target ring.HostID, created time.Time, hint []byte) error {
		r, err := m.remote(target)
		if err != nil {
			return err
		}
		ctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		return r.ApplyHint(ctx, created, hint)
	}
}

// hintStore is the proxy's Hints over the hints store.
type hintStore struct {
	store *hints.Store
	now   func() time.Time
}

// Store implements proxy.Hints.
func (s hintStore) Store(target ring.HostID, m *mutation.Mutation) error {
	b, err := replica.AppendHint(nil, m)
	if err != nil {
		return err
	}
	return s.store.Write(target, b, s.now())
}

// closeRemotes waits for the remote writes still in flight.
func (m *members) closeRemotes() {
	m.mu.Lock()
	rs := m.remotes
	m.remotes = map[ring.HostID]*replica.Remote{}
	m.mu.Unlock()
	for _, r := range rs {
		r.Close()
	}
}

// ringState is what the proxy routes by: the topology's ring and the
// changes in progress.
func ringState(t *cluster.Topology) proxy.RingState {
	joining, leaving := t.Pending()
	return proxy.RingState{Ring: t.Ring(), Joining: joining, Leaving: leaving}
}

// alone reports whether this node is the ring's only member, none joining
// or leaving: coordinator.Options.Alone, asked by every request the
// coordinator might run inline, so answered once per topology.
func (m *members) alone() bool {
	t := m.node.Load().Topology()
	if a := m.aloneIn.Load(); a != nil && a.topology == t {
		return a.alone
	}
	ms := t.Members()
	a := &aloneIn{topology: t, alone: len(ms) == 1 && ms[0].HostID == m.self && ms[0].Status == cluster.StatusNormal}
	m.aloneIn.Store(a)
	return a.alone
}

// aloneIn is alone's answer for one topology (immutable, replaced whole
// by each change).
type aloneIn struct {
	topology *cluster.Topology
	alone    bool
}

// LocalTokens implements coordinator.ClusterView.
func (m *members) LocalTokens() []int64 {
	mem, _ := m.node.Load().Topology().Member(m.self)
	return mem.Tokens
}

// Peers implements coordinator.ClusterView: the other members of the
// ring, normal or leaving; a joining node is not one yet, as in
// Cassandra's system.peers.
func (m *members) Peers() []systables.Peer {
	meta := m.gossipMeta()
	var out []systables.Peer
	for _, mem := range m.node.Load().Topology().Members() {
		if mem.HostID == m.self || mem.Status == cluster.StatusJoining {
			continue
		}
		p := systables.Peer{HostID: mem.HostID, Addr: mem.Addr, DataCenter: mem.DataCenter, Rack: mem.Rack, Tokens: mem.Tokens}
		if f, ok := m.peerFacts(meta, mem.HostID); ok {
			p.NativeAddr, p.NativePort = f.RPCAddr, int(f.NativePort)
			p.ReleaseVersion, p.SchemaVersion = f.ReleaseVersion, f.SchemaVersion
		}
		out = append(out, p)
	}
	return out
}

// peerFacts is what gossip says of h (meta is gossipMeta's answer), else
// what it said before this node restarted.
func (m *members) peerFacts(meta map[ring.HostID]gossip.Meta, h ring.HostID) (peerFacts, bool) {
	if g, ok := meta[h]; ok && g.RPCAddr.IsValid() {
		return factsOf(g), true
	}
	if m.saved == nil {
		return peerFacts{}, false
	}
	return m.saved.get(h)
}

func (m *members) gossipMeta() map[ring.HostID]gossip.Meta {
	n := m.node.Load()
	if n == nil || n.Gossip() == nil {
		return nil
	}
	g := n.Gossip()
	if g == nil {
		return nil
	}
	out := map[ring.HostID]gossip.Meta{}
	for _, mem := range g.Members() {
		out[mem.HostID] = mem.Meta
	}
	return out
}

// nativeAddr is where a node's clients connect, for events: its gossiped
// rpc address and port, else its internode address and this node's port.
func (m *members) nativeAddr(h ring.HostID, addr netip.AddrPort) *primitive.Inet {
	a, port := addr.Addr(), int32(m.nativePort)
	if f, ok := m.peerFacts(m.gossipMeta(), h); ok {
		a, port = f.RPCAddr, int32(f.NativePort)
	}
	return &primitive.Inet{Addr: net.IP(a.AsSlice()), Port: port}
}

// onGossip turns another node's membership event into liveness and a
// STATUS_CHANGE event.
func (m *members) onGossip(e gossip.Event) {
	h := e.Member.HostID
	if m.saved != nil && e.Kind != gossip.Left {
		m.saved.record(h, e.Member.Meta)
	}
	switch e.Kind {
	case gossip.Down:
		m.mu.Lock()
		m.down[h] = time.Now()
		m.mu.Unlock()
		m.publish(&message.StatusChangeEvent{ChangeType: primitive.StatusChangeTypeDown, Address: m.nativeAddr(h, e.Member.Addr)})
	case gossip.Up, gossip.Joined:
		m.mu.Lock()
		delete(m.down, h)
		m.mu.Unlock()
		if m.hints != nil {
			m.hints.Wake()
		}
		m.publish(&message.StatusChangeEvent{ChangeType: primitive.StatusChangeTypeUp, Address: m.nativeAddr(h, e.Member.Addr)})
	}
}

// onTopology republishes the ring and tells drivers of nodes that joined
// or left it: NEW_NODE when a node becomes NORMAL (Cassandra announces a
// node once it has joined, not while it bootstraps), REMOVED_NODE when a
// member that had joined is gone. A removed node's hints are dropped and
// gossip forgets it.
func (m *members) onTopology(before, after *cluster.Topology) {
	m.topo.Publish(ringState(after))
	for _, mem := range after.Members() {
		old, existed := before.Member(mem.HostID)
		if mem.HostID != m.self && mem.Status == cluster.StatusNormal && (!existed || old.Status == cluster.StatusJoining) {
			m.publish(&message.TopologyChangeEvent{ChangeType: primitive.TopologyChangeTypeNewNode, Address: m.nativeAddr(mem.HostID, mem.Addr)})
		}
	}
	for _, mem := range before.Members() {
		if _, ok := after.Member(mem.HostID); ok || mem.HostID == m.self {
			continue
		}
		if mem.Status != cluster.StatusJoining {
			m.publish(&message.TopologyChangeEvent{ChangeType: primitive.TopologyChangeTypeRemovedNode, Address: m.nativeAddr(mem.HostID, mem.Addr)})
		}
		if m.hints != nil {
			// Off the log's goroutine: Delete waits for a replay under way.
			id := mem.HostID
			m.background.Add(1)
			go func() {
				defer m.background.Done()
				if err := m.hints.Delete(id); err != nil {
					m.log.Warn("cannot drop the hints of a node removed from the ring", "host_id", id, "err", err)
				}
			}()
		}
		if n := m.node.Load(); n != nil {
			n.ForgetGossip(mem.HostID)
		}
		if m.saved != nil {
			m.saved.forget(mem.HostID)
		}
	}
	if n := m.node.Load(); n != nil {
		if self, ok := after.Member(m.self); ok {
			if old, _ := before.Member(m.self); old.Status != self.Status {
				n.UpdateMeta()
			}
		}
	}
}

// joinCluster starts this node's membership of its cluster (transport,
// metadata log, gossip), through which schema changes and topology come,
// and the data path over it: the proxy, the hints store and the replicas.
// REQUIRES: o.Context set (StartWith).
func (n *Node) joinCluster(o Options, catalog *storage.Catalog, publish func(message.Message)) error {
	cfg := n.cfg
	ctx := o.Context
	seeds, err := cfg.Seeds()
	if err != nil {
		return err
	}
	self := ring.HostID(n.Info.HostID)
	empty, _ := ring.New(nil)
	saved, err := openSavedPeers(n.fs, filepath.Join(cfg.DataFileDirectories[0], "system", "peers.json"), n.log)
	if err != nil {
		return err
	}
	m := &members{
		saved:      saved,
		self:       self,
		local:      replica.NewLocalWith(n.engine, replica.LocalOptions{Latencies: n.latencies}),
		topo:       proxy.NewRingTopology(self, cfg.DataCenter, proxy.RingState{Ring: empty}),
		publish:    publish,
		log:        n.log,
		nativePort: cfg.NativeTransportPort,
		remotes:    map[ring.HostID]*replica.Remote{},
		down:       map[ring.HostID]time.Time{},
	}
	n.members = m
	n.schema = schema.New(schema.Options{Catalog: catalog, Data: n.engine, SystemKeyspace: systables.IsSystemKeyspace, Logger: n.log,
		Constant: coordinator.Constant})
	n.schemaLog = cluster.NewSchemaLog(n.schema, func(msg message.Message) {
		publish(msg)
		if node := m.node.Load(); node != nil {
			node.UpdateMeta()
		}
	})
	n.authLog = cluster.NewAuthLog(n.Auth)
	n.schemaLog.OnDrop(n.authLog.ForgetDropped)
	rpcAddr := cfg.RPCAddress
	if cfg.BroadcastRPCAddress != "" {
		rpcAddr = cfg.BroadcastRPCAddress
	}
	rpcIP, _ := netip.AddrFromSlice(resolveIP(rpcAddr))
	certs, internodeTLS, err := internodeTLS(cfg, m, n.log)
	if err != nil {
		return err
	}
	n.internodeCerts = certs
	node, err := cluster.StartNode(ctx, cluster.NodeOptions{
		ClusterName:   cfg.ClusterName,
		HostID:        self,
		Addr:          cfg.InternodeAddr(),
		Listen:        cfg.ListenAddr(),
		Seeds:         seeds,
		DataCenter:    cfg.DataCenter,
		Rack:          cfg.Rack,
		NumTokens:     cfg.NumTokens,
		AllocationRF:  cfg.AllocateTokensForLocalReplicationFactor,
		AutoBootstrap: cfg.AutoBootstrap,
		Tokens:        n.Info.Tokens,
		Dir:           filepath.Join(cfg.DataFileDirectories[0], "metadata"),
		FS:            n.fs,
		Schema:        n.schemaLog,
		HasSchema:     len(catalog.Keyspaces()) > 0,
		Auth:          n.authLog,
		Meta: func() gossip.Meta {
			meta := gossip.Meta{RPCAddr: rpcIP.Unmap(), NativePort: uint16(cfg.NativeTransportPort),
				DataCenter: cfg.DataCenter, Rack: cfg.Rack, ReleaseVersion: coordinator.ReleaseVersion, Status: "NORMAL",
				Load: load(n.engine)}
			if node := m.node.Load(); node != nil {
				if self, ok := node.Self(); ok {
					meta.Status = self.Status.String()
				}
			}
			if c := n.coordRef.Load(); c != nil {
				meta.SchemaVersion = c.SchemaVersion()
			}
			return meta
		},
		OnTopology: m.onTopology,
		OnGossip:   m.onGossip,
		OnConflict: n.failStop,
		OnFailure:  n.failStop,
		// Gossip starts once the replica verbs are served (StartWith):
		// a peer holding this node up sends it writes.
		DeferGossip:   true,
		InjectedDelay: cfg.InternodeInjectedDelay.Duration,
		TLS:           internodeTLS,
		Registry:      n.Registry,
		Logger:        n.log,
	})
	if err != nil {
		return err
	}
	n.cluster = node
	n.clusterRef.Store(node)
	m.node.Store(node)
	n.schemaLog.Attach(node)
	n.authLog.Attach(node)
	if err := n.setupRoles(ctx); err != nil {
		return err
	}
	m.topo.Publish(ringState(node.Topology()))
	var hs proxy.Hints
	if cfg.HintedHandoffEnabled {
		m.hints, err = hints.Open(hints.Options{
			FS:          n.fs,
			Dir:         cfg.HintsDirectory,
			MaxFileSize: int64(cfg.MaxHintsFileSize),
			FlushPeriod: cfg.HintsFlushPeriod.Duration,
			MaxWindow:   cfg.MaxHintWindow.Duration,
			Throttle:    int64(cfg.HintedHandoffThrottle),
			Liveness:    m,
			Deliver:     m.deliverHint(cfg.WriteRequestTimeout.Duration),
			Logger:      n.log,
			Metrics:     metrics.NewHints(n.Registry),
		})
		if err != nil {
			return err
		}
		n.hints = m.hints
		hs = hintStore{store: m.hints, now: time.Now}
	}
	n.batches, err = batchlog.OpenStore(n.engine, nil)
	if err != nil {
		return err
	}
	n.batchMetrics = batchlog.NewMetrics(n.Registry)
	var afterBatchlog func()
	if cfg.TestBatchlogKillAfterStore {
		n.log.Error("test_batchlog_kill_after_store is set: this node kills itself (SIGKILL) when a logged batch it coordinates is in the batchlog; for tests only")
		afterBatchlog = func() {
			n.log.Error("test_batchlog_kill_after_store: a logged batch is in the batchlog and none of its writes is sent; killing this node")
			_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
		}
	}
	n.proxy = proxy.New(proxy.Options{
		Topology: m.topo,
		Liveness: m,
		Replicas: m,
		Hints:    hs,
		Batchlog: batchlog.NewClient(self, n.batches, node.Transport(), m.addr, n.batchMetrics),
		// A test's crash point (test_batchlog_kill_after_store).
		AfterBatchlog: afterBatchlog,
		Keyspace:      systables.WithDistributed(func(name string) *storage.KeyspaceDef { return catalog.Current().Keyspace(name) }),
		Logger:        n.log,
		Metrics:       proxy.NewMetrics(n.Registry),
		// The speculative retry thresholds follow read_request_timeout
		// as Cassandra's do.
		ReadTimeout: cfg.ReadRequestTimeout.Duration,

		CASMetrics:                proxy.NewCASMetrics(n.Registry),
		CASContentionTimeout:      cfg.CASContentionTimeout.Duration,
		PaxosVariant:              cfg.PaxosVariant,
		PaxosUnsafeSkipInProgress: cfg.PaxosUnsafeSkipInProgress,
	})
	if cfg.PaxosUnsafeSkipInProgress {
		n.log.Error("paxos_unsafe_skip_in_progress is set: lightweight transactions skip finishing the proposals they find in progress, " +
			"which loses acknowledged writes and breaks linearizability. It exists to show that the linearizability test catches it; never set it otherwise")
	}
	if cfg.PaxosVariant == proxy.PaxosV1 {
		n.log.Warn("paxos_variant is v1: lightweight transactions take four round trips (prepare, read, propose, commit), a benchmark's baseline")
	}
	return nil
}

// startBatchlog serves this node's batchlog to its peers and starts its
// replay, once the coordinator can resolve the tables of stored batches.
func (n *Node) startBatchlog(tables func([16]byte) (*storage.Table, bool)) {
	batchlog.Serve(n.cluster.Transport(), n.batches, n.batchMetrics)
	write := n.cfg.WriteRequestTimeout.Duration
	n.batchReplay = batchlog.Start(batchlog.ManagerOptions{
		Store:    n.batches,
		Replayer: n.proxy,
		Tables:   tables,
		// Cassandra replays a batch twice the write timeout after it
		// was written.
		ReplayAfter:  2 * write,
		WriteTimeout: write,
		Throttle:     int64(n.cfg.BatchlogReplayThrottle),
		Nodes:        func() int { return len(n.cluster.Topology().Members()) },
		Logger:       n.log,
		Metrics:      n.batchMetrics,
	})
}

// closeCluster stops what joinCluster started, in reverse order.
func (n *Node) closeCluster() error {
	var errs []error
	if n.batchReplay != nil {
		n.batchReplay.Close()
	}
	if n.tracer != nil {
		n.tracer.Close() // it writes through the proxy
		n.tracer = nil
	}
	if n.proxy != nil {
		n.proxy.Close()
	}
	if n.members != nil {
		n.members.closeRemotes()
	}
	if n.hints != nil {
		errs = append(errs, n.hints.Close())
	}
	if n.cluster != nil {
		errs = append(errs, n.cluster.Close())
	}
	if n.members != nil {
		// The log has stopped applying entries: no deletion starts now.
		n.members.background.Wait()
	}
	return errors.Join(errs...)
}
