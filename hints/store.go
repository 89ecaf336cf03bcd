package hints

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/cqld/cqld/metrics"
	"github.com/cqld/cqld/ring"
)

// Store is this node's hints: files of hints per target host, written by
// the proxy for replicas that missed a write and delivered by the
// dispatcher when they are up again. Its methods are safe for concurrent
// use.
type Store struct {
	opts Options
	fs   vfs.FS
	log  *slog.Logger

	droppedWindow, droppedExpired, droppedWriteError prometheus.Counter

	mu      sync.Mutex
	targets map[ring.HostID]*target
	closed  bool

	// dispatchMu serialises dispatch rounds and guards every target's
	// dispatch state and the throttle.
	dispatchMu   sync.Mutex
	throttleNext time.Time

	lock io.Closer // the directory's LOCK file, held until Close

	// A full disk fails every Write that fills its buffer: logIOError logs
	// one line per ioLogInterval with the count of those it held back.
	ioLogMu         sync.Mutex
	ioLogged        time.Time
	ioLogSuppressed int

	ctx    context.Context
	cancel context.CancelFunc
	wake   chan struct{}
	wg     sync.WaitGroup
}

// target is one target host's hints.
type target struct {
	id ring.HostID

	// mu guards everything below but the dispatch state. syncMu is held
	// across an fsync or Close of cur.f, which the flusher does without mu;
	// it is taken after mu.
	mu         sync.Mutex
	syncMu     sync.Mutex
	cur        *writer
	buf        []byte // records of cur not yet handed to the OS
	bufRecords int
	files      []hintsFile // closed files, oldest first
	lastTS     int64       // the newest file timestamp used, unix ms
	closed     bool

	pendingBytes, pendingFiles prometheus.Gauge

	// Dispatch state, under Store.dispatchMu.
	offset  int64          // the first record of files[0] not yet delivered; 0 is its start
	acked   map[int64]bool // records of files[0] after offset that were delivered
	backoff time.Duration
	retryAt time.Time
}

// hintsFile is a closed file awaiting dispatch.
type hintsFile struct {
	name string
	size int64
}

// writer is a target's current file. Its name is chosen with its first
// record; the file is created when its first buffer is written out.
type writer struct {
	name      string
	ts        int64
	f         vfs.File
	size      int64 // header and every record, buffered ones included
	written   int64 // bytes handed to the OS
	synced    int64 // bytes an fsync covered
	dirSynced bool
	records   int
}

// Pending is what a target's hints take.
type Pending struct {
	Files int   // files, the one being written included
	Bytes int64 // bytes on disk and buffered
}

// Open opens the hints in opts.Dir (creating it), finds the files left by
// an earlier run, and starts the flusher and the dispatcher.
func Open(opts Options) (*Store, error) {
	s, err := open(opts)
	if err != nil {
		return nil, err
	}
	s.wg.Add(2)
	go s.flushLoop()
	go s.dispatchLoop()
	return s, nil
}

// open is Open without its goroutines, for tests that drive the flusher
// and dispatcher themselves.
func open(opts Options) (*Store, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	s := &Store{
		opts:              opts,
		fs:                opts.FS,
		log:               opts.Logger,
		droppedWindow:     opts.Metrics.Dropped.WithLabelValues(metrics.HintDroppedWindow),
		droppedExpired:    opts.Metrics.Dropped.WithLabelValues(metrics.HintDroppedExpired),
		droppedWriteError: opts.Metrics.Dropped.WithLabelValues(metrics.HintDroppedWriteError),
		targets:           make(map[ring.HostID]*target),
		wake:              make(chan struct{}, 1),
	}
	if err := s.fs.MkdirAll(opts.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("hints: creating %s: %w", opts.Dir, err)
	}
	// The directory entry of Dir itself must survive a crash too.
	if parent, err := s.fs.OpenDir(s.fs.PathDir(opts.Dir)); err == nil {
		if err := errors.Join(parent.Sync(), parent.Close()); err != nil {
			return nil, fmt.Errorf("hints: syncing the parent of %s: %w", opts.Dir, err)
		}
	}
	lock, err := s.fs.Lock(s.path(lockFileName))
	if err != nil {
		return nil, fmt.Errorf("hints: locking %s: %w", opts.Dir, err)
	}
	s.lock = lock
	names, err := s.fs.List(opts.Dir)
	if err != nil {
		lock.Close()
		return nil, fmt.Errorf("hints: listing %s: %w", opts.Dir, err)
	}
	type found struct {
		id ring.HostID
		ts int64
		hintsFile
	}
	var files []found
	for _, name := range names {
		id, ts, ok := parseFileName(name)
		if !ok {
			continue
		}
		st, err := s.fs.Stat(s.path(name))
		if err != nil {
			lock.Close()
			return nil, fmt.Errorf("hints: stat %s: %w", s.path(name), err)
		}
		files = append(files, found{id, ts, hintsFile{name, st.Size()}})
	}
	slices.SortFunc(files, func(a, b found) int { return cmp.Compare(a.ts, b.ts) })
	for _, f := range files {
		t := s.targetLocked(f.id)
		t.files = append(t.files, f.hintsFile)
		t.lastTS = max(t.lastTS, f.ts)
	}
	for _, t := range s.targets {
		s.updatePendingLocked(t)
	}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	if len(files) > 0 {
		s.log.Info("hints: found hints files from an earlier run", "dir", opts.Dir, "files", len(files), "targets", len(s.targets))
	}
	return s, nil
}

func (s *Store) path(name string) string { return s.fs.PathJoin(s.opts.Dir, name) }

// targetLocked returns id's target, creating it. REQUIRES: s.mu held, or
// the store not yet shared.
func (s *Store) targetLocked(id ring.HostID) *target {
	t := s.targets[id]
	if t == nil {
		host := id.String()
		t = &target{
			id:           id,
			acked:        map[int64]bool{},
			pendingBytes: s.opts.Metrics.PendingBytes.WithLabelValues(host),
			pendingFiles: s.opts.Metrics.PendingFiles.WithLabelValues(host),
		}
		s.targets[id] = t
	}
	return t
}

func (s *Store) target(id ring.HostID) (*target, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, ErrClosed
	}
	return s.targetLocked(id), nil
}

// snapshot returns every target, in host id order.
func (s *Store) snapshot() []*target {
	s.mu.Lock()
	defer s.mu.Unlock()
	ts := make([]*target, 0, len(s.targets))
	for _, t := range s.targets {
		ts = append(ts, t)
	}
	slices.SortFunc(ts, func(a, b *target) int { return cmp.Compare(string(a.id[:]), string(b.id[:])) })
	return ts
}

// Write appends a hint for target: m, an encoded mutation, created at
// created (the coordinator's write time; hints older than Options.MaxAge at
// dispatch are dropped). Write does not keep m. It usually only copies the
// hint into the target's buffer; a Write that fills the buffer writes it to
// the operating system. A hint is durable once the next flush has
// fsynced it (doc.go). Write fails with ErrWindowExpired, without writing,
// when target has been down longer than max_hint_window; with ErrTooLarge;
// and with the I/O error that kept it from the disk, the hint not written.
func (s *Store) Write(id ring.HostID, m []byte, created time.Time) error {
	if len(m) > MaxHintSize {
		return fmt.Errorf("%w: %d bytes (at most %d)", ErrTooLarge, len(m), MaxHintSize)
	}
	if since, down := s.opts.Liveness.DownSince(id); down && s.opts.Now().Sub(since) > s.opts.MaxWindow {
		s.droppedWindow.Inc()
		return ErrWindowExpired
	}
	t, err := s.target(id)
	if err != nil {
		return err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return ErrClosed
	}
	n := recordSize(len(m))
	if w := t.cur; w != nil && w.records > 0 && w.size+n+recordHeaderSize > s.opts.MaxFileSize {
		// A failed rotation abandoned the file; the hint goes to the next.
		_ = s.rotateLocked(t)
	}
	if t.cur == nil {
		s.newWriterLocked(t)
	}
	w := t.cur
	before := len(t.buf)
	t.buf = appendRecord(t.buf, kindHint, w.synced, created, m)
	w.size += n
	w.records++
	t.bufRecords++
	if len(t.buf) >= s.opts.BufferSize {
		if err := s.writeOutLocked(t); err != nil {
			// Only this hint is refused: the ones before it stay buffered.
			// The buffer's records belong to t.cur, w or the file that
			// replaced it.
			t.buf = t.buf[:before]
			t.bufRecords--
			t.cur.size -= n
			t.cur.records--
			s.droppedWriteError.Inc()
			s.updatePendingLocked(t)
			return err
		}
	}
	s.opts.Metrics.Written.Inc()
	s.updatePendingLocked(t)
	return nil
}

// newWriterLocked starts t's next file, holding what is buffered. REQUIRES:
// t.mu held, t.cur nil.
func (s *Store) newWriterLocked(t *target) {
	ts := max(s.opts.Now().UnixMilli(), t.lastTS+1)
	t.lastTS = ts
	t.cur = &writer{
		name:    fileName(t.id, ts),
		ts:      ts,
		size:    fileHeaderSize + int64(len(t.buf)),
		records: t.bufRecords,
	}
}

// writeOutLocked hands t's buffer to the OS, creating the file first if
// needed. On an I/O error the buffer stays and the file is abandoned, or,
// if it was not created, kept for the next try. REQUIRES: t.mu held.
func (s *Store) writeOutLocked(t *target) error {
	w := t.cur
	if w == nil || len(t.buf) == 0 {
		return nil
	}
	path := s.path(w.name)
	if w.f == nil {
		f, err := s.fs.Create(path, vfs.WriteCategoryUnspecified)
		if err != nil {
			return fmt.Errorf("hints: creating %s: %w", path, err)
		}
		w.f = f
		if _, err := f.Write(appendFileHeader(nil, fileHeader{target: t.id, created: w.ts})); err != nil {
			err = fmt.Errorf("hints: writing %s: %w", path, err)
			s.abandonLocked(t, err)
			return err
		}
		w.written = fileHeaderSize
	}
	// NB: vfs.File.Write may modify its argument (an encrypting FS); none
	// of ours does, and the buffer is kept for a retry only after an error.
	if _, err := w.f.Write(t.buf); err != nil {
		err = fmt.Errorf("hints: writing %s at offset %d: %w", path, w.written, err)
		s.abandonLocked(t, err)
		return err
	}
	w.written += int64(len(t.buf))
	t.buf = t.buf[:0]
	t.bufRecords = 0
	if cap(t.buf) > 2*s.opts.BufferSize {
		t.buf = nil
	}
	return nil
}

// abandonLocked gives up t's current file after an I/O error: nothing more
// is written to it, what it holds stays for dispatch (its tail cut there
// as torn), and the buffered records go to the next file, which becomes
// t.cur (buffered records always belong to t.cur). REQUIRES: t.mu held.
func (s *Store) abandonLocked(t *target, cause error) {
	w := t.cur
	t.cur = nil
	s.logIOError(cause, "hints: abandoning a hints file after an I/O error; its hints so far stay for dispatch, "+
		"later ones go to a new file", "file", s.path(w.name))
	if w.f != nil {
		t.syncMu.Lock()
		w.f.Close()
		t.syncMu.Unlock()
		if w.written > fileHeaderSize {
			t.files = append(t.files, hintsFile{w.name, w.written})
		} else if err := s.fs.Remove(s.path(w.name)); err != nil {
			s.log.Warn("hints: removing an empty hints file", "file", s.path(w.name), "error", err)
		}
	}
	// The synced claims were about the abandoned file.
	for off := 0; off < len(t.buf); {
		setSynced(t.buf[off:], 0)
		off += int(recordSize(int(binary.LittleEndian.Uint32(t.buf[off+4:]))))
	}
	if len(t.buf) > 0 {
		s.newWriterLocked(t)
	}
}

// rotateLocked closes t's current file: written out, fsynced, an end
// record appended and fsynced, and queued for dispatch. REQUIRES: t.mu held.
func (s *Store) rotateLocked(t *target) error {
	w := t.cur
	if w == nil {
		return nil
	}
	if w.records == 0 {
		t.cur = nil
		return nil
	}
	if err := s.writeOutLocked(t); err != nil {
		return err
	}
	t.syncMu.Lock()
	err := w.f.SyncData()
	if err == nil {
		end := appendRecord(nil, kindEnd, w.written, time.Time{}, nil)
		if _, err = w.f.Write(end); err == nil {
			w.written += int64(len(end))
			err = w.f.SyncData()
		}
	}
	if err == nil && !w.dirSynced {
		err = s.syncDir()
	}
	if cerr := w.f.Close(); err == nil {
		err = cerr
	}
	t.syncMu.Unlock()
	t.cur = nil
	t.files = append(t.files, hintsFile{w.name, w.written})
	if err != nil {
		err = fmt.Errorf("hints: closing %s: %w", s.path(w.name), err)
		s.log.Error("hints: a hints file could not be closed cleanly; its hints stay for dispatch", "error", err)
		return err
	}
	return nil
}

func (s *Store) syncDir() error {
	d, err := s.fs.OpenDir(s.opts.Dir)
	if err != nil {
		return fmt.Errorf("hints: opening %s: %w", s.opts.Dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("hints: syncing %s: %w", s.opts.Dir, err)
	}
	return nil
}

// Flush writes out and fsyncs every target's hints; when it returns nil,
// every hint written before it is durable. It is what the flusher does
// every hints_flush_period.
func (s *Store) Flush() error {
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return ErrClosed
	}
	var errs []error
	for _, t := range s.snapshot() {
		if err := s.flushTarget(t); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// flushTarget writes out t's buffer and fsyncs its current file, holding
// t.mu only to write, so that Writes wait for no fsync.
func (s *Store) flushTarget(t *target) error {
	t.mu.Lock()
	if err := s.writeOutLocked(t); err != nil {
		t.mu.Unlock()
		return err
	}
	w := t.cur
	if w == nil || w.f == nil || (w.synced == w.written && w.dirSynced) {
		t.mu.Unlock()
		return nil
	}
	upTo := w.written
	t.syncMu.Lock()
	t.mu.Unlock()
	err := w.f.SyncData()
	if err == nil && !w.dirSynced {
		err = s.syncDir()
	}
	t.syncMu.Unlock()

	t.mu.Lock()
	defer t.mu.Unlock()
	if err != nil {
		err = fmt.Errorf("hints: syncing %s: %w", s.path(w.name), err)
		if t.cur == w {
			s.abandonLocked(t, err)
		}
		return err
	}
	w.dirSynced = true
	w.synced = max(w.synced, upTo)
	return nil
}

func (s *Store) flushLoop() {
	defer s.wg.Done()
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-s.opts.After(s.opts.FlushPeriod):
		}
		if err := s.Flush(); err != nil && !errors.Is(err, ErrClosed) {
			s.log.Error("hints: periodic flush failed", "error", err)
		}
	}
}

// Pending returns what target's undelivered hints take.
func (s *Store) Pending(id ring.HostID) Pending {
	s.mu.Lock()
	t := s.targets[id]
	s.mu.Unlock()
	if t == nil {
		return Pending{}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.pendingLocked()
}

// Targets returns the host ids that have undelivered hints, in order.
func (s *Store) Targets() []ring.HostID {
	var ids []ring.HostID
	for _, t := range s.snapshot() {
		t.mu.Lock()
		if t.pendingLocked().Files > 0 {
			ids = append(ids, t.id)
		}
		t.mu.Unlock()
	}
	return ids
}

func (t *target) pendingLocked() Pending {
	var p Pending
	for _, f := range t.files {
		p.Files++
		p.Bytes += f.size
	}
	if t.cur != nil && t.cur.records > 0 {
		p.Files++
		p.Bytes += t.cur.size
	}
	return p
}

func (s *Store) updatePendingLocked(t *target) {
	p := t.pendingLocked()
	t.pendingBytes.Set(float64(p.Bytes))
	t.pendingFiles.Set(float64(p.Files))
}

// Wake makes the dispatcher look for live targets with hints now rather
// than at its next interval; the node calls it when gossip marks a node up.
func (s *Store) Wake() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Close stops the dispatcher (cancelling a delivery in flight) and the
// flusher, and closes every target's current file durably. Hints not
// delivered stay on disk for the next Open.
func (s *Store) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return ErrClosed
	}
	s.closed = true
	s.mu.Unlock()
	s.cancel()
	s.wg.Wait()
	s.dispatchMu.Lock()
	defer s.dispatchMu.Unlock()
	var errs []error
	for _, t := range s.snapshot() {
		t.mu.Lock()
		t.closed = true
		if err := s.rotateLocked(t); err != nil {
			errs = append(errs, err)
		}
		t.mu.Unlock()
	}
	if err := s.lock.Close(); err != nil {
		errs = append(errs, fmt.Errorf("hints: unlocking %s: %w", s.opts.Dir, err))
	}
	return errors.Join(errs...)
}

// Delete removes every hint for target, written or buffered: the node
// calls it when the target leaves the ring for good (removenode,
// decommission), as Cassandra's deleteAllHintsForEndpoint. Hints written
// after it are kept as usual.
func (s *Store) Delete(id ring.HostID) error {
	s.mu.Lock()
	t, closed := s.targets[id], s.closed
	s.mu.Unlock()
	if closed {
		return ErrClosed
	}
	if t == nil {
		return nil
	}
	s.dispatchMu.Lock()
	defer s.dispatchMu.Unlock()
	t.mu.Lock()
	defer t.mu.Unlock()
	files := t.files
	t.files = nil
	if w := t.cur; w != nil {
		t.cur = nil
		if w.f != nil {
			t.syncMu.Lock()
			w.f.Close()
			t.syncMu.Unlock()
			files = append(files, hintsFile{w.name, w.written})
		}
	}
	t.buf, t.bufRecords = nil, 0
	t.offset, t.backoff, t.retryAt = 0, 0, time.Time{}
	clear(t.acked)
	var errs []error
	for _, f := range files {
		if err := s.fs.Remove(s.path(f.name)); err != nil {
			errs = append(errs, fmt.Errorf("hints: removing %s: %w", s.path(f.name), err))
		}
	}
	s.updatePendingLocked(t)
	return errors.Join(errs...)
}

const ioLogInterval = 10 * time.Second

func (s *Store) logIOError(err error, msg string, args ...any) {
	s.ioLogMu.Lock()
	now := s.opts.Now()
	if !s.ioLogged.IsZero() && now.Sub(s.ioLogged) < ioLogInterval {
		s.ioLogSuppressed++
		s.ioLogMu.Unlock()
		return
	}
	suppressed := s.ioLogSuppressed
	s.ioLogged, s.ioLogSuppressed = now, 0
	s.ioLogMu.Unlock()
	s.log.Error(msg, append(args, "error", err, "similar_errors_not_logged", suppressed)...)
}
