package proxy

import (
	"sync"
	"time"

	"github.com/cqld/cqld/replica"
	"github.com/cqld/cqld/ring"
)

// ballots makes this node's Paxos ballots: a hybrid logical clock of
// microseconds, the wall clock's unless a ballot seen (a replica's promise,
// accepted proposal or commit) was later, strictly increasing, so the
// node's ballots are unique and each is after every ballot it has seen;
// eight bytes of the host id (its halves xored) tell them from other
// nodes'. Safe for concurrent use.
type ballots struct {
	now  func() time.Time
	node [8]byte

	mu   sync.Mutex
	last int64 // microseconds of the last ballot made or seen
}

func newBallots(host ring.HostID, now func() time.Time) *ballots {
	b := &ballots{now: now}
	for i := range b.node {
		b.node[i] = host[i] ^ host[i+8]
	}
	return b
}

// next returns a new ballot after after and after every one made or seen
// before.
func (b *ballots) next(after replica.Ballot) replica.Ballot {
	b.mu.Lock()
	defer b.mu.Unlock()
	micros := max(b.now().UnixMicro(), b.last+1, after.Micros()+1)
	b.last = micros
	return replica.NewBallot(micros, b.node)
}

// observe makes every later ballot after seen.
func (b *ballots) observe(seen replica.Ballot) {
	m := seen.Micros()
	b.mu.Lock()
	b.last = max(b.last, m)
	b.mu.Unlock()
}
