package storage

import (
	"bytes"
	"fmt"
	"sync"

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
	// Tombstones, when set, counts the tombstones the read meets and
	// stops it past a threshold.
	Tombstones *Tombstones
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
	_, err := e.readPartition(t, pk, nil, o, fn)
	return err
}

// readScratch is the reusable memory of one partition read: bounds, the
// keys and values of the row being gathered (copied out of the iterator,
// which reuses its own), and the iterator options.
type readScratch struct {
	prefix, head, headEnd []byte
	lower, upper          []byte
	cur                   []byte
	parts                 []kv
	arena                 []byte
	dels                  deletions
	opts                  pebble.IterOptions
}

var readScratchPool = sync.Pool{New: func() any { return new(readScratch) }}

// maxPooledArena keeps one huge row from pinning its memory in the pool.
const maxPooledArena = 1 << 20

func (s *readScratch) release() {
	if cap(s.arena) > maxPooledArena {
		s.arena = nil
	}
	clear(s.parts[:cap(s.parts)])
	s.parts = s.parts[:0]
	s.opts = pebble.IterOptions{}
	readScratchPool.Put(s)
}

// readPartition reads one partition given its key prefix, or its key pk
// when prefix is nil; it reports whether fn asked to stop.
func (e *Engine) readPartition(t *Table, pk, prefix []byte, o ReadOptions, fn func(*Row) bool) (stopped bool, err error) {
	s := readScratchPool.Get().(*readScratch)
	defer s.release()
	b, err := t.readBounds(s, pk, prefix, o.Slice)
	if err != nil {
		return false, err
	}
	s.opts = pebble.IterOptions{LowerBound: s.head, UpperBound: s.upper}
	it, err := e.db.NewIter(&s.opts)
	if err != nil {
		return false, fmt.Errorf("storage: read: %w", err)
	}
	defer it.Close() // before s.release: the iterator holds s's bounds
	return t.walkPartition(it, s, b, o, fn)
}

// partitionBounds are the keys that delimit a partition read: the
// partition's prefix, where its rows start, and the rows a slice's
// exclusive start leaves out. The bounds of the iteration are in the
// scratch: s.head (the partition's first key), s.lower (the slice's first
// row key) and s.upper (past its last).
type partitionBounds struct {
	prefix, rows []byte
	skipPrefix   []byte // rows with this encoded prefix are excluded
}

// readBounds computes the bounds of a read of slice of partition pk (or of
// the partition whose key prefix is prefix) into s.
func (t *Table) readBounds(s *readScratch, pk, prefix []byte, slice Slice) (partitionBounds, error) {
	var b partitionBounds
	if prefix == nil {
		var err error
		if s.prefix, err = t.partitionPrefix(s.prefix[:0], pk); err != nil {
			return b, err
		}
		prefix = s.prefix
	}
	b.prefix = prefix
	s.head = append(append(s.head[:0], prefix...), regionPartitionDeletion)
	b.rows = append(append(s.headEnd[:0], prefix...), regionRow)
	s.headEnd = b.rows
	s.lower = append(s.lower[:0], b.rows...)
	s.upper = append(append(s.upper[:0], prefix...), regionRow+1)
	if bd := slice.Start; bd != nil {
		var err error
		if s.lower, err = t.appendClustering(s.lower, bd.Prefix); err != nil {
			return b, err
		}
		if !bd.Inclusive {
			b.skipPrefix = s.lower
		}
	}
	if bd := slice.End; bd != nil {
		p, err := t.appendClustering(append(s.upper[:0], b.rows...), bd.Prefix)
		if err != nil {
			return b, err
		}
		s.upper = p
		if bd.Inclusive {
			s.upper = incrementPrefix(s.upper)
		}
	}
	return b, nil
}

// kvIterator is what a partition read walks: pebble's iterator over the
// store, or a sliceIter over a Partition's keys.
type kvIterator interface {
	SeekPrefixGE(key []byte) bool
	Next() bool
	Prev() bool
	Last() bool
	SetBounds(lower, upper []byte)
	Key() []byte
	ValueAndErr() ([]byte, error)
	Error() error
}

var _ kvIterator = (*pebble.Iterator)(nil)

// walkPartition passes fn the live rows of the partition read that b and s
// delimit, from it, whose bounds are [s.head, s.upper).
func (t *Table) walkPartition(it kvIterator, s *readScratch, b partitionBounds, o ReadOptions, fn func(*Row) bool) (stopped bool, err error) {
	// One iterator serves the whole partition: its deletions and static
	// cells come first, then the rows. A forward read walks on from the
	// head into the rows (one seek in all); a reverse read seeks again.
	dels := &s.dels
	static, valid, err := t.readHead(it, b.prefix, s.head, o.Now, dels)
	if err != nil {
		return false, err
	}
	// A range tombstone is two bounds, as Cassandra's markers are.
	if err := o.Tombstones.add(2*len(dels.ranges), b.prefix); err != nil {
		return false, err
	}
	if static != nil && !fn(static) {
		return true, nil
	}

	var (
		have    bool // s.cur is set (it is empty for tables without clustering)
		advance func() bool
	)
	switch {
	case o.Reverse:
		it.SetBounds(s.lower, s.upper)
		valid, advance = it.Last(), it.Prev
	case o.Slice.Start != nil:
		valid, advance = it.SeekPrefixGE(s.lower), it.Next
	default:
		advance = it.Next // readHead left it at the first row key
	}
	emit := func() (bool, error) {
		if !have {
			return true, nil
		}
		row, err := t.assembleRow(s.cur, s.parts, dels.shadowTS(s.cur), o.Now, o.Tombstones, b.prefix)
		have, s.parts, s.arena = false, s.parts[:0], s.arena[:0]
		if err != nil || row == nil {
			return true, err
		}
		return fn(row), nil
	}
	for ; valid; valid = advance() {
		key := it.Key()[len(b.rows):]
		ck, rest, err := t.decodeClusteringBytes(key)
		if err != nil {
			return false, err
		}
		if b.skipPrefix != nil && bytes.HasPrefix(it.Key(), b.skipPrefix) {
			continue
		}
		if have && !bytes.Equal(s.cur, ck) {
			if more, err := emit(); err != nil || !more {
				return !more, err
			}
		}
		if !have {
			s.cur, have = append(s.cur[:0], ck...), true
		}
		v, err := it.ValueAndErr()
		if err != nil {
			return false, fmt.Errorf("storage: read: %w", err)
		}
		// The arena may move as it grows: earlier parts keep pointing at
		// the old array, which holds their bytes still.
		n := len(s.arena)
		s.arena = append(append(s.arena, rest...), v...)
		s.parts = append(s.parts, kv{suffix: s.arena[n : n+len(rest) : n+len(rest)], value: s.arena[n+len(rest) : len(s.arena) : len(s.arena)]})
	}
	if err := it.Error(); err != nil {
		return false, fmt.Errorf("storage: read: %w", err)
	}
	more, err := emit()
	return !more, err
}

// incrementPrefix turns p into the smallest key greater than every key
// with prefix p, in place when it can.
func incrementPrefix(p []byte) []byte {
	for i := len(p) - 1; i >= 0; i-- {
		if p[i] != 0xff {
			p[i]++
			return p[:i+1]
		}
	}
	return nil // no upper bound
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

// rowBlock allocates a row together with room for its clustering, marker
// and first cells.
type rowBlock struct {
	row    Row
	marker Cell
	ck     [3][]byte
	cells  [4]ColumnCell
	small  [64]byte // the row's bytes, when they fit
}

// assembleRow builds a live row from its keys, or returns nil when nothing
// of it is live. parts may alias memory the caller reuses: the row owns
// copies of everything it holds.
func (t *Table) assembleRow(ck []byte, parts []kv, shadow int64, now int32, ts *Tombstones, prefix []byte) (*Row, error) {
	blk := &rowBlock{}
	row := &blk.row
	row.Cells = blk.cells[:0]
	// The row deletion sorts first in a forward read but last in a reverse
	// one; find it before judging cells.
	deleted := false // a row deletion newer than the partition's and ranges'
	for _, p := range parts {
		if len(p.suffix) == 1 && p.suffix[0] == rowDeletion {
			c, err := DecodeCell(p.value)
			if err != nil {
				return nil, err
			}
			if c.Timestamp > shadow {
				shadow, deleted = c.Timestamp, true
			}
		}
	}
	dead := 0
	colDels, err := t.collectionDeletions(parts, shadow)
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
				blk.marker = c
				row.Marker = &blk.marker
			}
		case rowCell:
			cc, ok, err := t.decodeColumnCell(p.suffix[1:], p.value, shadow, now, colDels)
			if err != nil {
				return nil, err
			}
			if ok {
				row.Cells = append(row.Cells, cc)
			} else if ts != nil && (cc.Cell.Tombstone || cc.Cell.TTL != 0) {
				dead++ // decodeColumnCell leaves a dead cell's Cell set
			}
		default:
			return nil, errBadKey
		}
	}
	if ts != nil {
		if dead == 0 && deleted && row.Marker == nil && len(row.Cells) == 0 {
			dead = 1 // the row's deletion
		}
		if err := ts.add(dead, prefix); err != nil {
			return nil, err
		}
	}
	if row.Marker == nil && len(row.Cells) == 0 {
		return nil, nil
	}
	ts.live()
	sortCells(row.Cells)
	if err := t.ownRow(blk, ck); err != nil {
		return nil, err
	}
	return row, nil
}

// ownRow decodes the row's clustering from ck and copies every value and
// path the row's cells alias into one buffer of the row's own.
func (t *Table) ownRow(blk *rowBlock, ck []byte) error {
	row := &blk.row
	size := len(ck) + 1
	if row.Marker != nil {
		size += len(row.Marker.Value)
	}
	for i := range row.Cells {
		size += len(row.Cells[i].Cell.Value) + len(row.Cells[i].Path)
	}
	buf := blk.small[:0] // non-nil: an empty value stays non-nil
	if size > len(blk.small) {
		buf = make([]byte, 0, size)
	}
	own := func(b []byte) []byte {
		if b == nil {
			return nil
		}
		n := len(buf)
		buf = append(buf, b...)
		return buf[n:len(buf):len(buf)]
	}
	if row.Marker != nil {
		row.Marker.Value = own(row.Marker.Value)
	}
	for i := range row.Cells {
		c := &row.Cells[i]
		c.Cell.Value = own(c.Cell.Value)
		c.Path = own(c.Path)
	}
	if row.Static {
		return nil
	}
	n := len(t.ClusteringTypes)
	if n <= len(blk.ck) {
		row.Clustering = blk.ck[:n:n]
	} else {
		row.Clustering = make([][]byte, n)
	}
	r := keyReader{b: ck}
	for i, typ := range t.ClusteringTypes {
		r.mask = 0
		if t.ClusteringDesc[i] {
			r.mask = 0xFF
		}
		start := len(buf)
		var err error
		if buf, err = decodeKeyInto(&r, typ, buf); err != nil {
			return err
		}
		row.Clustering[i] = buf[start:len(buf):len(buf)]
	}
	return nil
}

// collectionDeletions finds the collection deletions among a row's keys:
// column name -> the newest deletion timestamp.
func (t *Table) collectionDeletions(parts []kv, shadow int64) (map[string]int64, error) {
	var out map[string]int64
	for _, p := range parts {
		if len(p.suffix) == 0 || p.suffix[0] != rowCell {
			continue
		}
		name, rest, err := t.columnName(p.suffix[1:])
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
		if ts, ok := out[name]; !ok || c.Timestamp > ts {
			out[name] = c.Timestamp
		}
	}
	return out, nil
}

// columnName decodes the column name at the front of a cell key suffix,
// interned when the table knows it.
func (t *Table) columnName(suffix []byte) (string, []byte, error) {
	// A name without 00 bytes is encoded as itself and 00 01.
	if i := bytes.IndexByte(suffix, keyEscape); i >= 0 && i+1 < len(suffix) && suffix[i+1] == keyStringTerm {
		if s, ok := t.names[string(suffix[:i])]; ok {
			return s, suffix[i+2:], nil
		}
	}
	r := keyReader{b: suffix}
	var nb [64]byte
	name, err := decodeKeyInto(&r, datatype.Varchar, nb[:0])
	if err != nil {
		return "", suffix, errBadKey
	}
	s, ok := t.names[string(name)]
	if !ok {
		s = string(name)
	}
	return s, suffix[r.pos:], nil
}

// decodeColumnCell decodes a cell key suffix (column | path) and value,
// reporting whether the cell is live. colDels holds collection deletions.
// The cell's value and path alias value and suffix.
func (t *Table) decodeColumnCell(suffix, value []byte, shadow int64, now int32, colDels map[string]int64) (ColumnCell, bool, error) {
	name, rest, err := t.columnName(suffix)
	if err != nil || len(rest) == 0 {
		return ColumnCell{}, false, errBadKey
	}
	cc := ColumnCell{Column: name}
	switch rest[0] {
	case pathSimple:
		if ts, ok := colDels[cc.Column]; ok && ts > shadow {
			shadow = ts // only a dropped column has an entry for a simple cell
		}
	case pathDeletion:
		return cc, false, nil // collection deletions come with collections
	case pathElement:
		cc.Path = rest[1:len(rest):len(rest)]
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
		if c.Timestamp > shadow {
			cc.Cell = c // dead, not shadowed: a tombstone a read counts
		}
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
// head is the partition's first possible key. It stops at the first row
// key, reporting whether there is one.
func (t *Table) readHead(it kvIterator, prefix, head []byte, now int32, d *deletions) (*Row, bool, error) {
	*d = deletions{partition: minTimestamp, ranges: d.ranges[:0]}
	var statics []kv
	// A prefix seek: the bloom filters skip files without the partition.
	valid := it.SeekPrefixGE(head)
	for ; valid; valid = it.Next() {
		key := it.Key()[len(prefix):]
		if key[0] >= regionRow {
			break
		}
		v, err := it.ValueAndErr()
		if err != nil {
			return nil, false, err
		}
		switch key[0] {
		case regionPartitionDeletion, regionRangeTombstone:
			c, err := DecodeCell(v)
			if err != nil {
				return nil, false, err
			}
			if key[0] == regionPartitionDeletion {
				if c.Timestamp > d.partition {
					d.partition = c.Timestamp
				}
				continue
			}
			rt, err := t.decodeRangeTombstone(key[1:])
			if err != nil {
				return nil, false, err
			}
			rt.ts = c.Timestamp
			d.ranges = append(d.ranges, rt)
		case regionStatic:
			statics = append(statics, kv{suffix: append([]byte{rowCell}, key[1:]...), value: append([]byte(nil), v...)})
		}
	}
	if err := it.Error(); err != nil {
		return nil, false, err
	}
	if len(statics) == 0 {
		return nil, valid, nil
	}
	static, err := t.staticRow(statics, d.partition, now)
	return static, valid, err
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
	colDels, err := t.collectionDeletions(parts, shadow)
	if err != nil {
		return nil, err
	}
	colDels = t.withDropped(colDels)
	blk := &rowBlock{}
	row := &blk.row
	row.Static, row.Cells = true, blk.cells[:0]
	for _, p := range parts {
		cc, ok, err := t.decodeColumnCell(p.suffix[1:], p.value, shadow, now, colDels)
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
	return row, t.ownRow(blk, nil)
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
	// Tombstones, when set, counts the tombstones the scan meets, as
	// ReadOptions.Tombstones.
	Tombstones *Tombstones
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
		stopped, err := e.readPartition(t, nil, prefix, ReadOptions{Now: o.Now, Tombstones: o.Tombstones}, func(r *Row) bool { return fn(pk, r) })
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
