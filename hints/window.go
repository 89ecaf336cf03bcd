package hints

import (
	"context"
	"sync"
	"time"

	"github.com/cqld/cqld/ring"
)

// window runs the deliveries of one file's hints, up to maxCount of them
// and maxBytes of payload in flight at once (a larger hint goes alone), each
// on a goroutine that wait waits for.
type window struct {
	ctx      context.Context
	s        *Store
	target   ring.HostID
	deliver  Deliver
	maxCount int
	maxBytes int

	mu        sync.Mutex
	cond      sync.Cond
	count     int
	bytes     int
	failed    bool
	failedAt  int64 // the smallest offset whose delivery failed
	failedErr error
	acked     []int64 // offsets delivered
	wg        sync.WaitGroup
}

func newWindow(ctx context.Context, s *Store, target ring.HostID, deliver Deliver) *window {
	w := &window{ctx: ctx, s: s, target: target, deliver: deliver, maxCount: s.opts.MaxInFlight, maxBytes: s.opts.MaxInFlightBytes}
	w.cond.L = &w.mu
	return w
}

// send starts delivering m, the hint at off written at created, once the
// window has room. It
// returns false, without sending, once a delivery has failed: no hint is
// sent after a failure is known, so with one hint in flight they are
// delivered strictly in order.
func (w *window) send(off int64, created time.Time, m []byte) bool {
	w.mu.Lock()
	for w.count > 0 && !w.failed && (w.count >= w.maxCount || w.bytes+len(m) > w.maxBytes) {
		w.cond.Wait()
	}
	if w.failed {
		w.mu.Unlock()
		return false
	}
	w.count++
	w.bytes += len(m)
	w.mu.Unlock()
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		err := w.deliver(w.ctx, w.target, created, m)
		w.mu.Lock()
		defer w.mu.Unlock()
		w.count--
		w.bytes -= len(m)
		if err != nil {
			if !w.failed || off < w.failedAt {
				w.failedAt, w.failedErr = off, err
			}
			w.failed = true
			w.s.opts.Metrics.DeliveryFailures.Inc()
		} else {
			w.acked = append(w.acked, off)
			w.s.opts.Metrics.Replayed.Inc()
		}
		w.cond.Broadcast()
	}()
	return true
}

// hasFailed reports whether a delivery has failed.
func (w *window) hasFailed() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.failed
}

// wait waits for every delivery in flight and returns the smallest failed
// offset and its error (ok false if none failed) and the offsets delivered.
func (w *window) wait() (failedAt int64, err error, failed bool, acked []int64) {
	w.wg.Wait()
	return w.failedAt, w.failedErr, w.failed, w.acked
}
