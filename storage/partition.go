package storage

import (
	"bytes"
	"fmt"

	"github.com/cockroachdb/pebble/v2"
)

// Partition is a replica's answer to a read before anything is resolved:
// every key of the partition within the read's slice, with its cell —
// live cells, expired ones and tombstones (partition, range, row, cell and
// collection deletions) alike, each with its timestamp. Several replicas'
// Partitions of one read are combined with Reconcile and only then turned
// into live rows with Resolve, so that a tombstone on one replica shadows
// the data another still holds, as Cassandra's coordinator does.
//
// KVs are the store's own keys and encoded cells, in key order: the key
// layout (keys.go) already orders deletions before the rows they shadow
// and rows in clustering order.
type Partition struct {
	Key []byte // the serialized partition key
	KVs []PartitionKV
}

// PartitionKV is one key of a partition and its encoded cell.
type PartitionKV struct {
	Key, Value []byte
}

// ReadRaw returns partition pk of t within slice, unresolved. The
// Partition owns its memory.
func (e *Engine) ReadRaw(t *Table, pk []byte, slice Slice) (*Partition, error) {
	return e.readRaw(t, pk, nil, slice)
}

// readRaw is ReadRaw of the partition whose key prefix is prefix, or of
// pk when prefix is nil; the Partition keeps pk.
func (e *Engine) readRaw(t *Table, pk, prefix []byte, slice Slice) (*Partition, error) {
	s := readScratchPool.Get().(*readScratch)
	defer s.release()
	b, err := t.readBounds(s, pk, prefix, slice)
	if err != nil {
		return nil, err
	}
	s.opts = pebble.IterOptions{LowerBound: s.head, UpperBound: s.upper}
	it, err := e.db.NewIter(&s.opts)
	if err != nil {
		return nil, fmt.Errorf("storage: read: %w", err)
	}
	defer it.Close()
	p := &Partition{Key: pk}
	if prefix == nil {
		p.Key = append([]byte(nil), pk...)
	}
	for valid := it.SeekPrefixGE(s.head); valid; valid = it.Next() {
		key := it.Key()
		if bytes.Compare(key, b.rows) >= 0 {
			if bytes.Compare(key, s.lower) < 0 {
				// Rows before the slice: jump to its start.
				if valid = it.SeekPrefixGE(s.lower); !valid {
					break
				}
				key = it.Key()
			}
			if b.skipPrefix != nil && bytes.HasPrefix(key, b.skipPrefix) {
				continue
			}
		}
		v, err := it.ValueAndErr()
		if err != nil {
			return nil, fmt.Errorf("storage: read: %w", err)
		}
		p.KVs = append(p.KVs, PartitionKV{Key: append([]byte(nil), key...), Value: append([]byte(nil), v...)})
	}
	if err := it.Error(); err != nil {
		return nil, fmt.Errorf("storage: read: %w", err)
	}
	return p, nil
}

// ReconcilePartitions merges several replicas' answers for one partition
// into one: the union of their keys, each key's cells reconciled (last
// write wins, a tombstone winning a tie), exactly as the store's merge
// operator combines the versions of one key. The inputs are not changed;
// the result may share their memory.
func ReconcilePartitions(ps ...*Partition) (*Partition, error) {
	switch len(ps) {
	case 0:
		return nil, fmt.Errorf("storage: reconcile of no partitions")
	case 1:
		return ps[0], nil
	}
	out := &Partition{Key: ps[0].Key}
	pos := make([]int, len(ps))
	for {
		// The smallest key any input holds next.
		var min []byte
		for i, p := range ps {
			if pos[i] < len(p.KVs) {
				if k := p.KVs[pos[i]].Key; min == nil || bytes.Compare(k, min) < 0 {
					min = k
				}
			}
		}
		if min == nil {
			return out, nil
		}
		var (
			win    Cell
			winRaw []byte
		)
		for i, p := range ps {
			if pos[i] >= len(p.KVs) || !bytes.Equal(p.KVs[pos[i]].Key, min) {
				continue
			}
			raw := p.KVs[pos[i]].Value
			pos[i]++
			c, err := DecodeCell(raw)
			if err != nil {
				return nil, fmt.Errorf("storage: reconcile: %w", err)
			}
			if winRaw == nil || !reconcileLeftWins(win, c) {
				win, winRaw = c, raw
			}
		}
		out.KVs = append(out.KVs, PartitionKV{Key: min, Value: winRaw})
	}
}

// Resolve calls fn for each live row of p, a partition of t, within o, as
// ReadPartition does for the partition in the store: the static row first,
// rows in clustering order (or its reverse), deletions and expiry applied
// as of o.Now, until fn returns false. o.Slice must lie within the slice p
// was read with.
func (t *Table) Resolve(p *Partition, o ReadOptions, fn func(*Row) bool) error {
	s := readScratchPool.Get().(*readScratch)
	defer s.release()
	b, err := t.readBounds(s, p.Key, nil, o.Slice)
	if err != nil {
		return err
	}
	it := &sliceIter{kvs: p.KVs, lower: s.head, upper: s.upper, pos: -1}
	_, err = t.walkPartition(it, s, b, o, fn)
	return err
}

// sliceIter is a kvIterator over sorted keys, within [lower, upper).
type sliceIter struct {
	kvs          []PartitionKV
	lower, upper []byte
	pos          int // -1 or len(kvs): not positioned
}

var _ kvIterator = (*sliceIter)(nil)

func (it *sliceIter) valid() bool {
	if it.pos < 0 || it.pos >= len(it.kvs) {
		return false
	}
	k := it.kvs[it.pos].Key
	if bytes.Compare(k, it.lower) < 0 || (it.upper != nil && bytes.Compare(k, it.upper) >= 0) {
		return false
	}
	return true
}

func (it *sliceIter) SeekPrefixGE(key []byte) bool {
	if bytes.Compare(key, it.lower) < 0 {
		key = it.lower
	}
	it.pos = 0
	for it.pos < len(it.kvs) && bytes.Compare(it.kvs[it.pos].Key, key) < 0 {
		it.pos++
	}
	return it.valid()
}

func (it *sliceIter) Next() bool {
	if it.pos < len(it.kvs) {
		it.pos++
	}
	return it.valid()
}

func (it *sliceIter) Prev() bool {
	if it.pos >= 0 {
		it.pos--
	}
	return it.valid()
}

func (it *sliceIter) Last() bool {
	it.pos = len(it.kvs) - 1
	for it.pos >= 0 && it.upper != nil && bytes.Compare(it.kvs[it.pos].Key, it.upper) >= 0 {
		it.pos--
	}
	return it.valid()
}

func (it *sliceIter) SetBounds(lower, upper []byte) {
	it.lower, it.upper, it.pos = lower, upper, -1
}

func (it *sliceIter) Key() []byte                  { return it.kvs[it.pos].Key }
func (it *sliceIter) ValueAndErr() ([]byte, error) { return it.kvs[it.pos].Value, nil }
func (it *sliceIter) Error() error                 { return nil }
