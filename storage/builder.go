package storage

import (
	"bytes"
	"fmt"
	"slices"
)

// PartitionBuilder makes a Partition in memory, in the store's key layout,
// for rows that are not stored but made when read (a system table's rows
// made from the node's state): Resolve and ScanPartitions then read it as
// ReadPartition and Scan read the store. It is not safe for concurrent use.
type PartitionBuilder struct {
	t      *Table
	prefix []byte
	kvs    []PartitionKV
	key    []byte // the serialized partition key
	// buf holds the keys and values written, one after the other: a
	// full buf is replaced, never written over, so earlier keys and
	// values stay valid.
	buf []byte
}

// NewPartition starts partition pk of t. The builder keeps pk.
func (t *Table) NewPartition(pk []byte) (*PartitionBuilder, error) {
	prefix, err := t.partitionPrefix(nil, pk)
	if err != nil {
		return nil, err
	}
	return &PartitionBuilder{t: t, prefix: prefix, key: pk}, nil
}

// WriteRowMarker writes the liveness of row ck, as an INSERT does.
func (b *PartitionBuilder) WriteRowMarker(ck [][]byte, c Cell) error {
	start := len(b.buf)
	k, err := b.t.appendRowKey(append(b.buf, b.prefix...), ck, rowMarker)
	if err != nil {
		return err
	}
	b.add(k, start, c)
	return nil
}

// WriteCell writes the cell tg names, a collection element when tg has a
// path.
func (b *PartitionBuilder) WriteCell(tg CellTarget, c Cell) error {
	kind := pathSimple
	if tg.Path != nil {
		kind = pathElement
	}
	start := len(b.buf)
	k, err := b.t.appendCellKey(append(b.buf, b.prefix...), tg, kind)
	if err != nil {
		return err
	}
	b.add(k, start, c)
	return nil
}

// DeleteCollection deletes the elements of the collection cell tg written
// at or before tombstone c.
func (b *PartitionBuilder) DeleteCollection(tg CellTarget, c Cell) error {
	start := len(b.buf)
	k, err := b.t.appendCellKey(append(b.buf, b.prefix...), tg, pathDeletion)
	if err != nil {
		return err
	}
	b.add(k, start, c)
	return nil
}

// DeleteRow deletes row ck as of tombstone c.
func (b *PartitionBuilder) DeleteRow(ck [][]byte, c Cell) error {
	start := len(b.buf)
	k, err := b.t.appendRowKey(append(b.buf, b.prefix...), ck, rowDeletion)
	if err != nil {
		return err
	}
	b.add(k, start, c)
	return nil
}

// DeletePartition deletes the partition as of tombstone c.
func (b *PartitionBuilder) DeletePartition(c Cell) {
	start := len(b.buf)
	b.add(append(append(b.buf, b.prefix...), regionPartitionDeletion), start, c)
}

// DeleteRange deletes the rows within s as of tombstone c.
func (b *PartitionBuilder) DeleteRange(s Slice, c Cell) error {
	start := len(b.buf)
	k, err := b.t.appendRangeTombstoneKey(append(b.buf, b.prefix...), s)
	if err != nil {
		return err
	}
	b.add(k, start, c)
	return nil
}

// add records the entry buf[start:] holds, a key, and its cell c.
func (b *PartitionBuilder) add(buf []byte, start int, c Cell) {
	end := len(buf)
	buf = c.Append(buf)
	b.kvs = append(b.kvs, PartitionKV{Key: buf[start:end:end], Value: buf[end:len(buf):len(buf)]})
	b.buf = buf
}

// Partition is what was written, in key order. Of two writes of one cell
// the later one is kept. The builder must not be used after.
func (b *PartitionBuilder) Partition() *Partition {
	slices.SortStableFunc(b.kvs, func(x, y PartitionKV) int { return bytes.Compare(x.Key, y.Key) })
	out := b.kvs[:0]
	for i, kv := range b.kvs {
		if i+1 < len(b.kvs) && bytes.Equal(kv.Key, b.kvs[i+1].Key) {
			continue
		}
		out = append(out, kv)
	}
	return &Partition{Key: b.key, KVs: out}
}

// ScanPartitions calls fn for each live row of ps, whole partitions of t,
// as Scan does for the partitions in the store: in token order, within o's
// token bounds and from o.FromPartition, until fn returns false.
func (t *Table) ScanPartitions(ps []*Partition, o ScanOptions, fn func(pk []byte, row *Row) bool) error {
	type positioned struct {
		prefix []byte
		p      *Partition
	}
	var from []byte
	if o.FromPartition != nil {
		var err error
		if from, err = t.partitionPrefix(nil, o.FromPartition); err != nil {
			return err
		}
	}
	in := make([]positioned, 0, len(ps))
	for _, p := range ps {
		prefix, err := t.partitionPrefix(nil, p.Key)
		if err != nil {
			return fmt.Errorf("storage: %s.%s: partition %x: %w", t.Def.Keyspace, t.Def.Name, p.Key, err)
		}
		tok := Token(p.Key)
		if (o.MinToken != nil && tok < *o.MinToken) || (o.MaxToken != nil && tok > *o.MaxToken) ||
			(from != nil && bytes.Compare(prefix, from) < 0) {
			continue
		}
		in = append(in, positioned{prefix, p})
	}
	slices.SortFunc(in, func(a, b positioned) int { return bytes.Compare(a.prefix, b.prefix) })
	for _, x := range in {
		stopped := false
		err := t.Resolve(x.p, ReadOptions{Now: o.Now}, func(r *Row) bool {
			stopped = !fn(x.p.Key, r)
			return !stopped
		})
		if err != nil || stopped {
			return err
		}
	}
	return nil
}
