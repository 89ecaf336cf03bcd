package replica

import (
	"sync"

	"github.com/cqld/cqld/storage"
)

// fastPromises are the promises this replica made in advance, in an
// acceptance, for its proposer's next round on the partition
// (ProposeOptions.Next), each with the read it answered. A proposal on
// such a promise (ProposeOptions.Fast) is accepted only if the promise
// still stands in the durable state (no other proposer came since) and
// the replica's data within that read is the data the proposer decided
// on, whose digest the proposal carries (ProposeOptions.View): so it is
// accepted only where the data it was decided on is the data. They are
// kept in memory alone: a restart forgets every one (the durable promise
// stays, and still keeps older ballots out), which only sends its
// proposer the usual way. Safe for concurrent use.
type fastPromises struct {
	mu sync.Mutex
	m  map[fastKey]fastPromise
}

type fastKey struct {
	table [16]byte
	pk    string
}

type fastPromise struct {
	ballot Ballot
	read   storage.Slice
}

// maxFastPromises bounds the promises kept; past it one is forgotten.
const maxFastPromises = 1 << 16

func keyOf(t *storage.Table, pk []byte) fastKey { return fastKey{t.Def.ID, string(pk)} }

// keep records the promise of b for partition pk of t, answering the data
// within read.
func (f *fastPromises) keep(t *storage.Table, pk []byte, b Ballot, read storage.Slice) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.m == nil {
		f.m = map[fastKey]fastPromise{}
	}
	k := keyOf(t, pk)
	if _, ok := f.m[k]; !ok && len(f.m) >= maxFastPromises {
		for old := range f.m {
			delete(f.m, old)
			break
		}
	}
	f.m[k] = fastPromise{ballot: b, read: read}
}

// take removes and returns the promise kept for partition pk of t: a
// promise made in advance serves one proposal.
func (f *fastPromises) take(t *storage.Table, pk []byte) (fastPromise, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	k := keyOf(t, pk)
	p, ok := f.m[k]
	delete(f.m, k)
	return p, ok
}
