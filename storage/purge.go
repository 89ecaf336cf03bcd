package storage

import (
	"bytes"
	"fmt"

	"github.com/cockroachdb/pebble/v2"
	"github.com/datastax/go-cassandra-native-protocol/datatype"
)

// Purging. Cassandra drops a tombstone at compaction once it is older than
// the table's gc_grace_seconds, and with it the data it shadows; an expired
// cell is a tombstone from its expiry on. Pebble has no compaction hook
// that could see a partition whole, so cqld purges by walking tables:
//
//  1. without any lock, find the partitions holding something to drop;
//  2. for a handful of them at a time, take the apply lock (no mutation
//     reaches pebble meanwhile), read each partition again, and delete in
//     one batch every key no read can see any more.
//
// A key is dropped when it is
//   - a tombstone (partition, range, row, collection or cell deletion) whose
//     deletion time is before gcBefore, or that a newer deletion covers;
//   - a cell or row marker that a deletion or a dropped column shadows
//     (timestamp at or below it), or that expired before gcBefore.
//
// A pebble Delete removes every version of a key; they all lose to the
// merged value judged here, so nothing visible goes. A tombstone goes in the
// same batch as what it shadows, so no reader sees one without the other.
// Purge deletes are not written to the commit log; a purge that deleted
// anything flushes the memtables, which makes its deletes durable and
// releases the log segments holding the purged tombstones, so a restart
// does not replay them over writes made since (writes older than a purged
// tombstone read back, as in Cassandra after gc_grace_seconds).

// PurgeStats counts what a purge did.
type PurgeStats struct {
	Partitions int // partitions that had something to drop
	Keys       int // keys deleted
}

// purgeChunk is how many partitions one hold of the apply lock purges.
const purgeChunk = 32

// Purge drops from t what no read can see any more, judged at now (seconds
// since the epoch) with the table's gc_grace_seconds.
func (e *Engine) Purge(t *Table, now int32) (PurgeStats, error) {
	gcBefore := now - t.Def.Options.GCGraceSeconds
	if t.Def.Options.GCGraceSeconds < 0 || gcBefore > now {
		gcBefore = now
	}
	var st PurgeStats
	candidates, err := e.purgeCandidates(t, now, gcBefore)
	if err != nil {
		return st, err
	}
	for len(candidates) > 0 {
		n := min(purgeChunk, len(candidates))
		chunk := candidates[:n]
		candidates = candidates[n:]
		got, err := e.purgeLocked(t, chunk, now, gcBefore)
		st.Partitions += got.Partitions
		st.Keys += got.Keys
		if err != nil {
			return st, err
		}
	}
	if st.Keys > 0 {
		if err := e.Flush(); err != nil {
			return st, fmt.Errorf("storage: purge: %w", err)
		}
	}
	return st, nil
}

// purgeCandidates lists the prefixes of t's partitions that hold something
// to drop.
func (e *Engine) purgeCandidates(t *Table, now, gcBefore int32) ([][]byte, error) {
	table := tablePrefix(t.Def.ID)
	it, err := e.db.NewIter(&pebble.IterOptions{LowerBound: table, UpperBound: prefixEnd(table)})
	if err != nil {
		return nil, fmt.Errorf("storage: purge: %w", err)
	}
	defer it.Close()
	var out [][]byte
	for valid := it.First(); valid; {
		prefix, err := partitionOf(table, it.Key())
		if err != nil {
			return nil, err
		}
		n := 0
		if err := t.purgeWalk(it, prefix, now, gcBefore, func([]byte) error { n++; return nil }); err != nil {
			return nil, err
		}
		if n > 0 {
			out = append(out, prefix)
		}
		valid = it.SeekGE(prefixEnd(prefix))
	}
	return out, it.Error()
}

// partitionOf returns the partition prefix of a key of the table.
func partitionOf(table, key []byte) ([]byte, error) {
	if len(key) < len(table)+8 {
		return nil, errBadKey
	}
	_, rest, err := DecodeKey(key[len(table)+8:], datatype.Blob, false)
	if err != nil {
		return nil, errBadKey
	}
	return append([]byte(nil), key[:len(key)-len(rest)]...), nil
}

// purgeLocked purges the partitions at prefixes under the apply lock.
func (e *Engine) purgeLocked(t *Table, prefixes [][]byte, now, gcBefore int32) (PurgeStats, error) {
	var st PurgeStats
	e.applyMu.Lock()
	defer e.applyMu.Unlock()
	b := e.db.NewBatch()
	defer b.Close()
	for _, prefix := range prefixes {
		it, err := e.db.NewIter(&pebble.IterOptions{LowerBound: prefix, UpperBound: prefixEnd(prefix)})
		if err != nil {
			return st, fmt.Errorf("storage: purge: %w", err)
		}
		n := 0
		err = t.purgeWalk(it, prefix, now, gcBefore, func(key []byte) error {
			n++
			return b.Delete(key, nil)
		})
		if cerr := it.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return st, fmt.Errorf("storage: purge: %w", err)
		}
		if n > 0 {
			st.Partitions++
			st.Keys += n
		}
	}
	if b.Empty() {
		return st, nil
	}
	if err := e.db.Apply(b, pebble.NoSync); err != nil {
		return PurgeStats{}, fmt.Errorf("storage: purge: %w", err)
	}
	return st, nil
}

// purgeWalk positions it at the partition at prefix and calls drop for
// every key of the partition to drop, in key order. It leaves it anywhere
// within or just past the partition.
func (t *Table) purgeWalk(it *pebble.Iterator, prefix []byte, now, gcBefore int32, drop func(key []byte) error) error {
	d := deletions{partition: minTimestamp}
	var (
		curRow   []byte // encoded clustering of the row being walked
		inRow    bool
		rowShade int64  // the newest deletion covering the current row
		col      []byte // column of the current static or row cell
		colShade int64  // the newest deletion covering the current column
	)
	dead := func(c Cell, shade int64) bool {
		if c.Timestamp <= shade {
			return true
		}
		if c.Tombstone || c.TTL != 0 && c.LocalDeletionTime <= now {
			return c.LocalDeletionTime < gcBefore
		}
		return false
	}
	// cellKey judges a static or row cell key (column | path).
	cellKey := func(key, suffix []byte, c Cell, shade int64) error {
		name, rest, err := DecodeKey(suffix, datatype.Varchar, false)
		if err != nil || len(rest) == 0 {
			return errBadKey
		}
		if !bytes.Equal(name, col) {
			col = append(col[:0], name...)
			colShade = shade
			if ts, ok := t.dropped[string(name)]; ok && ts > colShade {
				colShade = ts
			}
		}
		if dead(c, colShade) {
			return drop(key)
		}
		if rest[0] == pathDeletion && c.Timestamp > colShade {
			colShade = c.Timestamp // it shadows the elements after it
		}
		return nil
	}
	for valid := it.SeekGE(prefix); valid && bytes.HasPrefix(it.Key(), prefix); valid = it.Next() {
		key := it.Key()
		rel := key[len(prefix):]
		if len(rel) == 0 {
			return errBadKey
		}
		v, err := it.ValueAndErr()
		if err != nil {
			return err
		}
		c, err := DecodeCell(v)
		if err != nil {
			return err
		}
		switch rel[0] {
		case regionPartitionDeletion:
			if dead(c, minTimestamp) {
				if err := drop(key); err != nil {
					return err
				}
			}
			if c.Timestamp > d.partition {
				d.partition = c.Timestamp
			}
		case regionRangeTombstone:
			rt, err := t.decodeRangeTombstone(rel[1:])
			if err != nil {
				return err
			}
			rt.ts = c.Timestamp
			if dead(c, d.partition) {
				if err := drop(key); err != nil {
					return err
				}
			}
			d.ranges = append(d.ranges, rt)
		case regionStatic:
			if err := cellKey(key, rel[1:], c, d.partition); err != nil {
				return err
			}
		case regionRow:
			ck, rest, err := t.decodeClusteringBytes(rel[1:])
			if err != nil || len(rest) == 0 {
				return errBadKey
			}
			if !inRow || !bytes.Equal(ck, curRow) {
				curRow, inRow = append(curRow[:0], ck...), true
				rowShade = d.shadowTS(ck)
				col = col[:0]
				colShade = rowShade
			}
			switch rest[0] {
			case rowDeletion:
				if dead(c, rowShade) {
					if err := drop(key); err != nil {
						return err
					}
				}
				if c.Timestamp > rowShade {
					rowShade, colShade = c.Timestamp, c.Timestamp
				}
			case rowMarker:
				if dead(c, rowShade) {
					if err := drop(key); err != nil {
						return err
					}
				}
			case rowCell:
				if err := cellKey(key, rest[1:], c, rowShade); err != nil {
					return err
				}
			default:
				return errBadKey
			}
		default:
			return errBadKey
		}
	}
	return it.Error()
}
