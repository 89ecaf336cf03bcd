package commitlog

import (
	"slices"
	"sync"
	"time"
)

// waiter is an append (or a Sync call) waiting for the fdatasync that makes
// everything before end durable. The flusher sends exactly one result on
// done.
type waiter struct {
	end  Position
	done chan error
}

var waiterPool = sync.Pool{New: func() any { return &waiter{done: make(chan error, 1)} }}

func getWaiter(end Position) *waiter {
	w := waiterPool.Get().(*waiter)
	w.end = end
	return w
}

func putWaiter(w *waiter) { waiterPool.Put(w) }

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
//   - adaptive: as soon as anyone waits, after letting the appends already in
//     flight (entered Append, not yet queued) join, for at most GroupWindow.
//     A writer alone is synced at once; under load each sync takes everyone
//     who is about to queue.
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
		l.syncOnce(waiting || periodic)
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

// gather lets the appends that have entered Append by now write and queue
// before the sync, for at most GroupWindow. It returns at once when none is
// in flight. Appends that enter later are not waited for, though one that
// finishes first may stand in for one still in flight.
func (l *Log) gather() {
	target := l.entered.Load()
	if l.left.Load() >= target {
		return
	}
	t := time.NewTimer(l.opts.GroupWindow)
	defer t.Stop()
	for l.left.Load() < target {
		select {
		case <-l.flushC:
		case <-t.C:
			return
		case <-l.closeC:
			return
		}
	}
}

// syncOnce runs one flush cycle: it syncs the segments being sealed and,
// when full is set, the current segment up to what is written now; then it
// completes the waiters that sync covers and seals what it can.
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
	var target Position
	syncCur := false
	if full && cur != nil {
		target = cur.pos()
		syncCur = cur.written > cur.synced
	} else if n := len(sealing); n > 0 {
		target = sealing[n-1].pos()
	}
	var todo []*segment
	for _, s := range sealing {
		if !s.failed && s.synced < s.written {
			todo = append(todo, s)
		}
	}
	l.mu.Unlock()

	var err error
	var errSeg *segment
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
	synced := len(todo) > 0 || syncCur
	if m != nil && synced {
		m.SyncDuration.Observe(time.Since(start).Seconds())
	}

	l.mu.Lock()
	if err != nil {
		l.failLocked(errSeg, "sync", err)
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
		for _, w := range l.queue[:n] {
			w.done <- nil
		}
		clear(l.queue[:n])
		l.queue = append(l.queue[:0], l.queue[n:]...)
	}
	l.mu.Unlock()

	for _, s := range sealing {
		l.sealSegment(s)
	}
}

// finalSync runs at Close: it syncs everything written, seals the current
// segment and closes every handle.
func (l *Log) finalSync() {
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
		w.done <- ErrClosed
	}
	clear(l.queue)
	l.queue = l.queue[:0]
	l.mu.Unlock()
}
