package proxy

import (
	"testing"
	"time"

	"github.com/cqld/cqld/replica"
	"github.com/cqld/cqld/ring"
)

// A node's ballots are a hybrid logical clock: the wall clock's
// microseconds while it moves ahead, strictly increasing when it stands
// still or goes back, after every ballot seen or named, and marked with
// the node, so two nodes never make the same ballot.
func TestBallotsAreAHybridLogicalClock(t *testing.T) {
	wall := time.UnixMicro(1_000_000)
	now := func() time.Time { return wall }
	a := newBallots(ring.HostID{1, 2: 3, 8: 4}, now)
	b := newBallots(ring.HostID{1, 2: 3, 8: 5}, now)
	var last replica.Ballot
	step := func(got replica.Ballot, wantMicros int64) {
		t.Helper()
		if got.Micros() != wantMicros || !got.After(last) {
			t.Fatalf("ballot at %d µs after %d µs, want %d µs", got.Micros(), last.Micros(), wantMicros)
		}
		last = got
	}
	step(a.next(replica.Ballot{}), 1_000_000) // the wall clock
	step(a.next(replica.Ballot{}), 1_000_001) // it stands still
	wall = wall.Add(-time.Second)
	step(a.next(replica.Ballot{}), 1_000_002) // it goes back
	a.observe(replica.NewBallot(5_000_000, [8]byte{9}))
	step(a.next(replica.Ballot{}), 5_000_001) // a ballot seen
	step(a.next(replica.NewBallot(7_000_000, [8]byte{9})), 7_000_001)
	a.observe(replica.NewBallot(10, [8]byte{9})) // an older one changes nothing
	step(a.next(replica.Ballot{}), 7_000_002)
	wall = time.UnixMicro(9_000_000)
	step(a.next(replica.Ballot{}), 9_000_000) // the wall clock again
	// Two nodes in the same microsecond: distinct ballots, ordered, and
	// neither after the other for a promise.
	x, y := a.next(replica.NewBallot(20_000_000, [8]byte{})), b.next(replica.NewBallot(20_000_000, [8]byte{}))
	if x == y || x.Micros() != y.Micros() || x.Compare(y) == 0 || x.After(y) || y.After(x) {
		t.Fatalf("two nodes' ballots in one microsecond: %v, %v", x, y)
	}
}
