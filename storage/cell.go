package storage

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
)

// Cell is the value stored for one cell (one column of one row, or one
// element of a collection), with Cassandra's per-cell metadata: every write
// carries a timestamp, optionally a TTL, and deletions are cells too
// (tombstones), so that last-write-wins reconciliation works the same way
// whether the cells meet in a memtable, a read or a compaction.
type Cell struct {
	Timestamp         int64  // microseconds, client-supplied or server-assigned
	TTL               int32  // seconds, 0 = none
	LocalDeletionTime int32  // seconds since epoch: expiry time for an expiring cell, deletion time for a tombstone; 0 for a live non-expiring cell
	Tombstone         bool   // a deletion
	Value             []byte // serialized CQL value (nil for a tombstone)
}

// Cell binary layout, format version 1. Frozen: it is what is on disk.
//
//	offset  size  field
//	0       1     format version, cellFormatV1 = 0x01
//	1       1     flags: 0x01 tombstone, 0x02 TTL present, 0x04 local
//	              deletion time present; other bits must be 0
//	2       8     timestamp, int64 big-endian
//	        4     TTL, int32 big-endian, only if flag 0x02 (never 0 then)
//	        4     local deletion time, int32 big-endian, only if flag 0x04
//	              (never 0 then)
//	        rest  value bytes; none for a tombstone
//
// The value runs to the end, so it needs no length; a live cell with an
// empty value (Cassandra allows empty values) is just the header. A live,
// non-expiring cell costs 10 bytes plus its value.
const (
	cellFormatV1 = 0x01

	cellFlagTombstone = 0x01
	cellFlagTTL       = 0x02
	cellFlagLDT       = 0x04
	cellFlagsKnown    = cellFlagTombstone | cellFlagTTL | cellFlagLDT

	cellHeaderLen = 10
)

// ErrBadCell reports an encoded cell that DecodeCell cannot read.
var ErrBadCell = errors.New("storage: malformed cell")

// Append appends the encoded cell (layout above) to dst. A tombstone's Value
// is not stored.
func (c Cell) Append(dst []byte) []byte {
	var flags byte
	if c.Tombstone {
		flags |= cellFlagTombstone
	}
	if c.TTL != 0 {
		flags |= cellFlagTTL
	}
	if c.LocalDeletionTime != 0 {
		flags |= cellFlagLDT
	}
	dst = append(dst, cellFormatV1, flags)
	dst = binary.BigEndian.AppendUint64(dst, uint64(c.Timestamp))
	if c.TTL != 0 {
		dst = binary.BigEndian.AppendUint32(dst, uint32(c.TTL))
	}
	if c.LocalDeletionTime != 0 {
		dst = binary.BigEndian.AppendUint32(dst, uint32(c.LocalDeletionTime))
	}
	if !c.Tombstone {
		dst = append(dst, c.Value...)
	}
	return dst
}

// DecodeCell decodes an encoded cell. It never panics on garbage. The
// returned Value aliases b (copy it to keep it beyond b's lifetime); it is
// nil for a tombstone and non-nil (possibly empty) for a live cell.
func DecodeCell(b []byte) (Cell, error) {
	if len(b) < cellHeaderLen {
		return Cell{}, fmt.Errorf("%w: %d bytes", ErrBadCell, len(b))
	}
	if b[0] != cellFormatV1 {
		return Cell{}, fmt.Errorf("%w: unknown format version %d", ErrBadCell, b[0])
	}
	flags := b[1]
	if flags&^cellFlagsKnown != 0 {
		return Cell{}, fmt.Errorf("%w: unknown flags %#x", ErrBadCell, flags)
	}
	c := Cell{
		Timestamp: int64(binary.BigEndian.Uint64(b[2:])),
		Tombstone: flags&cellFlagTombstone != 0,
	}
	b = b[cellHeaderLen:]
	if flags&cellFlagTTL != 0 {
		if len(b) < 4 {
			return Cell{}, fmt.Errorf("%w: truncated TTL", ErrBadCell)
		}
		c.TTL = int32(binary.BigEndian.Uint32(b))
		b = b[4:]
		if c.TTL == 0 {
			return Cell{}, fmt.Errorf("%w: TTL flag with a zero TTL", ErrBadCell)
		}
	}
	if flags&cellFlagLDT != 0 {
		if len(b) < 4 {
			return Cell{}, fmt.Errorf("%w: truncated local deletion time", ErrBadCell)
		}
		c.LocalDeletionTime = int32(binary.BigEndian.Uint32(b))
		b = b[4:]
		if c.LocalDeletionTime == 0 {
			return Cell{}, fmt.Errorf("%w: deletion time flag with a zero time", ErrBadCell)
		}
	}
	if c.Tombstone {
		if len(b) != 0 {
			return Cell{}, fmt.Errorf("%w: tombstone with a value", ErrBadCell)
		}
		return c, nil
	}
	c.Value = b[:len(b):len(b)]
	return c, nil
}

// IsLive reports whether the cell is visible at nowSeconds: not a
// tombstone, and either not expiring or not yet expired. This is
// Cassandra's Cell.isLive: localDeletionTime == NO_DELETION_TIME ||
// (ttl != NO_TTL && nowInSec < localDeletionTime); an expiring cell dies at
// the second its localDeletionTime is reached.
func (c Cell) IsLive(nowSeconds int32) bool {
	if c.Tombstone {
		return false
	}
	if c.TTL == 0 {
		return true
	}
	return nowSeconds < c.LocalDeletionTime
}

// Reconcile returns the one of two versions of the same cell that wins,
// exactly as Cassandra 4.0 resolves regular (non-counter) cells:
// db/rows/Cells.java, Cells.reconcile -> resolveRegular (in 3.x
// db/Conflicts.resolveRegular), as changed by CASSANDRA-14592:
//
//  1. the higher timestamp wins;
//  2. on equal timestamps, if either cell is expiring or a tombstone
//     (localDeletionTime != NO_DELETION_TIME):
//     a. an expiring cell or tombstone beats a live non-expiring cell, even
//     an expiring cell that has not expired yet, so that the result does
//     not depend on the clock at the time of reconciliation;
//     b. a tombstone beats an expiring cell ("for most historical
//     consistency, we still prefer tombstones over expiring cells");
//     c. between two tombstones or two expiring cells, the higher
//     localDeletionTime wins;
//  3. otherwise the greater value wins, compared as unsigned bytes
//     (ValueAccessor.compare, i.e. ByteBufferUtil.compareUnsigned); a
//     tombstone's value counts as empty.
//
// Cassandra keeps the left cell when everything above ties. The only such
// case between well-formed cells is two expiring cells with the same
// timestamp, deletion time and value but different TTLs; we prefer the
// larger TTL there (then the larger deletion time, for malformed live cells
// carrying one) so that Reconcile is commutative and associative: the
// pebble merge operator needs the same result in any order. Reconcile is
// the maximum of a total order, so any grouping and order of the same cells
// reconciles to the same cell.
func Reconcile(a, b Cell) Cell {
	if reconcileLeftWins(a, b) {
		return a
	}
	return b
}

// cellKind orders the kinds for rule 2: live < expiring < tombstone.
func cellKind(c Cell) int {
	switch {
	case c.Tombstone:
		return 2
	case c.TTL != 0:
		return 1
	}
	return 0
}

// reconcileLeftWins reports whether a wins over (or ties with) b.
func reconcileLeftWins(a, b Cell) bool {
	if a.Timestamp != b.Timestamp {
		return a.Timestamp > b.Timestamp
	}
	ka, kb := cellKind(a), cellKind(b)
	if ka != 0 || kb != 0 {
		if ka != kb {
			return ka > kb
		}
		if a.LocalDeletionTime != b.LocalDeletionTime {
			return a.LocalDeletionTime > b.LocalDeletionTime
		}
	}
	va, vb := a.Value, b.Value
	if a.Tombstone {
		va = nil
	}
	if b.Tombstone {
		vb = nil
	}
	if c := bytes.Compare(va, vb); c != 0 {
		return c > 0
	}
	// Not in Cassandra (which keeps the left cell): deterministic tie-breaks.
	if a.TTL != b.TTL {
		return a.TTL > b.TTL
	}
	return a.LocalDeletionTime >= b.LocalDeletionTime
}
