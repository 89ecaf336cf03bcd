package hints

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/cqld/cqld/metrics"
	"github.com/cqld/cqld/ring"
)

// onlyFile returns the one hints file of the directory and its bytes.
func (e *env) onlyFile() (string, []byte) {
	e.t.Helper()
	names := e.files(fileSuffix)
	if len(names) != 1 {
		e.t.Fatalf("hints files %v, want one", names)
	}
	path := e.fs.PathJoin(e.dir, names[0])
	f, err := e.fs.Open(path)
	if err != nil {
		e.t.Fatal(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		e.t.Fatal(err)
	}
	b := make([]byte, st.Size())
	if _, err := f.ReadAt(b, 0); err != nil {
		e.t.Fatal(err)
	}
	return path, b
}

func (e *env) rewrite(path string, b []byte) {
	e.t.Helper()
	f, err := e.fs.Create(path, vfs.WriteCategoryUnspecified)
	if err != nil {
		e.t.Fatal(err)
	}
	if _, err := f.Write(b); err != nil {
		e.t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		e.t.Fatal(err)
	}
}

// writeClosed writes n hints for host 1 (down) and closes the store.
func (e *env) writeClosed(n int) {
	s := e.open()
	e.live.setDown(host(1), e.clock.Now())
	for i := range n {
		mustWrite(e.t, s, 1, i)
	}
	closeStore(e.t, s)
	e.live.setUp(host(1))
}

// A file cut in the middle of a record that nothing vouches for (a crash
// before its sync) loses that record only: the rest is delivered, the tail
// cut, no file quarantined.
func TestTornTail(t *testing.T) {
	e := newEnv(t)
	e.writeClosed(10)
	path, b := e.onlyFile()
	// Drop the end record and half of the last hint.
	last := recordSize(len(hint(1, 9)))
	e.rewrite(path, b[:int64(len(b))-recordHeaderSize-last/2])

	s := e.open()
	defer closeStore(t, s)
	s.dispatchRound(s.ctx)
	wantHints(t, e.rec.delivered(host(1)), 1, 0, 9)
	if q := e.files(corruptSuffix); len(q) != 0 {
		t.Errorf("quarantined %v, want none", q)
	}
	if left := e.files(fileSuffix); len(left) != 0 {
		t.Errorf("files left: %v", left)
	}
	if got := counter(e.m.TornBytes); got != float64(last-last/2) {
		t.Errorf("torn_bytes_total = %v, want %v", got, last-last/2)
	}
}

// A crash keeps what was synced, and any part of what was not: every hint
// flushed before the crash is delivered, and no crash looks like damage.
func TestCrashKeepsFlushedHints(t *testing.T) {
	for seed := range uint64(20) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			mem := vfs.NewCrashableMem()
			e := newEnv(t)
			e.fs = mem
			e.opts = func(o *Options) { o.BufferSize = 256; o.MaxFileSize = MinFileSize }
			s := e.open()
			e.live.setDown(host(1), e.clock.Now())
			rng := rand.New(rand.NewPCG(seed, 1))
			flushed := rng.IntN(200)
			for i := range flushed {
				mustWrite(t, s, 1, i)
			}
			if err := s.Flush(); err != nil {
				t.Fatal(err)
			}
			for i := flushed; i < 200; i++ {
				mustWrite(t, s, 1, i)
			}
			e.fs = mem.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: rng.IntN(101), RNG: rand.New(rand.NewPCG(seed, 2))})
			e.live.setUp(host(1))
			s2 := e.open()
			defer closeStore(t, s2)
			s2.dispatchRound(s2.ctx)
			got := e.rec.delivered(host(1))
			if len(got) < flushed {
				t.Fatalf("delivered %d hints, want at least the %d flushed", len(got), flushed)
			}
			wantHints(t, got, 1, 0, len(got)) // in order, a prefix, none twice
			if q := e.files(corruptSuffix); len(q) != 0 {
				t.Errorf("a crash was taken for damage: quarantined %v", q)
			}
		})
	}
}

// A byte flipped in a cleanly closed file is damage: the hints before it
// are delivered, the file quarantined with a log line naming file and
// offset, and nothing after the damage delivered.
func TestFlippedByteQuarantines(t *testing.T) {
	for _, at := range []string{"header", "record header", "payload"} {
		t.Run(at, func(t *testing.T) {
			e := newEnv(t)
			var logs strings.Builder
			e.writeClosed(10)
			path, b := e.onlyFile()
			rec := recordSize(len(hint(1, 0))) // every hint has the same size
			before := 4                        // hints before the damaged one
			off := int64(fileHeaderSize) + int64(before)*rec
			switch at {
			case "header":
				before = 0
				b[20] ^= 0x10
				off = 0
			case "record header":
				b[off+5] ^= 0x01
			case "payload":
				b[off+recordHeaderSize+3] ^= 0x80
			}
			e.rewrite(path, b)
			e.opts = func(o *Options) { o.Logger = slogTo(&logs) }
			s := e.open()
			s.dispatchRound(s.ctx)
			wantHints(t, e.rec.delivered(host(1)), 1, 0, before)
			q := e.files(corruptSuffix)
			if len(q) != 1 {
				t.Fatalf("quarantined %v, want the file", q)
			}
			if !strings.Contains(logs.String(), "corrupt hints file quarantined") ||
				!strings.Contains(logs.String(), path) || !strings.Contains(logs.String(), fmt.Sprintf("offset=%d", off)) {
				t.Errorf("log does not name the file %s and offset %d:\n%s", path, off, logs.String())
			}
			if got := counter(e.m.QuarantinedFiles); got != 1 {
				t.Errorf("quarantined_files_total = %v", got)
			}
			// A restart does not read it again.
			closeStore(t, s)
			s = e.open()
			defer closeStore(t, s)
			s.dispatchRound(s.ctx)
			if n := len(e.rec.delivered(host(1))); n != before {
				t.Errorf("after a restart %d hints delivered, want %d", n, before)
			}
		})
	}
}

// A deliverer that fails makes the target wait for its backoff; the next
// attempt resumes at the hint that failed: nothing lost, nothing twice.
func TestDeliveryFailureRetries(t *testing.T) {
	e := newEnv(t)
	e.writeClosed(20)
	failures := 0
	e.rec.fail = func(_ ring.HostID, m []byte) error {
		if string(m) == hint(1, 7) && failures < 3 {
			failures++
			return errors.New("peer timed out")
		}
		return nil
	}
	s := e.open()
	defer closeStore(t, s)

	wait := s.dispatchRound(s.ctx)
	wantHints(t, e.rec.delivered(host(1)), 1, 0, 7)
	if wait != DefaultMinRetry {
		t.Errorf("round returned wait %v, want the first backoff %v", wait, DefaultMinRetry)
	}
	s.dispatchRound(s.ctx) // before the backoff has passed: no attempt
	if failures != 1 {
		t.Fatalf("%d attempts before the backoff passed, want 1", failures)
	}
	e.clock.Advance(DefaultMinRetry)
	if wait := s.dispatchRound(s.ctx); wait != 2*DefaultMinRetry {
		t.Errorf("second backoff %v, want %v", wait, 2*DefaultMinRetry)
	}
	e.clock.Advance(2 * DefaultMinRetry)
	s.dispatchRound(s.ctx)
	e.clock.Advance(4 * DefaultMinRetry)
	s.dispatchRound(s.ctx)
	wantHints(t, e.rec.delivered(host(1)), 1, 0, 20)
	if got := counter(e.m.DeliveryFailures); got != 3 {
		t.Errorf("delivery_failures_total = %v, want 3", got)
	}
	if p := s.Pending(host(1)); p != (Pending{}) {
		t.Errorf("Pending after success = %+v", p)
	}
}

// Hints older than their tables' gc grace are dropped, not delivered.
func TestExpiredHintsDropped(t *testing.T) {
	e := newEnv(t)
	s := e.open()
	e.live.setDown(host(1), e.clock.Now())
	mustWrite(t, s, 1, 0)
	e.clock.Advance(time.Hour)
	mustWrite(t, s, 1, 1)
	closeStore(t, s)
	e.live.setUp(host(1))
	e.clock.Advance(30 * time.Minute)
	e.opts = func(o *Options) {
		o.MaxAge = func(m []byte) time.Duration { return time.Hour }
	}
	s = e.open()
	defer closeStore(t, s)
	s.dispatchRound(s.ctx)
	wantHints(t, e.rec.delivered(host(1)), 1, 1, 2)
	if got := counter(e.m.Dropped.WithLabelValues(metrics.HintDroppedExpired)); got != 1 {
		t.Errorf("dropped{expired} = %v, want 1", got)
	}
}

// The dispatcher paces deliveries to hinted_handoff_throttle: the waits it
// asks of the clock add up to the bytes delivered over the rate (the first
// delivery's bytes are a free burst).
func TestThrottle(t *testing.T) {
	e := newEnv(t)
	e.writeClosed(100)
	const rate = 1000 // bytes per second
	e.opts = func(o *Options) { o.Throttle = rate }
	s := e.open()
	defer closeStore(t, s)
	s.dispatchRound(s.ctx)
	wantHints(t, e.rec.delivered(host(1)), 1, 0, 100)
	var total time.Duration
	for _, w := range e.clock.waits {
		total += w
	}
	bytes := 0
	for i := range 99 { // the last delivery's cost is charged to the next
		bytes += len(hint(1, i))
	}
	want := time.Duration(float64(bytes) / rate * float64(time.Second))
	if d := total - want; d < -time.Millisecond || d > time.Millisecond {
		t.Errorf("throttle waited %v in all, want %v (%d bytes at %d B/s)", total, want, bytes, rate)
	}
}

// With many hints in flight and deliveries failing at random, every hint
// is delivered, and none again once it was acknowledged.
func TestWindowFailuresExactlyOnce(t *testing.T) {
	for seed := range uint64(10) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			e := newEnv(t)
			e.opts = func(o *Options) { o.MaxFileSize = 16 << 10 }
			e.writeClosed(1000)
			rng := rand.New(rand.NewPCG(seed, 3))
			e.rec.fail = func(ring.HostID, []byte) error {
				if rng.IntN(20) == 0 {
					return errors.New("dropped")
				}
				return nil
			}
			e.opts = func(o *Options) { o.MaxInFlight = 16; o.MaxInFlightBytes = 1 << 10 }
			s := e.open()
			defer closeStore(t, s)
			for round := 0; len(e.rec.delivered(host(1))) < 1000 && round < 1000; round++ {
				s.dispatchRound(s.ctx)
				e.clock.Advance(DefaultMaxRetry)
			}
			got := e.rec.delivered(host(1))
			seen := map[string]bool{}
			for _, g := range got {
				if seen[g] {
					t.Fatalf("%q delivered twice", g)
				}
				seen[g] = true
			}
			for i := range 1000 {
				if !seen[hint(1, i)] {
					t.Fatalf("hint %d never delivered (%d of 1000 were)", i, len(got))
				}
			}
			if p := s.Pending(host(1)); p != (Pending{}) {
				t.Errorf("Pending = %+v after every hint was delivered", p)
			}
		})
	}
}

// Each hint is delivered with the time it was written, for the target to
// leave out the tables it truncated since.
func TestDeliveryCarriesTheWriteTime(t *testing.T) {
	e := newEnv(t)
	var created []time.Time
	e.opts = func(o *Options) {
		o.Deliver = func(_ context.Context, _ ring.HostID, at time.Time, _ []byte) error {
			created = append(created, at)
			return nil
		}
	}
	s := e.open()
	e.live.setDown(host(1), e.clock.Now())
	var want []time.Time
	for i := range 3 {
		at := e.clock.Now().Add(time.Duration(i) * time.Minute).Truncate(time.Microsecond)
		if err := s.Write(host(1), []byte(hint(1, i)), at); err != nil {
			t.Fatal(err)
		}
		want = append(want, at)
	}
	closeStore(t, s)
	e.live.setUp(host(1))
	s = e.open()
	defer closeStore(t, s)
	s.dispatchRound(s.ctx)
	if len(created) != len(want) {
		t.Fatalf("delivered %d hints, want %d", len(created), len(want))
	}
	for i := range want {
		if !created[i].Equal(want[i]) {
			t.Fatalf("hint %d delivered as written at %v, want %v", i, created[i], want[i])
		}
	}
}
