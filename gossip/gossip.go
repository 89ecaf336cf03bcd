package gossip

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"sort"
	"sync"
	"time"

	"github.com/hashicorp/memberlist"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/cqld/cqld/messaging"
	"github.com/cqld/cqld/ring"
)

// Options configure a node's gossip. Transport, HostID and Meta are
// required.
type Options struct {
	// Transport carries gossip under messaging.VerbGossip; its address is
	// this node's address in the cluster. It is the caller's: Close does
	// not close it.
	Transport messaging.Transport
	// HostID names this node; it is memberlist's node name.
	HostID ring.HostID
	// Seeds are the internode addresses of the seed nodes. A node that is
	// a seed itself and finds no other seed up starts alone.
	Seeds []netip.AddrPort
	// Known are the internode addresses of the cluster's other members
	// as this node last knew them (its metadata log's topology): a node
	// restarting tries them once, beside the seeds, so that it hears from
	// its peers at once, where they would reach it only when they next
	// try the nodes they hold down (a restarted seed has no other seed
	// to ask).
	Known []netip.AddrPort
	// Meta returns this node's current metadata. It is called at Start
	// and by UpdateMeta, never concurrently with itself.
	Meta func() Meta
	// OnEvent receives membership events of the other nodes, in order, on
	// one goroutine that gossip owns; a slow OnEvent delays later events,
	// never gossip itself. It must not call Close. Nil discards them.
	OnEvent func(Event)
	// Logger receives membership changes and problems; nil discards.
	Logger *slog.Logger
	// Metrics receives gossip's instruments; nil means a private set
	// registered nowhere.
	Metrics *Metrics
	// Timing sets failure detection's pace; fields left zero take
	// memberlist's LAN defaults.
	Timing Timing
	// Now is the clock of DownSince's times; nil means time.Now.
	// (memberlist's own timers run on the system clock.)
	Now func() time.Time
}

// Timing sets how fast gossip probes, spreads news and retries. The zero
// value of each field means its default (memberlist's LAN configuration).
type Timing struct {
	// ProbeInterval is how often a node probes a random peer (1s), and
	// ProbeTimeout how long it waits for the ack (500ms).
	ProbeInterval time.Duration
	ProbeTimeout  time.Duration
	// GossipInterval is how often news is sent to a few peers (200ms).
	GossipInterval time.Duration
	// PushPullInterval is how often a node exchanges its full state with
	// a random peer (30s).
	PushPullInterval time.Duration
	// StreamTimeout bounds one full-state exchange (10s).
	StreamTimeout time.Duration
	// SuspicionMult scales how long a suspected node has to refute it
	// before it is declared down, in probe intervals (4).
	SuspicionMult int
	// GossipToTheDeadTime is how long news is still sent to a node
	// declared down (30s).
	GossipToTheDeadTime time.Duration
	// JoinBackoff is the first wait between attempts to reach the seeds
	// (1s); each failure doubles it up to MaxJoinBackoff (30s).
	JoinBackoff    time.Duration
	MaxJoinBackoff time.Duration
	// ReconnectInterval is how often a node tries to reach the nodes it
	// holds down, so that the two sides of a healed partition find each
	// other again (10s).
	ReconnectInterval time.Duration
}

func (t Timing) withDefaults() Timing {
	lan := memberlist.DefaultLANConfig()
	def := func(v *time.Duration, d time.Duration) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&t.ProbeInterval, lan.ProbeInterval)
	def(&t.ProbeTimeout, lan.ProbeTimeout)
	def(&t.GossipInterval, lan.GossipInterval)
	def(&t.PushPullInterval, lan.PushPullInterval)
	def(&t.StreamTimeout, lan.TCPTimeout)
	def(&t.GossipToTheDeadTime, lan.GossipToTheDeadTime)
	def(&t.JoinBackoff, time.Second)
	def(&t.MaxJoinBackoff, 30*time.Second)
	def(&t.ReconnectInterval, 10*time.Second)
	if t.SuspicionMult <= 0 {
		t.SuspicionMult = lan.SuspicionMult
	}
	t.MaxJoinBackoff = max(t.MaxJoinBackoff, t.JoinBackoff)
	return t
}

// Member is a node as gossip knows it.
type Member struct {
	HostID ring.HostID
	// Addr is its internode address.
	Addr netip.AddrPort
	// Up is whether it answers; false once memberlist declared it dead,
	// until it answers again. DownSince is when it went down (zero while
	// up).
	Up        bool
	DownSince time.Time
	Meta      Meta
}

// Gossip is one node's membership in the cluster: memberlist over the
// node's messaging transport. Its methods are safe for concurrent use.
type Gossip struct {
	opts    Options
	timing  Timing
	self    netip.AddrPort
	name    string
	started time.Time
	log     *slog.Logger
	metrics *Metrics
	ml      *memberlist.Memberlist
	tr      *transport

	metaMu   sync.Mutex // serialises UpdateMeta's calls of Options.Meta
	updateMu sync.Mutex // serialises memberlist's UpdateNode and Leave
	// spread holds a metadata change UpdateMeta recorded and spreadLoop
	// has not yet given memberlist.
	spread   chan struct{}
	mu       sync.Mutex
	meta     Meta
	metaEnc  []byte
	members  map[ring.HostID]*Member // the other nodes
	leaving  map[ring.HostID]bool    // the nodes that announced they leave
	refusals map[string]bool         // refusals logged, so each is logged once
	left     bool                    // Leave was called
	joined   chan struct{}           // closed once this node is in a cluster
	joinedOK bool

	events *eventQueue
	stop   chan struct{} // closed by Close
	wg     sync.WaitGroup
	closed sync.Once
}

// Start starts gossip on opts.Transport. It returns at once: the seeds are
// reached in the background (Joined tells when).
func Start(opts Options) (*Gossip, error) {
	if opts.Transport == nil {
		return nil, errors.New("gossip: Options.Transport is nil")
	}
	if opts.Meta == nil {
		return nil, errors.New("gossip: Options.Meta is nil")
	}
	if opts.HostID == (ring.HostID{}) {
		return nil, errors.New("gossip: Options.HostID is zero")
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Metrics == nil {
		opts.Metrics = NewMetrics(prometheus.NewRegistry())
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	g := &Gossip{
		opts:     opts,
		timing:   opts.Timing.withDefaults(),
		self:     opts.Transport.Addr(),
		name:     opts.HostID.String(),
		started:  opts.Now(),
		log:      opts.Logger,
		metrics:  opts.Metrics,
		members:  make(map[ring.HostID]*Member),
		leaving:  make(map[ring.HostID]bool),
		refusals: make(map[string]bool),
		joined:   make(chan struct{}),
		spread:   make(chan struct{}, 1),
		stop:     make(chan struct{}),
	}
	g.meta = opts.Meta()
	enc, err := AppendMeta(nil, g.meta)
	if err != nil {
		return nil, err
	}
	g.metaEnc = enc
	g.events = newEventQueue(g.metrics)
	g.countMembers()

	g.tr = newTransport(opts.Transport, g.timing.ProbeInterval, g.metrics, g.log)
	d := &delegate{g}
	conf := memberlist.DefaultLANConfig()
	conf.Name = g.name
	conf.Transport = g.tr
	conf.ProtocolVersion = memberlist.ProtocolVersionMax
	conf.ProbeInterval = g.timing.ProbeInterval
	conf.ProbeTimeout = g.timing.ProbeTimeout
	conf.GossipInterval = g.timing.GossipInterval
	conf.PushPullInterval = g.timing.PushPullInterval
	conf.TCPTimeout = g.timing.StreamTimeout
	conf.SuspicionMult = g.timing.SuspicionMult
	conf.GossipToTheDeadTime = g.timing.GossipToTheDeadTime
	// A host id whose node died may come back on another address.
	conf.DeadNodeReclaimTime = time.Nanosecond
	// Packets and streams ride the same messaging connection, so a
	// stream ping after a lost packet ping learns nothing new.
	conf.DisableTcpPings = true
	conf.Delegate, conf.Events, conf.Alive, conf.Conflict = d, d, d, d
	conf.Logger = memberlistLogger(g.log)
	g.ml, err = memberlist.Create(conf)
	if err != nil {
		g.tr.Shutdown()
		return nil, fmt.Errorf("gossip: start on %s: %w", g.self, err)
	}
	g.wg.Add(3)
	go func() {
		defer g.wg.Done()
		g.events.run(g.opts.OnEvent, g.stop)
	}()
	go func() {
		defer g.wg.Done()
		g.spreadLoop()
	}()
	go func() {
		defer g.wg.Done()
		g.joinLoop()
	}()
	return g, nil
}

// Joined is closed once this node is in a cluster: a seed answered, a
// peer joined it, or it is a seed that found no other seed up and started
// the cluster alone.
func (g *Gossip) Joined() <-chan struct{} { return g.joined }

func (g *Gossip) markJoined() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.markJoinedLocked()
}

// markJoinedLocked is markJoined. REQUIRES: g.mu held.
func (g *Gossip) markJoinedLocked() {
	if !g.joinedOK {
		g.joinedOK = true
		close(g.joined)
	}
}

// Members returns every node this node knows, itself first, then by host
// id. A node that left is not among them; a node down is, until it leaves.
func (g *Gossip) Members() []Member {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := make([]Member, 0, 1+len(g.members))
	for _, m := range g.members {
		out = append(out, *m)
	}
	sort.Slice(out, func(i, j int) bool { return string(out[i].HostID[:]) < string(out[j].HostID[:]) })
	return append([]Member{{HostID: g.opts.HostID, Addr: g.self, Up: true, Meta: g.meta}}, out...)
}

// Alive reports whether the node with host id id is up: this node always
// is, a node gossip does not know is not.
func (g *Gossip) Alive(id ring.HostID) bool {
	if id == g.opts.HostID {
		return true
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	m := g.members[id]
	return m != nil && m.Up
}

// DownSince reports whether the node with host id id is down and, if so,
// since when; a node gossip does not know (not heard from since Start,
// left or forgotten) is down since Start. It is hints.Liveness.
func (g *Gossip) DownSince(id ring.HostID) (time.Time, bool) {
	if id == g.opts.HostID {
		return time.Time{}, false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	switch m := g.members[id]; {
	case m == nil:
		return g.started, true
	case m.Up:
		return time.Time{}, false
	default:
		return m.DownSince, true
	}
}

// UpdateMeta reads this node's metadata again (Options.Meta), and has it
// spread without waiting for gossip: the metadata log applying a schema
// change calls it, and must not stall on gossip's pace. It fails,
// keeping the previous metadata, when the new one does not encode.
func (g *Gossip) UpdateMeta() error {
	g.metaMu.Lock()
	defer g.metaMu.Unlock()
	if g.isClosed() {
		return errClosed
	}
	meta := g.opts.Meta()
	enc, err := AppendMeta(nil, meta)
	if err != nil {
		return err
	}
	g.mu.Lock()
	g.meta, g.metaEnc = meta, enc
	g.mu.Unlock()
	select {
	case g.spread <- struct{}{}:
	default: // spreadLoop has one waiting, and reads the metadata then
	}
	return nil
}

// spreadLoop gives memberlist the metadata changes UpdateMeta records,
// one at a time, until Close. memberlist's UpdateNode queues the news and
// waits until it has been sent its last retransmission; the next change
// waits for that (or for spreadWait). Queued while the previous one still
// is, it would replace it in memberlist's broadcast queue, and a
// replacement that empties the queue restarts the ids that tell queued
// messages apart: a later message of the same length (another node's
// news) can then take the new one's place, and the change would reach no
// peer until the next one. The same can befall a change queued behind
// other nodes' news, more rarely; a lost change never ends its wait, so a
// change still waiting after spreadWait is queued again, a few times.
func (g *Gossip) spreadLoop() {
	for {
		select {
		case <-g.stop:
			return
		case <-g.spread:
		}
		for range spreadAttempts {
			g.updateMu.Lock()
			sent := g.isClosed() || g.ml.UpdateNode(g.spreadWait()) == nil
			g.updateMu.Unlock()
			if sent {
				break
			}
			g.metrics.MetaRespread.Inc()
		}
	}
}

// spreadAttempts bounds how many times one change is queued.
const spreadAttempts = 4

// spreadWait bounds how long one metadata change holds the next back:
// ten gossip rounds send a message its retransmissions in a cluster of
// hundreds, and 2s bounds Close's wait under a slow Timing.
func (g *Gossip) spreadWait() time.Duration {
	return min(10*g.timing.GossipInterval, 2*time.Second)
}

// Leave tells the cluster this node is leaving and waits, until ctx
// ends, for the news to leave: its peers see it Left, not Down. Gossip
// keeps answering until Close.
func (g *Gossip) Leave(ctx context.Context) error {
	g.updateMu.Lock()
	defer g.updateMu.Unlock()
	if g.isClosed() {
		return errClosed
	}
	g.mu.Lock()
	g.left = true
	g.mu.Unlock()
	timeout := 5 * time.Second
	if d, ok := ctx.Deadline(); ok {
		timeout = max(time.Until(d), time.Millisecond)
	}
	// The leaving flag goes first, so that peers take the death that
	// follows as a leave.
	start := time.Now()
	if err := g.ml.UpdateNode(timeout); err != nil {
		return fmt.Errorf("gossip: leave: %w", err)
	}
	if err := g.ml.Leave(max(timeout-time.Since(start), time.Millisecond)); err != nil {
		return fmt.Errorf("gossip: leave: %w", err)
	}
	return nil
}

// Forget drops a node held down from Members, so that it is no longer
// reconnected to: the cluster removed it (removenode). It reports whether
// the node was a member held down; an up node is not forgotten. If the
// node answers again it joins again.
func (g *Gossip) Forget(id ring.HostID) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	m := g.members[id]
	if m == nil || m.Up {
		return false
	}
	delete(g.members, id)
	delete(g.leaving, id)
	g.countMembers()
	return true
}

var errClosed = errors.New("gossip: closed")

func (g *Gossip) isClosed() bool {
	select {
	case <-g.stop:
		return true
	default:
		return false
	}
}

// Close stops gossip and returns once every goroutine it started has
// returned, and memberlist has shut down (memberlist's own loops return
// on its shutdown signal, without a handle to wait on). It waits for a
// Leave under way. Peers see this node down, unless it left first. Events
// not yet delivered are dropped.
func (g *Gossip) Close() error {
	g.closed.Do(func() {
		// Taking updateMu waits out a Leave or a change being spread:
		// memberlist refuses them after its shutdown.
		g.updateMu.Lock()
		close(g.stop)
		g.updateMu.Unlock()
		if err := g.ml.Shutdown(); err != nil {
			g.log.Warn("gossip: memberlist shutdown", "err", err)
		}
		g.wg.Wait()
	})
	return nil
}

// countMembers sets the members gauge. REQUIRES: g.mu held, or no other
// goroutine yet.
func (g *Gossip) countMembers() {
	up, down := 1, 0
	for _, m := range g.members {
		if m.Up {
			up++
		} else {
			down++
		}
	}
	g.metrics.Members.WithLabelValues("up").Set(float64(up))
	g.metrics.Members.WithLabelValues("down").Set(float64(down))
}
