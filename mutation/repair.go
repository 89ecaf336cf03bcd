package mutation

import (
	"bytes"
	"fmt"

	"github.com/cqld/cqld/storage"
)

// Repair adds to m the writes that bring a replica whose answer was have
// up to want, the reconciled partition of the same read (have nil: a
// replica that answered nothing): every key of want that have lacks or
// holds another cell of, as the write that made it, with its timestamp,
// TTL and deletion time, tombstones included. Blocking read repair sends
// the result to the stale replicas before the coordinator answers.
//
// want and have must be partitions of t read with the same slice; their
// bytes are referenced, not copied. want's keys are checked
// (Table.Entries): an error leaves m without any of them.
func (m *Mutation) Repair(t *storage.Table, want, have *storage.Partition) error {
	if have != nil && !bytes.Equal(want.Key, have.Key) {
		return fmt.Errorf("mutation: repair of partition %x from an answer for %x", want.Key, have.Key)
	}
	var ops []Op
	h := 0
	i := 0
	err := t.Entries(want, func(en storage.Entry) error {
		kv := want.KVs[i]
		i++
		if have != nil {
			for h < len(have.KVs) && bytes.Compare(have.KVs[h].Key, kv.Key) < 0 {
				h++
			}
			if h < len(have.KVs) && bytes.Equal(have.KVs[h].Key, kv.Key) && bytes.Equal(have.KVs[h].Value, kv.Value) {
				return nil
			}
		}
		op := Op{Target: en.Target, Range: en.Range, Cell: en.Cell}
		switch en.Kind {
		case storage.EntryPartitionDeletion:
			op.Kind = KindPartitionDeletion
		case storage.EntryRangeDeletion:
			op.Kind = KindRangeDeletion
		case storage.EntryCell:
			op.Kind = KindCell
		case storage.EntryCollectionDeletion:
			op.Kind = KindCollectionDeletion
		case storage.EntryRowMarker:
			op.Kind = KindRowMarker
		case storage.EntryRowDeletion:
			op.Kind = KindRowDeletion
		default:
			return fmt.Errorf("mutation: repair: entry of unknown kind %d", en.Kind)
		}
		ops = append(ops, op)
		return nil
	})
	if err != nil {
		return err
	}
	for _, op := range ops {
		m.add(t, want.Key, op)
	}
	return nil
}
