package prepared

import (
	"container/list"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cqld/cqld/cqlerr"
	"github.com/cqld/cqld/metrics"
)

// Cache holds prepared statements by id, least recently used first out,
// within a budget of estimated bytes (prepared_statements_cache_size).
// Every change is mirrored to the store (system.prepared_statements), so a
// restart finds the same statements. It is safe for concurrent use.
//
// NB: store writes happen after the cache lock is released, but each
// carries a timestamp taken under the lock; the store reconciles by
// timestamp, so it ends in the cache's order even when two writes for one
// id are applied out of order.
type Cache struct {
	max   int64
	m     *metrics.Prepared
	store *Store // nil: nothing is persisted
	now   func() time.Time

	// hits and requests count the Gets, and their meters rate the
	// counts (system_views.caches).
	hits, requests       atomic.Int64
	hitRate, requestRate *metrics.Meter

	mu     sync.Mutex
	size   int64
	byID   map[[16]byte]*list.Element // of *Statement
	lru    list.List                  // front: most recently used
	lastTS int64
}

// Options configure a Cache.
type Options struct {
	// MaxBytes bounds the statements' estimated memory.
	MaxBytes int64
	Metrics  *metrics.Prepared
	// Store persists the statements; nil persists nothing.
	Store *Store
	// Now is the clock of the store's write timestamps and of the hit
	// and request rates.
	Now func() time.Time
}

// NewCache returns an empty cache.
func NewCache(o Options) *Cache {
	if o.Now == nil {
		o.Now = time.Now
	}
	pc := &Cache{max: o.MaxBytes, m: o.Metrics, store: o.Store, now: o.Now, byID: map[[16]byte]*list.Element{}}
	pc.hitRate = metrics.NewMeterOf(15*time.Minute, o.Now, pc.hits.Load)
	pc.requestRate = metrics.NewMeterOf(15*time.Minute, o.Now, pc.requests.Load)
	return pc
}

// Stats are a cache's figures, as Cassandra's CacheMetrics has them.
type Stats struct {
	Entries                          int
	Bytes, Capacity                  int64
	Requests, Hits                   int64
	RecentRequestRate, RecentHitRate float64 // per second, over fifteen minutes
}

// Stats returns the cache's figures. It is safe for concurrent use.
func (pc *Cache) Stats() Stats {
	pc.mu.Lock()
	st := Stats{Entries: len(pc.byID), Bytes: pc.size, Capacity: pc.max}
	pc.mu.Unlock()
	st.Requests, st.Hits = pc.requests.Load(), pc.hits.Load()
	st.RecentRequestRate, st.RecentHitRate = pc.requestRate.Rate(), pc.hitRate.Rate()
	return st
}

// Get returns the statement with id, or nil, and counts a hit or a miss.
func (pc *Cache) Get(id [16]byte) *Statement {
	pc.mu.Lock()
	e := pc.byID[id]
	if e != nil {
		pc.lru.MoveToFront(e)
	}
	pc.mu.Unlock()
	pc.requests.Add(1) // the meters rate the counts, read when asked
	if e == nil {
		pc.m.Misses.Inc()
		return nil
	}
	pc.hits.Add(1)
	pc.m.Hits.Inc()
	return e.Value.(*Statement)
}

// Put caches ps, replacing any statement with its id, and evicts the least
// recently used statements until the cache fits its budget again. A
// statement larger than the whole budget is refused with Cassandra's error.
// persist says whether the store needs ps written (false for statements
// read from it). The store writes are added to w, for the caller to apply
// (Persist: one mutation for all the statements of a request).
func (pc *Cache) Put(ps *Statement, persist bool, w *Writes) error {
	size := ps.Plan.Size()
	if size > pc.max {
		return cqlerr.Invalidf("Prepared statement of size %d bytes is larger than allowed maximum of %d bytes: %s...",
			size, pc.max, truncate(ps.Query, 200))
	}
	pc.mu.Lock()
	if old := pc.byID[ps.ID]; old != nil {
		pc.size -= old.Value.(*Statement).Plan.Size()
		old.Value = ps
		pc.lru.MoveToFront(old)
	} else {
		pc.byID[ps.ID] = pc.lru.PushFront(ps)
	}
	pc.size += size
	if persist {
		w.save(ps, pc.stamp())
	}
	evicted := 0
	for pc.size > pc.max {
		e := pc.lru.Back()
		v := e.Value.(*Statement)
		pc.lru.Remove(e)
		delete(pc.byID, v.ID)
		pc.size -= v.Plan.Size()
		w.remove(v.ID, pc.stamp())
		evicted++
	}
	pc.gauges()
	pc.mu.Unlock()
	pc.m.Evictions.Add(float64(evicted))
	return nil
}

// Remove drops ps (and only ps: a newer statement of the same id stays).
// It does not wait for the store's write to be durable.
func (pc *Cache) Remove(ps *Statement) {
	var w Writes
	pc.mu.Lock()
	e := pc.byID[ps.ID]
	if e == nil || e.Value.(*Statement) != ps {
		pc.mu.Unlock()
		return
	}
	pc.lru.Remove(e)
	delete(pc.byID, ps.ID)
	pc.size -= ps.Plan.Size()
	w.remove(ps.ID, pc.stamp())
	pc.gauges()
	pc.mu.Unlock()
	pc.store.applyAsync(&w)
}

// Forget deletes a stored statement that is not cached.
func (pc *Cache) Forget(id [16]byte, w *Writes) {
	pc.mu.Lock()
	w.remove(id, pc.stamp())
	pc.mu.Unlock()
}

// Persist applies the store writes w gathered, in one mutation.
func (pc *Cache) Persist(w *Writes) { pc.store.apply(w) }

// Len is the number of statements cached.
func (pc *Cache) Len() int {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	return len(pc.byID)
}

// stamp is a write timestamp in microseconds, increasing strictly.
// REQUIRES: pc.mu held.
func (pc *Cache) stamp() int64 {
	ts := pc.now().UnixMicro()
	if ts <= pc.lastTS {
		ts = pc.lastTS + 1
	}
	pc.lastTS = ts
	return ts
}

// REQUIRES: pc.mu held.
func (pc *Cache) gauges() {
	pc.m.Entries.Set(float64(len(pc.byID)))
	pc.m.Bytes.Set(float64(pc.size))
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}

// Load caches the statements the store holds, each prepared again by
// prepare from its keyspace and text, since plans are not stored (nor
// valid across schemas): one that no longer prepares (its table is gone),
// or whose id is not its text's, is forgotten.
func (pc *Cache) Load(prepare func(id [16]byte, keyspace, query string) (*Statement, error)) error {
	var w Writes
	err := pc.store.load(func(id [16]byte, keyspace, query string) {
		ps, err := prepare(id, keyspace, query)
		if err == nil && ID(keyspace, query) != id {
			err = errNotItsID
		}
		if err == nil {
			err = pc.Put(ps, false, &w)
		}
		if err != nil {
			pc.store.log.Debug("forgetting persisted prepared statement", "query", query, "err", err)
			pc.Forget(id, &w)
		}
	})
	pc.store.apply(&w)
	if err != nil {
		return fmt.Errorf("prepared: load: %w", err)
	}
	return nil
}

var errNotItsID = errors.New("prepared: the id is not the statement's")
