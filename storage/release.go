package storage

import (
	"sync"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2"

	"github.com/cqld/cqld/commitlog"
)

// Releasing the commit log as pebble flushes. Pebble flushes a memtable
// when it fills, on its own; the commit log segments whose records are all
// in flushed memtables can then go, so that the log holds about what the
// memtables hold instead of growing to commitlog_total_space.
//
// Pebble numbers every applied write with a sequence number, in the order
// it took them, and its memtables hold consecutive ranges of them, flushed
// oldest first: once a flush's tables hold sequence number L, everything
// numbered L or less is in tables. So the engine keeps marks, each a commit
// log position P with the sequence number S that the next write would get
// at the moment P was the log's end, taken with no write between the log
// and the memtable (applyMu held for writing): every record before P then
// has a number below S. When a flush's tables reach S-1, the segments
// before P can go.
//
// A mark is taken when the first write of a new segment is applied, so
// there is about one per segment, and a flush frees every whole segment
// before the newest mark it covers. The records of freed segments that
// were flushed after Engine.Flush last stored flushedKey are replayed
// again at start-up from the segments still live, which is harmless:
// replay is idempotent.

// mark is a commit log position and a bound on the sequence numbers of the
// records before it.
type mark struct {
	seq uint64 // every record before pos was applied with a number below seq
	pos commitlog.Position
}

// releaser holds the marks and what pebble has flushed. Its methods are
// safe for concurrent use.
type releaser struct {
	next    atomic.Uint64 // the number after the newest write applied
	flushed atomic.Uint64 // every number below it is in flushed tables
	segment atomic.Uint64 // the segment of the newest mark

	mu    sync.Mutex
	marks []mark // oldest first
}

// atomicMax raises v to x.
func atomicMax(v *atomic.Uint64, x uint64) {
	for {
		old := v.Load()
		if x <= old || v.CompareAndSwap(old, x) {
			return
		}
	}
}

// applied records that b was applied to pebble; it reports whether pos,
// the position of b's record, is in a segment with no mark yet.
func (r *releaser) applied(b *pebble.Batch, pos commitlog.Position) (needMark bool) {
	atomicMax(&r.next, uint64(b.SeqNum())+uint64(b.Count()))
	if pos.Segment <= r.segment.Load() {
		return false
	}
	atomicMax(&r.segment, pos.Segment)
	return true
}

// flushEnd is pebble's FlushEnd event (called with pebble's mutex held):
// it records the newest sequence number the flush's tables hold and
// reports whether a mark may have become releasable.
func (r *releaser) flushEnd(info pebble.FlushInfo) bool {
	if info.Err != nil || len(info.Output) == 0 {
		return false
	}
	var largest uint64
	for _, t := range info.Output {
		largest = max(largest, uint64(t.LargestSeqNum))
	}
	atomicMax(&r.flushed, largest+1)
	return true
}

// add appends a mark taken now: pos is the log's end and no write was
// between the log and the memtable.
func (r *releaser) add(pos commitlog.Position) {
	m := mark{seq: r.next.Load(), pos: pos}
	r.mu.Lock()
	defer r.mu.Unlock()
	if n := len(r.marks); n > 0 && !r.marks[n-1].pos.Less(pos) {
		return
	}
	r.marks = append(r.marks, m)
}

// releasable pops the newest mark the flushed tables cover, if any.
func (r *releaser) releasable() (commitlog.Position, bool) {
	flushed := r.flushed.Load()
	r.mu.Lock()
	defer r.mu.Unlock()
	i := 0
	for i < len(r.marks) && r.marks[i].seq <= flushed {
		i++
	}
	if i == 0 {
		return commitlog.Position{}, false
	}
	pos := r.marks[i-1].pos
	r.marks = append(r.marks[:0], r.marks[i:]...)
	return pos, true
}
