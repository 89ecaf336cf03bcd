package storage

import (
	"bytes"
	"fmt"
	"math"

	"github.com/cockroachdb/pebble/v2"
	"github.com/datastax/go-cassandra-native-protocol/datatype"
)

// TokenRange is the token range (Start, End] of the ring, as Cassandra's
// Range: End <= Start wraps past the ring's end back to its start,
// Start == End is the whole ring, and End == MinToken is the ring's end
// (no wrap).
type TokenRange struct{ Start, End int64 }

// Contains reports whether token lies in r.
func (r TokenRange) Contains(token int64) bool {
	for _, s := range r.segments() {
		if s.lo <= token && token <= s.hi {
			return true
		}
	}
	return false
}

// tokenSegment is an inclusive interval of tokens that does not wrap.
type tokenSegment struct{ lo, hi int64 }

// segments cuts r into at most two non-wrapping intervals, in ring order
// from r.Start.
func (r TokenRange) segments() []tokenSegment {
	var out []tokenSegment
	tail := func() { // (Start, MaxInt64]
		if r.Start < math.MaxInt64 {
			out = append(out, tokenSegment{r.Start + 1, math.MaxInt64})
		}
	}
	switch {
	case r.End == MinToken && r.Start != MinToken:
		tail()
	case r.Start < r.End:
		out = append(out, tokenSegment{r.Start + 1, r.End})
	default: // wraps, or the whole ring
		tail()
		out = append(out, tokenSegment{MinToken, r.End})
	}
	return out
}

// RawScanOptions shape ScanRaw.
type RawScanOptions struct {
	Range TokenRange
	// After, when set, resumes a scan of the same Range after this
	// partition (the serialized key the previous scan passed last).
	After []byte
	// Slice selects each partition's rows, as ReadRaw's slice does.
	Slice Slice
	// Index, when set, keeps the partitions that the entries of an index
	// for a value point at (a superset of those holding it: entries are
	// never removed), each whole within Slice.
	Index *IndexQuery
}

// IndexQuery names the entries of index Name for Value (not empty).
type IndexQuery struct {
	Name  string
	Value []byte
}

// ScanRaw calls fn for each partition of t whose token lies in o.Range,
// unresolved as ReadRaw returns it, in ring order from o.Range.Start (and
// by key among partitions of one token), until fn returns false. A
// partition with no key within o.Slice is skipped. When fn stops the scan,
// more reports whether another partition of the range follows. The
// Partitions are fn's to keep.
func (e *Engine) ScanRaw(t *Table, o RawScanOptions, fn func(*Partition) bool) (more bool, err error) {
	table := tablePrefix(t.Def.ID)
	segs := o.Range.segments()
	var resume []byte
	if o.After != nil {
		tok := Token(o.After)
		i := 0
		for i < len(segs) && (tok < segs[i].lo || tok > segs[i].hi) {
			i++
		}
		if i == len(segs) {
			return false, fmt.Errorf("storage: %s.%s: resume partition of token %d outside range (%d, %d]", t.Def.Keyspace, t.Def.Name, tok, o.Range.Start, o.Range.End)
		}
		segs = segs[i:]
		p, err := t.partitionPrefix(nil, o.After)
		if err != nil {
			return false, err
		}
		resume = prefixEnd(p)
	}
	if o.Index != nil {
		return e.scanRawIndex(t, o, segs, fn)
	}
	for i, sg := range segs {
		lower := appendToken(append([]byte(nil), table...), sg.lo)
		upper := prefixEnd(table)
		if sg.hi < math.MaxInt64 {
			upper = appendToken(append([]byte(nil), table...), sg.hi+1)
		}
		if i == 0 && resume != nil && bytes.Compare(resume, lower) > 0 {
			lower = resume
		}
		if bytes.Compare(lower, upper) >= 0 {
			continue
		}
		if fn == nil {
			// fn stopped the scan: is there anything after?
			if _, more, err := e.scanRawSegment(t, lower, upper, o.Slice, nil); err != nil || more {
				return more, err
			}
			continue
		}
		stopped, more, err := e.scanRawSegment(t, lower, upper, o.Slice, fn)
		if err != nil || more {
			return more, err
		}
		if stopped {
			fn = nil
		}
	}
	return false, nil
}

// scanRawSegment passes fn the partitions with keys in [lower, upper) and
// reports whether fn stopped the scan and, if it did, whether any key
// follows the partition it stopped at. With a nil fn it only reports
// whether the segment holds a key.
func (e *Engine) scanRawSegment(t *Table, lower, upper []byte, slice Slice, fn func(*Partition) bool) (stopped, more bool, err error) {
	it, err := e.db.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
	if err != nil {
		return false, false, fmt.Errorf("storage: scan: %w", err)
	}
	defer it.Close()
	if fn == nil {
		return false, it.First(), it.Error()
	}
	table := len(t.Def.ID)
	for valid := it.First(); valid; {
		key := it.Key()
		if len(key) < table+8 {
			return false, false, errBadKey
		}
		pk, rest, err := DecodeKey(key[table+8:], datatype.Blob, false)
		if err != nil {
			return false, false, errBadKey
		}
		prefix := append([]byte(nil), key[:len(key)-len(rest)]...)
		p, err := e.readRaw(t, append([]byte(nil), pk...), prefix, slice)
		if err != nil {
			return false, false, err
		}
		valid = it.SeekGE(prefixEnd(prefix))
		if len(p.KVs) > 0 && !fn(p) {
			return true, valid, it.Error()
		}
	}
	return false, false, it.Error()
}

// scanRawIndex is ScanRaw through an index: the partitions its entries
// for the value name, within segs, in ring order.
func (e *Engine) scanRawIndex(t *Table, o RawScanOptions, segs []tokenSegment, fn func(*Partition) bool) (more bool, err error) {
	ix, err := t.index(o.Index.Name)
	if err != nil {
		return false, err
	}
	if len(o.Index.Value) == 0 {
		return false, fmt.Errorf("storage: %s.%s: index %s queried for an empty value", t.Def.Keyspace, t.Def.Name, o.Index.Name)
	}
	var (
		last    []byte // the partition of the last entry seen
		stopped bool
		readErr error
	)
	for i, sg := range segs {
		slice := Slice{
			Start: &Bound{Prefix: [][]byte{tokenBytes(sg.lo)}, Inclusive: true},
			End:   &Bound{Prefix: [][]byte{tokenBytes(sg.hi)}, Inclusive: true},
		}
		if i == 0 && o.After != nil {
			// Entries of the partition resumed after are skipped whole.
			slice.Start = &Bound{Prefix: [][]byte{tokenBytes(Token(o.After)), o.After}}
		}
		err := e.ReadPartition(ix.table, o.Index.Value, ReadOptions{Slice: slice}, func(r *Row) bool {
			if r.Static {
				return true
			}
			pk := r.Clustering[1]
			if bytes.Equal(pk, last) {
				return true
			}
			if stopped {
				more = true
				return false
			}
			last = pk
			p, err := e.ReadRaw(t, pk, o.Slice)
			if err != nil {
				readErr = err
				return false
			}
			if len(p.KVs) > 0 && !fn(p) {
				stopped = true
			}
			return true
		})
		if err == nil {
			err = readErr
		}
		if err != nil || more {
			return more, err
		}
	}
	return false, nil
}
