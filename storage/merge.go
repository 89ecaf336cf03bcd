package storage

import (
	"io"

	"github.com/cockroachdb/pebble/v2"
)

// CellMergerName is the name pebble records on disk for CellMerger; a
// database written with it cannot be opened with another merger, so a
// change to the reconciliation rules or the cell format needs a new name.
const CellMergerName = "cqld.cell.v1"

// CellMerger is the pebble merge operator of cell values (encoded with
// Cell.Append). Writes are blind: a mutation Merges its cell at the cell's
// key without reading, and whenever pebble meets several versions of the
// key (a read, a flush or a compaction) it keeps the one Reconcile picks,
// i.e. Cassandra's last-write-wins. Reconcile is commutative and
// associative, so the result does not depend on the order or grouping in
// which pebble presents the operands (MergeNewer and MergeOlder are the same
// operation), nor on whether the oldest operand was included.
//
// An operand that does not decode makes the merge fail with an error
// instead of panicking or silently dropping data.
var CellMerger = &pebble.Merger{
	Name: CellMergerName,
	Merge: func(key, value []byte) (pebble.ValueMerger, error) {
		m := &cellValueMerger{}
		if err := m.add(value); err != nil {
			return nil, err
		}
		return m, nil
	},
}

// cellValueMerger keeps the encoded winner so far (a private copy: pebble
// keeps ownership of the operands) and its decoded form. A read of a cell
// makes one, so it carries the room for a small cell's copy: one
// allocation instead of two.
type cellValueMerger struct {
	buf  []byte
	best Cell
	n    int
	// small holds buf for a cell of at most mergerSmall bytes (the struct
	// then fills a size class of the allocator, 208 bytes, exactly).
	small [mergerSmall]byte
}

const mergerSmall = 128

func (m *cellValueMerger) add(value []byte) error {
	if m.n == 0 {
		// The first operand is decoded once, from the copy.
		m.n = 1
		return m.keep(value)
	}
	c, err := DecodeCell(value)
	if err != nil {
		return err
	}
	m.n++
	if reconcileLeftWins(m.best, c) {
		return nil
	}
	return m.keep(value)
}

// keep makes value the winner: copied, then decoded from the copy (the
// decoded value aliases what it was decoded from).
func (m *cellValueMerger) keep(value []byte) (err error) {
	if m.buf == nil {
		m.buf = m.small[:0]
	}
	m.buf = append(m.buf[:0], value...)
	m.best, err = DecodeCell(m.buf)
	return err
}

// MergeNewer implements pebble.ValueMerger.
func (m *cellValueMerger) MergeNewer(value []byte) error { return m.add(value) }

// MergeOlder implements pebble.ValueMerger.
func (m *cellValueMerger) MergeOlder(value []byte) error { return m.add(value) }

// Finish implements pebble.ValueMerger: the winning operand, unchanged.
func (m *cellValueMerger) Finish(includesBase bool) ([]byte, io.Closer, error) {
	return m.buf, nil, nil
}
