package replica

import (
	"container/list"
	"sync"

	"github.com/cqld/cqld/storage"
)

// paxosCache keeps the system.paxos rows of recently used partitions in
// memory, so that a Paxos round reads its partition's state from memory:
// every change rewrites the row's cells at the change's ballot, and a read
// of the row in storage steps over every version the memtable holds.
//
// An entry is the row as storage would resolve it, cell by cell (the
// winning version of each column, tombstones and expired cells included),
// not a PaxosState: the state is derived from it as of the caller's clock
// by the same code that derives it from a read (paxosCells.state), so an
// entry serves exactly what loadPaxos would read, expiry included. It is
// made from a read of the row, which also takes the highest timestamp of
// anything the row holds (bound): every version and deletion the entry
// does not hold is at or before it. It then follows each write the row
// gets once applied (wrote), each cell reconciled with the entry's as
// storage reconciles them (storage.Reconcile); a write it cannot follow
// exactly drops the entry, and the next round reads the row again (as
// does a round that finds a cell of the entry close to its expiry):
//
//   - a cell at or before bound, which a version or a deletion the entry
//     does not hold may beat (a round after a TRUNCATE's deletion, a
//     proposer behind the clock);
//   - a cell at or before a column's winning cell that is dead, which a
//     purge (storage.Engine.Purge) may have removed meanwhile, or close
//     to its expiry (paxosExpirySlack);
//   - a write that failed: it may or may not have landed.
//
// Reads, writes and their cache updates of a partition run under the
// replica's lock of the partition, so an entry changes in the order its
// row does. Only Truncate changes rows without that lock: it drops the
// table's entries once its deletion is applied and moves the generation
// on, so that a read of the row made before it is not cached after it
// (add).
//
// The cache is bounded in entries (maxPaxosEntries), in bytes of cell
// values in all (maxPaxosCacheBytes) and per entry (maxPaxosEntryBytes, a
// state with a bigger proposal or commit is not cached); past a bound the
// least recently used entries go. Safe for concurrent use.
type paxosCache struct {
	mu      sync.Mutex
	gen     uint64
	entries map[fastKey]*list.Element // of *paxosEntry
	lru     list.List                 // most recently used first
	bytes   int
	// off keeps nothing: every round reads its row (benchmarks compare).
	off bool
}

// The cache's bounds. A partition is worth caching while rounds come to it
// in quick succession, and a miss costs one read of the row: 16k entries
// cover every partition a node can have rounds on in flight (each round
// holds a coordinator's request, and a node serves a few thousand at a
// time), and the byte bounds keep the worst case (big updates) at 64 MiB.
const (
	maxPaxosEntries    = 1 << 14
	maxPaxosCacheBytes = 64 << 20
	maxPaxosEntryBytes = 64 << 10
	// paxosEntryOverhead is an entry's size apart from its cell values.
	paxosEntryOverhead = 256
)

type paxosEntry struct {
	key   fastKey
	cells paxosCells
	bound int64
	size  int
}

// paxosColumns are system.paxos's regular columns, in paxosCells' order.
var paxosColumns = [...]string{colInProgress, colProposal, colProposalAt, colProposalVer, colCommit, colCommitAt, colCommitVersion}

// paxosColumn is col's index in paxosColumns, -1 for another column.
func paxosColumn(col string) int {
	for i, c := range paxosColumns {
		if c == col {
			return i
		}
	}
	return -1
}

// paxosCells are one partition's system.paxos row, a winning cell per
// column (has[i] when known).
type paxosCells struct {
	cell [len(paxosColumns)]storage.Cell
	has  [len(paxosColumns)]bool
}

// size is the bytes of c's values.
func (c *paxosCells) size() int {
	n := 0
	for i := range c.cell {
		n += len(c.cell[i].Value)
	}
	return n
}

// get returns partition pk of t's state as of now, if cached.
func (c *paxosCache) get(t *storage.Table, pk []byte, now int32) (PaxosState, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.entries[keyOf(t, pk)]
	if !ok || el.Value.(*paxosEntry).cells.expiring(now) {
		return PaxosState{}, false
	}
	c.lru.MoveToFront(el)
	return el.Value.(*paxosEntry).cells.state(t, now), true
}

// paxosExpirySlack is how close to its expiry a cell may be purged as
// expired, seconds: a purge judges expiry on its own clock, which may be
// ahead of a round's (a purge running beside it, a clock stepped back).
const paxosExpirySlack = 3600

// expiring reports whether one of c's cells is live at now but may be
// dead, and purged, by a clock at most paxosExpirySlack ahead: the row
// must be read. With a TTL of three hours at least, a partition's cells
// are that old only when it has had no round for two hours.
func (c *paxosCells) expiring(now int32) bool {
	for i := range c.cell {
		if c.has[i] && c.cell[i].IsLive(now) && !c.cell[i].IsLive(now+paxosExpirySlack) {
			return true
		}
	}
	return false
}

// generation is the generation a read of a row to cache starts in.
func (c *paxosCache) generation() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gen
}

// add caches partition pk of t's row, read in generation gen with bound
// its highest timestamp, unless a Truncate came since the read began.
func (c *paxosCache) add(t *storage.Table, pk []byte, gen uint64, cells paxosCells, bound int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen != c.gen || c.off {
		return
	}
	k := keyOf(t, pk)
	if el, ok := c.entries[k]; ok {
		c.remove(el)
	}
	e := &paxosEntry{key: k, cells: cells, bound: bound}
	if !c.resize(e) {
		return
	}
	if c.entries == nil {
		c.entries = map[fastKey]*list.Element{}
	}
	c.entries[k] = c.lru.PushFront(e)
	c.evict()
}

// paxosWrite is a cell written to a partition's system.paxos row.
type paxosWrite struct {
	col  int
	cell storage.Cell
}

// wrote follows the writes applied to partition pk of t's row (or, when
// failed, possibly applied), as of now.
func (c *paxosCache) wrote(t *storage.Table, pk []byte, writes []paxosWrite, now int32, failed bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.entries[keyOf(t, pk)]
	if !ok || len(writes) == 0 && !failed {
		return
	}
	e := el.Value.(*paxosEntry)
	if failed {
		c.remove(el)
		return
	}
	for _, w := range writes {
		cur := &e.cells.cell[w.col]
		had := e.cells.has[w.col]
		if w.cell.Timestamp <= e.bound || had && w.cell.Timestamp <= cur.Timestamp && !cur.IsLive(now+paxosExpirySlack) {
			c.remove(el)
			return
		}
		if had {
			*cur = storage.Reconcile(*cur, w.cell)
		} else {
			*cur, e.cells.has[w.col] = w.cell, true
		}
	}
	c.bytes -= e.size
	if !c.resize(e) {
		c.lru.Remove(el)
		delete(c.entries, e.key)
		return
	}
	c.lru.MoveToFront(el)
	c.evict()
}

// dropTable drops the entries of the table with id and moves the
// generation on. REQUIRES: the table's rows in system.paxos changed (or
// possibly changed) before the call.
func (c *paxosCache) dropTable(id [16]byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	for el := c.lru.Front(); el != nil; {
		next := el.Next()
		if el.Value.(*paxosEntry).key.table == id {
			c.remove(el)
		}
		el = next
	}
}

// resize sets e's size and counts it in c's bytes, reporting false (and
// counting nothing) when e is too big to cache. REQUIRES: c.mu held.
func (c *paxosCache) resize(e *paxosEntry) bool {
	n := e.cells.size()
	if n > maxPaxosEntryBytes {
		return false
	}
	e.size = n + paxosEntryOverhead
	c.bytes += e.size
	return true
}

// evict drops the least recently used entries past the bounds. REQUIRES:
// c.mu held.
func (c *paxosCache) evict() {
	for c.lru.Len() > maxPaxosEntries || c.bytes > maxPaxosCacheBytes {
		c.remove(c.lru.Back())
	}
}

// remove drops the entry of el. REQUIRES: c.mu held.
func (c *paxosCache) remove(el *list.Element) {
	e := c.lru.Remove(el).(*paxosEntry)
	delete(c.entries, e.key)
	c.bytes -= e.size
}

// len is the number of entries cached.
func (c *paxosCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.Len()
}
