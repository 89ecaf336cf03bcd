package commitlog

import (
	"cmp"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Log is the commit log of one node. All its methods are safe for
// concurrent use, except that Replay must finish before the first Append and
// must not run concurrently with MarkFlushed.
type Log struct {
	opts       Options
	log        *slog.Logger
	maxPayload int
	lock       io.Closer

	// old are the segments found at Open, in id order, for Replay.
	old []*segment

	mu   sync.Mutex
	cond *sync.Cond // on mu: a segment got ready or closed, the log failed or is closing

	cur      *segment   // where appends go; nil before the first append
	sealing  []*segment // rotated out, awaiting their final sync and end record
	segments []*segment // live segments in id order: old, closed, sealing, cur
	ready    *segment   // prepared next segment
	readyErr error      // why preparing it failed
	nextID   uint64     // id the next prepared segment gets
	lastID   uint64     // newest segment that holds or held records

	queue        []*waiter    // sync waiters in position order
	thens        []completion // AppendAsync results for completeLoop
	thensSpare   []completion // the flusher's other buffer for thens (deliverWaiting)
	delivering   bool         // completeLoop or the flusher is calling AppendAsync callbacks
	active       int          // adaptive: waiters the last full sync completed plus those queued meanwhile
	gathering    bool         // adaptive: a gather waits for active writers to queue
	lastSyncDone time.Time    // periodic mode: when everything written was last durable

	spares    [][]byte // empty chunks (see segment.chunks) the flusher wrote out
	unwritten int64    // bytes appended and not yet handed to the OS (see maxUnwritten)

	pool         []string // recycled files, ready for reuse
	poolReserved int      // freed segments being renamed into the pool

	flushed     Position // high-water mark of MarkFlushed
	fullPending *Position

	appended bool
	closing  bool
	err      error // sticky: the log stopped (stop, stop_commit, die)
	failOnce sync.Once

	// entered counts Appends that have started; left counts those that have
	// written their record (or failed). The difference is in flight, and
	// adaptive mode lets it join the next sync.
	entered atomic.Int64
	left    atomic.Int64
	// gatherFrom is entered when the flusher's current (or last) gather
	// began: the appends numbered up to it were in flight then, and the
	// gather waits for each of them to leave.
	gatherFrom atomic.Int64
	// gatherWakes counts the times a gather was woken before its deadline
	// (for tests).
	gatherWakes atomic.Int64
	// holdCompletions, when a test sets it, holds the completion goroutine
	// each time it is woken until a value is received.
	holdCompletions chan struct{}

	// syncEWMA is the moving average of fdatasync latency in nanoseconds;
	// only the holder of cycle writes it.
	syncEWMA atomic.Int64
	// plan is adaptive mode's record of its gathers; only the flusher
	// uses it.
	plan gatherPlan

	preallocWarned atomic.Bool

	// holders counts the goroutines between Hold and Release; while
	// there are any, an adaptive AppendAsync owes its poke of the flusher
	// (owed) instead of making it, and the next Release pays it, syncing
	// a lone writer itself when it can (see Hold).
	holders atomic.Int32
	owed    atomic.Bool
	// lastWriter is the writer named by the last Release that paid a poke.
	lastWriter atomic.Uint64
	// cycle is held by whoever runs a flush cycle (syncOnce): the flusher,
	// or a Release that syncs a lone writer itself.
	cycle sync.Mutex

	flushC chan struct{} // wakes the flusher
	prepC  chan struct{} // wakes the preparer
	fullC  chan struct{} // wakes the OnFull notifier
	closeC chan struct{}
	wg     sync.WaitGroup

	thenC    chan struct{} // wakes completeLoop
	thenStop chan struct{} // closed once the flusher is gone
	thenDone chan struct{} // closed by completeLoop as it returns
}

// Open opens or creates the commit log in opts.Dir. Existing segments are
// kept for Replay; appends always go to new segments, numbered after every
// segment ever found in the directory.
func Open(opts Options) (*Log, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	fs := opts.FS
	if err := fs.MkdirAll(opts.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("commitlog: create %s: %w", opts.Dir, err)
	}
	// The directory entry of Dir itself must survive a crash too.
	if parent, err := fs.OpenDir(fs.PathDir(opts.Dir)); err == nil {
		err = errors.Join(parent.Sync(), parent.Close())
		if err != nil {
			return nil, fmt.Errorf("commitlog: sync parent of %s: %w", opts.Dir, err)
		}
	}
	lock, err := fs.Lock(fs.PathJoin(opts.Dir, lockFileName))
	if err != nil {
		return nil, fmt.Errorf("commitlog: lock %s: %w", opts.Dir, err)
	}
	l := &Log{
		opts:       opts,
		log:        opts.Logger,
		maxPayload: int(opts.SegmentSize / 2),
		lock:       lock,
		nextID:     1,
		flushC:     make(chan struct{}, 1),
		prepC:      make(chan struct{}, 1),
		fullC:      make(chan struct{}, 1),
		closeC:     make(chan struct{}),
		thenC:      make(chan struct{}, 1),
		thenStop:   make(chan struct{}),
		thenDone:   make(chan struct{}),
	}
	l.cond = sync.NewCond(&l.mu)
	if err := l.scanDir(); err != nil {
		_ = lock.Close()
		return nil, err
	}
	l.lastSyncDone = time.Now()
	// NB: Close waits for all four: flushLoop, prepareLoop and fullLoop on
	// wg, completeLoop on thenDone (it outlives the flusher, whose last
	// results it delivers). A failure hook is counted on wg too.
	l.wg.Add(3)
	go l.flushLoop()
	go l.prepareLoop()
	go l.fullLoop()
	go l.completeLoop()
	l.poke(l.prepC)
	return l, nil
}

// scanDir finds the segments and recycled files of a previous run.
func (l *Log) scanDir() error {
	fs := l.opts.FS
	names, err := fs.List(l.opts.Dir)
	if err != nil {
		return fmt.Errorf("commitlog: list %s: %w", l.opts.Dir, err)
	}
	slices.Sort(names)
	for _, name := range names {
		id, recycled, ok := parseFileName(name)
		if !ok {
			if name != lockFileName {
				l.log.Warn("commit log directory holds a file that is not a segment; leaving it alone",
					"dir", l.opts.Dir, "file", name)
			}
			continue
		}
		l.nextID = max(l.nextID, id+1)
		path := fs.PathJoin(l.opts.Dir, name)
		if recycled {
			if len(l.pool) < maxRecycledFiles {
				l.pool = append(l.pool, path)
			} else if err := fs.Remove(path); err != nil {
				return fmt.Errorf("commitlog: remove %s: %w", path, err)
			}
			continue
		}
		st, err := fs.Stat(path)
		if err != nil {
			return fmt.Errorf("commitlog: stat %s: %w", path, err)
		}
		l.old = append(l.old, &segment{id: id, path: path, size: st.Size(), state: segOld})
	}
	slices.SortFunc(l.old, func(a, b *segment) int { return cmp.Compare(a.id, b.id) })
	l.segments = slices.Clone(l.old)
	if n := len(l.old); n > 0 {
		l.lastID = l.old[n-1].id
	}
	l.segmentsChangedLocked()
	return nil
}

// Waits reports whether Append waits for an fdatasync: in every mode but
// periodic (where it waits only when syncs fall behind).
func (l *Log) Waits() bool { return l.opts.Sync != SyncPeriodic }

// MaxPayload is the largest payload Append accepts: half a segment.
func (l *Log) MaxPayload() int { return l.maxPayload }

// Err returns the error that stopped the log, or nil while it accepts writes.
func (l *Log) Err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}

// Append writes one record and returns its position once it is durable under
// the sync mode: in periodic mode once it is written to the operating
// system, in the other modes once an fdatasync that covers it has returned.
// It returns an error, and the record must be treated as not written, if it
// could not make it durable. Append does not keep payload.
func (l *Log) Append(payload []byte) (Position, error) {
	pos, w, err := l.add(payload, nil)
	if w == nil {
		return pos, err
	}
	m := l.opts.Metrics
	var start time.Time
	if m != nil {
		start = time.Now()
	}
	err = <-w.done
	putWaiter(w)
	if m != nil {
		m.WaitDuration.Observe(time.Since(start).Seconds())
	}
	if err != nil {
		return Position{}, err
	}
	return pos, nil
}

// AppendAsync is Append for a caller that must not block, such as an event
// loop: it buffers the record and returns at once. When the record has to
// wait for an fdatasync, pending is true and then is called exactly once,
// later and from the log's completion goroutine (or its flusher, for a
// lone writer: see the package doc), with the record's
// position once a sync covers it or with the error that kept it from being
// durable (the record must then be treated as not written). Otherwise the
// record is already as durable as Append would have made it (periodic
// mode) and then is never called. An error returned here means nothing was
// written and then will not be called.
//
// then runs on a goroutine shared by every AppendAsync, one callback at a
// time and in position order: it must be short and must not wait for
// another append.
func (l *Log) AppendAsync(payload []byte, then func(Position, error)) (pos Position, pending bool, err error) {
	pos, w, err := l.add(payload, then)
	return pos, w != nil, err
}

// add is what Append and AppendAsync share: it buffers the record, counts
// it and wakes the flusher when it must. w is the waiter queued for the
// sync that covers the record (signalling done, or calling then when it is
// not nil), nil when the mode acknowledges the record at once.
func (l *Log) add(payload []byte, then func(Position, error)) (pos Position, w *waiter, err error) {
	if len(payload) > l.maxPayload {
		return Position{}, nil, fmt.Errorf("%w: %d bytes, at most %d", ErrTooLarge, len(payload), l.maxPayload)
	}
	nth := l.entered.Add(1)
	pos, w, poke, err := l.write(payload, then)
	l.left.Add(1)
	if w != nil && !poke && nth <= l.gatherFrom.Load() {
		// A gather waits for this append to leave (see gather).
		poke = true
	}
	if m := l.opts.Metrics; m != nil && err == nil {
		m.Appends.Inc()
		m.AppendedBytes.Add(float64(len(payload)))
	}
	switch {
	case poke && then != nil && err == nil:
		l.pokeOrOwe()
	case poke || (err != nil && l.opts.Sync == SyncAdaptive):
		// In adaptive mode the flusher may be gathering for this append.
		// An Append waits for its sync here and now: its poke is never
		// owed, or a holder appending would wait for its own Release.
		l.poke(l.flushC)
	}
	return pos, w, err
}

// pokeOrOwe wakes the flusher, or, while a holder is between Hold and
// Release (adaptive mode only), leaves the poke to a Release.
func (l *Log) pokeOrOwe() {
	if l.holders.Load() == 0 {
		l.poke(l.flushC)
		return
	}
	l.owed.Store(true)
	// NB: a Release that ended the hold before the store above missed it.
	if l.holders.Load() == 0 && l.owed.Swap(false) {
		l.poke(l.flushC)
	}
}

// Hold begins a burst of appends by the caller (an event loop reading a
// connection's requests): until a Release, adaptive-mode AppendAsyncs do
// not wake the flusher. An Append, which waits, still wakes it; a holder
// must never wait for an AppendAsync's callback, which would wait for the
// holder's own Release. The Release wakes the flusher once or, when the
// log is serving a lone writer (one waiter, the last sync saw no other,
// and the write before came from the same writer) on a disk that syncs
// within loneSyncMax, and the flusher is not in a cycle, syncs that
// writer itself and calls its callback on the caller's goroutine: the two
// wake-ups of other threads a lone write otherwise costs (the flusher's,
// and the caller's after the sync) are the largest part of what it costs
// besides its fdatasync. Other modes ignore Hold and Release. Safe for
// concurrent use; holds may overlap.
func (l *Log) Hold() {
	if l.opts.Sync == SyncAdaptive {
		l.holders.Add(1)
	}
}

// Release ends a Hold (see there); writer names who appended under it
// (a client connection). Any Release pays a poke owed, not only the last
// one: holds that overlap (several event loops) must not keep the flusher
// asleep. A writer is taken as lone only when the write before its own
// came from it too: a sync on the caller's goroutine holds back whatever
// else the caller serves, and writers that take turns would each look
// alone to a sync that served one writer.
func (l *Log) Release(writer uint64) {
	if l.opts.Sync != SyncAdaptive {
		return
	}
	l.holders.Add(-1)
	if !l.owed.Swap(false) {
		return
	}
	if prev := l.lastWriter.Swap(writer); prev != writer || !l.syncLone() {
		l.poke(l.flushC)
	}
}

// loneSyncMax is the slowest fdatasync (the moving average) that Release
// runs on its caller's goroutine: the caller serves other connections,
// which wait for it meanwhile, and past a millisecond that wait costs
// them more than the wake-ups it saves the writer (tens of µs).
const loneSyncMax = time.Millisecond

// syncLone runs a flush cycle on the caller's goroutine if the log is
// serving a lone writer and no cycle is running, and says whether it did.
func (l *Log) syncLone() bool {
	if !l.cycle.TryLock() {
		return false
	}
	defer l.cycle.Unlock()
	if time.Duration(l.syncEWMA.Load()) > loneSyncMax {
		return false
	}
	l.mu.Lock()
	lone := len(l.queue) == 1 && l.active <= 1 && len(l.sealing) == 0 && !l.gathering && !l.closing && l.err == nil
	l.mu.Unlock()
	if !lone {
		return false
	}
	l.syncOnce(true)
	return true
}

// write buffers the record in the current segment for the flusher to write
// and, unless the record is acknowledged at once, queues a waiter for the
// sync that covers it, which calls then, when it is not nil, instead of
// signalling done. poke says the flusher must be woken: a waiter was
// queued (and, while an adaptive gather waits, the queue is as long as it
// waits for), or in periodic mode the buffer was empty.
func (l *Log) write(payload []byte, then func(Position, error)) (pos Position, w *waiter, poke bool, err error) {
	size := int(recordSize(len(payload)))
	payloadCRC := crc32.Checksum(payload, castagnoli)

	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.usableLocked(); err != nil {
		return Position{}, nil, false, err
	}
	l.appended = true
	// NB: an end record must always fit after the last record.
	for l.cur == nil || l.cur.written+int64(size)+recordHeaderSize > l.opts.SegmentSize {
		if err := l.rotateLocked(l.cur); err != nil {
			return Position{}, nil, false, err
		}
	}
	seg := l.cur
	off := seg.written
	wasEmpty := len(seg.chunks) == 0
	rec := l.reserveLocked(seg, size)
	putRecordHeader(rec, kindData, seg.id, seg.synced, len(payload), payloadCRC)
	n := copy(rec[recordHeaderSize:], payload)
	clear(rec[recordHeaderSize+n:])
	seg.written = off + int64(size)
	l.unwritten += int64(size)
	pos = Position{Segment: seg.id, Offset: off}
	if l.opts.Sync == SyncPeriodic && time.Since(l.lastSyncDone) <= l.opts.SyncPeriod*3/2 && l.unwritten <= maxUnwritten {
		return pos, nil, wasEmpty, nil
	}
	// Periodic mode lands here only when syncs lag by half a period more
	// than promised, as Cassandra's periodic mode does, or when the
	// flusher's writes to the OS lag by maxUnwritten: the append then
	// waits for its own durability.
	if l.opts.Sync == SyncPeriodic && l.opts.Metrics != nil {
		l.opts.Metrics.PeriodicWaits.Inc()
	}
	w = getWaiter(seg.pos())
	if then != nil {
		w.then, w.pos = then, pos
		if l.opts.Metrics != nil {
			w.queued = time.Now()
		}
	}
	l.queue = append(l.queue, w)
	return pos, w, !l.gathering || len(l.queue) >= l.active, nil
}

// usableLocked says why nothing can be appended now, if so.
// REQUIRES: l.mu held.
func (l *Log) usableLocked() error {
	if l.closing {
		return ErrClosed
	}
	return l.err
}

// rotateLocked replaces from, the current segment, with the prepared one,
// waiting for it if the preparer is behind, and hands from to the flusher to
// seal. It returns early if another append rotated meanwhile.
// REQUIRES: l.mu held.
func (l *Log) rotateLocked(from *segment) error {
	for l.ready == nil && l.readyErr == nil {
		if err := l.usableLocked(); err != nil {
			return err
		}
		l.poke(l.prepC)
		l.cond.Wait()
		if l.cur != from {
			return nil
		}
	}
	if err := l.usableLocked(); err != nil {
		return err
	}
	if err := l.readyErr; err != nil {
		l.readyErr = nil
		l.poke(l.prepC)
		return l.failLocked(nil, "prepare", err)
	}
	if old := l.cur; old != nil {
		old.state = segSealing
		l.sealing = append(l.sealing, old)
		l.poke(l.flushC)
	}
	l.cur, l.ready = l.ready, nil
	l.cur.state = segActive
	l.lastID = l.cur.id
	l.segments = append(l.segments, l.cur)
	l.segmentsChangedLocked()
	l.poke(l.prepC)
	l.checkSpaceLocked()
	return nil
}

// Sync returns once everything appended so far is durable, in any mode.
func (l *Log) Sync() error {
	l.mu.Lock()
	if err := l.usableLocked(); err != nil {
		l.mu.Unlock()
		return err
	}
	var end Position
	switch {
	case l.cur != nil:
		end = l.cur.pos()
	case len(l.sealing) > 0:
		end = l.sealing[len(l.sealing)-1].pos()
	default:
		l.mu.Unlock()
		return nil
	}
	w := getWaiter(end)
	l.queue = append(l.queue, w)
	l.mu.Unlock()
	l.poke(l.flushC)
	err := <-w.done
	putWaiter(w)
	return err
}

// End returns the position just past every record appended so far: a
// record appended later is at End or after it. Before the first append
// it is the start of the segment after the newest one found at Open, so
// MarkFlushed(End()) then frees every segment that Replay read.
func (l *Log) End() Position {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.endLocked()
}

// endLocked is End. REQUIRES: l.mu held.
func (l *Log) endLocked() Position {
	if l.cur != nil {
		return l.cur.pos()
	}
	// Every segment made from now on gets an id above lastID.
	return Position{Segment: l.lastID + 1}
}

// MarkFlushed tells the log that everything before pos is durable elsewhere.
// Whole segments before pos's segment are then recycled or deleted; it
// waits for a segment still being sealed. pos may be at most End(). It is
// safe for concurrent use, including from OnFull.
func (l *Log) MarkFlushed(pos Position) error {
	l.mu.Lock()
	if l.closing {
		l.mu.Unlock()
		return ErrClosed
	}
	if end := l.endLocked(); end.Less(pos) {
		l.mu.Unlock()
		return fmt.Errorf("%w: %v (the log ends at %v)", ErrBadPosition, pos, end)
	}
	if !l.flushed.Less(pos) {
		l.mu.Unlock()
		return nil
	}
	l.flushed = pos
	for l.sealingBefore(pos.Segment) && !l.closing {
		l.poke(l.flushC)
		l.cond.Wait()
	}
	type victim struct {
		seg     *segment
		recycle bool
	}
	var victims []victim
	live := l.segments[:0]
	for _, s := range l.segments {
		if s.id >= pos.Segment || (s.state != segOld && s.state != segClosed) {
			live = append(live, s)
			continue
		}
		recycle := s.state == segClosed && len(l.pool)+l.poolReserved < maxRecycledFiles && !l.closing
		if recycle {
			l.poolReserved++
		}
		s.state = segRemoved
		victims = append(victims, victim{s, recycle})
	}
	clear(l.segments[len(live):])
	l.segments = live
	l.segmentsChangedLocked()
	l.mu.Unlock()

	var err error
	for _, v := range victims {
		err = errors.Join(err, l.disposeFile(v.seg.path, v.seg.id, v.recycle))
	}
	if len(victims) > 0 {
		if derr := l.syncDir(); derr != nil {
			err = errors.Join(err, fmt.Errorf("commitlog: sync %s: %w", l.opts.Dir, derr))
		}
	}
	return err
}

// sealingBefore reports whether a segment below id is still being sealed.
// REQUIRES: l.mu held.
func (l *Log) sealingBefore(id uint64) bool {
	for _, s := range l.sealing {
		if s.id < id {
			return true
		}
	}
	return false
}

// Close syncs everything appended, seals the current segment and closes the
// log. It returns once every goroutine of the log has returned, including
// a call of OnFull or OnFailure in progress (which therefore must not wait
// for Close). It returns the error that stopped the log, if one did.
func (l *Log) Close() error {
	l.mu.Lock()
	if l.closing {
		l.mu.Unlock()
		return ErrClosed
	}
	l.closing = true
	l.cond.Broadcast()
	l.mu.Unlock()
	close(l.closeC)
	l.wg.Wait()
	// The flusher has given every waiter its result; deliver the last.
	close(l.thenStop)
	<-l.thenDone

	l.mu.Lock()
	ready := l.ready
	l.ready = nil
	stopErr := l.err
	l.mu.Unlock()
	var err error
	if ready != nil {
		// The prepared segment never held a record: keep its file for reuse.
		err = errors.Join(ready.closeFiles(), l.disposeRecycled(ready))
		err = errors.Join(err, l.syncDir())
	}
	err = errors.Join(err, l.lock.Close())
	if stopErr != nil {
		return stopErr
	}
	return err
}

// disposeRecycled puts an unused prepared segment into the pool, or deletes
// it when the pool is full.
func (l *Log) disposeRecycled(seg *segment) error {
	l.mu.Lock()
	recycle := len(l.pool)+l.poolReserved < maxRecycledFiles
	if recycle {
		l.poolReserved++
	}
	l.mu.Unlock()
	return l.disposeFile(seg.path, seg.id, recycle)
}

// prepareLoop keeps one segment ready so that rotation never creates a file
// on the write path.
func (l *Log) prepareLoop() {
	defer l.wg.Done()
	for {
		select {
		case <-l.closeC:
			return
		case <-l.prepC:
		}
		l.mu.Lock()
		if l.closing || l.ready != nil || l.readyErr != nil || l.err != nil {
			l.mu.Unlock()
			continue
		}
		id := l.nextID
		l.nextID++
		var recycled string
		if n := len(l.pool); n > 0 {
			recycled = l.pool[n-1]
			l.pool = l.pool[:n-1]
		}
		l.mu.Unlock()

		seg, err := l.prepareSegment(id, recycled)

		l.mu.Lock()
		l.ready, l.readyErr = seg, err
		l.cond.Broadcast()
		l.mu.Unlock()
	}
}

// checkSpaceLocked asks the engine to flush when the live segments exceed
// TotalSpace: up to the oldest segment that leaves them within it.
// REQUIRES: l.mu held.
func (l *Log) checkSpaceLocked() {
	var total int64
	for _, s := range l.segments {
		total += s.size
	}
	if total <= l.opts.TotalSpace {
		return
	}
	i := 0
	for rest := total; rest > l.opts.TotalSpace && i < len(l.segments)-1; i++ {
		rest -= l.segments[i].size
	}
	upTo := Position{Segment: l.segments[i].id}
	if l.opts.OnFull == nil {
		l.log.Warn("commit log exceeds commitlog_total_space and nothing flushes it",
			"bytes", total, "total_space", l.opts.TotalSpace)
		return
	}
	l.fullPending = &upTo
	l.poke(l.fullC)
}

// fullLoop calls OnFull, one call at a time, with the newest request.
func (l *Log) fullLoop() {
	defer l.wg.Done()
	for {
		select {
		case <-l.closeC:
			return
		case <-l.fullC:
		}
		l.mu.Lock()
		p := l.fullPending
		l.fullPending = nil
		flushed := l.flushed
		l.mu.Unlock()
		if p != nil && flushed.Less(*p) {
			l.opts.OnFull(*p)
		}
	}
}

// failLocked applies commit_failure_policy to an I/O error. Every queued
// waiter fails with it: no write is acknowledged unless it is known durable.
// The failed segment gets no more writes, syncs or end record. It returns
// the error the caller's append should report.
// REQUIRES: l.mu held.
func (l *Log) failLocked(seg *segment, op string, cause error) error {
	err := fmt.Errorf("commitlog: %s: %w", op, cause)
	if seg != nil {
		err = fmt.Errorf("commitlog: %s %s: %w", op, seg.path, cause)
		seg.failed = true
		if seg == l.cur {
			seg.state = segSealing
			l.sealing = append(l.sealing, seg)
			l.cur = nil
			l.poke(l.flushC)
		}
	}
	if l.opts.FailurePolicy != PolicyIgnore {
		if l.err == nil {
			l.err = fmt.Errorf("%w (commit_failure_policy %s): %w", ErrStopped, l.opts.FailurePolicy, err)
			l.log.Error("commit log stopped accepting writes", "policy", l.opts.FailurePolicy, "err", err)
			stopErr := l.err
			l.failOnce.Do(func() {
				// NB: one of the log's goroutines is still counted on wg
				// (an append only gets here before Close starts), so
				// this Add never races Close's Wait from zero.
				l.wg.Add(1)
				go l.runFailureHooks(stopErr)
			})
		}
		err = l.err
	} else {
		l.log.Error("commit log I/O error ignored (commit_failure_policy ignore); the writes it covered failed",
			"err", err)
	}
	for _, w := range l.queue {
		l.completeLocked(w, err)
	}
	clear(l.queue)
	l.queue = l.queue[:0]
	l.cond.Broadcast()
	return err
}

func (l *Log) runFailureHooks(err error) {
	defer l.wg.Done()
	if l.opts.OnFailure != nil {
		l.opts.OnFailure(err)
	}
	if l.opts.FailurePolicy == PolicyDie {
		l.log.Error("commit log failure: exiting (commit_failure_policy die)", "err", err)
		l.opts.Die(err)
	}
}

// segmentsChangedLocked reports the number of live segments.
// REQUIRES: l.mu held.
func (l *Log) segmentsChangedLocked() {
	if m := l.opts.Metrics; m != nil {
		m.SegmentsActive.Set(float64(len(l.segments)))
	}
}

// poke wakes the goroutine behind c without blocking.
func (l *Log) poke(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}
