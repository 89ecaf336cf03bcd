package storage

import (
	"bytes"
	"fmt"
)

// EntryKind is what one key of a partition stands for.
type EntryKind uint8

const (
	EntryPartitionDeletion EntryKind = iota + 1
	EntryRangeDeletion
	// EntryCell is a regular or static cell, simple or a collection
	// element.
	EntryCell
	EntryCollectionDeletion
	EntryRowMarker
	EntryRowDeletion
)

// Entry is one key of a Partition decoded: the write that made it, so
// that a partition can be written again elsewhere (read repair) exactly
// as it is, timestamps, TTLs and tombstones included.
type Entry struct {
	Kind EntryKind
	// Target is the row (Clustering) of a row entry, the cell of a cell
	// or collection deletion; a collection element's Path is in key
	// encoding, with a nil PathType, as reads return paths.
	Target CellTarget
	Range  Slice // EntryRangeDeletion only
	Cell   Cell
}

// ErrBadPartition reports a Partition that is not one of its table's:
// a key outside its partition or out of order, a key or cell that does not
// decode.
var ErrBadPartition = fmt.Errorf("storage: malformed partition")

// Entries calls fn with each key of p, a partition of t, decoded, in key
// order, and stops at fn's first error. It checks every key: within p's
// partition, in strictly increasing order, well formed, with a value that
// is a cell. The Entries' byte slices may alias p's.
func (t *Table) Entries(p *Partition, fn func(Entry) error) error {
	prefix, err := t.partitionPrefix(nil, p.Key)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrBadPartition, err)
	}
	var last, scratch []byte
	for i, kv := range p.KVs {
		if !bytes.HasPrefix(kv.Key, prefix) || len(kv.Key) == len(prefix) {
			return fmt.Errorf("%w: %s.%s: key %d outside partition %x", ErrBadPartition, t.Def.Keyspace, t.Def.Name, i, p.Key)
		}
		if i > 0 && bytes.Compare(kv.Key, last) <= 0 {
			return fmt.Errorf("%w: %s.%s: key %d out of order", ErrBadPartition, t.Def.Keyspace, t.Def.Name, i)
		}
		last = kv.Key
		en, err := t.entry(kv.Key[len(prefix):], &scratch)
		if err != nil {
			return fmt.Errorf("%w: %s.%s: key %d: %w", ErrBadPartition, t.Def.Keyspace, t.Def.Name, i, err)
		}
		if en.Cell, err = DecodeCell(kv.Value); err != nil {
			return fmt.Errorf("%w: %s.%s: key %d: %w", ErrBadPartition, t.Def.Keyspace, t.Def.Name, i, err)
		}
		if err := fn(en); err != nil {
			return err
		}
	}
	return nil
}

// CheckPartition reports whether p is a well-formed partition of t (see
// Entries): what a coordinator checks of a replica's answer before it
// reconciles and resolves it.
func (t *Table) CheckPartition(p *Partition) error {
	return t.Entries(p, func(Entry) error { return nil })
}

// entry decodes a key after its partition prefix (keys.go). Only the
// one encoding of each key is accepted: what decodes is what a write of
// the entry makes (scratch holds the re-encodings that check it).
func (t *Table) entry(k []byte, scratch *[]byte) (Entry, error) {
	var en Entry
	region, k := k[0], k[1:]
	switch region {
	case regionPartitionDeletion:
		en.Kind = EntryPartitionDeletion
		if len(k) != 0 {
			return en, errBadKey
		}
		return en, nil
	case regionRangeTombstone:
		en.Kind = EntryRangeDeletion
		var err error
		if en.Range.Start, k, err = t.decodeBound(k, scratch); err != nil {
			return en, err
		}
		if en.Range.End, k, err = t.decodeBound(k, scratch); err != nil {
			return en, err
		}
		if len(k) != 0 {
			return en, errBadKey
		}
		return en, nil
	case regionStatic:
		en.Target.Static = true
		return en, t.cellEntry(&en, k, scratch)
	case regionRow:
		ck, rest, err := t.decodeClustering(k)
		if err != nil || len(rest) == 0 || !t.canonical(k[:len(k)-len(rest)], ck, scratch) {
			return en, errBadKey
		}
		en.Target.Clustering = ck
		switch rest[0] {
		case rowDeletion, rowMarker:
			en.Kind = EntryRowDeletion
			if rest[0] == rowMarker {
				en.Kind = EntryRowMarker
			}
			if len(rest) != 1 {
				return en, errBadKey
			}
			return en, nil
		case rowCell:
			return en, t.cellEntry(&en, rest[1:], scratch)
		}
	}
	return en, errBadKey
}

// cellEntry decodes a cell key's column and path into en.
func (t *Table) cellEntry(en *Entry, k []byte, scratch *[]byte) error {
	name, rest, err := t.columnName(k)
	if err != nil || len(rest) == 0 {
		return errBadKey
	}
	if *scratch = appendColumn((*scratch)[:0], name); !bytes.Equal(*scratch, k[:len(k)-len(rest)]) {
		return errBadKey
	}
	en.Target.Column = name
	switch rest[0] {
	case pathSimple, pathDeletion:
		en.Kind = EntryCell
		if rest[0] == pathDeletion {
			en.Kind = EntryCollectionDeletion
		}
		if len(rest) != 1 {
			return errBadKey
		}
		return nil
	case pathElement:
		if len(rest) == 1 {
			return errBadKey
		}
		en.Kind, en.Target.Path = EntryCell, rest[1:len(rest):len(rest)]
		return nil
	}
	return errBadKey
}

// decodeBound decodes one bound of a range tombstone's key: nil when
// unbounded.
func (t *Table) decodeBound(k []byte, scratch *[]byte) (*Bound, []byte, error) {
	if len(k) == 0 {
		return nil, nil, errBadKey
	}
	n := int(k[0])
	k = k[1:]
	if n == 0xff {
		return nil, k, nil
	}
	if n > len(t.ClusteringTypes) {
		return nil, nil, errBadKey
	}
	b := &Bound{Prefix: make([][]byte, n)}
	enc := k
	for i := range n {
		v, rest, err := DecodeKey(k, t.ClusteringTypes[i], t.ClusteringDesc[i])
		if err != nil {
			return nil, nil, errBadKey
		}
		b.Prefix[i], k = v, rest
	}
	if len(k) == 0 || k[0] > 1 || !t.canonical(enc[:len(enc)-len(k)], b.Prefix, scratch) {
		return nil, nil, errBadKey
	}
	b.Inclusive = k[0] == 1
	return b, k[1:], nil
}

// canonical reports whether enc is the encoding of clustering prefix ck.
func (t *Table) canonical(enc []byte, ck [][]byte, scratch *[]byte) bool {
	var err error
	*scratch, err = t.appendClustering((*scratch)[:0], ck)
	return err == nil && bytes.Equal(*scratch, enc)
}
