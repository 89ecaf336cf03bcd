package metalog

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cqld/cqld/messaging"
	"github.com/cqld/cqld/ring"
	"github.com/hashicorp/raft"
	"github.com/prometheus/client_golang/prometheus"
)

var (
	// ErrClosed means the Log was closed.
	ErrClosed = errors.New("metalog: closed")
	// ErrOutcomeUnknown means a request reached the leader but its answer
	// did not come back (a timeout, a lost connection, a leader that lost
	// its leadership): the entry may yet be applied.
	ErrOutcomeUnknown = errors.New("metalog: outcome unknown")
	// ErrEntryTooLarge means an entry exceeds Log.MaxEntrySize.
	ErrEntryTooLarge = errors.New("metalog: entry too large")
	// errNotLeader means the request was not done because the node asked
	// does not lead: it may be sent again.
	errNotLeader = errors.New("metalog: not the leader")
	// ErrAddressTaken means this node's address is another server's in
	// the cluster: a node restarted wiped (a new host id) at a member's
	// address. Join refuses it; a node that bootstrapped a cluster of its
	// own there reports it to Options.OnConflict once a member of the
	// other cluster reaches it.
	ErrAddressTaken = errors.New("metalog: address taken")
)

// Log is this node's member of the cluster's metadata log: a raft group
// whose entries every member applies, in order, to its FSM.
//
// Every method is safe for concurrent use.
type Log struct {
	opts  Options
	id    raft.ServerID
	raft  *raft.Raft
	trans *raftTransport
	store *store
	fsm   *fsmAdapter

	incarnation [8]byte
	seq         atomic.Uint64
	// bootstrapped is set when Open started a new cluster.
	bootstrapped bool
	// refusedFrom are the senders of misaddressed RPCs logged already;
	// conflict reports ErrAddressTaken to OnConflict once.
	refusedFrom      sync.Map
	conflict         sync.Once
	misaddressedRPCs prometheus.Counter

	observer *raft.Observer
	obsCh    chan raft.Observation
	leaderMu sync.Mutex
	leaderCh chan struct{} // closed, and replaced, when the leader changes

	mu       sync.Mutex
	closed   bool
	closeCtx context.Context // cancelled by Close
	closeNow context.CancelFunc
	wg       sync.WaitGroup // calls, handlers and their goroutines; the observer

	metrics *metrics
}

// Open opens the log in opts.Dir and starts its raft member. It
// bootstraps a new cluster if opts.Bootstrap and Dir has no raft state; a
// node that is neither a member nor bootstrapping must Join.
func Open(opts Options) (*Log, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(opts.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("metalog: %w", err)
	}
	st, err := openStore(filepath.Join(opts.Dir, "raft"), opts.Logger, opts.FS, opts.OnFailure)
	if err != nil {
		return nil, err
	}
	hcl := newHclogger(opts.Logger.With("component", "raft"))
	snaps, err := raft.NewFileSnapshotStoreWithLogger(opts.Dir, 2, hcl)
	if err != nil {
		_ = st.close()
		return nil, fmt.Errorf("metalog: snapshot store: %w", err)
	}
	l := &Log{
		opts:     opts,
		id:       raft.ServerID(opts.HostID.String()),
		store:    st,
		trans:    newRaftTransport(opts.Transport, raft.ServerID(opts.HostID.String()), opts.Addr, opts.Timing.RPCTimeout, opts.MaxMessageSize),
		leaderCh: make(chan struct{}),

		misaddressedRPCs: newMisaddressedCounter(),
	}
	l.closeCtx, l.closeNow = context.WithCancel(context.Background())
	l.fsm = newFSMAdapter(opts.FSM, l.trans.maxSnapshot)
	l.trans.forwards = l.serveForward
	l.trans.probes = l.serveProbe
	l.trans.misaddressed = l.misaddressed
	fail := func(err error) (*Log, error) {
		l.closeNow()
		_ = l.trans.Close()
		_ = st.close()
		return nil, err
	}
	if _, err := rand.Read(l.incarnation[:]); err != nil {
		return fail(fmt.Errorf("metalog: %w", err))
	}
	if err := l.start(snaps, hcl); err != nil {
		return fail(err)
	}
	opts.Transport.Handle(messaging.VerbMetadata, l.handle)
	l.metrics = newMetrics(l, opts.Metrics)
	return l, nil
}

// start bootstraps if asked and starts raft and the leader observer.
func (l *Log) start(snaps raft.SnapshotStore, hcl *hclogger) error {
	t := l.opts.Timing
	conf := raft.DefaultConfig()
	conf.LocalID = l.id
	conf.Logger = hcl
	conf.HeartbeatTimeout = t.HeartbeatTimeout
	conf.ElectionTimeout = t.ElectionTimeout
	conf.LeaderLeaseTimeout = t.LeaderLeaseTimeout
	conf.CommitTimeout = t.CommitTimeout
	conf.SnapshotInterval = t.SnapshotInterval
	conf.SnapshotThreshold = t.SnapshotThreshold
	conf.TrailingLogs = t.TrailingLogs
	conf.NoLegacyTelemetry = true
	conf.MaxAppendEntries = maxAppendEntries
	if err := raft.ValidateConfig(conf); err != nil {
		return fmt.Errorf("metalog: raft timing: %w", err)
	}
	existing, err := raft.HasExistingState(l.store, l.store, snaps)
	if err != nil {
		return fmt.Errorf("metalog: read raft state: %w", err)
	}
	bootstrap := !existing && l.opts.Bootstrap
	if bootstrap {
		// A first seed without raft state may be one whose data was lost
		// while the cluster it started runs on: it joins that cluster.
		if seed, ok := l.clusterAtSeeds(); ok {
			bootstrap = false
			l.opts.Logger.Warn("metalog: this node is the first seed and has no metadata log, but another seed belongs "+
				"to a running cluster: joining it instead of bootstrapping a new one", "seed", seed)
		}
	}
	// A node that bootstraps is its cluster's only voter: nobody else can
	// win, so it need not wait out a heartbeat timeout before its first
	// election. Raft starts its first timer with a longer timeout, and
	// lowering it (ReloadConfig below) fires the timer at once.
	fresh := bootstrap
	if fresh {
		conf.HeartbeatTimeout += time.Millisecond
		conf.ElectionTimeout = max(conf.ElectionTimeout, conf.HeartbeatTimeout)
	}
	if bootstrap {
		l.bootstrapped = true
		cfg := raft.Configuration{Servers: []raft.Server{{Suffrage: raft.Voter, ID: l.id, Address: l.trans.local}}}
		if err := raft.BootstrapCluster(conf, l.store, l.store, snaps, l.trans, cfg); err != nil {
			return fmt.Errorf("metalog: bootstrap: %w", err)
		}
		l.opts.Logger.Info("metalog: bootstrapped a new cluster metadata log", "host_id", l.id, "addr", l.trans.local)
	}
	logs, err := raft.NewLogCache(512, l.store)
	if err != nil {
		return fmt.Errorf("metalog: %w", err)
	}
	r, err := raft.NewRaft(conf, l.fsm, logs, l.store, snaps, l.trans)
	if err != nil {
		return fmt.Errorf("metalog: start raft: %w", err)
	}
	l.raft = r
	if fresh {
		if err := r.ReloadConfig(raft.ReloadableConfig{TrailingLogs: t.TrailingLogs, SnapshotInterval: t.SnapshotInterval,
			SnapshotThreshold: t.SnapshotThreshold, HeartbeatTimeout: t.HeartbeatTimeout, ElectionTimeout: t.ElectionTimeout}); err != nil {
			return fmt.Errorf("metalog: raft timing: %w", err)
		}
	}
	l.obsCh = make(chan raft.Observation, 16)
	l.observer = raft.NewObserver(l.obsCh, false, func(o *raft.Observation) bool {
		_, ok := o.Data.(raft.LeaderObservation)
		return ok
	})
	r.RegisterObserver(l.observer)
	l.wg.Add(1)
	go l.observe()
	return nil
}

// observe wakes the callers waiting for a leader at each change.
func (l *Log) observe() {
	defer l.wg.Done()
	for {
		select {
		case <-l.obsCh:
			l.leaderMu.Lock()
			close(l.leaderCh)
			l.leaderCh = make(chan struct{})
			l.leaderMu.Unlock()
		case <-l.closeCtx.Done():
			return
		}
	}
}

// leaderChanged returns a channel closed at the next change of leader.
func (l *Log) leaderChanged() <-chan struct{} {
	l.leaderMu.Lock()
	defer l.leaderMu.Unlock()
	return l.leaderCh
}

// enter counts a call or handler in, unless the Log is closed, and
// returns ctx cancelled also when the Log closes, so Close never waits
// for a caller's deadline. The caller must call done.
func (l *Log) enter(ctx context.Context) (_ context.Context, done func(), _ error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil, nil, ErrClosed
	}
	l.wg.Add(1)
	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(l.closeCtx, cancel)
	return ctx, func() {
		stop()
		cancel()
		l.wg.Done()
	}, nil
}

// closedErr is ErrClosed once the Log is closing, else err.
func (l *Log) closedErr(err error) error {
	if l.closeCtx.Err() != nil {
		return ErrClosed
	}
	return err
}

// Propose appends entry to the log and returns its result once it is
// committed and applied on this node, so the caller's next read of its
// own state sees it. On a follower it is forwarded to the leader. The FSM's
// error is returned as this node's FSM returned it (ErrResultUnknown in
// the rare case the entry reached this node within a snapshot). An entry
// over MaxEntrySize fails with ErrEntryTooLarge. When ctx ends first the
// error wraps ctx's, and the entry may yet be applied (ErrOutcomeUnknown
// when it reached a leader). Propose does not keep entry.
func (l *Log) Propose(ctx context.Context, entry []byte) ([]byte, error) {
	ctx, done, err := l.enter(ctx)
	if err != nil {
		return nil, err
	}
	defer done()
	if len(entry) > l.MaxEntrySize() {
		return nil, fmt.Errorf("%w: %d bytes, at most %d", ErrEntryTooLarge, len(entry), l.MaxEntrySize())
	}
	var id proposalID
	copy(id[:8], l.incarnation[:])
	binary.BigEndian.PutUint64(id[8:], l.seq.Add(1))
	w := l.fsm.register(id)
	defer l.fsm.forget(id)

	index, err := l.atLeader(ctx, &forward{kind: kindPropose, entry: seal(id, entry)})
	switch {
	case err == nil:
		l.fsm.placed(id, index)
	case !errors.Is(err, ErrOutcomeUnknown):
		return nil, l.closedErr(fmt.Errorf("metalog: propose: %w", err))
	}
	select {
	case o := <-w.ch:
		return o.result, o.err
	case <-ctx.Done():
		if l.closeCtx.Err() != nil {
			return nil, ErrClosed
		}
		if err != nil {
			return nil, fmt.Errorf("metalog: propose: %w (%w)", ctx.Err(), err)
		}
		return nil, fmt.Errorf("metalog: propose: entry %d committed, not applied here by the deadline: %w", index, ctx.Err())
	}
}

// MaxEntrySize is the largest entry Propose takes: a full AppendEntries
// of entries this large fits in one internode message, so replication
// never sends a message the transport refuses.
func (l *Log) MaxEntrySize() int {
	return maxEntrySize(l.opts.MaxMessageSize)
}

// maxAppendEntries is the entries raft sends in one AppendEntries.
const maxAppendEntries = 64

func maxEntrySize(maxMessage int) int {
	// Per entry: its index, term, type, lengths, time, and the envelope.
	const perEntry = 64 + envelopeSize
	return (maxMessage-snapshotOverhead)/maxAppendEntries - perEntry
}

// Join asks the seeds to add this node to the cluster as a voter: any
// member forwards the request to the leader. It retries round the seeds
// with a growing wait, logging each failure, until one answers that the
// leader has committed the change and the change has reached this node,
// or ctx ends. A node already a member returns at once; a node whose
// seeds all refuse it (ErrAddressTaken from one, messaging's
// ErrClusterMismatch from every one) returns that error.
func (l *Log) Join(ctx context.Context) error {
	ctx, done, err := l.enter(ctx)
	if err != nil {
		return err
	}
	defer done()
	if member, err := l.isMember(); err != nil || member {
		return err
	}
	var seeds []netip.AddrPort
	for _, s := range l.opts.Seeds {
		if s != l.opts.Addr {
			seeds = append(seeds, s)
		}
	}
	if len(seeds) == 0 {
		return fmt.Errorf("metalog: join: no seed other than this node (%s) to join through", l.opts.Addr)
	}
	f := &forward{kind: kindJoin, id: string(l.id), addr: string(l.trans.local)}
	wait := l.opts.Timing.RetryInterval
	for attempt := 1; ; attempt++ {
		var last error
		foreign := 0
		for _, s := range seeds {
			index, err := l.ask(ctx, s, f)
			if err == nil {
				l.opts.Logger.Info("metalog: joined the cluster metadata log", "seed", s, "index", index)
				return l.awaitMembership(ctx)
			}
			if errors.Is(err, ErrAddressTaken) {
				return fmt.Errorf("metalog: join through %s: %w", s, err)
			}
			if errors.Is(err, messaging.ErrClusterMismatch) {
				foreign++
			}
			last = err
			l.opts.Logger.Warn("metalog: join through a seed failed", "seed", s, "attempt", attempt, "err", err)
		}
		if foreign == len(seeds) {
			// Waiting would not help: this node's cluster_name is not
			// its seeds'.
			return fmt.Errorf("metalog: join: every seed belongs to another cluster: %w", last)
		}
		l.opts.Logger.Warn("metalog: no seed could add this node; retrying", "seeds", seeds, "retry_in", wait)
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return l.closedErr(fmt.Errorf("metalog: join through %v: %w (last error: %w)", seeds, ctx.Err(), last))
		}
		wait = min(2*wait, l.opts.Timing.MaxRetryInterval)
	}
}

// awaitMembership waits for the configuration that adds this node to
// reach it, so that what follows Join sees it a member.
func (l *Log) awaitMembership(ctx context.Context) error {
	for {
		member, err := l.isMember()
		if err != nil || member {
			return err
		}
		select {
		case <-time.After(l.opts.Timing.RetryInterval):
		case <-ctx.Done():
			return l.closedErr(fmt.Errorf("metalog: join: added, but the configuration did not reach this node: %w", ctx.Err()))
		}
	}
}

// isMember reports whether this node is in the latest configuration.
func (l *Log) isMember() (bool, error) {
	f := l.raft.GetConfiguration()
	if err := f.Error(); err != nil {
		return false, fmt.Errorf("metalog: configuration: %w", err)
	}
	for _, s := range f.Configuration().Servers {
		if s.ID == l.id {
			return true, nil
		}
	}
	return false, nil
}

// Remove removes the node hostID from the cluster (removenode,
// decommission), through the leader. It returns once the change is
// committed. The removed node's raft member stops once it learns of it:
// its Log then only closes.
func (l *Log) Remove(ctx context.Context, hostID ring.HostID) error {
	ctx, done, err := l.enter(ctx)
	if err != nil {
		return err
	}
	defer done()
	if _, err := l.atLeader(ctx, &forward{kind: kindRemove, id: hostID.String()}); err != nil {
		return l.closedErr(fmt.Errorf("metalog: remove %s: %w", hostID, err))
	}
	return nil
}

// Member is a server of the log's configuration.
type Member struct {
	HostID ring.HostID
	Addr   netip.AddrPort
	Voter  bool
}

// Members returns the servers of the latest configuration this node
// knows.
func (l *Log) Members() ([]Member, error) {
	f := l.raft.GetConfiguration()
	if err := f.Error(); err != nil {
		return nil, fmt.Errorf("metalog: configuration: %w", err)
	}
	var out []Member
	for _, s := range f.Configuration().Servers {
		id, _ := parseHostID(string(s.ID))
		addr, _ := netip.ParseAddrPort(string(s.Address))
		out = append(out, Member{HostID: id, Addr: addr, Voter: s.Suffrage == raft.Voter})
	}
	return out, nil
}

// Leader returns the leader's host id and address as this node knows
// them, or zero values when it knows none.
func (l *Log) Leader() (ring.HostID, netip.AddrPort) {
	addr, id := l.raft.LeaderWithID()
	h, _ := parseHostID(string(id))
	a, _ := netip.ParseAddrPort(string(addr))
	return h, a
}

// Stats is the state of this node's member, for metrics and nodetool.
type Stats struct {
	// State is raft's: Follower, Candidate, Leader or Shutdown.
	State        string
	Term         uint64
	LastIndex    uint64
	CommitIndex  uint64
	AppliedIndex uint64
	Leader       ring.HostID
	LeaderAddr   netip.AddrPort
}

// Stats returns the member's state now.
func (l *Log) Stats() Stats {
	s := Stats{
		State:        l.raft.State().String(),
		Term:         l.raft.CurrentTerm(),
		LastIndex:    l.raft.LastIndex(),
		CommitIndex:  l.raft.CommitIndex(),
		AppliedIndex: l.raft.AppliedIndex(),
	}
	s.Leader, s.LeaderAddr = l.Leader()
	return s
}

// Close stops the member: calls in flight fail with ErrClosed, the
// handler leaves the Transport, and Close returns once every goroutine
// of the Log has returned and the store is closed.
func (l *Log) Close() error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return nil
	}
	l.closed = true
	l.closeNow()
	l.mu.Unlock()

	l.opts.Transport.Handle(messaging.VerbMetadata, nil)
	err := l.raft.Shutdown().Error()
	l.raft.DeregisterObserver(l.observer)
	l.wg.Wait()
	l.metrics.unregister()
	if cerr := l.store.close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("metalog: close: %w", err)
	}
	return nil
}

// atLeader has the leader do f: here if this node leads, else through
// the leader it knows. While there is no leader, or the node asked no
// longer leads, it waits for a change of leader and tries again, until ctx
// ends. It returns the index of f's entry.
func (l *Log) atLeader(ctx context.Context, f *forward) (uint64, error) {
	wait := l.opts.Timing.RetryInterval
	for {
		changed := l.leaderChanged()
		var index uint64
		var err error
		if l.raft.State() == raft.Leader {
			index, err = l.lead(ctx, f)
		} else if addr, _ := l.raft.LeaderWithID(); addr != "" && addr != l.trans.local {
			to, perr := netip.ParseAddrPort(string(addr))
			if perr != nil {
				return 0, fmt.Errorf("metalog: leader address %q: %w", addr, perr)
			}
			index, err = l.ask(ctx, to, f)
		} else {
			err = fmt.Errorf("%w: no leader known", errNotLeader)
		}
		if !errors.Is(err, errNotLeader) {
			return index, err
		}
		select {
		case <-changed:
		case <-time.After(wait):
			wait = min(2*wait, l.opts.Timing.MaxRetryInterval)
		case <-ctx.Done():
			return 0, l.closedErr(fmt.Errorf("%w (%w)", ctx.Err(), err))
		}
	}
}

// ask sends f to the member at to and returns the index it answers.
// Errors are classified as atLeader needs them: errNotLeader for what
// may be sent again, ErrOutcomeUnknown for what may have been done.
func (l *Log) ask(ctx context.Context, to netip.AddrPort, f *forward) (uint64, error) {
	payload, err := encodeMessage(f)
	if err != nil {
		return 0, err
	}
	// One attempt waits at most RPCTimeout: a proposal whose answer is
	// lost still has the rest of its caller's time to see its entry
	// applied.
	ctx, cancel := context.WithTimeout(ctx, l.opts.Timing.RPCTimeout)
	defer cancel()
	b, err := l.opts.Transport.Request(ctx, to, messaging.VerbMetadata, payload)
	if err != nil {
		if code, ok := remoteCode(err); ok {
			switch code {
			case codeNotLeader, codeClosed, messaging.FailureNoHandler:
				return 0, fmt.Errorf("%w: %w", errNotLeader, err)
			case codeUnknown:
				return 0, fmt.Errorf("%w: %w", ErrOutcomeUnknown, err)
			case codeAddressTaken:
				var re *messaging.RemoteError
				errors.As(err, &re)
				return 0, fmt.Errorf("%w: %s", ErrAddressTaken, strings.TrimPrefix(re.Message, ErrAddressTaken.Error()+": "))
			}
			return 0, err
		}
		switch {
		case errors.Is(err, messaging.ErrUnreachable), errors.Is(err, messaging.ErrQueueFull):
			// Never sent.
			return 0, fmt.Errorf("%w: %w", errNotLeader, err)
		case f.kind == kindJoin:
			return 0, err
		}
		return 0, fmt.Errorf("%w: %w", ErrOutcomeUnknown, err)
	}
	m, err := decodeMessage(b)
	if err != nil {
		return 0, fmt.Errorf("metalog: answer from %s: %w", to, err)
	}
	r, ok := m.(*indexResponse)
	if !ok {
		return 0, fmt.Errorf("%w: answer from %s is a %T", ErrBadMessage, to, m)
	}
	return r.index, nil
}

// lead does f on this node's raft, which leads (or did a moment ago).
func (l *Log) lead(ctx context.Context, f *forward) (uint64, error) {
	timeout := l.opts.Timing.RPCTimeout
	if d, ok := ctx.Deadline(); ok {
		timeout = time.Until(d)
	}
	var fut raft.IndexFuture
	switch f.kind {
	case kindPropose:
		fut = l.raft.Apply(f.entry, timeout)
	case kindJoin:
		if err := l.addressFree(raft.ServerID(f.id), raft.ServerAddress(f.addr)); err != nil {
			return 0, err
		}
		fut = l.raft.AddVoter(raft.ServerID(f.id), raft.ServerAddress(f.addr), 0, timeout)
	case kindRemove:
		fut = l.raft.RemoveServer(raft.ServerID(f.id), 0, timeout)
	default:
		return 0, fmt.Errorf("%w: kind %d", ErrBadMessage, f.kind)
	}
	// The future does not watch ctx; a goroutine waits for it (raft
	// resolves every future, at the latest as it shuts down).
	done := make(chan error, 1)
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		done <- fut.Error()
	}()
	select {
	case err := <-done:
		switch {
		case err == nil:
			return fut.Index(), nil
		case errors.Is(err, raft.ErrNotLeader), errors.Is(err, raft.ErrLeadershipTransferInProgress),
			errors.Is(err, raft.ErrEnqueueTimeout):
			return 0, fmt.Errorf("%w: %w", errNotLeader, err)
		case errors.Is(err, raft.ErrLeadershipLost):
			return 0, fmt.Errorf("%w: %w", ErrOutcomeUnknown, err)
		case errors.Is(err, raft.ErrRaftShutdown):
			// Raft may have shut down after it sent the entry on.
			return 0, fmt.Errorf("%w: %w", ErrOutcomeUnknown, ErrClosed)
		}
		return 0, err
	case <-ctx.Done():
		return 0, fmt.Errorf("%w: %w", ErrOutcomeUnknown, ctx.Err())
	}
}

// handle is the Log's handler of VerbMetadata.
func (l *Log) handle(ctx context.Context, in messaging.Inbound) ([]byte, error) {
	ctx, done, err := l.enter(ctx)
	if err != nil {
		return nil, &messaging.RemoteError{Code: codeClosed, Message: err.Error()}
	}
	defer done()
	return l.trans.handle(ctx, in)
}

// serveForward serves a Propose, Join or Remove from another member: done
// here if this node leads, else forwarded once more to the leader.
func (l *Log) serveForward(ctx context.Context, f *forward) ([]byte, error) {
	if err := l.validForward(f); err != nil {
		return nil, &messaging.RemoteError{Code: codeBadMessage, Message: err.Error()}
	}
	var index uint64
	var err error
	if l.raft.State() == raft.Leader {
		index, err = l.lead(ctx, f)
	} else if addr, _ := l.raft.LeaderWithID(); addr != "" && addr != l.trans.local && f.hops < maxHops {
		to, perr := netip.ParseAddrPort(string(addr))
		if perr != nil {
			return nil, &messaging.RemoteError{Code: codeNotLeader, Message: perr.Error()}
		}
		next := *f
		next.hops++
		index, err = l.ask(ctx, to, &next)
	} else {
		err = fmt.Errorf("%w: %s knows no leader", errNotLeader, l.trans.local)
	}
	if err != nil {
		code := codeFailed
		switch {
		case errors.Is(err, errNotLeader):
			code = codeNotLeader
		case errors.Is(err, ErrOutcomeUnknown):
			code = codeUnknown
		case errors.Is(err, ErrClosed):
			code = codeClosed
		case errors.Is(err, ErrAddressTaken):
			code = codeAddressTaken
		}
		return nil, &messaging.RemoteError{Code: code, Message: err.Error()}
	}
	return encodeMessage(&indexResponse{index: index})
}

// validForward checks what a peer asks the leader to do.
func (l *Log) validForward(f *forward) error {
	switch f.kind {
	case kindPropose:
		if len(f.entry) > envelopeSize+l.MaxEntrySize() {
			return fmt.Errorf("%w: %d bytes", ErrEntryTooLarge, len(f.entry)-envelopeSize)
		}
		_, _, err := unseal(f.entry)
		return err
	case kindJoin:
		if _, err := netip.ParseAddrPort(f.addr); err != nil {
			return fmt.Errorf("%w: join address %q", ErrBadMessage, f.addr)
		}
	}
	if _, err := parseHostID(f.id); err != nil {
		return err
	}
	return nil
}

// parseHostID parses a host id's 8-4-4-4-12 form (ring.HostID.String).
func parseHostID(s string) (ring.HostID, error) {
	var h ring.HostID
	hexed := strings.ReplaceAll(s, "-", "")
	if len(s) != 36 || len(hexed) != 32 || s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' {
		return h, fmt.Errorf("%w: host id %q", ErrBadMessage, s)
	}
	if _, err := hex.Decode(h[:], []byte(hexed)); err != nil {
		return h, fmt.Errorf("%w: host id %q", ErrBadMessage, s)
	}
	return h, nil
}

// Bootstrapped reports whether Open started a new cluster with this node
// as its only voter (else the node was a member already, or must Join).
func (l *Log) Bootstrapped() bool { return l.bootstrapped }

// addressFree fails with ErrAddressTaken when addr is another server's
// than id in the latest configuration: a node restarted without its data
// (so with a new host id) where a member was. Raft would otherwise add
// a second server at one address, and the member's RPCs would reach the
// new node. As in Cassandra, the old node must be removed first.
//
// The ring knows a node by its IP address alone, so a second node on a
// member's IP with another storage port is refused too: admitted, it
// would be a member whose ring no node can build, and every read and
// write of the cluster would fail until it was removed.
func (l *Log) addressFree(id raft.ServerID, addr raft.ServerAddress) error {
	f := l.raft.GetConfiguration()
	if err := f.Error(); err != nil {
		return fmt.Errorf("metalog: configuration: %w", err)
	}
	ip := addrIP(addr)
	for _, s := range f.Configuration().Servers {
		if s.ID == id {
			continue
		}
		switch {
		case s.Address == addr:
			return fmt.Errorf("%w: A node with address %s already exists (host id %s), cancelling join. "+
				"Remove it from the cluster (removenode %s) if you want this node to replace it", ErrAddressTaken, addr, s.ID, s.ID)
		case ip.IsValid() && addrIP(s.Address) == ip:
			return fmt.Errorf("%w: A node with IP address %s already exists (host id %s, at %s), cancelling join of %s. "+
				"A cluster has one node per IP address: give this node a listen_address of its own", ErrAddressTaken, ip, s.ID, s.Address, addr)
		}
	}
	return nil
}

// addrIP is the IP of a server's host:port address, or the zero Addr.
func addrIP(a raft.ServerAddress) netip.Addr {
	ap, err := netip.ParseAddrPort(string(a))
	if err != nil {
		return netip.Addr{}
	}
	return ap.Addr()
}

// serveProbe answers a probe with the latest configuration this node
// knows: none when it has no raft state.
func (l *Log) serveProbe() ([]byte, error) {
	f := l.raft.GetConfiguration()
	if err := f.Error(); err != nil {
		return nil, &messaging.RemoteError{Code: codeFailed, Message: err.Error()}
	}
	return encodeMessage(&configuration{cfg: f.Configuration()})
}

// clusterAtSeeds asks every other seed, at once, which servers it knows,
// and returns one that knows some: a seed that is a member of a cluster.
// A seed that does not answer within RPCTimeout counts as none.
func (l *Log) clusterAtSeeds() (netip.AddrPort, bool) {
	found := make(chan netip.AddrPort, len(l.opts.Seeds))
	var wg sync.WaitGroup
	for _, seed := range l.opts.Seeds {
		if seed == l.opts.Addr {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			b, err := l.trans.request(raft.ServerAddress(seed.String()), &probe{}, l.opts.Timing.RPCTimeout)
			if err != nil {
				l.opts.Logger.Debug("metalog: probe of a seed failed", "seed", seed, "err", err)
				return
			}
			if m, err := decodeMessage(b); err == nil {
				if c, ok := m.(*configuration); ok && len(c.cfg.Servers) > 0 {
					found <- seed
				}
			}
		}()
	}
	wg.Wait()
	close(found)
	seed, ok := <-found
	return seed, ok
}

// misaddressed is told of a raft RPC this node refused because it was for
// server to. It logs the first from each sender. If the sender is no
// server of this node's configuration while that configuration has some,
// this node runs a cluster of its own at an address a running cluster
// gives another server (a first seed restarted without its data, with no
// other seed to ask): it tells Options.OnConflict, once.
func (l *Log) misaddressed(from netip.AddrPort, rpc any, to raft.ServerID) {
	var sender raft.ServerID
	if h, ok := rpc.(raft.WithRPCHeader); ok {
		sender = raft.ServerID(h.GetRPCHeader().ID)
	} else if s, ok := rpc.(*installSnapshot); ok {
		sender = raft.ServerID(s.req.ID)
	}
	l.misaddressedRPCs.Inc()
	if _, logged := l.refusedFrom.LoadOrStore(from, true); !logged {
		l.opts.Logger.Error("metalog: refusing raft RPCs for another server: this node's address is that server's in "+
			"the sender's configuration", "from", from, "sender", sender, "for", to, "this_node", l.id, "rpc", fmt.Sprintf("%T", rpc))
	}
	f := l.raft.GetConfiguration()
	if f.Error() != nil || len(f.Configuration().Servers) == 0 {
		return
	}
	for _, s := range f.Configuration().Servers {
		if s.ID == sender {
			return
		}
	}
	l.conflict.Do(func() {
		err := fmt.Errorf("%w: this node (host id %s) runs a cluster of its own at %s, but server %s at %s, of another "+
			"cluster, sends raft RPCs for server %s to this address: that cluster counts this address as %s's. "+
			"Was this node's data wiped? Remove %s from that cluster (removenode) and start this node with one of its "+
			"seeds to join it", ErrAddressTaken, l.id, l.trans.local, sender, from, to, to, to)
		if l.opts.OnConflict == nil {
			l.opts.Logger.Error(err.Error())
			return
		}
		l.opts.OnConflict(err)
	})
}
