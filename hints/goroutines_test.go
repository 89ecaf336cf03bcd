package hints

import (
	"context"
	"fmt"
	"runtime/pprof"
	"strings"
	"testing"
	"time"

	"github.com/cqld/cqld/ring"
)

// goroutinesOf returns the stacks of the goroutines running a loop of s (a
// traceback prints each method's receiver as its first argument).
func goroutinesOf(s *Store) []string {
	var buf strings.Builder
	_ = pprof.Lookup("goroutine").WriteTo(&buf, 2)
	recv := fmt.Sprintf("hints.(*Store).%%s(%p", s)
	var out []string
	for _, g := range strings.Split(buf.String(), "\n\n") {
		for _, fn := range []string{"flushLoop", "dispatchLoop"} {
			if strings.Contains(g, fmt.Sprintf(recv, fn)) {
				out = append(out, g)
			}
		}
	}
	return out
}

// eventually polls cond (real time: these tests run the store's own
// goroutines) and fails after a generous bound.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for range 1000 {
		if cond() {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("timed out waiting until %s", what)
}

func (e *env) realClock() {
	prev := e.opts
	e.opts = func(o *Options) {
		if prev != nil {
			prev(o)
		}
		o.Now, o.After = nil, nil
		o.FlushPeriod = 5 * time.Millisecond
		o.DispatchInterval = time.Hour // only Wake starts a round
	}
}

// Open's goroutines flush, dispatch on Wake, and are gone after Close.
func TestGoroutines(t *testing.T) {
	e := newEnv(t)
	e.realClock()
	s, err := Open(e.options())
	if err != nil {
		t.Fatal(err)
	}
	e.live.setDown(host(1), time.Now())
	for i := range 10 {
		mustWrite(t, s, 1, i)
	}
	eventually(t, "the flusher created the file", func() bool { return len(e.files(fileSuffix)) == 1 })
	e.live.setUp(host(1))
	s.Wake()
	eventually(t, "the hints were delivered", func() bool { return len(e.rec.delivered(host(1))) == 10 })
	wantHints(t, e.rec.delivered(host(1)), 1, 0, 10)
	if n := len(goroutinesOf(s)); n != 2 {
		t.Errorf("%d goroutines of the store running, want 2", n)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the store's goroutines ended", func() bool { return len(goroutinesOf(s)) == 0 })
}

// Close cancels a delivery in flight; the hint stays for the next Open.
func TestCloseCancelsDelivery(t *testing.T) {
	e := newEnv(t)
	e.realClock()
	started := make(chan struct{}, 1)
	e.opts = func(prev func(*Options)) func(*Options) {
		return func(o *Options) {
			prev(o)
			o.Deliver = func(ctx context.Context, _ ring.HostID, _ time.Time, _ []byte) error {
				started <- struct{}{}
				<-ctx.Done()
				return ctx.Err()
			}
		}
	}(e.opts)
	s, err := Open(e.options())
	if err != nil {
		t.Fatal(err)
	}
	mustWrite(t, s, 1, 0)
	s.Wake()
	<-started
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	e.opts = nil
	s = e.open()
	defer closeStore(t, s)
	if p := s.Pending(host(1)); p.Files != 1 {
		t.Fatalf("Pending after Close = %+v, want the file", p)
	}
	s.dispatchRound(s.ctx)
	wantHints(t, e.rec.delivered(host(1)), 1, 0, 1)
}
