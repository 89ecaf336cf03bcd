package storage

import (
	"io"
	"sync"

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
		m := mergerPool.Get().(*cellValueMerger)
		if err := m.add(value); err != nil {
			m.Close()
			return nil, err
		}
		return m, nil
	},
}

// mergerPool recycles mergers with their buffers: every cell a flush or
// compaction writes passes through one, alone or not, so a merger per cell
// was a heap allocation of the cell's size per cell rewritten. Pebble
// hands the merger back through the io.Closer Finish returns, once it is
// done with the result.
var mergerPool = sync.Pool{New: func() any {
	m := &cellValueMerger{}
	m.buf = m.small[:0]
	return m
}}

// mergerBufMax is the largest buffer a merger keeps when it goes back to
// the pool: a rare large cell should not pin its size in every merger.
const mergerBufMax = 64 << 10

// cellValueMerger keeps the encoded winner so far (a private copy: pebble
// keeps ownership of the operands) and, once a second operand came, its
// decoded form. A lone operand (most cells in a flush or compaction) is
// checked and copied, not kept decoded. A read of a single small cell
// needs no buffer beyond small.
type cellValueMerger struct {
	buf     []byte
	best    Cell // buf decoded, when decoded is set
	decoded bool
	n       int
	// small holds buf for a cell of at most mergerSmall bytes.
	small [mergerSmall]byte
}

const mergerSmall = 128

var _ io.Closer = (*cellValueMerger)(nil)

func (m *cellValueMerger) add(value []byte) error {
	if m.n == 0 {
		if _, err := DecodeCell(value); err != nil {
			return err
		}
		m.n = 1
		m.buf = append(m.buf[:0], value...)
		return nil
	}
	c, err := DecodeCell(value)
	if err != nil {
		return err
	}
	if !m.decoded {
		// The copy decoded without error before.
		m.best, _ = DecodeCell(m.buf)
		m.decoded = true
	}
	m.n++
	if reconcileLeftWins(m.best, c) {
		return nil
	}
	// value wins: copied, then decoded from the copy (the decoded value
	// aliases what it was decoded from).
	m.buf = append(m.buf[:0], value...)
	m.best, err = DecodeCell(m.buf)
	return err
}

// MergeNewer implements pebble.ValueMerger.
func (m *cellValueMerger) MergeNewer(value []byte) error { return m.add(value) }

// MergeOlder implements pebble.ValueMerger.
func (m *cellValueMerger) MergeOlder(value []byte) error { return m.add(value) }

// Finish implements pebble.ValueMerger: the winning operand, unchanged,
// valid until pebble closes the merger.
func (m *cellValueMerger) Finish(includesBase bool) ([]byte, io.Closer, error) {
	return m.buf, m, nil
}

// Close returns the merger to the pool: pebble no longer uses the result.
func (m *cellValueMerger) Close() error {
	if cap(m.buf) > mergerBufMax {
		m.buf = m.small[:0]
	}
	m.buf, m.best, m.decoded, m.n = m.buf[:0], Cell{}, false, 0
	mergerPool.Put(m)
	return nil
}
