package storage

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"sync"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/datastax/go-cassandra-native-protocol/datatype"

	"github.com/cqld/cqld/commitlog"
	"github.com/cqld/cqld/internal/pebblefatal"
)

// EngineOptions configures an Engine.
type EngineOptions struct {
	FS vfs.FS
	// Dir holds the LSM's files.
	Dir string
	// Log configures the commit log; its FS defaults to FS and its OnFull
	// is the engine's.
	Log    commitlog.Options
	Logger *slog.Logger
	// CacheSize is the LSM's block cache in bytes; 0 means 128 MiB.
	CacheSize int64
	// After is the clock of the backoff between retries of a failed
	// flush; nil means time.After.
	After func(time.Duration) <-chan time.Time
	// MemTableSize is the size of one memtable; 0 means
	// DefaultMemTableSize.
	MemTableSize int64
	// OnDiskFailure is called once, from the engine's goroutine, when the
	// LSM's MANIFEST could not be written (lsmfailure.go): the data disk
	// failed, and the caller applies disk_failure_policy. Writes are
	// refused from then on; reads go on.
	OnDiskFailure func(err error)
	// Now is the clock Truncate records its time by; nil means time.Now.
	Now func() time.Time
}

// Engine is a node's table data: pebble, with its own WAL off, behind our
// commit log. A mutation is durable in the commit log (under its sync
// mode) before it is applied to pebble's memtable; pebble's flushes decide
// which commit log segments may go.
//
// Engine is safe for concurrent use.
type Engine struct {
	db      *pebble.DB
	log     *commitlog.Log
	lg      *slog.Logger
	flushes *flushState

	// NB: Apply holds applyMu for reading from its commit log append to its
	// pebble apply; flush takes it for writing, so the position it reads
	// covers only records already in the memtable.
	applyMu sync.RWMutex
	flushMu sync.Mutex

	// bg counts the engine's goroutines: flushLoop, pressureLoop, and the
	// ApplyIf calls ApplyAsync hands to goroutines of their own. Close waits for them
	// before it closes the log and the LSM.
	bg         sync.WaitGroup
	closeMu    sync.Mutex
	closed     bool          // guarded by closeMu; no goroutine starts once set
	flushReq   chan struct{} // wakes flushLoop for a flush
	markReq    chan struct{} // wakes it for a mark (release.go)
	releaseReq chan struct{} // wakes it to free what pebble flushed
	failReq    chan struct{} // wakes it to report the MANIFEST's failure
	stop       chan struct{} // closed by Close: flushLoop returns

	fs            *backoffFS
	onDiskFailure func(error)

	rel      releaser
	stalls   stalls
	pressure *pressure // pressure.go
	// compacting are the compactions running (system_views.sstable_tasks).
	compacting compactions

	now func() time.Time
	// truncMu serialises truncations and guards truncated, the time of
	// each table's last truncation in unix microseconds (truncation.go).
	truncMu   sync.Mutex
	truncated map[[16]byte]int64
}

// OpenEngine opens the LSM and the commit log and replays the log, so that
// every acknowledged mutation is readable when it returns.
func OpenEngine(o EngineOptions) (*Engine, error) {
	if o.FS == nil {
		o.FS = vfs.Default
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if err := mkdirAllSynced(o.FS, o.Dir); err != nil {
		return nil, err
	}
	if o.CacheSize <= 0 {
		o.CacheSize = 128 << 20
	}
	cache := pebble.NewCache(o.CacheSize)
	defer cache.Unref() // the DB holds its own reference
	if o.Now == nil {
		o.Now = time.Now
	}
	e := &Engine{lg: o.Logger, flushes: newFlushState(o.Logger),
		flushReq: make(chan struct{}, 1), markReq: make(chan struct{}, 1), releaseReq: make(chan struct{}, 1),
		failReq: make(chan struct{}, 1), stop: make(chan struct{}), onDiskFailure: o.OnDiskFailure, now: o.Now}
	listener := &pebble.EventListener{
		FlushEnd: func(info pebble.FlushInfo) {
			e.flushes.flushEnd(info)
			if e.rel.flushEnd(info) {
				poke(e.releaseReq)
			}
		},
		BackgroundError: e.flushes.backgroundError,
	}
	e.stalls.now = time.Now
	e.stalls.listen(listener)
	e.compacting.now = o.Now
	e.compacting.listen(listener)
	po := lsmOptions(o)
	e.pressure = newPressure(po)
	e.pressure.listen(listener)
	e.fs = newBackoffFS(o.FS, o.After, e.stop, e.flushes)
	po.FS = e.fs
	po.Cache = cache
	po.Logger = pebblefatal.Logger{Log: o.Logger, Handles: pebblefatal.IsManifestWrite, Failed: e.lsmFailed}
	po.EventListener = listener
	db, err := pebble.Open(o.Dir, po)
	if err != nil {
		return nil, fmt.Errorf("storage: open %s: %w", o.Dir, err)
	}
	e.db = db
	e.fs.metaRetry.Store(true)
	lo := o.Log
	if lo.FS == nil {
		lo.FS = o.FS
	}
	if lo.Logger == nil {
		lo.Logger = o.Logger
	}
	lo.OnFull = func(commitlog.Position) { e.requestFlush() }
	if e.log, err = commitlog.Open(lo); err != nil {
		db.Close()
		return nil, err
	}
	flushed, err := readFlushedPosition(db)
	if err != nil {
		e.log.Close()
		db.Close()
		return nil, err
	}
	stats, err := e.log.Replay(func(payload []byte, pos commitlog.Position) error {
		if pos.Less(flushed) {
			return nil // already in the LSM: replaying it could undo a purge
		}
		b := db.NewBatch()
		if err := b.SetRepr(append([]byte(nil), payload...)); err != nil {
			return fmt.Errorf("storage: commit log record at %v: %w", pos, err)
		}
		if err := db.Apply(b, pebble.NoSync); err != nil {
			return fmt.Errorf("storage: replay the record at %v: %w", pos, err)
		}
		e.rel.applied(b, pos)
		return b.Close()
	})
	if err == nil {
		e.truncated, err = readTruncations(db)
	}
	if err != nil {
		e.log.Close()
		db.Close()
		return nil, err
	}
	e.bg.Add(2)
	go e.flushLoop()
	go e.pressureLoop()
	if stats.Segments > 0 {
		// Make the replayed state durable in the LSM so that the replayed
		// segments go now, not at the next flush.
		if err := e.Flush(); err != nil {
			e.Close()
			return nil, err
		}
	}
	return e, nil
}

// Mutation is a set of changes applied atomically. It is not safe for
// concurrent use; it belongs to one request.
type Mutation struct {
	e   *Engine
	b   *pebble.Batch
	key []byte // scratch
	val []byte // scratch

	lastTable  *Table
	lastPK     []byte
	lastPrefix []byte

	// then is ApplyAsync's, while its append waits for a sync; appended
	// is m.onAppended, the append's completion, made once per pooled
	// Mutation so that a write makes no closure for it.
	then     func(error)
	appended func(commitlog.Position, error)
}

// mutationPool keeps mutations and their scratch buffers between requests;
// Apply returns them.
var mutationPool sync.Pool

// init sets the pool's New, which refers back to the pool (onAppended,
// release).
func init() {
	mutationPool.New = func() any {
		m := new(Mutation)
		m.appended = m.onAppended
		return m
	}
}

// NewMutation starts an empty mutation. Once applied it must not be used
// again.
func (e *Engine) NewMutation() *Mutation {
	m := mutationPool.Get().(*Mutation)
	m.e, m.b = e, e.db.NewBatch()
	return m
}

// release returns m to the pool, its batch already closed.
func (m *Mutation) release() {
	const maxScratch = 64 << 10
	if cap(m.key) > maxScratch || cap(m.val) > maxScratch {
		m.key, m.val = nil, nil
	}
	m.e, m.b, m.lastTable, m.then = nil, nil, nil, nil
	m.lastPK, m.lastPrefix = m.lastPK[:0], m.lastPrefix[:0]
	mutationPool.Put(m)
}

// prefix appends pk's partition key prefix to m.key[:0], remembering the
// last one: a write usually touches several cells of one partition, and
// the prefix costs a Murmur3 hash.
func (m *Mutation) prefix(t *Table, pk []byte) ([]byte, error) {
	if m.lastTable != t || !bytes.Equal(m.lastPK, pk) {
		p, err := t.partitionPrefix(m.lastPrefix[:0], pk)
		if err != nil {
			return nil, err
		}
		m.lastTable, m.lastPK, m.lastPrefix = t, append(m.lastPK[:0], pk...), p
	}
	return append(m.key[:0], m.lastPrefix...), nil
}

// Empty reports whether the mutation changes nothing.
func (m *Mutation) Empty() bool { return m.b.Empty() }

func (m *Mutation) merge(key []byte, c Cell) error {
	m.val = c.Append(m.val[:0])
	return m.b.Merge(key, m.val, nil)
}

func (m *Mutation) rowKey(t *Table, pk []byte, ck [][]byte, kind byte) ([]byte, error) {
	k, err := m.prefix(t, pk)
	if err != nil {
		return nil, err
	}
	if k, err = t.appendRowKey(k, ck, kind); err != nil {
		return nil, err
	}
	m.key = k
	return k, nil
}

// CellTarget names one cell: a regular cell of a row, or a static cell,
// and for a collection element its path (the element, map key or list
// timeuuid) with the path's type.
type CellTarget struct {
	Clustering [][]byte // the row; ignored for a static cell
	Static     bool
	Column     string
	// PathType is the type of Path; nil when Path is already in key
	// encoding, as reads return it (ColumnCell.Path, Entry).
	PathType datatype.DataType
	Path     []byte // nil for a simple cell
}

// cellKey appends the key of tg's cell up to and including its path kind.
func (m *Mutation) cellKey(t *Table, pk []byte, tg CellTarget, kind byte) ([]byte, error) {
	k, err := m.prefix(t, pk)
	if err != nil {
		return nil, err
	}
	if k, err = t.appendCellKey(k, tg, kind); err != nil {
		return nil, err
	}
	m.key = k
	return k, nil
}

// WriteCell writes a cell: live, or a tombstone.
func (m *Mutation) WriteCell(t *Table, pk []byte, tg CellTarget, c Cell) error {
	kind := pathSimple
	if tg.Path != nil {
		kind = pathElement
	}
	k, err := m.cellKey(t, pk, tg, kind)
	if err != nil {
		return err
	}
	if err := m.merge(k, c); err != nil || len(t.indexes) == 0 || c.Tombstone {
		return err
	}
	return m.indexCell(t, pk, tg, c)
}

// DeleteCollection deletes every element of a collection cell written at or
// before tombstone c.
func (m *Mutation) DeleteCollection(t *Table, pk []byte, tg CellTarget, c Cell) error {
	k, err := m.cellKey(t, pk, tg, pathDeletion)
	if err != nil {
		return err
	}
	return m.merge(k, c)
}

// WriteRowMarker writes the row's liveness: INSERT makes a row exist even
// when all its regular columns are null.
func (m *Mutation) WriteRowMarker(t *Table, pk []byte, ck [][]byte, c Cell) error {
	k, err := m.rowKey(t, pk, ck, rowMarker)
	if err != nil {
		return err
	}
	if err := m.merge(k, c); err != nil || len(t.indexes) == 0 || c.Tombstone {
		return err
	}
	return m.indexRow(t, pk, ck, c.Timestamp)
}

// DeleteRow deletes the row (pk, ck) as of tombstone c.
func (m *Mutation) DeleteRow(t *Table, pk []byte, ck [][]byte, c Cell) error {
	k, err := m.rowKey(t, pk, ck, rowDeletion)
	if err != nil {
		return err
	}
	return m.merge(k, c)
}

// DeletePartition deletes partition pk as of tombstone c.
func (m *Mutation) DeletePartition(t *Table, pk []byte, c Cell) error {
	k, err := m.prefix(t, pk)
	if err != nil {
		return err
	}
	m.key = append(k, regionPartitionDeletion)
	return m.merge(m.key, c)
}

// DeleteRange deletes the rows of partition pk within s (in clustering
// order) as of tombstone c.
func (m *Mutation) DeleteRange(t *Table, pk []byte, s Slice, c Cell) error {
	k, err := m.prefix(t, pk)
	if err != nil {
		return err
	}
	if k, err = t.appendRangeTombstoneKey(k, s); err != nil {
		return err
	}
	m.key = k
	return m.merge(k, c)
}

// appendRangeTombstoneKey appends to k, a partition's prefix, the key of
// the range tombstone of s.
func (t *Table) appendRangeTombstoneKey(k []byte, s Slice) ([]byte, error) {
	k = append(k, regionRangeTombstone)
	for _, b := range []*Bound{s.Start, s.End} {
		if b == nil {
			k = append(k, 0xff) // unbounded
			continue
		}
		k = append(k, byte(len(b.Prefix)))
		var err error
		if k, err = t.appendClustering(k, b.Prefix); err != nil {
			return nil, err
		}
		if b.Inclusive {
			k = append(k, 1)
		} else {
			k = append(k, 0)
		}
	}
	return k, nil
}

// ApplyWaits reports whether Apply waits for an fdatasync, which is so in
// every commit log mode but periodic.
func (e *Engine) ApplyWaits() bool { return e.log.Waits() }

// Sync returns once every mutation applied so far is durable, whatever
// the commit log's sync mode: what a write that must survive a crash even
// in periodic mode waits for (a Paxos replica's promise or acceptance).
func (e *Engine) Sync() error {
	if err := e.log.Sync(); err != nil {
		return writeFailed(err)
	}
	return nil
}

// Apply makes m durable under the commit log's sync mode, then visible.
// Whether it succeeds or fails, m goes back to a pool: the caller must not
// use it again.
func (e *Engine) Apply(m *Mutation) error { return e.ApplyIf(m, nil) }

// ApplyIf is Apply with a precondition, checked where WaitApplies cannot
// overtake it: a check that passes is followed by the whole apply before
// any WaitApplies returns, and one made after a WaitApplies began sees what
// preceded it. Writes check with it that their table's definition is still
// the current one, so a write planned before a schema change (a new index,
// say) either lands before that change's WaitApplies or is refused.
func (e *Engine) ApplyIf(m *Mutation, check func() error) error {
	if m.b.Empty() {
		if err := m.b.Close(); err != nil {
			return err
		}
		m.release()
		return nil
	}
	e.applyMu.RLock()
	defer e.applyMu.RUnlock()
	if check != nil {
		if err := check(); err != nil {
			return m.fail(err)
		}
	}
	if err := e.flushes.refusal(); err != nil {
		return errors.Join(err, m.discard())
	}
	pos, err := e.log.Append(m.b.Repr())
	if err != nil {
		return m.fail(writeFailed(err))
	}
	return e.applyAppended(m, pos)
}

// ApplyAsync is ApplyIf for a caller that must not block, such as an event
// loop. It checks, appends m to the commit log and returns at once. When
// the commit log has to sync first, pending is true and then is called
// exactly once, later and from another goroutine, with nil once m is
// durable and visible or with the error that failed it; m is not visible
// before. Otherwise m is applied before ApplyAsync returns and then is never
// called. Either way m goes back to its pool: the caller must not use it
// again.
//
// When a flush or a schema change is waiting for the applies in flight,
// or pebble stalls writes or is close to (pressure.go), ApplyAsync does
// not wait for it: the whole ApplyIf runs on a goroutine of its own and
// reports through then.
func (e *Engine) ApplyAsync(m *Mutation, check func() error, then func(error)) (pending bool, err error) {
	if m.b.Empty() {
		return false, e.ApplyIf(m, check)
	}
	if e.pressure.near.Load() || !e.applyMu.TryRLock() {
		if !e.goOwned(func() { then(e.ApplyIf(m, check)) }) {
			return false, errors.Join(writeFailed(commitlog.ErrClosed), m.discard())
		}
		return true, nil
	}
	if check != nil {
		if err := check(); err != nil {
			e.applyMu.RUnlock()
			return false, m.fail(err)
		}
	}
	if err := e.flushes.refusal(); err != nil {
		e.applyMu.RUnlock()
		return false, errors.Join(err, m.discard())
	}
	// NB: the read lock is held until m is in the memtable, as in ApplyIf;
	// the completion releases it on the log's goroutine.
	var pos commitlog.Position
	m.then = then
	pos, pending, err = e.log.AppendAsync(m.b.Repr(), m.appended)
	if err != nil {
		e.applyMu.RUnlock()
		return false, m.fail(writeFailed(err))
	}
	if pending {
		return true, nil
	}
	defer e.applyMu.RUnlock()
	return false, e.applyAppended(m, pos)
}

// onAppended completes ApplyAsync's m once the commit log has synced it,
// or failed to.
func (m *Mutation) onAppended(pos commitlog.Position, err error) {
	e, then := m.e, m.then
	if err == nil {
		err = e.applyAppended(m, pos)
	} else {
		err = errors.Join(writeFailed(err), m.discard())
	}
	e.applyMu.RUnlock()
	then(err)
}

// applyAppended makes m, appended to the commit log at pos, visible and
// gives it back to its pool. REQUIRES: applyMu held for reading.
func (e *Engine) applyAppended(m *Mutation, pos commitlog.Position) error {
	if err := e.db.Apply(m.b, pebble.NoSync); err != nil {
		return errors.Join(writeFailed(fmt.Errorf("storage: apply: %w", err)), m.discard())
	}
	if e.rel.applied(m.b, pos) {
		poke(e.markReq)
	}
	return m.discard()
}

// Discard drops m unapplied; m must not be used after.
func (m *Mutation) Discard() { _ = m.discard() }

// fail discards m, unapplied, and returns err as it is (callers compare a
// check's error by identity) unless closing the batch failed too.
func (m *Mutation) fail(err error) error {
	if derr := m.discard(); derr != nil {
		return errors.Join(err, derr)
	}
	return err
}

// discard closes m's batch and gives m back to its pool.
func (m *Mutation) discard() error {
	err := m.b.Close()
	m.release()
	return err
}

// Truncate removes every row of t, durably, and records when
// (TruncatedAt) in the same write.
func (e *Engine) Truncate(t *Table) error {
	e.truncMu.Lock()
	defer e.truncMu.Unlock()
	m := e.NewMutation()
	for _, tt := range append([]*Table{t}, t.IndexTables()...) {
		p := tablePrefix(tt.Def.ID)
		if err := m.b.DeleteRange(p, prefixEnd(p), nil); err != nil {
			return err
		}
	}
	at := e.now().UnixMicro()
	records := maps.Clone(e.truncated)
	records[t.Def.ID] = at
	if err := m.b.Set(truncationsKey, appendTruncations(nil, records), nil); err != nil {
		return err
	}
	if err := e.Apply(m); err != nil {
		return err
	}
	e.truncated = records
	return nil
}

// Flush writes the memtables to durable LSM files and releases the commit
// log segments they covered.
func (e *Engine) Flush() error {
	e.flushMu.Lock()
	defer e.flushMu.Unlock()
	// NB: with applyMu held for writing no record is between the commit log
	// and the memtable, so everything before the log's end is in the
	// memtables (or, after a restart, replayed into them).
	e.applyMu.Lock()
	upTo := e.log.End()
	e.applyMu.Unlock()
	// Flushed with the data, the position tells the next replay which
	// records the LSM already holds.
	if err := e.db.Set(flushedKey, appendPosition(nil, upTo), pebble.NoSync); err != nil {
		return fmt.Errorf("storage: flush: %w", err)
	}
	if err := e.flushLSM(); err != nil {
		return err
	}
	return e.log.MarkFlushed(upTo)
}

// flushLSM flushes pebble's memtables and waits for the flush, or for a
// failed attempt at it: pebble retries a failed flush until it succeeds,
// and a caller here must not wait for the disk to get room.
func (e *Engine) flushLSM() error {
	failed := e.flushes.failed()
	if e.flushes.failure() != nil {
		// No flush succeeds until the node restarts, and pebble's retry
		// that fails next may already have failed: do not wait for one.
		return fmt.Errorf("storage: flush: %w", e.flushes.refusal())
	}
	done, err := e.db.AsyncFlush()
	if err != nil {
		return writeFailed(fmt.Errorf("storage: flush: %w", err))
	}
	for {
		select {
		case <-done:
			return nil
		case <-failed:
			if err := e.flushes.refusal(); err != nil {
				return fmt.Errorf("storage: flush: %w", err)
			}
			// A later flush already succeeded: wait on.
			failed = e.flushes.failed()
		}
	}
}

// requestFlush asks flushLoop for a flush, without waiting for it.
func (e *Engine) requestFlush() { poke(e.flushReq) }

// poke wakes the goroutine behind c without blocking.
func poke(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// flushLoop runs, one at a time until Close, the flushes the commit log
// asks for when it outgrows commitlog_total_space, and the marks and
// releases of commit log segments that follow pebble's own flushes
// (release.go).
func (e *Engine) flushLoop() {
	defer e.bg.Done()
	for {
		select {
		case <-e.stop:
			return
		case <-e.flushReq:
			if err := e.Flush(); err != nil {
				e.lg.Error("flush for commit log space failed", "err", err)
			}
		case <-e.markReq:
			e.applyMu.Lock()
			end := e.log.End()
			e.rel.add(end)
			e.applyMu.Unlock()
		case <-e.failReq:
			if e.onDiskFailure != nil {
				e.onDiskFailure(e.flushes.failure())
			}
		case <-e.releaseReq:
			if pos, ok := e.rel.releasable(); ok {
				if err := e.log.MarkFlushed(pos); err != nil {
					e.lg.Error("storage: releasing the commit log segments a flush covered", "err", err)
				}
			}
		}
	}
}

// goOwned runs f on a goroutine that Close waits for, unless Close has
// begun; it reports whether f runs.
func (e *Engine) goOwned(f func()) bool {
	e.closeMu.Lock()
	defer e.closeMu.Unlock()
	if e.closed {
		return false
	}
	e.bg.Add(1)
	go func() {
		defer e.bg.Done()
		f()
	}()
	return true
}

// Close syncs the commit log and closes everything. The LSM is flushed
// first so the next start has little to replay. Close waits for the
// engine's goroutines first, so none touches the log or the LSM after
// them; it must be called once, after the last Apply has returned.
func (e *Engine) Close() error {
	e.closeMu.Lock()
	e.closed = true
	e.closeMu.Unlock()
	close(e.stop)
	e.bg.Wait()
	ferr := e.Flush()
	lerr := e.log.Close()
	derr := e.db.Close()
	for _, err := range []error{ferr, lerr, derr} {
		if err != nil {
			return err
		}
	}
	return nil
}

// flushedKey holds the commit log position that the LSM's last flush
// covered: every record before it was in the flushed memtables. It is
// shorter than a table id, so no table's key range contains it.
var flushedKey = []byte("cqld.flushed")

func appendPosition(dst []byte, p commitlog.Position) []byte {
	dst = binary.BigEndian.AppendUint64(dst, p.Segment)
	return binary.BigEndian.AppendUint64(dst, uint64(p.Offset))
}

// readFlushedPosition reads flushedKey; the zero Position when absent.
func readFlushedPosition(db *pebble.DB) (commitlog.Position, error) {
	v, closer, err := db.Get(flushedKey)
	if errors.Is(err, pebble.ErrNotFound) {
		return commitlog.Position{}, nil
	}
	if err != nil {
		return commitlog.Position{}, fmt.Errorf("storage: read flushed position: %w", err)
	}
	defer closer.Close()
	if len(v) != 16 {
		return commitlog.Position{}, fmt.Errorf("storage: flushed position of %d bytes", len(v))
	}
	return commitlog.Position{Segment: binary.BigEndian.Uint64(v), Offset: int64(binary.BigEndian.Uint64(v[8:]))}, nil
}

// CommitLog is the engine's commit log.
func (e *Engine) CommitLog() *commitlog.Log { return e.log }
