package hints

import (
	"context"
	"errors"
	"fmt"
	"slices"
)

// Transfer hands every hint of the store over through deliver, whether
// or not its target is up: a decommissioning node gives its hints to
// another node before it leaves, as Cassandra's
// HintsService.transferHints does, since they would be lost with it. It
// closes each target's file being written first, so that every hint
// written before Transfer was called is sent; hints written while it runs
// stay for the dispatcher. Hints are read, paced (Throttle), aged
// (MaxAge) and resumed after a failure as the dispatcher does: Transfer
// holds the dispatcher off while it runs. It returns nil once every file
// it found is delivered and removed, or the first error of each target
// that failed (joined); such a target's hints stay, and the next Transfer
// or dispatch resumes at the first one not delivered. deliver is called
// as Options.Deliver, with the hint's target; ctx and Close end it.
// Transferred hints count as replayed.
func (s *Store) Transfer(ctx context.Context, deliver Deliver) error {
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return ErrClosed
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(s.ctx, cancel)()

	s.dispatchMu.Lock()
	defer s.dispatchMu.Unlock()
	var errs []error
	for _, t := range s.snapshot() {
		t.mu.Lock()
		if !t.closed {
			// An error abandoned the file, which stays for dispatch as it
			// is; the hints after it were refused to their writers.
			_ = s.rotateLocked(t)
		}
		s.updatePendingLocked(t)
		files := slices.Clone(t.files)
		t.mu.Unlock()
		for _, f := range files {
			if err := s.dispatchFile(ctx, t, f, deliver); err != nil {
				errs = append(errs, fmt.Errorf("hints: transferring the hints for %s: %w", t.id, err))
				break
			}
		}
		if ctx.Err() != nil {
			break
		}
	}
	if err := ctx.Err(); err != nil && len(errs) == 0 {
		return fmt.Errorf("hints: transfer: %w", err)
	}
	return errors.Join(errs...)
}
