package hints

import (
	"errors"
	"testing"
	"time"

	"github.com/cqld/cqld/ring"
)

// Transfer hands over every target's hints, down or not, the file being
// written included, and removes their files; a delivery that fails stops
// its target only, and the next Transfer resumes at the hint that failed.
func TestTransfer(t *testing.T) {
	e := newEnv(t)
	s := e.open()
	defer closeStore(t, s)
	e.live.setDown(host(1), e.clock.Now())
	e.live.setDown(host(2), e.clock.Now())
	for i := range 5 {
		mustWrite(t, s, 1, i)
		mustWrite(t, s, 2, i)
	}
	// Host 1 is up again: the dispatcher has not run; the hints go by the
	// transfer all the same.
	e.live.setUp(host(1))

	to := newRecorder()
	failAt := hint(2, 3)
	to.fail = func(target ring.HostID, m []byte) error {
		if string(m) == failAt {
			return errors.New("receiver gone")
		}
		return nil
	}
	err := s.Transfer(t.Context(), to.deliver)
	if err == nil {
		t.Fatal("Transfer with a failed delivery returned nil")
	}
	wantHints(t, to.delivered(host(1)), 1, 0, 5)
	wantHints(t, to.delivered(host(2)), 2, 0, 3)
	if p := s.Pending(host(1)); p.Files != 0 {
		t.Fatalf("host 1's hints still pending after their transfer: %+v", p)
	}
	if p := s.Pending(host(2)); p.Files != 1 {
		t.Fatalf("host 2's pending hints after a failed transfer: %+v, want its file", p)
	}

	failAt = ""
	if err := s.Transfer(t.Context(), to.deliver); err != nil {
		t.Fatal(err)
	}
	wantHints(t, to.delivered(host(2)), 2, 0, 5)
	if got := s.Targets(); len(got) != 0 {
		t.Fatalf("targets with hints after the transfer: %v", got)
	}
	if names := e.files(fileSuffix); len(names) != 0 {
		t.Fatalf("hints files left after the transfer: %v", names)
	}
	if got := e.rec.delivered(host(1)); len(got) != 0 {
		t.Fatalf("the store's own Deliver got %d hints", len(got))
	}
	if got := counter(e.m.Replayed); got != 10 {
		t.Fatalf("replayed %v, want 10", got)
	}
}

// Hints older than MaxAge are dropped, not transferred, as at dispatch.
func TestTransferDropsExpired(t *testing.T) {
	e := newEnv(t)
	e.opts = func(o *Options) { o.MaxAge = func([]byte) time.Duration { return time.Hour } }
	s := e.open()
	defer closeStore(t, s)
	mustWrite(t, s, 1, 0)
	e.clock.Advance(2 * time.Hour)
	mustWrite(t, s, 1, 1)
	to := newRecorder()
	if err := s.Transfer(t.Context(), to.deliver); err != nil {
		t.Fatal(err)
	}
	wantHints(t, to.delivered(host(1)), 1, 1, 2)
	if p := s.Pending(host(1)); p.Files != 0 {
		t.Fatalf("pending after the transfer: %+v", p)
	}
}

func TestTransferClosed(t *testing.T) {
	e := newEnv(t)
	s := e.open()
	closeStore(t, s)
	if err := s.Transfer(t.Context(), newRecorder().deliver); !errors.Is(err, ErrClosed) {
		t.Fatalf("Transfer on a closed store: %v", err)
	}
}
