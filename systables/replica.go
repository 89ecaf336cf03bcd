package systables

import (
	"bytes"
	"context"
	"fmt"
	"time"

	"github.com/datastax/go-cassandra-native-protocol/datatype"
	"github.com/datastax/go-cassandra-native-protocol/primitive"

	"github.com/cqld/cqld/statements/types"
	"github.com/cqld/cqld/storage"
)

// Reader is the read side of a replica (replica.Replica's read methods):
// what a SELECT asks of the replica holding a table.
type Reader interface {
	// ReadPartition calls fn for each live row of partition pk of t
	// within o, until fn returns false.
	ReadPartition(ctx context.Context, t *storage.Table, pk []byte, o storage.ReadOptions, fn func(*storage.Row) bool) error
	// Scan calls fn for each live row of every partition of t within o,
	// in token order, until fn returns false.
	Scan(ctx context.Context, t *storage.Table, o storage.ScanOptions, fn func(pk []byte, row *storage.Row) bool) error
	// ScanIndex is Scan over the rows index name's entries for value
	// point at.
	ScanIndex(ctx context.Context, t *storage.Table, name string, value []byte, o storage.ScanOptions, fn func(pk []byte, row *storage.Row) bool) error
}

// Replica is this node's replica of the system keyspaces, which no other
// node holds (Cassandra's LocalStrategy) and which is read-only: a
// generated table's partitions are made from State on each read, in the
// store's key layout (storage.PartitionBuilder), and then read as stored
// partitions are, so slices, reverse reads, token ranges and paging are
// the store's; a stored table is read from Stored, the node's replica of
// its engine. It is safe for concurrent use and keeps nothing between
// reads.
type Replica struct {
	state  State
	stored Reader
	now    func() time.Time
}

var _ Reader = (*Replica)(nil)

// NewReplica reads the system tables: generated ones from s, with cells
// written at now(), stored ones from stored.
func NewReplica(s State, stored Reader, now func() time.Time) *Replica {
	return &Replica{state: s, stored: stored, now: now}
}

// table is the system table t compiles.
func (r *Replica) table(t *storage.Table) (*Table, error) {
	if st := Lookup(t.Def.Keyspace, t.Def.Name); st != nil && st.Storage == t {
		return st, nil
	}
	return nil, fmt.Errorf("systables: %s.%s is not a system table", t.Def.Keyspace, t.Def.Name)
}

func (r *Replica) ReadPartition(ctx context.Context, t *storage.Table, pk []byte, o storage.ReadOptions, fn func(*storage.Row) bool) error {
	st, err := r.table(t)
	if err != nil {
		return err
	}
	if st.Stored() {
		return r.stored.ReadPartition(ctx, t, pk, o, fn)
	}
	ps, err := st.partitions(r.state, r.now(), func(key []byte) bool { return bytes.Equal(key, pk) })
	if err != nil || len(ps) == 0 {
		return err
	}
	return t.Resolve(ps[0], o, fn)
}

func (r *Replica) Scan(ctx context.Context, t *storage.Table, o storage.ScanOptions, fn func(pk []byte, row *storage.Row) bool) error {
	st, err := r.table(t)
	if err != nil {
		return err
	}
	if st.Stored() {
		return r.stored.Scan(ctx, t, o, fn)
	}
	ps, err := st.partitions(r.state, r.now(), func([]byte) bool { return true })
	if err != nil {
		return err
	}
	return t.ScanPartitions(ps, o, fn)
}

// ScanIndex answers an error: no system table has an index.
func (r *Replica) ScanIndex(_ context.Context, t *storage.Table, name string, _ []byte, _ storage.ScanOptions, _ func([]byte, *storage.Row) bool) error {
	return fmt.Errorf("systables: %s.%s has no index %s", t.Def.Keyspace, t.Def.Name, name)
}

// encodeVersion is the protocol version the rows' values are serialized
// in: collections are laid out alike from v3 on, which is what the store
// holds.
const encodeVersion = primitive.ProtocolVersion4

// partitions makes the partitions of t whose keys keep accepts from its
// rows in s, every cell written at now.
func (t *Table) partitions(s State, now time.Time, keep func(key []byte) bool) ([]*storage.Partition, error) {
	st := t.Storage
	live := storage.Cell{Timestamp: now.UnixMicro()}
	byKey := map[string]*storage.PartitionBuilder{}
	var order []*storage.PartitionBuilder
	for _, r := range t.rows(s) {
		key, ck, err := t.key(r)
		if err != nil {
			return nil, err
		}
		if !keep(key) {
			continue
		}
		b := byKey[string(key)]
		if b == nil {
			if b, err = st.NewPartition(key); err != nil {
				return nil, err
			}
			byKey[string(key)] = b
			order = append(order, b)
		}
		if err := t.writeRow(b, r, ck, live); err != nil {
			return nil, err
		}
	}
	out := make([]*storage.Partition, len(order))
	for i, b := range order {
		out[i] = b.Partition()
	}
	return out, nil
}

// key serializes r's partition key and clustering.
func (t *Table) key(r Row) (pk []byte, ck [][]byte, err error) {
	var pks [][]byte
	for i, c := range t.Storage.Def.Columns {
		if c.Kind != storage.KindPartitionKey && c.Kind != storage.KindClustering {
			continue
		}
		v, err := t.encode(i, r[c.Name])
		if err != nil {
			return nil, nil, err
		}
		if v == nil {
			return nil, nil, fmt.Errorf("systables: %s.%s: a row without %s", t.Storage.Def.Keyspace, t.Storage.Def.Name, c.Name)
		}
		if c.Kind == storage.KindPartitionKey {
			pks = append(pks, v)
		} else {
			ck = append(ck, v)
		}
	}
	if len(pks) == 1 {
		return pks[0], ck, nil
	}
	return storage.CompositeKey(pks...), ck, nil
}

// writeRow writes r as an INSERT of all its columns would: a row marker
// and a cell per non-null value, a non-frozen collection's elements as
// cells of their own.
func (t *Table) writeRow(b *storage.PartitionBuilder, r Row, ck [][]byte, live storage.Cell) error {
	if err := b.WriteRowMarker(ck, live); err != nil {
		return err
	}
	for i, c := range t.Storage.Def.Columns {
		if c.Kind == storage.KindPartitionKey || c.Kind == storage.KindClustering {
			continue
		}
		v, err := t.encode(i, r[c.Name])
		if err != nil {
			return err
		}
		if v == nil {
			continue
		}
		tg := storage.CellTarget{Clustering: ck, Static: c.Kind == storage.KindStatic, Column: c.Name}
		if t.frozen[i] {
			cell := live
			cell.Value = v
			if err := b.WriteCell(tg, cell); err != nil {
				return err
			}
			continue
		}
		if err := writeElements(b, tg, t.types[i], v, live); err != nil {
			return fmt.Errorf("systables: %s.%s.%s: %w", t.Storage.Def.Keyspace, t.Storage.Def.Name, c.Name, err)
		}
	}
	return nil
}

// writeElements writes the elements of v, a serialized set or map, as
// cells of their own.
func writeElements(b *storage.PartitionBuilder, tg storage.CellTarget, typ datatype.DataType, v []byte, live storage.Cell) error {
	var key []byte
	switch ct := typ.(type) {
	case *datatype.Set:
		return types.WalkCollection(v, func(e []byte) error {
			tg.PathType, tg.Path = ct.ElementType, e
			c := live
			c.Value = []byte{}
			return b.WriteCell(tg, c)
		}, nil)
	case *datatype.Map:
		return types.WalkCollection(v, func(k []byte) error { key = k; return nil }, func(val []byte) error {
			tg.PathType, tg.Path = ct.KeyType, key
			c := live
			c.Value = val
			return b.WriteCell(tg, c)
		})
	}
	return fmt.Errorf("no multi-cell layout for %v", typ)
}

// encode serializes the value of column i; a frozen set or map in its
// order (a non-frozen one's elements are ordered as cells).
func (t *Table) encode(i int, v any) ([]byte, error) {
	if v == nil {
		return nil, nil
	}
	b, err := t.encoders[i].Encode(v, encodeVersion)
	if err != nil {
		c := t.Storage.Def.Columns[i]
		return nil, fmt.Errorf("systables: %s.%s.%s: %w", t.Storage.Def.Keyspace, t.Storage.Def.Name, c.Name, err)
	}
	if t.frozen[i] && types.HasUnordered(t.types[i]) {
		return types.NormalizeValue(t.types[i], b)
	}
	return b, nil
}
