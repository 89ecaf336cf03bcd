package hints

import (
	"context"
	"fmt"
	"time"
)

func (s *Store) dispatchLoop() {
	defer s.wg.Done()
	wait := s.opts.DispatchInterval
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-s.wake:
		case <-s.opts.After(wait):
		}
		wait = s.dispatchRound(s.ctx)
	}
}

// dispatchRound delivers the hints of every live target whose retry time
// has come, a file per target in turn, until none makes progress. It
// returns how long the dispatcher may wait before the next round.
func (s *Store) dispatchRound(ctx context.Context) time.Duration {
	s.dispatchMu.Lock()
	defer s.dispatchMu.Unlock()
	next := s.opts.DispatchInterval
	targets := s.snapshot()
	for pass := 0; ; pass++ {
		progress := false
		for _, t := range targets {
			if ctx.Err() != nil {
				return next
			}
			now := s.opts.Now()
			if now.Before(t.retryAt) {
				next = min(next, t.retryAt.Sub(now))
				continue
			}
			if _, down := s.opts.Liveness.DownSince(t.id); down {
				continue
			}
			t.mu.Lock()
			if pass == 0 && t.cur != nil && !t.closed {
				// The file being written becomes deliverable; the next
				// hint starts another (Cassandra's HintsDispatchTrigger).
				_ = s.rotateLocked(t)
				s.updatePendingLocked(t)
			}
			var f hintsFile
			ok := len(t.files) > 0
			if ok {
				f = t.files[0]
			}
			t.mu.Unlock()
			if !ok {
				continue
			}
			if err := s.dispatchFile(ctx, t, f, s.opts.Deliver); err != nil {
				if ctx.Err() != nil {
					return next
				}
				t.backoff = min(max(2*t.backoff, s.opts.MinRetry), s.opts.MaxRetry)
				t.retryAt = s.opts.Now().Add(t.backoff)
				next = min(next, t.backoff)
				s.log.Warn("hints: dispatch failed; retrying later", "target", t.id, "retry_in", t.backoff, "error", err)
				continue
			}
			t.backoff = 0
			progress = true
		}
		if !progress {
			return next
		}
	}
}

// dispatchFile delivers f's hints from t.offset on through deliver, in
// order, several in flight (window). It returns nil once the file is done (every hint
// acknowledged or dropped, or the file quarantined) and gone, or the error
// that stopped it, t.offset then at the first hint not delivered and
// t.acked holding the hints after it that were. REQUIRES: s.dispatchMu
// held, f = t.files[0].
func (s *Store) dispatchFile(ctx context.Context, t *target, f hintsFile, deliver Deliver) error {
	path := s.path(f.name)
	r, err := openReader(s.fs, path)
	if err != nil {
		return err
	}
	defer r.close()

	h, err := r.header()
	switch {
	case isBadRecord(err):
		return s.badRecord(t, f, r, 0, err)
	case err != nil:
		return err
	case h.target != t.id:
		s.quarantine(t, f, 0, fmt.Errorf("the file header names host %s", h.target))
		return nil
	}
	win := newWindow(ctx, s, t.id, deliver)
	off, bad, stopErr := s.sendFile(ctx, t, r, win)
	failedAt, failErr, failed, acked := win.wait()

	// The first hint not acknowledged is the earliest failure, else where
	// sending stopped.
	if failed {
		off = min(off, failedAt)
	}
	for _, a := range acked {
		t.acked[a] = true
	}
	t.offset = off
	for a := range t.acked {
		if a < off {
			delete(t.acked, a)
		}
	}
	switch {
	case failed:
		return fmt.Errorf("hints: delivering the hint at offset %d of %s: %w", failedAt, path, failErr)
	case stopErr != nil:
		return stopErr
	case bad != nil:
		return s.badRecord(t, f, r, off, bad)
	}
	s.done(t, f)
	return nil
}

// sendFile sends the hints of r from t.offset on through win until the
// file ends, a record does not decode, a delivery fails or ctx ends. It
// returns the offset it stopped at (the file's size at its end), the
// record there that does not decode, if that stopped it, and an error that
// is neither (I/O, ctx).
func (s *Store) sendFile(ctx context.Context, t *target, r *fileReader, win *window) (off int64, bad, err error) {
	off = max(t.offset, fileHeaderSize)
	for off < r.size {
		rh, m, err := r.read(off)
		if isBadRecord(err) {
			return off, err, nil
		}
		if err != nil {
			return off, nil, err
		}
		if rh.kind == kindEnd {
			return r.size, nil, nil
		}
		next := off + rh.size()
		created := time.UnixMicro(rh.created)
		switch {
		case t.acked[off]:
			// Delivered before an earlier failure: not again.
		case s.opts.MaxAge != nil && s.opts.Now().Sub(created) > s.opts.MaxAge(m):
			s.droppedExpired.Inc()
		default:
			if win.hasFailed() {
				return off, nil, nil
			}
			if err := s.throttle(ctx, len(m)); err != nil {
				return off, nil, err
			}
			if !win.send(off, created, m) {
				return off, nil, nil
			}
		}
		off = next
	}
	return r.size, nil, nil
}

// badRecord handles a record of f that does not decode: damage if a later
// record vouches it was synced (the file is quarantined), else a torn tail
// (the hints before it were delivered; the file is done).
func (s *Store) badRecord(t *target, f hintsFile, r *fileReader, off int64, bad error) error {
	vouched, err := r.vouched(off)
	if err != nil {
		return err
	}
	if vouched {
		s.quarantine(t, f, off, bad)
		return nil
	}
	s.log.Warn("hints: cut the torn tail of a hints file (bytes a crash left unsynced)",
		"file", r.path, "offset", off, "bytes", r.size-off, "reason", bad)
	s.opts.Metrics.TornBytes.Add(float64(r.size - off))
	s.done(t, f)
	return nil
}

// quarantine sets a corrupt file aside, renamed *.corrupt, so that it is
// never read again; the hints before off were delivered.
func (s *Store) quarantine(t *target, f hintsFile, off int64, reason error) {
	from := s.path(f.name)
	to := from + corruptSuffix
	s.log.Error("hints: corrupt hints file quarantined; the hints after the offset are lost (repair the target)",
		"file", from, "offset", off, "reason", reason, "renamed_to", to)
	if err := s.fs.Rename(from, to); err != nil {
		s.log.Error("hints: renaming a corrupt hints file", "file", from, "error", err)
	}
	s.opts.Metrics.QuarantinedFiles.Inc()
	s.pop(t, f)
}

// done removes a file whose hints are all delivered or dropped.
func (s *Store) done(t *target, f hintsFile) {
	if err := s.fs.Remove(s.path(f.name)); err != nil {
		// It would be delivered again after a restart: hints are
		// idempotent mutations, so this costs only work.
		s.log.Error("hints: removing a delivered hints file", "file", s.path(f.name), "error", err)
	}
	s.pop(t, f)
}

func (s *Store) pop(t *target, f hintsFile) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.files) > 0 && t.files[0].name == f.name {
		t.files = t.files[1:]
	}
	t.offset = 0
	clear(t.acked)
	s.updatePendingLocked(t)
}

// throttle waits as hinted_handoff_throttle requires before n more bytes
// are delivered: deliveries are spaced so the dispatcher's bytes per second
// stay under the limit. REQUIRES: s.dispatchMu held.
func (s *Store) throttle(ctx context.Context, n int) error {
	if s.opts.Throttle < 0 {
		return nil
	}
	now := s.opts.Now()
	if s.throttleNext.Before(now) {
		s.throttleNext = now
	}
	wait := s.throttleNext.Sub(now)
	s.throttleNext = s.throttleNext.Add(time.Duration(float64(n) / float64(s.opts.Throttle) * float64(time.Second)))
	if wait <= 0 {
		return nil
	}
	select {
	case <-s.opts.After(wait):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
