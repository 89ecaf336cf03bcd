package mutation

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"sync"

	"github.com/cqld/cqld/storage"
)

// Kind is what an Op does.
type Kind uint8

const (
	// KindCell writes a cell (live or a tombstone) at Target.
	KindCell Kind = iota + 1
	// KindCollectionDeletion deletes every element of the collection at
	// Target written at or before Cell's timestamp.
	KindCollectionDeletion
	// KindRowMarker writes the liveness of the row Target.Clustering.
	KindRowMarker
	// KindRowDeletion deletes the row Target.Clustering.
	KindRowDeletion
	// KindPartitionDeletion deletes the whole partition.
	KindPartitionDeletion
	// KindRangeDeletion deletes the rows within Range.
	KindRangeDeletion
	// KindCounterAdd adds the 8-byte delta in Cell.Value to the counter at
	// Target. The replica turns it into a KindCell write of the new total
	// (Replica.Apply), so counters are read and written where they live.
	KindCounterAdd
)

// Op is one change to a partition.
type Op struct {
	Kind   Kind
	Target storage.CellTarget // the row (Clustering) for row ops, the cell for cell ops
	Range  storage.Slice      // KindRangeDeletion only
	Cell   storage.Cell
}

// Update is the changes to one partition of one table.
type Update struct {
	Table *storage.Table
	Key   []byte // the serialized partition key
	Ops   []Op
}

// Mutation is a set of partition updates that a replica applies
// atomically: all of them or none.
type Mutation struct {
	Updates []*Update

	// index finds the Update of a partition once there are more than a few
	// (a large batch): position in Updates by table and key.
	index map[partitionKey]int
	// spare keeps Updates between uses of a pooled Mutation.
	spare []*Update
}

// indexFrom is how many Updates a Mutation holds before it indexes them;
// below it a scan is cheaper than a map.
const indexFrom = 8

var pool = sync.Pool{New: func() any { return new(Mutation) }}

// New returns an empty Mutation from a pool; Release gives it back.
func New() *Mutation { return pool.Get().(*Mutation) }

// Release empties m and returns it to the pool. m must not be used after,
// nor anything taken from it.
func (m *Mutation) Release() {
	const maxOps = 256
	for _, u := range m.Updates {
		if cap(u.Ops) > maxOps {
			continue
		}
		clear(u.Ops)
		u.Table, u.Key, u.Ops = nil, nil, u.Ops[:0]
		m.spare = append(m.spare, u)
	}
	clear(m.Updates)
	m.Updates = m.Updates[:0]
	m.index = nil
	pool.Put(m)
}

// Empty reports whether m changes nothing.
func (m *Mutation) Empty() bool {
	for _, u := range m.Updates {
		if len(u.Ops) > 0 {
			return false
		}
	}
	return true
}

// update is the Update of partition pk of t, added if m has none yet. A
// write usually touches one partition many times, so the last one is
// checked first.
func (m *Mutation) update(t *storage.Table, pk []byte) *Update {
	if n := len(m.Updates); n > 0 {
		if u := m.Updates[n-1]; u.Table == t && bytes.Equal(u.Key, pk) {
			return u
		}
	}
	if m.index != nil {
		if i, ok := m.index[partitionKey{t, string(pk)}]; ok {
			return m.Updates[i]
		}
	} else {
		for _, u := range m.Updates {
			if u.Table == t && bytes.Equal(u.Key, pk) {
				return u
			}
		}
	}
	var u *Update
	if n := len(m.spare); n > 0 {
		u, m.spare = m.spare[n-1], m.spare[:n-1]
	} else {
		u = new(Update)
	}
	u.Table, u.Key = t, pk
	m.Updates = append(m.Updates, u)
	switch n := len(m.Updates); {
	case n > indexFrom && m.index == nil:
		m.index = make(map[partitionKey]int, 2*n)
		for i, v := range m.Updates {
			m.index[partitionKey{v.Table, string(v.Key)}] = i
		}
	case m.index != nil:
		m.index[partitionKey{t, string(pk)}] = n - 1
	}
	return u
}

// partitionKey names a partition in Mutation.index, as update compares
// them: the same table definition and key.
type partitionKey struct {
	t  *storage.Table
	pk string
}

func (m *Mutation) add(t *storage.Table, pk []byte, op Op) {
	u := m.update(t, pk)
	u.Ops = append(u.Ops, op)
}

// WriteCell writes a cell: live, or a tombstone.
func (m *Mutation) WriteCell(t *storage.Table, pk []byte, tg storage.CellTarget, c storage.Cell) {
	m.add(t, pk, Op{Kind: KindCell, Target: tg, Cell: c})
}

// AddCounter adds delta to the counter cell tg, as of timestamp ts.
func (m *Mutation) AddCounter(t *storage.Table, pk []byte, tg storage.CellTarget, delta int64, ts int64) {
	m.add(t, pk, Op{Kind: KindCounterAdd, Target: tg, Cell: storage.Cell{Timestamp: ts, Value: binary.BigEndian.AppendUint64(nil, uint64(delta))}})
}

// HasCounters reports whether m adds to counters.
func (m *Mutation) HasCounters() bool {
	for _, u := range m.Updates {
		for i := range u.Ops {
			if u.Ops[i].Kind == KindCounterAdd {
				return true
			}
		}
	}
	return false
}

// DeleteCollection deletes every element of the collection cell tg
// written at or before tombstone c.
func (m *Mutation) DeleteCollection(t *storage.Table, pk []byte, tg storage.CellTarget, c storage.Cell) {
	m.add(t, pk, Op{Kind: KindCollectionDeletion, Target: tg, Cell: c})
}

// WriteRowMarker writes the row's liveness: INSERT makes a row exist even
// when all its regular columns are null.
func (m *Mutation) WriteRowMarker(t *storage.Table, pk []byte, ck [][]byte, c storage.Cell) {
	m.add(t, pk, Op{Kind: KindRowMarker, Target: storage.CellTarget{Clustering: ck}, Cell: c})
}

// DeleteRow deletes the row (pk, ck) as of tombstone c.
func (m *Mutation) DeleteRow(t *storage.Table, pk []byte, ck [][]byte, c storage.Cell) {
	m.add(t, pk, Op{Kind: KindRowDeletion, Target: storage.CellTarget{Clustering: ck}, Cell: c})
}

// DeletePartition deletes partition pk as of tombstone c.
func (m *Mutation) DeletePartition(t *storage.Table, pk []byte, c storage.Cell) {
	m.add(t, pk, Op{Kind: KindPartitionDeletion, Cell: c})
}

// DeleteRange deletes the rows of partition pk within s as of tombstone c.
func (m *Mutation) DeleteRange(t *storage.Table, pk []byte, s storage.Slice, c storage.Cell) {
	m.add(t, pk, Op{Kind: KindRangeDeletion, Range: s, Cell: c})
}

// SetTimestamp gives every operation of u the timestamp ts, as a
// lightweight transaction's update takes its ballot's (Cassandra's
// PartitionUpdate.updateAllTimestamp): cells and row markers ts, row,
// range, partition and collection deletions ts-1, so that a deletion and
// a write of one update keep the write.
func (u *Update) SetTimestamp(ts int64) {
	for i := range u.Ops {
		op := &u.Ops[i]
		switch op.Kind {
		case KindRowDeletion, KindRangeDeletion, KindPartitionDeletion, KindCollectionDeletion:
			op.Cell.Timestamp = ts - 1
		default:
			op.Cell.Timestamp = ts
		}
	}
}

// Partition is u's writes as a partition in the store's key layout, as a
// replica's unresolved read of u's partition would answer them had it
// nothing else: storage.ReconcilePartitions lays them over a read, as
// applying u to the replica would. Counter deltas have no such form.
func (u *Update) Partition() (*storage.Partition, error) {
	b, err := u.Table.NewPartition(u.Key)
	if err != nil {
		return nil, err
	}
	for i := range u.Ops {
		op := &u.Ops[i]
		switch op.Kind {
		case KindCell:
			err = b.WriteCell(op.Target, op.Cell)
		case KindCollectionDeletion:
			err = b.DeleteCollection(op.Target, op.Cell)
		case KindRowMarker:
			err = b.WriteRowMarker(op.Target.Clustering, op.Cell)
		case KindRowDeletion:
			err = b.DeleteRow(op.Target.Clustering, op.Cell)
		case KindPartitionDeletion:
			b.DeletePartition(op.Cell)
		case KindRangeDeletion:
			err = b.DeleteRange(op.Range, op.Cell)
		default:
			err = fmt.Errorf("mutation: an operation of kind %d has no partition form", op.Kind)
		}
		if err != nil {
			return nil, err
		}
	}
	return b.Partition(), nil
}

// Over is data, an unresolved read of u's partition, with u's writes laid
// over it (last write wins): what the store holds once u is applied.
func (u *Update) Over(data *storage.Partition) (*storage.Partition, error) {
	up, err := u.Partition()
	if err != nil {
		return nil, err
	}
	return storage.ReconcilePartitions(data, up)
}
