package replica

import (
	"sync"

	"github.com/cqld/cqld/storage"
)

// aloneState lets Alone skip reading a partition's Paxos state when it
// knows what the state holds. Alone needs two things of it: a proposal a
// remote coordinator left in progress, which it must finish, and the
// latest ballot held, which its own must be after. Since the replica
// started, only the rounds of coordinators (Prepare, Propose, Commit:
// a remote coordinator's, or this node's on a partition with several
// replicas) can have left either, and they mark their partitions
// touched; of the state the replica started with, one scan (on Alone's
// first call) takes the latest ballot of all, the floor every ballot of
// Alone's is made after, and marks the partitions with a proposal in
// progress. Any other partition holds no proposal, and no ballot after
// the floor but Alone's own, which the ballots it is given already pass
// (they come from this process's clock, after every ballot it made).
// Past maxTouched partitions it stops keeping track and reads every
// state. Safe for concurrent use.
type aloneState struct {
	once sync.Once
	err  error
	// floor is the latest ballot in system.paxos when the scan ran.
	floor Ballot

	mu       sync.Mutex
	touched  map[fastKey]struct{}
	overflow bool
}

// maxTouched bounds the partitions aloneState keeps track of.
const maxTouched = 1 << 16

// touch marks partition pk of t: a coordinator's round changed its state.
func (a *aloneState) touch(t *storage.Table, pk []byte) { a.mark(keyOf(t, pk)) }

// mark marks partition k as one whose state Alone must read.
func (a *aloneState) mark(k fastKey) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.overflow {
		return
	}
	if a.touched == nil {
		a.touched = map[fastKey]struct{}{}
	}
	if len(a.touched) >= maxTouched {
		a.overflow, a.touched = true, nil
		return
	}
	a.touched[k] = struct{}{}
}

// mustRead reports whether Alone must read partition pk of t's state,
// scanning system.paxos first if it has not yet (a scan that failed
// makes it read every one).
func (a *aloneState) mustRead(l *Local, t *storage.Table, pk []byte) bool {
	a.once.Do(func() { a.err = a.scan(l) })
	if a.err != nil {
		return true
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.overflow {
		return true
	}
	_, ok := a.touched[keyOf(t, pk)]
	return ok
}

// scan takes the floor and the partitions with a proposal in progress
// from system.paxos.
func (a *aloneState) scan(l *Local) error {
	return l.engine.Scan(paxosTable, storage.ScanOptions{Now: l.nowSeconds()}, func(pk []byte, r *storage.Row) bool {
		if len(r.Clustering) != 1 || len(r.Clustering[0]) != 16 {
			return true
		}
		var accepted, committed Ballot
		for _, c := range r.Cells {
			var b Ballot
			copy(b[:], c.Cell.Value)
			switch c.Column {
			case colInProgress:
			case colProposalAt:
				accepted = b
			case colCommitAt:
				committed = b
			default:
				continue
			}
			a.floor = a.floor.Max(b)
		}
		if !accepted.IsZero() && accepted.After(committed) {
			var id [16]byte
			copy(id[:], r.Clustering[0])
			a.mark(fastKey{id, string(pk)})
		}
		return true
	})
}
