package coordinator

import (
	"container/list"
	"sync"
	"time"

	"github.com/cqld/cqld/metrics"
)

// prepCache holds prepared statements by id, least recently used first out,
// within a budget of estimated bytes (prepared_statements_cache_size).
// Every change is mirrored to the store (system.prepared_statements), so a
// restart finds the same statements. It is safe for concurrent use.
//
// NB: store writes happen after the cache lock is released, but each
// carries a timestamp taken under the lock; the store reconciles by
// timestamp, so it ends in the cache's order even when two writes for one
// id are applied out of order.
type prepCache struct {
	max   int64
	m     *metrics.Prepared
	store *prepStore // nil: nothing is persisted

	mu     sync.Mutex
	size   int64
	byID   map[[16]byte]*list.Element // of *preparedStmt
	lru    list.List                  // front: most recently used
	lastTS int64
}

func newPrepCache(max int64, m *metrics.Prepared, store *prepStore) *prepCache {
	return &prepCache{max: max, m: m, store: store, byID: map[[16]byte]*list.Element{}}
}

// get returns the statement with id, or nil, and counts a hit or a miss.
func (pc *prepCache) get(id [16]byte) *preparedStmt {
	pc.mu.Lock()
	e := pc.byID[id]
	if e != nil {
		pc.lru.MoveToFront(e)
	}
	pc.mu.Unlock()
	if e == nil {
		pc.m.Misses.Inc()
		return nil
	}
	pc.m.Hits.Inc()
	return e.Value.(*preparedStmt)
}

// put caches ps, replacing any statement with its id, and evicts the least
// recently used statements until the cache fits its budget again. A
// statement larger than the whole budget is refused with Cassandra's error.
// persist says whether the store needs ps written (false for statements
// read from it). The store writes are added to ops, for the caller to apply
// (one mutation for all the statements of a request).
func (pc *prepCache) put(ps *preparedStmt, persist bool, ops *storeOps) error {
	if ps.size > pc.max {
		return invalidf("Prepared statement of size %d bytes is larger than allowed maximum of %d bytes: %s...",
			ps.size, pc.max, truncate(ps.query, 200))
	}
	pc.mu.Lock()
	if old := pc.byID[ps.id]; old != nil {
		pc.size -= old.Value.(*preparedStmt).size
		old.Value = ps
		pc.lru.MoveToFront(old)
	} else {
		pc.byID[ps.id] = pc.lru.PushFront(ps)
	}
	pc.size += ps.size
	if persist {
		ops.save(ps, pc.stamp())
	}
	evicted := 0
	for pc.size > pc.max {
		e := pc.lru.Back()
		v := e.Value.(*preparedStmt)
		pc.lru.Remove(e)
		delete(pc.byID, v.id)
		pc.size -= v.size
		ops.remove(v.id, pc.stamp())
		evicted++
	}
	pc.gauges()
	pc.mu.Unlock()
	pc.m.Evictions.Add(float64(evicted))
	return nil
}

// remove drops ps (and only ps: a newer statement of the same id stays).
func (pc *prepCache) remove(ps *preparedStmt) {
	var ops storeOps
	pc.mu.Lock()
	e := pc.byID[ps.id]
	if e == nil || e.Value.(*preparedStmt) != ps {
		pc.mu.Unlock()
		return
	}
	pc.lru.Remove(e)
	delete(pc.byID, ps.id)
	pc.size -= ps.size
	ops.remove(ps.id, pc.stamp())
	pc.gauges()
	pc.mu.Unlock()
	pc.store.apply(&ops)
}

// forget deletes a stored statement that is not cached.
func (pc *prepCache) forget(id [16]byte, ops *storeOps) {
	pc.mu.Lock()
	ops.remove(id, pc.stamp())
	pc.mu.Unlock()
}

// all returns the cached statements, most recently used first.
func (pc *prepCache) all() []*preparedStmt {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	out := make([]*preparedStmt, 0, len(pc.byID))
	for e := pc.lru.Front(); e != nil; e = e.Next() {
		out = append(out, e.Value.(*preparedStmt))
	}
	return out
}

// stamp is a write timestamp in microseconds, increasing strictly.
// REQUIRES: pc.mu held.
func (pc *prepCache) stamp() int64 {
	ts := time.Now().UnixMicro()
	if ts <= pc.lastTS {
		ts = pc.lastTS + 1
	}
	pc.lastTS = ts
	return ts
}

// REQUIRES: pc.mu held.
func (pc *prepCache) gauges() {
	pc.m.Entries.Set(float64(len(pc.byID)))
	pc.m.Bytes.Set(float64(pc.size))
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}
