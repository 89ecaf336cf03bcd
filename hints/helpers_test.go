package hints

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/cqld/cqld/metrics"
	"github.com/cqld/cqld/ring"
)

func host(i int) ring.HostID {
	var h ring.HostID
	h[0], h[15] = 0xaa, byte(i)
	return h
}

// clock is a manual clock: Now is what the test set; After records each
// wait, moves the clock past it and fires at once.
type clock struct {
	mu    sync.Mutex
	now   time.Time
	waits []time.Duration
}

func newClock() *clock { return &clock{now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func (c *clock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.waits = append(c.waits, d)
	c.now = c.now.Add(d)
	ch := make(chan time.Time, 1)
	ch <- c.now
	return ch
}

// liveness is a failure detector the test sets.
type liveness struct {
	mu   sync.Mutex
	down map[ring.HostID]time.Time
}

func newLiveness() *liveness { return &liveness{down: map[ring.HostID]time.Time{}} }

func (l *liveness) DownSince(id ring.HostID) (time.Time, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	since, ok := l.down[id]
	return since, ok
}

func (l *liveness) setDown(id ring.HostID, since time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.down[id] = since
}

func (l *liveness) setUp(id ring.HostID) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.down, id)
}

var _ Liveness = (*liveness)(nil)

// recorder is a deliverer that keeps what it was given per target, and
// fails while fail says so.
type recorder struct {
	mu   sync.Mutex
	got  map[ring.HostID][]string
	fail func(target ring.HostID, m []byte) error
}

func newRecorder() *recorder { return &recorder{got: map[ring.HostID][]string{}} }

func (r *recorder) deliver(_ context.Context, target ring.HostID, _ time.Time, m []byte) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.fail != nil {
		if err := r.fail(target, m); err != nil {
			return err
		}
	}
	r.got[target] = append(r.got[target], string(m))
	return nil
}

func (r *recorder) delivered(target ring.HostID) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.got[target]...)
}

// env is a store's surroundings, kept across reopenings.
type env struct {
	t     testing.TB
	fs    vfs.FS
	dir   string
	clock *clock
	live  *liveness
	rec   *recorder
	reg   *prometheus.Registry
	m     *metrics.Hints
	opts  func(*Options)
}

func newEnv(t testing.TB) *env {
	e := &env{t: t, fs: vfs.NewMem(), dir: "hints", clock: newClock(), live: newLiveness(), rec: newRecorder()}
	e.reg = prometheus.NewRegistry()
	e.m = metrics.NewHints(e.reg)
	return e
}

func (e *env) options() Options {
	o := Options{
		FS:       e.fs,
		Dir:      e.dir,
		Liveness: e.live,
		Deliver:  e.rec.deliver,
		Throttle: -1,
		// One hint in flight: delivered in order, which the tests check.
		MaxInFlight: 1,
		Now:         e.clock.Now,
		After:       e.clock.After,
		Logger:      slog.New(slog.NewTextHandler(io.Discard, nil)),
		Metrics:     e.m,
	}
	if e.opts != nil {
		e.opts(&o)
	}
	return o
}

// open opens a store without its goroutines: the test flushes and
// dispatches.
func (e *env) open() *Store {
	e.t.Helper()
	s, err := open(e.options())
	if err != nil {
		e.t.Fatal(err)
	}
	return s
}

// closeStore closes a store opened with open (no goroutines to stop).
func closeStore(t testing.TB, s *Store) {
	t.Helper()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

func hint(target, i int) string { return fmt.Sprintf("mutation %d for host %d", i, target) }

func mustWrite(t testing.TB, s *Store, target, i int) {
	t.Helper()
	if err := s.Write(host(target), []byte(hint(target, i)), s.opts.Now()); err != nil {
		t.Fatalf("Write(%d, %d): %v", target, i, err)
	}
}

func wantHints(t *testing.T, got []string, target, from, to int) {
	t.Helper()
	if len(got) != to-from {
		t.Fatalf("host %d: delivered %d hints, want %d", target, len(got), to-from)
	}
	for i, g := range got {
		if want := hint(target, from+i); g != want {
			t.Fatalf("host %d: hint %d is %q, want %q", target, i, g, want)
		}
	}
}

func counter(c prometheus.Collector) float64 { return testutil.ToFloat64(c) }

// files lists the directory's names with a suffix.
func (e *env) files(suffix string) []string {
	e.t.Helper()
	names, err := e.fs.List(e.dir)
	if err != nil {
		e.t.Fatal(err)
	}
	var out []string
	for _, n := range names {
		if len(n) >= len(suffix) && n[len(n)-len(suffix):] == suffix {
			out = append(out, n)
		}
	}
	return out
}

func slogTo(w io.Writer) *slog.Logger { return slog.New(slog.NewTextHandler(w, nil)) }
