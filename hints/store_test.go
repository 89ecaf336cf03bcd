package hints

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/cqld/cqld/metrics"
	"github.com/cqld/cqld/ring"
)

// Hints for three targets survive a restart and are delivered in order,
// each exactly once, and their files removed.
func TestRestartReplaysInOrderOnce(t *testing.T) {
	e := newEnv(t)
	e.opts = func(o *Options) { o.MaxFileSize = MinFileSize; o.BufferSize = 512 }
	s := e.open()
	for i := range 3 {
		e.live.setDown(host(i), e.clock.Now())
	}
	for i := range 200 {
		for tg := range 3 {
			mustWrite(t, s, tg, i)
		}
	}
	if p := s.Pending(host(1)); p.Files < 2 {
		t.Fatalf("Pending = %+v: want several files (rotation at max_hints_file_size)", p)
	}
	s.dispatchRound(s.ctx) // every target is down: nothing moves
	closeStore(t, s)
	if len(e.rec.got) != 0 {
		t.Fatalf("delivered to a down target: %v", e.rec.got)
	}

	s = e.open()
	defer closeStore(t, s)
	if got := s.Targets(); len(got) != 3 {
		t.Fatalf("Targets() after restart = %v, want 3", got)
	}
	for i := range 3 {
		e.live.setUp(host(i))
	}
	s.dispatchRound(s.ctx)
	for tg := range 3 {
		wantHints(t, e.rec.delivered(host(tg)), tg, 0, 200)
		if p := s.Pending(host(tg)); p != (Pending{}) {
			t.Errorf("Pending(%d) after replay = %+v", tg, p)
		}
	}
	if left := e.files(fileSuffix); len(left) != 0 {
		t.Errorf("files left after replay: %v", left)
	}
	s.dispatchRound(s.ctx)
	for tg := range 3 {
		if n := len(e.rec.delivered(host(tg))); n != 200 {
			t.Errorf("host %d: %d deliveries after a second round, want 200", tg, n)
		}
	}
	if got := counter(e.m.Replayed); got != 600 {
		t.Errorf("replayed_total = %v, want 600", got)
	}
}

// The dispatcher delivers the file being written for a live target, and
// later hints go to a new file.
func TestDispatchClosesTheCurrentFile(t *testing.T) {
	e := newEnv(t)
	s := e.open()
	defer closeStore(t, s)
	mustWrite(t, s, 1, 0)
	mustWrite(t, s, 1, 1)
	s.dispatchRound(s.ctx)
	mustWrite(t, s, 1, 2)
	s.dispatchRound(s.ctx)
	wantHints(t, e.rec.delivered(host(1)), 1, 0, 3)
}

func TestWindow(t *testing.T) {
	e := newEnv(t)
	s := e.open()
	defer closeStore(t, s)
	e.live.setDown(host(1), e.clock.Now())
	e.clock.Advance(DefaultMaxWindow)
	mustWrite(t, s, 1, 0) // down exactly max_hint_window: still written
	e.clock.Advance(time.Second)
	if err := s.Write(host(1), []byte("late"), e.clock.Now()); !errors.Is(err, ErrWindowExpired) {
		t.Fatalf("Write past the window = %v, want ErrWindowExpired", err)
	}
	if got := counter(e.m.Dropped.WithLabelValues(metrics.HintDroppedWindow)); got != 1 {
		t.Errorf("dropped{window} = %v, want 1", got)
	}
	if got := counter(e.m.Written); got != 1 {
		t.Errorf("written_total = %v, want 1", got)
	}
}

func TestWriteRefuses(t *testing.T) {
	e := newEnv(t)
	s := e.open()
	if err := s.Write(host(1), make([]byte, MaxHintSize+1), e.clock.Now()); !errors.Is(err, ErrTooLarge) {
		t.Errorf("Write of MaxHintSize+1 bytes = %v, want ErrTooLarge", err)
	}
	closeStore(t, s)
	if err := s.Write(host(1), []byte("x"), e.clock.Now()); !errors.Is(err, ErrClosed) {
		t.Errorf("Write after Close = %v, want ErrClosed", err)
	}
	if err := s.Close(); !errors.Is(err, ErrClosed) {
		t.Errorf("second Close = %v, want ErrClosed", err)
	}
}

// Pending and its gauges count what is on disk and buffered.
func TestPending(t *testing.T) {
	e := newEnv(t)
	s := e.open()
	defer closeStore(t, s)
	e.live.setDown(host(2), e.clock.Now())
	if p := s.Pending(host(2)); p != (Pending{}) {
		t.Fatalf("Pending before any hint = %+v", p)
	}
	mustWrite(t, s, 2, 0)
	p := s.Pending(host(2))
	want := Pending{Files: 1, Bytes: fileHeaderSize + recordSize(len(hint(2, 0)))}
	if p != want {
		t.Fatalf("Pending = %+v, want %+v", p, want)
	}
	if got := counter(e.m.PendingBytes.WithLabelValues(host(2).String())); got != float64(want.Bytes) {
		t.Errorf("pending_bytes gauge = %v, want %v", got, want.Bytes)
	}
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	if got := s.Pending(host(2)); got != want {
		t.Errorf("Pending after Flush = %+v, want %+v", got, want)
	}
	if got := s.Targets(); !slices.Equal(got, []ring.HostID{host(2)}) {
		t.Errorf("Targets() = %v, want [%v]", got, host(2))
	}
	e.live.setUp(host(2))
	s.dispatchRound(s.ctx)
	if p := s.Pending(host(2)); p != (Pending{}) {
		t.Errorf("Pending after delivery = %+v", p)
	}
	if got := counter(e.m.PendingFiles.WithLabelValues(host(2).String())); got != 0 {
		t.Errorf("pending_files gauge = %v, want 0", got)
	}
}

// File names are Cassandra's, unique per target even within a millisecond.
func TestFileNames(t *testing.T) {
	e := newEnv(t)
	e.opts = func(o *Options) { o.MaxFileSize = MinFileSize }
	s := e.open()
	e.live.setDown(host(3), e.clock.Now())
	for i := range 100 {
		mustWrite(t, s, 3, i)
	}
	closeStore(t, s)
	names := e.files(fileSuffix)
	if len(names) < 2 {
		t.Fatalf("files %v: want several", names)
	}
	for _, n := range names {
		id, _, ok := parseFileName(n)
		if !ok || id != host(3) {
			t.Errorf("file %q does not parse as host 3's", n)
		}
	}
	for _, bad := range []string{"x.hints", host(1).String() + "-12-2.hints", host(1).String() + "-a-1.hints",
		host(1).String() + "-12-1.hints.corrupt", host(1).String() + "-12-1.crc32"} {
		if _, _, ok := parseFileName(bad); ok {
			t.Errorf("parseFileName(%q) accepted it", bad)
		}
	}
}

// Delete drops a departed target's hints, on disk and buffered, and no
// other target's.
func TestDelete(t *testing.T) {
	e := newEnv(t)
	e.opts = func(o *Options) { o.MaxFileSize = MinFileSize; o.BufferSize = 256 }
	s := e.open()
	defer closeStore(t, s)
	e.live.setDown(host(1), e.clock.Now())
	e.live.setDown(host(2), e.clock.Now())
	for i := range 100 {
		mustWrite(t, s, 1, i)
		mustWrite(t, s, 2, i)
	}
	if err := s.Delete(host(1)); err != nil {
		t.Fatal(err)
	}
	if p := s.Pending(host(1)); p != (Pending{}) {
		t.Errorf("Pending after Delete = %+v", p)
	}
	for _, n := range e.files(fileSuffix) {
		if id, _, _ := parseFileName(n); id == host(1) {
			t.Errorf("file %s left after Delete", n)
		}
	}
	mustWrite(t, s, 1, 100)
	e.live.setUp(host(1))
	e.live.setUp(host(2))
	s.dispatchRound(s.ctx)
	wantHints(t, e.rec.delivered(host(1)), 1, 100, 101)
	wantHints(t, e.rec.delivered(host(2)), 2, 0, 100)
}
