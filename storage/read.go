package storage

import (
	"bytes"
	"fmt"

	"github.com/cockroachdb/pebble/v2"
	"github.com/datastax/go-cassandra-native-protocol/datatype"
)

// Bound is one end of a clustering slice: a clustering prefix, and whether
// the rows having that prefix are in the slice.
type Bound struct {
	Prefix    [][]byte
	Inclusive bool
}

// Slice selects the rows of a partition whose clustering lies between Start
// and End, in clustering order. A nil bound is open.
type Slice struct{ Start, End *Bound }

// Row is one live row as a read returns it: deletions and expiry applied.
type Row struct {
	// Clustering is nil for the static row.
	Clustering [][]byte
	Static     bool
	// Marker is the row's liveness from INSERT, nil when it has none.
	Marker *Cell
	// Cells are the live cells in column name order.
	Cells []ColumnCell
}

// ColumnCell is a live cell of a row.
type ColumnCell struct {
	Column string
	Path   []byte // collection element path, nil for a simple cell
	Cell   Cell
}

// ReadOptions shape a read.
type ReadOptions struct {
	Slice   Slice
	Reverse bool
	// Now is the read's time in seconds since the epoch: cells whose TTL
	// ran out by then are dead.
	Now int32
}

// deletions are the tombstones that shadow a partition's cells.
type deletions struct {
	partition int64 // timestamp of the partition deletion, or minTimestamp
	ranges    []rangeTombstone
}

type rangeTombstone struct {
	start, end []byte // encoded clustering prefixes; nil is open
	startIncl  bool
	endIncl    bool
	ts         int64
}

const minTimestamp = -1 << 63

// shadowTS returns the newest deletion timestamp covering a row whose
// encoded clustering is ck.
func (d *deletions) shadowTS(ck []byte) int64 {
	ts := d.partition
	for i := range d.ranges {
		r := &d.ranges[i]
		if r.ts > ts && r.covers(ck) {
			ts = r.ts
		}
	}
	return ts
}

func (r *rangeTombstone) covers(ck []byte) bool {
	if r.start != nil {
		if bytes.HasPrefix(ck, r.start) {
			if !r.startIncl {
				return false
			}
		} else if bytes.Compare(ck, r.start) < 0 {
			return false
		}
	}
	if r.end != nil {
		if bytes.HasPrefix(ck, r.end) {
			return r.endIncl
		}
		return bytes.Compare(ck, r.end) < 0
	}
	return true
}

// ReadPartition calls fn for each live row of partition pk within o.Slice
// (the static row first, when it has live cells), in clustering order or
// its reverse, until fn returns false. Rows passed to fn are fn's to keep.
func (e *Engine) ReadPartition(t *Table, pk []byte, o ReadOptions, fn func(*Row) bool) error {
	prefix, err := t.partitionPrefix(nil, pk)
	if err != nil {
		return err
	}
	_, err = e.readPartition(t, prefix, o, fn)
	return err
}

// readPartition reads one partition given its key prefix; it reports
// whether fn asked to stop.
func (e *Engine) readPartition(t *Table, prefix []byte, o ReadOptions, fn func(*Row) bool) (stopped bool, err error) {
	// One iterator serves the whole partition: first over its deletions
	// and static cells, then, with new bounds, over the rows.
	head := append(append([]byte(nil), prefix...), regionPartitionDeletion)
	it, err := e.db.NewIter(&pebble.IterOptions{LowerBound: head, UpperBound: append(append([]byte(nil), prefix...), regionRow)})
	if err != nil {
		return false, fmt.Errorf("storage: read: %w", err)
	}
	defer it.Close()
	dels, static, err := t.readHead(it, prefix, o.Now)
	if err != nil {
		return false, err
	}
	if static != nil && !fn(static) {
		return true, nil
	}

	rows := append(append([]byte(nil), prefix...), regionRow)
	lower, upper := rows, prefixEnd(rows)
	var skipPrefix []byte // rows with this encoded prefix are excluded (exclusive start)
	if b := o.Slice.Start; b != nil {
		p, err := t.appendClustering(append([]byte(nil), rows...), b.Prefix)
		if err != nil {
			return false, err
		}
		lower = p
		if !b.Inclusive {
			skipPrefix = p
		}
	}
	if b := o.Slice.End; b != nil {
		p, err := t.appendClustering(append([]byte(nil), rows...), b.Prefix)
		if err != nil {
			return false, err
		}
		if b.Inclusive {
			upper = prefixEnd(p)
		} else {
			upper = p
		}
	}
	it.SetBounds(lower, upper)

	var (
		cur     []byte // encoded clustering of the row being gathered
		have    bool   // cur is set (it is empty for tables without clustering)
		parts   []kv
		valid   bool
		advance func() bool
	)
	if o.Reverse {
		valid, advance = it.Last(), it.Prev
	} else {
		valid, advance = it.First(), it.Next
	}
	emit := func() (bool, error) {
		if !have {
			return true, nil
		}
		row, err := t.assembleRow(cur, parts, dels.shadowTS(cur), o.Now)
		cur, have, parts = nil, false, parts[:0]
		if err != nil || row == nil {
			return true, err
		}
		return fn(row), nil
	}
	for ; valid; valid = advance() {
		key := it.Key()[len(rows):]
		ck, rest, err := t.decodeClusteringBytes(key)
		if err != nil {
			return false, err
		}
		if skipPrefix != nil && bytes.HasPrefix(it.Key(), skipPrefix) {
			continue
		}
		if have && !bytes.Equal(cur, ck) {
			if more, err := emit(); err != nil || !more {
				return !more, err
			}
		}
		if !have {
			cur, have = append([]byte(nil), ck...), true
		}
		v, err := it.ValueAndErr()
		if err != nil {
			return false, fmt.Errorf("storage: read: %w", err)
		}
		parts = append(parts, kv{suffix: append([]byte(nil), rest...), value: append([]byte(nil), v...)})
	}
	if err := it.Error(); err != nil {
		return false, fmt.Errorf("storage: read: %w", err)
	}
	more, err := emit()
	return !more, err
}

type kv struct{ suffix, value []byte }

// decodeClusteringBytes splits a row key (after the row region byte) into
// its encoded clustering and the rest.
func (t *Table) decodeClusteringBytes(b []byte) (ck, rest []byte, err error) {
	rest = b
	for i, typ := range t.ClusteringTypes {
		if _, rest, err = DecodeKey(rest, typ, t.ClusteringDesc[i]); err != nil {
			return nil, nil, fmt.Errorf("%w: %v", errBadKey, err)
		}
	}
	return b[:len(b)-len(rest)], rest, nil
}

// assembleRow builds a live row from its keys, or returns nil when nothing
// of it is live.
func (t *Table) assembleRow(ck []byte, parts []kv, shadow int64, now int32) (*Row, error) {
	row := &Row{}
	var err error
	if row.Clustering, _, err = t.decodeClustering(ck); err != nil {
		return nil, err
	}
	// The row deletion sorts first in a forward read but last in a reverse
	// one; find it before judging cells.
	for _, p := range parts {
		if len(p.suffix) == 1 && p.suffix[0] == rowDeletion {
			c, err := DecodeCell(p.value)
			if err != nil {
				return nil, err
			}
			if c.Timestamp > shadow {
				shadow = c.Timestamp
			}
		}
	}
	colDels, err := collectionDeletions(parts, shadow)
	if err != nil {
		return nil, err
	}
	colDels = t.withDropped(colDels)
	for _, p := range parts {
		if len(p.suffix) == 0 {
			return nil, errBadKey
		}
		switch p.suffix[0] {
		case rowDeletion:
		case rowMarker:
			c, err := DecodeCell(p.value)
			if err != nil {
				return nil, err
			}
			if c.Timestamp > shadow && c.IsLive(now) {
				row.Marker = &c
			}
		case rowCell:
			cc, ok, err := decodeColumnCell(p.suffix[1:], p.value, shadow, now, colDels)
			if err != nil {
				return nil, err
			}
			if ok {
				row.Cells = append(row.Cells, cc)
			}
		default:
			return nil, errBadKey
		}
	}
	if row.Marker == nil && len(row.Cells) == 0 {
		return nil, nil
	}
	sortCells(row.Cells)
	return row, nil
}

// collectionDeletions finds the collection deletions among a row's keys:
// column name -> the newest deletion timestamp.
func collectionDeletions(parts []kv, shadow int64) (map[string]int64, error) {
	var out map[string]int64
	for _, p := range parts {
		if len(p.suffix) == 0 || p.suffix[0] != rowCell {
			continue
		}
		name, rest, err := DecodeKey(p.suffix[1:], datatype.Varchar, false)
		if err != nil || len(rest) == 0 {
			return nil, errBadKey
		}
		if rest[0] != pathDeletion {
			continue
		}
		c, err := DecodeCell(p.value)
		if err != nil {
			return nil, err
		}
		if out == nil {
			out = map[string]int64{}
		}
		if ts, ok := out[string(name)]; !ok || c.Timestamp > ts {
			out[string(name)] = c.Timestamp
		}
	}
	return out, nil
}

// decodeColumnCell decodes a cell key suffix (column | path) and value,
// reporting whether the cell is live. colDels holds collection deletions.
func decodeColumnCell(suffix, value []byte, shadow int64, now int32, colDels map[string]int64) (ColumnCell, bool, error) {
	name, rest, err := DecodeKey(suffix, datatype.Varchar, false)
	if err != nil || len(rest) == 0 {
		return ColumnCell{}, false, errBadKey
	}
	cc := ColumnCell{Column: string(name)}
	switch rest[0] {
	case pathSimple:
		if ts, ok := colDels[cc.Column]; ok && ts > shadow {
			shadow = ts // only a dropped column has an entry for a simple cell
		}
	case pathDeletion:
		return cc, false, nil // collection deletions come with collections
	case pathElement:
		cc.Path = append([]byte(nil), rest[1:]...)
		if ts, ok := colDels[cc.Column]; ok && ts > shadow {
			shadow = ts
		}
	default:
		return cc, false, errBadKey
	}
	c, err := DecodeCell(value)
	if err != nil {
		return cc, false, err
	}
	if c.Timestamp <= shadow || !c.IsLive(now) {
		return cc, false, nil
	}
	cc.Cell = c
	return cc, true, nil
}

// sortCells keeps cells in column name order (reverse reads gather them
// backwards).
func sortCells(cs []ColumnCell) {
	for i := 1; i < len(cs); i++ {
		for j := i; j > 0 && (cs[j].Column < cs[j-1].Column || cs[j].Column == cs[j-1].Column && bytes.Compare(cs[j].Path, cs[j-1].Path) < 0); j-- {
			cs[j], cs[j-1] = cs[j-1], cs[j]
		}
	}
}

// readHead reads a partition's deletions (partition deletion, range
// tombstones) and its static row, which come first in key order.
func (t *Table) readHead(it *pebble.Iterator, prefix []byte, now int32) (*deletions, *Row, error) {
	d := &deletions{partition: minTimestamp}
	var statics []kv
	for valid := it.First(); valid; valid = it.Next() {
		v, err := it.ValueAndErr()
		if err != nil {
			return nil, nil, err
		}
		key := it.Key()[len(prefix):]
		switch key[0] {
		case regionPartitionDeletion, regionRangeTombstone:
			c, err := DecodeCell(v)
			if err != nil {
				return nil, nil, err
			}
			if key[0] == regionPartitionDeletion {
				if c.Timestamp > d.partition {
					d.partition = c.Timestamp
				}
				continue
			}
			rt, err := t.decodeRangeTombstone(key[1:])
			if err != nil {
				return nil, nil, err
			}
			rt.ts = c.Timestamp
			d.ranges = append(d.ranges, rt)
		case regionStatic:
			statics = append(statics, kv{suffix: append([]byte{rowCell}, key[1:]...), value: append([]byte(nil), v...)})
		}
	}
	if err := it.Error(); err != nil {
		return nil, nil, err
	}
	if len(statics) == 0 {
		return d, nil, nil
	}
	static, err := t.staticRow(statics, d.partition, now)
	return d, static, err
}

func (t *Table) decodeRangeTombstone(b []byte) (rangeTombstone, error) {
	var rt rangeTombstone
	for i := 0; i < 2; i++ {
		if len(b) == 0 {
			return rt, errBadKey
		}
		n := int(b[0])
		b = b[1:]
		if n == 0xff {
			continue
		}
		if n > len(t.ClusteringTypes) {
			return rt, errBadKey
		}
		start := b
		for j := 0; j < n; j++ {
			var err error
			if _, b, err = DecodeKey(b, t.ClusteringTypes[j], t.ClusteringDesc[j]); err != nil {
				return rt, errBadKey
			}
		}
		if len(b) == 0 {
			return rt, errBadKey
		}
		enc := append([]byte(nil), start[:len(start)-len(b)]...)
		incl := b[0] == 1
		b = b[1:]
		if i == 0 {
			rt.start, rt.startIncl = enc, incl
		} else {
			rt.end, rt.endIncl = enc, incl
		}
	}
	return rt, nil
}

// staticRow builds the live static row from its cells, or nil.
func (t *Table) staticRow(parts []kv, shadow int64, now int32) (*Row, error) {
	colDels, err := collectionDeletions(parts, shadow)
	if err != nil {
		return nil, err
	}
	colDels = t.withDropped(colDels)
	row := &Row{Static: true}
	for _, p := range parts {
		cc, ok, err := decodeColumnCell(p.suffix[1:], p.value, shadow, now, colDels)
		if err != nil {
			return nil, err
		}
		if ok {
			row.Cells = append(row.Cells, cc)
		}
	}
	if len(row.Cells) == 0 {
		return nil, nil
	}
	return row, nil
}

// ScanOptions shape a scan over many partitions.
type ScanOptions struct {
	// From, when set, starts the scan at this partition (by token order),
	// included.
	FromPartition []byte
	// MinToken and MaxToken, when set, bound the tokens scanned
	// (inclusive).
	MinToken, MaxToken *int64
	Now                int32
}

// Scan calls fn for each live row of every partition of t in token order,
// with the partition's serialized key, until fn returns false.
func (e *Engine) Scan(t *Table, o ScanOptions, fn func(pk []byte, row *Row) bool) error {
	table := tablePrefix(t.Def.ID)
	lower, upper := table, prefixEnd(table)
	if o.MinToken != nil {
		lower = appendToken(append([]byte(nil), table...), *o.MinToken)
	}
	if o.MaxToken != nil {
		if *o.MaxToken == 1<<63-1 {
			upper = prefixEnd(table)
		} else {
			upper = appendToken(append([]byte(nil), table...), *o.MaxToken+1)
		}
	}
	if o.FromPartition != nil {
		p, err := t.partitionPrefix(nil, o.FromPartition)
		if err != nil {
			return err
		}
		if bytes.Compare(p, lower) > 0 {
			lower = p
		}
	}
	if bytes.Compare(lower, upper) >= 0 {
		return nil
	}
	it, err := e.db.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
	if err != nil {
		return err
	}
	defer it.Close()
	for valid := it.First(); valid; {
		key := it.Key()
		if len(key) < len(table)+8 {
			return errBadKey
		}
		pk, rest, err := DecodeKey(key[len(table)+8:], datatype.Blob, false)
		if err != nil {
			return errBadKey
		}
		prefix := append([]byte(nil), key[:len(key)-len(rest)]...)
		pk = append([]byte(nil), pk...)
		stopped, err := e.readPartition(t, prefix, ReadOptions{Now: o.Now}, func(r *Row) bool { return fn(pk, r) })
		if err != nil || stopped {
			return err
		}
		valid = it.SeekGE(prefixEnd(prefix))
	}
	return it.Error()
}

// withDropped adds the table's dropped columns to a row's column deletions:
// a drop shadows every cell of the column written at or before it.
func (t *Table) withDropped(dels map[string]int64) map[string]int64 {
	if len(t.dropped) == 0 {
		return dels
	}
	out := make(map[string]int64, len(dels)+len(t.dropped))
	for k, v := range dels {
		out[k] = v
	}
	for k, v := range t.dropped {
		if cur, ok := out[k]; !ok || v > cur {
			out[k] = v
		}
	}
	return out
}
