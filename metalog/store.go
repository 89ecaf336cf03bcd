package metalog

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/hashicorp/raft"

	"github.com/cqld/cqld/internal/pebblefatal"
)

// Keys of the store: log entries under logPrefix and the big-endian
// index, so that they sort by index; stable values under stablePrefix and
// raft's key.
const (
	logPrefix    = 'l'
	stablePrefix = 's'
)

// store is raft's LogStore and StableStore on one pebble database of its
// own, with pebble's WAL on and every write synced: raft counts on what
// they return having reached the disk (a vote, a term, an entry it
// acknowledges to the leader).
//
// A failed write to that disk (full, or failing) is one pebble cannot undo:
// it calls its logger's Fatalf, expecting the process to end. The store
// records the failure instead (fail), tells onFailure once, so that the
// node stops as disk_failure_policy says (server/failstop.go), and refuses
// every later write: the write that failed, which pebble would report
// done, included. Raft then neither acknowledges an entry nor grants a
// vote; NB: a failed write of raft's current term alone is not reported,
// since raft panics on it, and without a vote or an entry written the term
// changes nothing a restart would not redo.
//
// Safe for concurrent use.
type store struct {
	db        *pebble.DB
	failed    atomic.Pointer[error]
	onFailure func(error)
}

var (
	_ raft.LogStore          = (*store)(nil)
	_ raft.StableStore       = (*store)(nil)
	_ raft.MonotonicLogStore = (*store)(nil)
)

// openStore opens the store in dir on fs (vfs.Default when nil);
// onFailure, when set, hears of the first failed write.
func openStore(dir string, lg *slog.Logger, fs vfs.FS, onFailure func(error)) (*store, error) {
	if fs == nil {
		fs = vfs.Default
	}
	s := &store{onFailure: onFailure}
	logger := pebblefatal.Logger{Log: lg,
		Handles: func(msg string) bool { return pebblefatal.IsCommitWrite(msg) || pebblefatal.IsManifestWrite(msg) },
		Failed: func(msg string) {
			lg.Error("pebble: the log store could not write: " + msg)
			s.fail(msg)
		}}
	db, err := pebble.Open(dir, &pebble.Options{FS: fs, Logger: logger})
	if err != nil {
		return nil, fmt.Errorf("metalog: open log store %s: %w", dir, err)
	}
	s.db = db
	return s, nil
}

// ErrStoreFailed is the error of every write to a log store after one
// failed.
var ErrStoreFailed = errors.New("metalog: the log store could not write to its disk; restart the node once the disk is fixed")

// fail records a failed write: pebble calls it through Fatalf, with its
// own locks held, so it only records and tells onFailure, once.
func (s *store) fail(msg string) {
	err := fmt.Errorf("%w: pebble: %s", ErrStoreFailed, msg)
	if s.failed.CompareAndSwap(nil, &err) && s.onFailure != nil {
		s.onFailure(err)
	}
}

// err is the failure recorded, nil while there is none.
func (s *store) err() error {
	if e := s.failed.Load(); e != nil {
		return *e
	}
	return nil
}

func (s *store) close() error {
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("metalog: close log store: %w", err)
	}
	return nil
}

func logKey(index uint64) []byte {
	return binary.BigEndian.AppendUint64([]byte{logPrefix}, index)
}

func stableKey(k []byte) []byte { return append([]byte{stablePrefix}, k...) }

// IsMonotonic implements raft.MonotonicLogStore: the log has no gaps, so
// after a snapshot is installed raft deletes what it had, as it must for
// FirstIndex and LastIndex to mean the whole range.
func (s *store) IsMonotonic() bool { return true }

// FirstIndex implements raft.LogStore.
func (s *store) FirstIndex() (uint64, error) { return s.edge(true) }

// LastIndex implements raft.LogStore.
func (s *store) LastIndex() (uint64, error) { return s.edge(false) }

func (s *store) edge(first bool) (uint64, error) {
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: []byte{logPrefix}, UpperBound: []byte{logPrefix + 1}})
	if err != nil {
		return 0, fmt.Errorf("metalog: log store: %w", err)
	}
	defer it.Close()
	var ok bool
	if first {
		ok = it.First()
	} else {
		ok = it.Last()
	}
	if !ok {
		return 0, it.Error()
	}
	k := it.Key()
	if len(k) != 9 {
		return 0, fmt.Errorf("%w: log store key %x", ErrBadMessage, k)
	}
	return binary.BigEndian.Uint64(k[1:]), nil
}

// GetLog implements raft.LogStore.
func (s *store) GetLog(index uint64, l *raft.Log) error {
	v, closer, err := s.db.Get(logKey(index))
	if errors.Is(err, pebble.ErrNotFound) {
		return raft.ErrLogNotFound
	}
	if err != nil {
		return fmt.Errorf("metalog: read log entry %d: %w", index, err)
	}
	defer closer.Close()
	if err := decodeStoredLog(v, l); err != nil {
		return fmt.Errorf("metalog: log entry %d on disk: %w", index, err)
	}
	if l.Index != index {
		return fmt.Errorf("%w: log entry %d on disk holds index %d", ErrBadMessage, index, l.Index)
	}
	return nil
}

// decodeStoredLog decodes an entry as the store writes it, copying what
// it keeps out of b.
func decodeStoredLog(b []byte, l *raft.Log) error {
	d := &decoder{b: b}
	if v := d.byte("version"); d.err == nil && v != codecVersion {
		return fmt.Errorf("%w: version %d, want %d", ErrBadMessage, v, codecVersion)
	}
	readLog(d, l, false)
	if err := d.done(); err != nil {
		return err
	}
	l.Data = clone(l.Data)
	l.Extensions = clone(l.Extensions)
	return nil
}

func clone(b []byte) []byte {
	if b == nil {
		return nil
	}
	return append([]byte(nil), b...)
}

// StoreLog implements raft.LogStore.
func (s *store) StoreLog(l *raft.Log) error { return s.StoreLogs([]*raft.Log{l}) }

// StoreLogs implements raft.LogStore: the entries reach the disk in one
// synced batch.
func (s *store) StoreLogs(logs []*raft.Log) error {
	b := s.db.NewBatch()
	defer b.Close()
	e := &encoder{}
	for _, l := range logs {
		e.b = append(e.b[:0], codecVersion)
		if err := appendLog(e, l, false); err != nil {
			return err
		}
		if err := b.Set(logKey(l.Index), e.b, nil); err != nil {
			return fmt.Errorf("metalog: write log entry %d: %w", l.Index, err)
		}
	}
	return s.write(func() error { return b.Commit(pebble.Sync) }, "write %d log entries", len(logs))
}

// write runs one synced write, unless the store failed before it or
// while it ran (pebble then reports it done).
func (s *store) write(w func() error, what string, args ...any) error {
	if err := s.err(); err != nil {
		return fmt.Errorf("metalog: "+what+": %w", append(args, err)...)
	}
	err := w()
	if err == nil {
		err = s.err()
	}
	if err != nil {
		return fmt.Errorf("metalog: "+what+": %w", append(args, err)...)
	}
	return nil
}

// DeleteRange implements raft.LogStore.
func (s *store) DeleteRange(lo, hi uint64) error {
	if lo > hi {
		return nil
	}
	end := logKey(hi + 1)
	if hi == ^uint64(0) {
		end = []byte{logPrefix + 1}
	}
	return s.write(func() error { return s.db.DeleteRange(logKey(lo), end, pebble.Sync) }, "delete log entries %d-%d", lo, hi)
}

// Set implements raft.StableStore.
func (s *store) Set(key, val []byte) error {
	err := s.write(func() error { return s.db.Set(stableKey(key), val, pebble.Sync) }, "write %q", key)
	if err != nil && errors.Is(err, ErrStoreFailed) && bytes.Equal(key, keyCurrentTerm) {
		return nil // see store
	}
	return err
}

// keyCurrentTerm is raft's key for its current term, whose failed write
// it panics on.
var keyCurrentTerm = []byte("CurrentTerm")

// Get implements raft.StableStore.
func (s *store) Get(key []byte) ([]byte, error) {
	v, closer, err := s.db.Get(stableKey(key))
	if errors.Is(err, pebble.ErrNotFound) {
		return []byte{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("metalog: read %q: %w", key, err)
	}
	defer closer.Close()
	return append([]byte{}, v...), nil
}

// SetUint64 implements raft.StableStore.
func (s *store) SetUint64(key []byte, val uint64) error {
	return s.Set(key, binary.BigEndian.AppendUint64(nil, val))
}

// GetUint64 implements raft.StableStore.
func (s *store) GetUint64(key []byte) (uint64, error) {
	v, err := s.Get(key)
	if err != nil || len(v) == 0 {
		return 0, err
	}
	if len(v) != 8 {
		return 0, fmt.Errorf("%w: %q holds %d bytes, want 8", ErrBadMessage, key, len(v))
	}
	return binary.BigEndian.Uint64(v), nil
}
