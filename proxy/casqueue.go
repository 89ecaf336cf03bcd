package proxy

import (
	"context"
	"sync"

	"github.com/cqld/cqld/storage"
)

// partitionQueue lines up the lightweight transactions this node
// coordinates on one partition, so that they take turns instead of
// dueling with ballots: a duel costs both a round trip and a back-off,
// a turn nothing. Transactions coordinated by other nodes still contend
// through Paxos. Safe for concurrent use.
type partitionQueue struct {
	mu sync.Mutex
	m  map[string]*queueSlot
}

// queueSlot is one partition's turn, held by whoever has put into it.
type queueSlot struct {
	turn chan struct{}
	refs int // holders and waiters
}

// lock waits for the turn of partition pk of t and returns its release,
// or ctx's error if it ends first.
func (q *partitionQueue) lock(ctx context.Context, t *storage.Table, pk []byte) (func(), error) {
	key := string(t.Def.ID[:]) + string(pk)
	q.mu.Lock()
	if q.m == nil {
		q.m = map[string]*queueSlot{}
	}
	s := q.m[key]
	if s == nil {
		s = &queueSlot{turn: make(chan struct{}, 1)}
		q.m[key] = s
	}
	s.refs++
	q.mu.Unlock()
	leave := func() {
		q.mu.Lock()
		if s.refs--; s.refs == 0 {
			delete(q.m, key)
		}
		q.mu.Unlock()
	}
	select {
	case s.turn <- struct{}{}:
		return func() {
			<-s.turn
			leave()
		}, nil
	case <-ctx.Done():
		leave()
		return nil, ctx.Err()
	}
}
