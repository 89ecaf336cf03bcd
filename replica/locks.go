package replica

import (
	"slices"
	"sync"

	"github.com/cqld/cqld/mutation"
	"github.com/cqld/cqld/storage"
)

// partitionLocks serialise, per partition, the writes that read before
// they write on this replica: counter updates and conditional writes.
// Blind writes take no lock.
type partitionLocks [1024]sync.Mutex

func (l *partitionLocks) stripe(pk []byte) int {
	return int(uint64(storage.Token(pk)) % uint64(len(l)))
}

// lockPartitions locks the stripes of every partition m updates, in stripe
// order so that concurrent multi-partition writes cannot deadlock, and
// returns the function that unlocks them.
func (l *partitionLocks) lockPartitions(m *mutation.Mutation) func() {
	stripes := make([]int, 0, len(m.Updates))
	for _, u := range m.Updates {
		stripes = append(stripes, l.stripe(u.Key))
	}
	slices.Sort(stripes)
	stripes = slices.Compact(stripes)
	for _, s := range stripes {
		l[s].Lock()
	}
	return func() {
		for i := len(stripes) - 1; i >= 0; i-- {
			l[stripes[i]].Unlock()
		}
	}
}
