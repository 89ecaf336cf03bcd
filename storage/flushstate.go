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
// Its methods are safe for concurrent use; pebble calls the listener
// methods with its own mutex held, so they only record and signal.
type flushState struct {
	lg      *slog.Logger
	failing atomic.Bool // err != nil, read without the lock on the write path

	mu      sync.Mutex
	err     error         // why the newest flush failed; nil once one succeeded
	failedC chan struct{} // closed and replaced at every failed flush
	ended   error         // the error of the last FlushEnd, until its BackgroundError
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
		s.lg.Info("storage: a flush succeeded again; writes are accepted", "after", s.err.Error())
		s.err = nil
		s.failing.Store(false)
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
	if s.err == nil {
		s.lg.Error("storage: a flush failed; writes are refused until one succeeds (pebble retries it, backing off)",
			"err", err.Error())
	} else {
		s.lg.Warn("storage: a flush failed again", "err", err.Error())
	}
	s.err = err
	s.failing.Store(true)
	close(s.failedC)
	s.failedC = make(chan struct{})
}

// refusal returns the error a write gets while the newest flush failed.
func (s *flushState) refusal() error {
	if !s.failing.Load() {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err == nil {
		return nil
	}
	return fmt.Errorf("%w: the LSM cannot flush its memtables, writes are refused until it can: %w", ErrWriteFailed, s.err)
}

// failed returns a channel closed when the next flush fails.
func (s *flushState) failed() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.failedC
}
