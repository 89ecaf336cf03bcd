package commitlog

import (
	"slices"
	"sync"
	"time"
)

// waiter is an append (or a Sync call) waiting for the fdatasync that makes
// everything before end durable. It gets exactly one result: on done, or,
// for AppendAsync, as a call of then on the completion goroutine.
type waiter struct {
	end  Position
	done chan error
	// AppendAsync: then is called instead of sending on done; pos is the
	// record's position and queued when it was queued (for the wait
	// metric).
	then   func(Position, error)
	pos    Position
	queued time.Time
}

var waiterPool = sync.Pool{New: func() any { return &waiter{done: make(chan error, 1)} }}

func getWaiter(end Position) *waiter {
	w := waiterPool.Get().(*waiter)
	w.end = end
	return w
}

func putWaiter(w *waiter) {
	w.then = nil
	waiterPool.Put(w)
}

// completeLocked gives w its result: at once on done, or, for an
// AppendAsync waiter, by queueing it for the completion goroutine, so that
// no caller's code runs under l.mu or in the flusher.
// REQUIRES: l.mu held.
func (l *Log) completeLocked(w *waiter, err error) {
	if w.then == nil {
		w.done <- err
		return
	}
	l.thens = append(l.thens, completion{w: w, err: err})
	if len(l.thens) == 1 {
		l.poke(l.thenC)
	}
}

// completion is an AppendAsync waiter's result, waiting to be delivered.
type completion struct {
	w   *waiter
	err error
}

// completeLoop delivers AppendAsync results, in the order the flusher gave
// them, until the log has closed and every result is delivered.
func (l *Log) completeLoop() {
	defer close(l.thenDone)
	var batch []completion
	for {
		stopping := false
		select {
		case <-l.thenC:
			if h := l.holdCompletions; h != nil {
				<-h
			}
		case <-l.thenStop:
			stopping = true
		}
		l.mu.Lock()
		for l.delivering { // the flusher is answering writers itself
			l.cond.Wait()
		}
		batch = l.takeThensLocked(batch)
		l.mu.Unlock()
		if len(batch) > 0 {
			l.deliverAll(batch)
		}
		if stopping {
			return
		}
	}
}

// takeDelivering gives the caller the turn to run a callback itself,
// once it has released l.mu (deliver, then endDelivering), if no other
// callback is queued or running: callbacks keep their order. Otherwise
// the caller completes its waiter as any other (completeLocked).
// REQUIRES: l.mu held.
func (l *Log) takeDelivering() bool {
	if len(l.thens) > 0 || l.delivering {
		return false
	}
	l.delivering = true
	return true
}

// deliverWaiting calls the callbacks queued for the completion goroutine,
// on the caller's goroutine, unless callbacks are being called already.
func (l *Log) deliverWaiting() {
	l.mu.Lock()
	if len(l.thens) == 0 || l.delivering {
		l.mu.Unlock()
		return
	}
	batch := l.takeThensLocked(l.thensSpare)
	l.mu.Unlock()
	l.deliverAll(batch)
	l.thensSpare = batch[:0]
}

// takeThensLocked hands the queued callbacks to the caller, leaving spare
// (emptied) as the queue, and gives the caller the turn to run them
// (deliverAll) if there are any.
// REQUIRES: l.mu held, and no callbacks being called (!l.delivering).
func (l *Log) takeThensLocked(spare []completion) []completion {
	batch := l.thens
	l.thens = spare[:0]
	l.delivering = len(batch) > 0
	return batch
}

// deliverAll calls the callbacks of batch in order, clearing it, then
// ends the run of callbacks its caller began.
func (l *Log) deliverAll(batch []completion) {
	for i, c := range batch {
		l.deliver(c)
		batch[i] = completion{}
	}
	l.endDelivering()
}

// endDelivering ends a run of callbacks and lets the next one start.
func (l *Log) endDelivering() {
	l.mu.Lock()
	l.delivering = false
	l.cond.Broadcast()
	l.mu.Unlock()
}

// deliver calls an AppendAsync waiter's callback with its result.
func (l *Log) deliver(c completion) {
	if m := l.opts.Metrics; m != nil {
		m.WaitDuration.Observe(time.Since(c.w.queued).Seconds())
	}
	then, pos := c.w.then, c.w.pos
	putWaiter(c.w)
	if c.err != nil {
		pos = Position{}
	}
	then(pos, c.err)
}

// flushLoop is the one goroutine that syncs. Each cycle it picks the end of
// what has been written, fdatasyncs every segment up to it, and completes
// every waiter the sync covers; appends that arrive meanwhile write on and
// queue for the next cycle. The sync modes differ only in when a cycle
// starts:
//
//   - periodic: every SyncPeriod (and at once for Sync calls, or appends that
//     found the syncs lagging);
//   - batch: as soon as anyone waits, so syncs run back to back;
//   - group: at the end of the current window, windows following each other
//     GroupWindow apart from the last sync;
//   - adaptive: as soon as anyone waits, after letting the writers it
//     expects queue (see gather), for at most half an fsync. A writer alone
//     is synced at once; under load each sync takes every active writer.
func (l *Log) flushLoop() {
	defer l.wg.Done()
	var tick <-chan time.Time
	if l.opts.Sync == SyncPeriodic {
		t := time.NewTicker(l.opts.SyncPeriod)
		defer t.Stop()
		tick = t.C
	}
	lastSync := time.Now()
	for {
		periodic := false
		select {
		case <-l.flushC:
		case <-tick:
			periodic = true
		case <-l.closeC:
		}
		l.mu.Lock()
		closing := l.closing
		waiting := len(l.queue) > 0
		sealing := len(l.sealing) > 0
		l.mu.Unlock()
		if closing {
			l.finalSync()
			return
		}
		if !waiting && !sealing && !periodic {
			l.writeBehind()
			continue
		}
		if waiting {
			switch l.opts.Sync {
			case SyncGroup:
				l.waitWindow(lastSync)
			case SyncAdaptive:
				l.gather()
			}
		}
		lastSync = time.Now()
		l.cycle.Lock()
		l.syncOnce(waiting || periodic)
		l.cycle.Unlock()
	}
}

// writeBehind writes what periodic-mode appends buffered in the current
// segment to the operating system, without a sync.
func (l *Log) writeBehind() {
	l.mu.Lock()
	cur := l.cur
	l.mu.Unlock()
	if cur == nil {
		return
	}
	if _, err := l.writeBuffered(cur); err != nil {
		l.mu.Lock()
		l.failLocked(cur, "write", err)
		l.mu.Unlock()
	}
}

// waitWindow sleeps until the end of the group-commit window that is open
// now. Windows are GroupWindow long and follow each other from last.
func (l *Log) waitWindow(last time.Time) {
	w := l.opts.GroupWindow
	now := time.Now()
	next := last.Add(w)
	if elapsed := now.Sub(last); next.Before(now) {
		next = last.Add((elapsed/w + 1) * w)
	}
	t := time.NewTimer(next.Sub(now))
	defer t.Stop()
	select {
	case <-t.C:
	case <-l.closeC:
	}
}

// gather holds an adaptive sync until the writers the log expects have
// queued, or until a deadline, at most GroupWindow, passes. The writers it
// expects are the larger of two counts: the appends in flight now (entered
// Append, not yet queued), and the writers seen around the last sync
// (l.active: the waiters it completed plus those that queued while it
// ran). The second is what makes group commit work when the clients are
// slower than the disk: a writer completed by one sync needs a client round
// trip before its next append, and a sync that started without it would
// make it wait for the one after. It returns at once when nothing more is
// expected, so a writer alone is synced at once.
//
// The deadline is half the fsync latency (EWMA): what waiting may cost the
// writers already queued, where a writer that misses the sync waits at
// least a whole fsync more. When the writers it expects do not come in
// time (a busy CPU spreads them out, or they come back only after a sync
// or more), waiting only adds latency; gatherPlan then shortens the wait
// and soon stops waiting, and probes now and then (see there).
// What wakes a waiting gather: the package doc, "Sync modes and the
// flusher".
func (l *Log) gather() {
	target := l.entered.Load()
	// NB: stored before left is read below, as an append adds to left
	// before it reads gatherFrom: either the append sees it and wakes the
	// flusher, or the flusher sees the append leave.
	l.gatherFrom.Store(target)
	deadline, probe := l.plan.start(time.Duration(l.syncEWMA.Load()), l.opts.GroupWindow)
	if deadline > 0 {
		// The gather may wait: the flusher answers the last sync's
		// writers itself if the completion goroutine has not begun to,
		// which they would otherwise wait for the scheduler to run
		// (doc.go, "Sync modes and the flusher").
		began := time.Now()
		l.deliverWaiting()
		deadline -= time.Since(began)
	}
	var t *time.Timer
	defer func() {
		l.mu.Lock()
		l.gathering = false
		l.mu.Unlock()
	}()
	for {
		l.mu.Lock()
		queued, expected := len(l.queue), l.active
		l.gathering = deadline > 0
		l.mu.Unlock()
		if l.left.Load() >= target && queued >= expected {
			if t != nil {
				l.plan.met()
			}
			return
		}
		if t == nil {
			if deadline <= 0 {
				return
			}
			t = time.NewTimer(deadline)
			defer t.Stop()
		}
		select {
		case <-l.flushC:
			l.gatherWakes.Add(1)
		case <-t.C:
			l.plan.missed(probe)
			return
		case <-l.closeC:
			return
		}
	}
}

// gatherPlan is what adaptive mode remembers of its gathers; only the
// flusher uses it. A gather that runs out its deadline halves the next
// one's; after gatherGiveUp such gathers in a row the flusher stops
// waiting altogether, since even a short wait costs a timer and a wake-up
// of the flusher on every sync. Every probeEvery-th gather probes: it waits the whole half fsync
// again, to notice writers that have become worth waiting for. A probe
// that misses doubles the interval to the next, up to gatherProbeMax; one
// gather that meets its writers brings the next probe back within
// gatherProbeMin.
type gatherPlan struct {
	n          int // gathers so far
	misses     int // gathers in a row that ran out their deadline
	nextProbe  int // the gather that probes next
	probeEvery int // gathers between probes; 0 means gatherProbeMin
}

const (
	gatherGiveUp   = 3
	gatherProbeMin = 16
	gatherProbeMax = 64
)

// start begins a gather: how long it may wait for the writers it expects
// (0: not at all), and whether it is a probe.
func (g *gatherPlan) start(fsync, window time.Duration) (deadline time.Duration, probe bool) {
	g.n++
	if g.n >= g.nextProbe {
		probe = true
		g.misses = 0
		g.nextProbe = g.n + max(g.probeEvery, gatherProbeMin)
	}
	if g.misses >= gatherGiveUp {
		return 0, probe
	}
	return min(fsync/2>>g.misses, window), probe
}

// met records a gather whose writers all came while it waited.
func (g *gatherPlan) met() {
	g.misses = 0
	g.probeEvery = gatherProbeMin
	g.nextProbe = min(g.nextProbe, g.n+gatherProbeMin)
}

// missed records a gather that ran out its deadline; a probe that did puts
// the next probe twice as far.
func (g *gatherPlan) missed(probe bool) {
	g.misses++
	if probe {
		g.probeEvery = min(2*max(g.probeEvery, gatherProbeMin), gatherProbeMax)
		g.nextProbe = g.n + g.probeEvery
	}
}

// syncOnce runs one flush cycle: it writes and syncs the segments being
// sealed and, when full is set, the current segment up to what is appended
// now; then it completes the waiters that sync covers and seals what it
// can. REQUIRES: l.cycle held.
func (l *Log) syncOnce(full bool) {
	l.mu.Lock()
	if l.err != nil {
		sealing := slices.Clone(l.sealing)
		l.mu.Unlock()
		for _, s := range sealing {
			l.sealSegment(s)
		}
		return
	}
	sealing := slices.Clone(l.sealing)
	cur := l.cur
	l.mu.Unlock()

	// NB: the bytes go to the OS before the fdatasync that acknowledges
	// them, sealed segments first, so writes and syncs keep position order.
	var err error
	var errSeg *segment
	op := "write"
	for _, s := range sealing {
		if _, err = l.writeBuffered(s); err != nil {
			errSeg = s
			break
		}
	}
	var target Position
	if err == nil && full && cur != nil {
		var end int64
		if end, err = l.writeBuffered(cur); err != nil {
			errSeg = cur
		}
		target = Position{Segment: cur.id, Offset: end}
	} else if n := len(sealing); n > 0 {
		target = sealing[n-1].pos()
	}

	l.mu.Lock()
	syncCur := err == nil && full && cur != nil && !cur.failed && target.Offset > cur.synced
	var todo []*segment
	for _, s := range sealing {
		if err == nil && !s.failed && s.synced < s.written {
			todo = append(todo, s)
		}
	}
	l.mu.Unlock()

	if err == nil {
		op = "sync"
	}
	start := time.Now()
	for _, s := range todo {
		if err = s.s.SyncData(); err != nil {
			errSeg = s
			break
		}
	}
	if err == nil && syncCur {
		if err = cur.s.SyncData(); err != nil {
			errSeg = cur
		}
	}
	m := l.opts.Metrics
	var lone *waiter // completed here, its callback called by the flusher
	synced := len(todo) > 0 || syncCur
	if synced {
		took := time.Since(start)
		// An EWMA with weight 1/8 for the newest sync.
		if avg := l.syncEWMA.Load(); avg == 0 {
			l.syncEWMA.Store(int64(took))
		} else {
			l.syncEWMA.Store(avg + (int64(took)-avg)/8)
		}
		if m != nil {
			m.SyncDuration.Observe(took.Seconds())
		}
	}

	l.mu.Lock()
	if err != nil {
		l.failLocked(errSeg, op, err)
	} else {
		for _, s := range todo {
			s.synced = s.written
		}
		if syncCur {
			// cur may have been rotated out meanwhile; the bytes written
			// after target are synced by the cycle that seals it.
			cur.synced = max(cur.synced, target.Offset)
		}
		if full && (l.cur == nil || l.cur.synced == l.cur.written) {
			l.lastSyncDone = time.Now()
		}
		n := 0
		for n < len(l.queue) && !target.Less(l.queue[n].end) {
			n++
		}
		if m != nil && (synced || n > 0) {
			// One cycle completes every waiter it covers: observe them as
			// one, before any of them returns.
			m.Syncs.Inc()
			m.RecordsPerSync.Observe(float64(n))
		}
		if l.opts.Sync == SyncAdaptive && n == 1 && len(l.queue) == 1 && l.active <= 1 && l.queue[0].then != nil && l.takeDelivering() {
			// Adaptive mode, a lone writer (the last sync saw no other
			// either), nobody else waiting: the flusher calls its
			// callback itself, saving the hand-off to the completion
			// goroutine (doc.go, "Sync modes and the flusher"). Where
			// writers are several, a callback on the flusher would delay
			// the sync of the next one to come; batch mode, which syncs
			// the moment anyone waits, lost by it at 8 writers.
			lone = l.queue[0]
		} else {
			for _, w := range l.queue[:n] {
				l.completeLocked(w, nil)
			}
		}
		clear(l.queue[:n])
		l.queue = append(l.queue[:0], l.queue[n:]...)
		if full {
			l.active = n + len(l.queue)
		}
	}
	l.mu.Unlock()

	if lone != nil {
		l.deliver(completion{w: lone})
		l.endDelivering()
	}
	for _, s := range sealing {
		l.sealSegment(s)
	}
}

// finalSync runs at Close: it syncs everything written, seals the current
// segment and closes every handle.
func (l *Log) finalSync() {
	l.cycle.Lock()
	defer l.cycle.Unlock()
	l.syncOnce(true)
	l.mu.Lock()
	if cur := l.cur; cur != nil {
		cur.state = segSealing
		l.sealing = append(l.sealing, cur)
		l.cur = nil
	}
	l.mu.Unlock()
	l.syncOnce(false)

	// Whatever is left could not be synced: close it without an end record.
	l.mu.Lock()
	left := slices.Clone(l.sealing)
	for _, s := range left {
		s.failed = true
	}
	l.mu.Unlock()
	for _, s := range left {
		l.sealSegment(s)
	}
	l.mu.Lock()
	for _, w := range l.queue {
		l.completeLocked(w, ErrClosed)
	}
	clear(l.queue)
	l.queue = l.queue[:0]
	l.mu.Unlock()
}
