package proxy

import (
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/cqld/cqld/cqlerr"
	"github.com/cqld/cqld/ring"
)

// DefaultMaxHintsInProgress is Cassandra's max_hints_in_progress: 128 per
// processor.
var DefaultMaxHintsInProgress = 128 * runtime.NumCPU()

// hintLoad counts the hints being written off the requests' paths (a
// down replica's, a late one's), in all and by target. A write is
// answered once its level is met, and its hints are written after, so
// when a target's hints are written more slowly than writes come (its
// hints file's writes held up by a disk throttling its writers), every
// write meanwhile would leave a goroutine and its mutation behind. As in
// Cassandra's StorageProxy, past max in all, a write that may hint a
// target whose hints are already in progress is refused OVERLOADED
// before it is sent anywhere; targets with none in progress are taken as
// healthy, so that one slow target does not stop writes to the others.
type hintLoad struct {
	max   int64
	total atomic.Int64
	mu    sync.Mutex
	by    map[ring.HostID]int64
}

func newHintLoad(max int) *hintLoad {
	return &hintLoad{max: int64(max), by: make(map[ring.HostID]int64)}
}

// add counts a hint for h in progress (n = 1) or done (n = -1).
func (l *hintLoad) add(h ring.HostID, n int64) {
	l.total.Add(n)
	l.mu.Lock()
	if v := l.by[h] + n; v > 0 {
		l.by[h] = v
	} else {
		delete(l.by, h)
	}
	l.mu.Unlock()
}

// check refuses a write to hosts when too many hints are in progress and
// one of hosts has some of them.
func (l *hintLoad) check(hosts []ring.HostID) error {
	total := l.total.Load()
	if total <= l.max {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, h := range hosts {
		if n := l.by[h]; n > 0 {
			return cqlerr.Overloadedf("Too many in flight hints: %d destination: %s destination hints: %d", total, h, n)
		}
	}
	return nil
}
