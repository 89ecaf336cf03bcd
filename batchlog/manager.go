package batchlog

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/cqld/cqld/mutation"
	"github.com/cqld/cqld/storage"
)

// Replayer writes a replayed batch's partitions to all their replicas,
// natural and pending, hinting the ones that are down or do not answer
// within ctx; it fails only when some replica was neither written nor
// hinted. The proxy implements it. It does not keep m.
type Replayer interface {
	Replay(ctx context.Context, m *mutation.Mutation) error
}

// Defaults of ManagerOptions.
const (
	// DefaultInterval is Cassandra's time between replay rounds.
	DefaultInterval = 10 * time.Second
	// DefaultReplayAfter is twice the default write_request_timeout.
	DefaultReplayAfter = 4 * time.Second
)

// ManagerOptions wire a Manager.
type ManagerOptions struct {
	Store    *Store
	Replayer Replayer
	// Tables resolves the table ids of stored batches (the current
	// schema).
	Tables func(id [16]byte) (*storage.Table, bool)
	// ReplayAfter is how old a batch is when it is replayed (Cassandra:
	// twice write_request_timeout); WriteTimeout bounds each batch's
	// replay.
	ReplayAfter  time.Duration
	WriteTimeout time.Duration
	// Interval is the time between rounds: DefaultInterval, or
	// ReplayAfter when that is shorter, so a batch waits at most about
	// twice ReplayAfter.
	Interval time.Duration
	// Throttle (batchlog_replay_throttle) is the bytes per second of
	// batches the cluster replays, shared evenly among Nodes() nodes; zero
	// is no limit.
	Throttle int64
	Nodes    func() int
	// Now and After are the clock and the timer; time.Now and time.After
	// when nil.
	Now     func() time.Time
	After   func(time.Duration) <-chan time.Time
	Logger  *slog.Logger
	Metrics *Metrics
}

// Manager replays the batches of this node's batchlog that their
// coordinators did not remove in time.
type Manager struct {
	o      ManagerOptions
	cancel context.CancelFunc
	done   chan struct{}
	mu     sync.Mutex // one round at a time
}

// Start starts the replay loop; Close stops it.
func Start(o ManagerOptions) *Manager {
	if o.ReplayAfter <= 0 {
		o.ReplayAfter = DefaultReplayAfter
	}
	if o.WriteTimeout <= 0 {
		o.WriteTimeout = o.ReplayAfter / 2
	}
	if o.Interval <= 0 {
		o.Interval = min(DefaultInterval, o.ReplayAfter)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.After == nil {
		o.After = time.After
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if o.Nodes == nil {
		o.Nodes = func() int { return 1 }
	}
	ctx, cancel := context.WithCancel(context.Background())
	m := &Manager{o: o, cancel: cancel, done: make(chan struct{})}
	go m.loop(ctx)
	return m
}

// Close stops the replay loop and waits for it; a batch being replayed
// stays in the batchlog unless its replay completed.
func (m *Manager) Close() {
	m.cancel()
	<-m.done
}

func (m *Manager) loop(ctx context.Context) {
	defer close(m.done)
	for {
		select {
		case <-ctx.Done():
			return
		case <-m.o.After(m.o.Interval):
		}
		if err := m.Replay(ctx); err != nil && ctx.Err() == nil {
			m.o.Logger.Warn("batchlog: replay round failed", "err", err)
		}
	}
}

type due struct {
	id    ID
	batch []byte
}

// Replay runs one round: every batch at least ReplayAfter old, oldest
// first, replayed and removed. It returns early, leaving the batch in
// progress stored, when ctx ends.
func (m *Manager) Replay(ctx context.Context) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.o.Now()
	var todo []due
	pending := 0
	err := m.o.Store.Each(func(id ID, batch []byte) bool {
		pending++
		if now.Sub(id.Time()) >= m.o.ReplayAfter {
			todo = append(todo, due{id, batch})
		}
		return true
	})
	if err != nil {
		return err
	}
	if m.o.Metrics != nil {
		m.o.Metrics.Pending.Set(float64(pending))
	}
	slices.SortFunc(todo, func(a, b due) int { return a.id.Time().Compare(b.id.Time()) })
	for _, d := range todo {
		if err := m.replayOne(ctx, d); err != nil {
			return err
		}
		if err := m.throttle(ctx, len(d.batch)); err != nil {
			return err
		}
	}
	if len(todo) > 0 {
		return m.o.Store.purge()
	}
	return nil
}

// replayOne replays one batch and removes it: once replayed, as in
// Cassandra, its replicas have it or a hint of it, or nothing more can be
// done for them.
func (m *Manager) replayOne(ctx context.Context, d due) error {
	mut, skipped, err := Decode(d.batch, m.o.Tables)
	switch {
	case err != nil:
		m.o.Logger.Error("batchlog: a stored batch does not decode; it is dropped", "id", d.id.String(), "err", err)
	case len(mut.Updates) > 0:
		rctx, cancel := context.WithTimeout(ctx, m.o.WriteTimeout)
		err = m.o.Replayer.Replay(rctx, mut)
		cancel()
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if m.o.Metrics != nil {
			m.o.Metrics.Replayed.Inc()
		}
		if err != nil {
			if m.o.Metrics != nil {
				m.o.Metrics.ReplayFailures.Inc()
			}
			m.o.Logger.Warn("batchlog: a replayed batch missed replicas that could not be hinted", "id", d.id.String(), "err", err)
		} else {
			m.o.Logger.Info("batchlog: replayed a batch its coordinator did not finish", "id", d.id.String(), "written", d.id.Time())
		}
	}
	if skipped > 0 {
		m.o.Logger.Info("batchlog: a replayed batch held writes to tables dropped since", "id", d.id.String(), "updates", skipped)
	}
	return m.o.Store.Remove(d.id)
}

// throttle waits as long as n bytes take at this node's share of
// Throttle.
func (m *Manager) throttle(ctx context.Context, n int) error {
	if m.o.Throttle <= 0 {
		return nil
	}
	rate := m.o.Throttle / int64(max(1, m.o.Nodes()))
	wait := time.Duration(float64(n) / float64(max(1, rate)) * float64(time.Second))
	if wait <= 0 {
		return nil
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-m.o.After(wait):
		return nil
	}
}
