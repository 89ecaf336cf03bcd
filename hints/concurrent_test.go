package hints

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"

	"github.com/cqld/cqld/ring"
)

// Writers, flushes and dispatch rounds at once, targets going down and up,
// deliveries failing: every hint is delivered once. Run it with -race.
func TestConcurrentWriteFlushDispatch(t *testing.T) {
	e := newEnv(t)
	e.opts = func(o *Options) { o.MaxFileSize = 8 << 10; o.BufferSize = 1 << 10; o.MaxInFlight = 8 }
	var failing atomic.Bool
	e.rec.fail = func(ring.HostID, []byte) error {
		if failing.Load() {
			return errors.New("unreachable")
		}
		return nil
	}
	s := e.open()
	defer closeStore(t, s)

	const writers, perWriter, targets = 4, 500, 3
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perWriter {
				tg := (w + i) % targets
				if err := s.Write(host(tg), []byte(fmt.Sprintf("w%d-%d", w, i)), e.clock.Now()); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	stop := make(chan struct{})
	var bg sync.WaitGroup
	bg.Add(1)
	go func() {
		defer bg.Done()
		rng := rand.New(rand.NewPCG(1, 2))
		for {
			select {
			case <-stop:
				return
			default:
			}
			switch rng.IntN(4) {
			case 0:
				if err := s.Flush(); err != nil {
					t.Error(err)
				}
			case 1:
				id := host(rng.IntN(targets))
				if rng.IntN(2) == 0 {
					e.live.setDown(id, e.clock.Now())
				} else {
					e.live.setUp(id)
				}
			case 2:
				failing.Store(rng.IntN(3) == 0)
			case 3:
				s.dispatchRound(s.ctx)
				e.clock.Advance(DefaultMaxRetry)
			}
		}
	}()
	wg.Wait()
	close(stop)
	bg.Wait()

	failing.Store(false)
	for tg := range targets {
		e.live.setUp(host(tg))
	}
	for range 100 {
		if len(s.Targets()) == 0 {
			break
		}
		e.clock.Advance(DefaultMaxRetry)
		s.dispatchRound(s.ctx)
	}
	seen := map[string]int{}
	for tg := range targets {
		for _, g := range e.rec.delivered(host(tg)) {
			seen[g]++
		}
	}
	for w := range writers {
		for i := range perWriter {
			if n := seen[fmt.Sprintf("w%d-%d", w, i)]; n != 1 {
				t.Fatalf("hint w%d-%d delivered %d times, want once", w, i, n)
			}
		}
	}
}

// A read error during dispatch is retried after the backoff; nothing is
// lost or delivered twice.
func TestReadErrorRetries(t *testing.T) {
	var failReads atomic.Bool
	inj := errorfs.InjectorFunc(func(op errorfs.Op) error {
		if failReads.Load() && op.Kind == errorfs.OpFileReadAt && op.Offset > fileHeaderSize+200 {
			return errorfs.ErrInjected
		}
		return nil
	})
	e := newEnv(t)
	e.fs = errorfs.Wrap(vfs.NewMem(), inj)
	e.writeClosed(50)
	s := e.open()
	defer closeStore(t, s)
	failReads.Store(true)
	s.dispatchRound(s.ctx)
	n := len(e.rec.delivered(host(1)))
	if n == 0 || n == 50 {
		t.Fatalf("%d hints delivered before the read error, want some", n)
	}
	if p := s.Pending(host(1)); p.Files != 1 {
		t.Fatalf("Pending = %+v after a read error, want the file kept", p)
	}
	failReads.Store(false)
	e.clock.Advance(DefaultMinRetry)
	s.dispatchRound(s.ctx)
	wantHints(t, e.rec.delivered(host(1)), 1, 0, 50)
}
