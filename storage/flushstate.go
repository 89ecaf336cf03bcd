package storage

import (
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2"

	"github.com/cqld/cqld/commitlog"
)

// ErrWriteFailed is wrapped by every error that kept a mutation from being
// made durable and applied: the commit log failed or refused it (after an
// I/O error, under commit_failure_policy), or the LSM cannot flush its
// memtables (a full or failing data disk). The client gets WRITE_FAILURE.
var ErrWriteFailed = errors.New("storage: write failed")

// writeFailed wraps err with ErrWriteFailed, unless it is nil, already
// wrapped, or a mutation too large for the commit log (a bad request, not
// a failure).
func writeFailed(err error) error {
	if err == nil || errors.Is(err, ErrWriteFailed) || errors.Is(err, commitlog.ErrTooLarge) {
		return err
	}
	return fmt.Errorf("%w: %w", ErrWriteFailed, err)
}

// flushState follows pebble's flushes. While the newest flush failed,
// writes are refused: pebble keeps the memtable it could not flush and
// retries it on its own (backed off by backoffFS), so the refusal ends by
// itself with the first flush that succeeds once the disk has room again.
// Accepting writes meanwhile would fill the memtables until pebble stalls
// every write, the commit log's completion goroutine with them.
//
// Two more states refuse writes the same way: a write of the LSM's
// metadata (its MANIFEST) that waits for the full disk to have room
// (backoff.go), which ends by itself when the write goes through, and a
// MANIFEST that failed for good (lsmfailure.go), which lasts until the
// node restarts.
//
// Its methods are safe for concurrent use; pebble calls the listener
// methods with its own mutex held, so they only record and signal.
type flushState struct {
	lg      *slog.Logger
	failing atomic.Bool // err, stalled or fatal is set; read without the lock on the write path

	mu      sync.Mutex
	err     error         // why the newest flush failed; nil once one succeeded
	stalled error         // why a MANIFEST write waits; nil once it went through
	fatal   error         // why the MANIFEST failed for good
	failedC chan struct{} // closed and replaced at every failed flush, stall and failure
	ended   error         // the error of the last FlushEnd, until its BackgroundError
}

// setFailingLocked sets failing from err, stalled and fatal.
// REQUIRES: s.mu held.
func (s *flushState) setFailingLocked() {
	s.failing.Store(s.err != nil || s.stalled != nil || s.fatal != nil)
}

// signalLocked wakes the flushes waiting for a failure and sets failing.
// REQUIRES: s.mu held.
func (s *flushState) signalLocked() {
	s.setFailingLocked()
	close(s.failedC)
	s.failedC = make(chan struct{})
}

// stall records that a MANIFEST write found the disk full and waits to
// retry; unstall, that it went through or gave up.
func (s *flushState) stall(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lg.Error("storage: the LSM cannot record its changes, the disk is full; writes are refused until it can (retrying, backing off)",
		"err", err.Error())
	s.stalled = err
	s.signalLocked()
}

func (s *flushState) unstall() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stalled == nil {
		return
	}
	s.lg.Info("storage: the LSM records its changes again", "after", s.stalled.Error())
	s.stalled = nil
	s.setFailingLocked()
}

// fail records that the MANIFEST failed for good; it reports whether this
// was the first failure.
func (s *flushState) fail(err error) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fatal != nil {
		return false
	}
	s.lg.Error("storage: the LSM's MANIFEST could not be written; writes are refused until the node restarts "+
		"(disk_failure_policy applies)", "err", err.Error())
	s.fatal = err
	s.signalLocked()
	return true
}

// failure is the MANIFEST's failure, nil if there was none.
func (s *flushState) failure() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.fatal
}

func newFlushState(lg *slog.Logger) *flushState {
	return &flushState{lg: lg, failedC: make(chan struct{})}
}

// flushEnd and backgroundError are pebble's FlushEnd and BackgroundError
// events.
func (s *flushState) flushEnd(info pebble.FlushInfo) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if info.Err != nil {
		// Either the flush failed, and pebble reports the same error as a
		// background error next, or it had nothing to write.
		s.ended = info.Err
		return
	}
	s.ended = nil
	if s.err != nil {
		s.lg.Info("storage: a flush succeeded again", "after", s.err.Error())
		s.err = nil
		s.setFailingLocked()
	}
}

func (s *flushState) backgroundError(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != s.ended {
		s.lg.Error("storage: background error in the LSM", "err", err.Error())
		return
	}
	s.ended = nil
	switch {
	case s.fatal != nil:
		// Said once, by fail; pebble's retries fail until a restart.
	case s.err == nil:
		s.lg.Error("storage: a flush failed; writes are refused until one succeeds (pebble retries it, backing off)",
			"err", err.Error())
	default:
		s.lg.Warn("storage: a flush failed again", "err", err.Error())
	}
	s.err = err
	s.signalLocked()
}

// refusal returns the error a write gets while the newest flush failed,
// a MANIFEST write waits for room, or the MANIFEST failed.
func (s *flushState) refusal() error {
	if !s.failing.Load() {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.fatal != nil:
		return fmt.Errorf("%w: the LSM's MANIFEST could not be written, writes are refused until the node restarts: %w", ErrWriteFailed, s.fatal)
	case s.stalled != nil:
		return fmt.Errorf("%w: the LSM cannot record its changes, writes are refused until it can: %w", ErrWriteFailed, s.stalled)
	case s.err != nil:
		return fmt.Errorf("%w: the LSM cannot flush its memtables, writes are refused until it can: %w", ErrWriteFailed, s.err)
	}
	return nil
}

// failed returns a channel closed when the next flush fails.
func (s *flushState) failed() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.failedC
}
