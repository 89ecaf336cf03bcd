package storage

import (
	"bytes"
	"crypto/md5"
	"encoding/binary"
	"fmt"
	"strings"

	"github.com/datastax/go-cassandra-native-protocol/datatype"
)

// Secondary index entries.
//
// Each index of a table (TableDef.Indexes) keeps its entries in a hidden
// table of its own, whose id is derived from the base table's id and the
// index name, laid out as an ordinary table:
//
//	partition key   the indexed value (blob)
//	clustering      token of the base partition (bigint),
//	                base partition key (blob),
//	                base clustering, encoded as in base keys (blob; empty
//	                for an entry that stands for the whole partition)
//	row marker      the entry's liveness
//
// so one index partition lists the rows holding a value in token order,
// and within a partition in clustering order (the encoded clustering sorts
// bytewise in clustering order).
//
// Entries are written by the same Mutation as the base write, never read
// first: a write of an indexed regular or static cell writes an entry that
// mirrors the cell (same timestamp, TTL and expiry), and any live write to
// a row or partition writes the entries of the clustering and partition
// key component indexes (with the write's timestamp and no TTL, as the row
// can outlive any one of its cells). Overwrites and deletions leave stale
// entries; ScanIndex hands the base rows to the caller, which checks their
// current values, so stale entries are never answered. Entries are a
// superset of the rows that match.

// index is one secondary index compiled for the data path.
type index struct {
	def   IndexDef
	kind  string // the indexed column's kind
	pos   int    // its position in the partition key or clustering
	table *Table // the hidden table of entries
	// set: the column is a set, whose elements are its cells' paths.
	set bool
}

// An index of a non-frozen collection's elements (IndexDef.Elements)
// keeps one entry per element cell, under a value made from the element:
// its path in key encoding for the keys of a map and the elements of a
// set, its cell value for the values of a list or map, the two
// concatenated for the entries of a map (the key encoding is
// self-delimiting). ElementIndexValue computes the same value for a
// query's CONTAINS, CONTAINS KEY or m[key] = value.

// elementValue is the value an element index keeps for an element cell
// whose path is in key encoding.
func (ix *index) elementValue(path, value []byte) []byte {
	switch {
	case ix.def.Elements == "keys" || (ix.def.Elements == "values" && ix.set):
		return path
	case ix.def.Elements == "values":
		return value
	}
	return append(append(make([]byte, 0, len(path)+len(value)), path...), value...)
}

// ElementIndexValue is the value the element index name of t looks up for
// a query: the element v of CONTAINS v, the key k (of type keyType) of
// CONTAINS KEY k, or the entry k, v of m[k] = v. elemType is the type of
// v when it is a set's element (nil otherwise).
func (t *Table) ElementIndexValue(name string, keyType datatype.DataType, k, v []byte, elemType datatype.DataType) ([]byte, error) {
	ix, err := t.index(name)
	if err != nil {
		return nil, err
	}
	switch {
	case ix.def.Elements == "keys":
		return AppendKey(nil, keyType, k, false)
	case ix.def.Elements == "values" && ix.set:
		return AppendKey(nil, elemType, v, false)
	case ix.def.Elements == "values":
		return v, nil
	}
	p, err := AppendKey(nil, keyType, k, false)
	if err != nil {
		return nil, err
	}
	return append(p, v...), nil
}

// indexTableID derives an index's hidden table id from its base table's id
// and its name.
func indexTableID(base [16]byte, name string) [16]byte {
	return md5.Sum(append(append(append([]byte(nil), base[:]...), "\x00index\x00"...), name...))
}

// compileIndexes compiles def's indexes into t.
func (t *Table) compileIndexes() error {
	def := t.Def
	for _, ix := range def.Indexes {
		col := def.Column(ix.Column)
		if col == nil {
			return fmt.Errorf("storage: %s.%s: index %s on unknown column %s", def.Keyspace, def.Name, ix.Name, ix.Column)
		}
		idef := &TableDef{
			Keyspace: def.Keyspace,
			Name:     def.Name + "." + ix.Name,
			ID:       indexTableID(def.ID, ix.Name),
			Columns: []ColumnDef{
				{Name: "value", Type: "blob", Kind: KindPartitionKey, Order: "none"},
				{Name: "token", Type: "bigint", Kind: KindClustering, Position: 0, Order: "asc"},
				{Name: "partition_key", Type: "blob", Kind: KindClustering, Position: 1, Order: "asc"},
				{Name: "clustering", Type: "blob", Kind: KindClustering, Position: 2, Order: "asc"},
			},
		}
		it := &Table{
			Def:             idef,
			PartitionTypes:  []datatype.DataType{datatype.Blob},
			ClusteringTypes: []datatype.DataType{datatype.Bigint, datatype.Blob, datatype.Blob},
			ClusteringDesc:  []bool{false, false, false},
			names:           map[string]string{},
		}
		t.indexes = append(t.indexes, index{def: ix, kind: col.Kind, pos: col.Position, table: it, set: strings.HasPrefix(col.Type, "set<")})
	}
	return nil
}

// IndexTables returns the hidden tables of t's indexes (to truncate or
// purge them with t).
func (t *Table) IndexTables() []*Table {
	out := make([]*Table, len(t.indexes))
	for i := range t.indexes {
		out[i] = t.indexes[i].table
	}
	return out
}

func tokenBytes(tok int64) []byte { return binary.BigEndian.AppendUint64(nil, uint64(tok)) }

// indexEntry writes one entry of ix: value is in (pk, ck); ck nil stands
// for the whole partition. Empty values are not indexed (an empty
// partition key cannot be stored); readers look those up by a scan.
func (m *Mutation) indexEntry(t *Table, ix *index, value, pk []byte, ck [][]byte, c Cell) error {
	if len(value) == 0 {
		return nil
	}
	var enc []byte
	if ck != nil {
		var err error
		if enc, err = t.appendClustering(nil, ck); err != nil {
			return err
		}
	}
	return m.WriteRowMarker(ix.table, value, [][]byte{tokenBytes(Token(pk)), pk, enc}, c)
}

// indexCell writes the entries a live cell write makes (see above).
func (m *Mutation) indexCell(t *Table, pk []byte, tg CellTarget, c Cell) error {
	for i := range t.indexes {
		ix := &t.indexes[i]
		switch {
		case ix.def.Elements != "":
			if tg.Column != ix.def.Column || tg.Path == nil {
				continue
			}
			path := tg.Path
			if tg.PathType != nil {
				var err error
				if path, err = AppendKey(nil, tg.PathType, tg.Path, false); err != nil {
					return err
				}
			}
			var ck [][]byte
			if !tg.Static {
				ck = tg.Clustering
			}
			mirror := Cell{Timestamp: c.Timestamp, TTL: c.TTL, LocalDeletionTime: c.LocalDeletionTime}
			if err := m.indexEntry(t, ix, ix.elementValue(path, c.Value), pk, ck, mirror); err != nil {
				return err
			}
		case ix.kind == KindRegular || ix.kind == KindStatic:
			if tg.Column != ix.def.Column || tg.Path != nil {
				continue
			}
			var ck [][]byte
			if !tg.Static {
				ck = tg.Clustering
			}
			mirror := Cell{Timestamp: c.Timestamp, TTL: c.TTL, LocalDeletionTime: c.LocalDeletionTime}
			if err := m.indexEntry(t, ix, c.Value, pk, ck, mirror); err != nil {
				return err
			}
		case tg.Static && ix.kind == KindClustering:
			// A static cell makes no row.
		default:
			var ck [][]byte
			if !tg.Static {
				ck = tg.Clustering
			}
			if err := m.keyEntry(t, ix, pk, ck, c.Timestamp); err != nil {
				return err
			}
		}
	}
	return nil
}

// indexRow writes the clustering and partition key component entries of
// a live write to row (pk, ck).
func (m *Mutation) indexRow(t *Table, pk []byte, ck [][]byte, ts int64) error {
	for i := range t.indexes {
		ix := &t.indexes[i]
		if ix.kind == KindPartitionKey || ix.kind == KindClustering {
			if err := m.keyEntry(t, ix, pk, ck, ts); err != nil {
				return err
			}
		}
	}
	return nil
}

// keyEntry writes the entry of a clustering or partition key component
// index for a live write to (pk, ck); ck is nil for a static write.
func (m *Mutation) keyEntry(t *Table, ix *index, pk []byte, ck [][]byte, ts int64) error {
	switch ix.kind {
	case KindClustering:
		if ix.pos >= len(ck) {
			return nil
		}
		return m.indexEntry(t, ix, ck[ix.pos], pk, ck, Cell{Timestamp: ts})
	case KindPartitionKey:
		v, err := partitionComponent(pk, ix.pos, len(t.PartitionTypes))
		if err != nil {
			return err
		}
		return m.indexEntry(t, ix, v, pk, nil, Cell{Timestamp: ts})
	}
	return nil
}

// partitionComponent returns component i of a serialized partition key of
// n components (CompositeKey's layout when n > 1).
func partitionComponent(pk []byte, i, n int) ([]byte, error) {
	if n == 1 {
		return pk, nil
	}
	for j := 0; len(pk) >= 2; j++ {
		l := int(binary.BigEndian.Uint16(pk))
		if 2+l+1 > len(pk) {
			break
		}
		if j == i {
			return pk[2 : 2+l], nil
		}
		pk = pk[3+l:]
	}
	return nil, fmt.Errorf("storage: malformed composite partition key")
}

// indexBatch is how many entries ScanIndex reads before it reads the rows
// they point at.
const indexBatch = 256

// ScanIndex calls fn, like Scan, in token order with each partition's
// static row first, for the live rows of t that the entries of index name
// for value point at; an entry for a whole partition yields all its rows.
// Rows may no longer hold value (entries are never removed): the caller
// checks them. o bounds the partitions as for Scan. value must not be
// empty (empty values are not indexed).
func (e *Engine) ScanIndex(t *Table, name string, value []byte, o ScanOptions, fn func(pk []byte, row *Row) bool) error {
	ix, err := t.index(name)
	if err != nil {
		return err
	}
	var slice Slice
	if o.MinToken != nil {
		slice.Start = &Bound{Prefix: [][]byte{tokenBytes(*o.MinToken)}, Inclusive: true}
	}
	// The later of the two starts, as Scan takes: a proxy scan passes the
	// partition it resumes at to every segment, beyond it too.
	if from := o.FromPartition; from != nil && (o.MinToken == nil || Token(from) >= *o.MinToken) {
		slice.Start = &Bound{Prefix: [][]byte{tokenBytes(Token(from)), from}, Inclusive: true}
	}
	if o.MaxToken != nil {
		slice.End = &Bound{Prefix: [][]byte{tokenBytes(*o.MaxToken)}, Inclusive: true}
	}
	s := indexScan{e: e, t: t, now: o.Now, fn: fn}
	for {
		var entries [][][]byte
		err := e.ReadPartition(ix.table, value, ReadOptions{Slice: slice, Now: o.Now}, func(r *Row) bool {
			if !r.Static {
				entries = append(entries, r.Clustering)
			}
			return len(entries) < indexBatch
		})
		if err != nil {
			return err
		}
		for _, en := range entries {
			if !s.entry(en[1], en[2]) {
				return s.err
			}
		}
		if len(entries) < indexBatch {
			return nil
		}
		slice.Start = &Bound{Prefix: entries[len(entries)-1], Inclusive: false}
	}
}

// indexScan reads the base rows of a run of index entries.
type indexScan struct {
	e      *Engine
	t      *Table
	now    int32
	fn     func(pk []byte, row *Row) bool
	pk     []byte // the partition being answered
	whole  bool   // pk was read whole: its further entries add nothing
	static bool   // pk's static row was passed on
	err    error
}

// entry answers one entry; it reports whether to go on.
func (s *indexScan) entry(pk, enc []byte) bool {
	if !bytes.Equal(pk, s.pk) {
		s.pk, s.whole, s.static = pk, false, false
	} else if s.whole {
		return true
	}
	o := ReadOptions{Now: s.now}
	if len(enc) == 0 {
		s.whole = true
	} else {
		ck, rest, err := s.t.decodeClustering(enc)
		if err != nil || len(rest) != 0 {
			s.err = fmt.Errorf("storage: %s.%s: malformed index entry", s.t.Def.Keyspace, s.t.Def.Name)
			return false
		}
		o.Slice = Slice{Start: &Bound{Prefix: ck, Inclusive: true}, End: &Bound{Prefix: ck, Inclusive: true}}
	}
	more := true
	_, s.err = s.e.readPartition(s.t, pk, nil, o, func(r *Row) bool {
		if r.Static {
			if s.static {
				return true
			}
			s.static = true
		}
		more = s.fn(pk, r)
		return more
	})
	return more && s.err == nil
}

// IndexTable returns the hidden table of t's index name, or nil.
func (t *Table) IndexTable(name string) *Table {
	if ix, err := t.index(name); err == nil {
		return ix.table
	}
	return nil
}

// index returns t's index name.
func (t *Table) index(name string) (*index, error) {
	for i := range t.indexes {
		if t.indexes[i].def.Name == name {
			return &t.indexes[i], nil
		}
	}
	return nil, fmt.Errorf("storage: %s.%s has no index %s", t.Def.Keyspace, t.Def.Name, name)
}

// buildBatch is how many rows BuildIndex indexes per mutation.
const buildBatch = 512

// BuildIndex writes the entries of index name for every live row of t as
// of now (CREATE INDEX on a table that has data). Writes that race with it
// write their own entries.
func (e *Engine) BuildIndex(t *Table, name string, now int32) error {
	ix, err := t.index(name)
	if err != nil {
		return err
	}
	m := e.NewMutation()
	n := 0
	var lastPK []byte
	var werr error
	err = e.Scan(t, ScanOptions{Now: now}, func(pk []byte, r *Row) bool {
		switch ix.kind {
		case KindPartitionKey:
			if !bytes.Equal(pk, lastPK) {
				lastPK = pk
				werr = m.keyEntry(t, ix, pk, nil, rowTimestamp(r))
			}
		case KindClustering:
			if !r.Static {
				werr = m.keyEntry(t, ix, pk, r.Clustering, rowTimestamp(r))
			}
		default:
			for _, cc := range r.Cells {
				if ix.def.Elements != "" && cc.Column == ix.def.Column && cc.Path != nil {
					var ck [][]byte
					if !r.Static {
						ck = r.Clustering
					}
					c := cc.Cell
					if werr = m.indexEntry(t, ix, ix.elementValue(cc.Path, c.Value), pk, ck, Cell{Timestamp: c.Timestamp, TTL: c.TTL, LocalDeletionTime: c.LocalDeletionTime}); werr != nil {
						break
					}
					continue
				}
				if ix.def.Elements == "" && cc.Column == ix.def.Column && cc.Path == nil {
					var ck [][]byte
					if !r.Static {
						ck = r.Clustering
					}
					c := cc.Cell
					werr = m.indexEntry(t, ix, c.Value, pk, ck, Cell{Timestamp: c.Timestamp, TTL: c.TTL, LocalDeletionTime: c.LocalDeletionTime})
				}
			}
		}
		if werr != nil {
			return false
		}
		if n++; n%buildBatch == 0 && !m.Empty() {
			if werr = e.Apply(m); werr != nil {
				m = nil
				return false
			}
			m = e.NewMutation()
		}
		return true
	})
	if m == nil {
		return werr
	}
	if err == nil {
		err = werr
	}
	if err != nil {
		_ = m.b.Close()
		m.release()
		return err
	}
	return e.Apply(m)
}

// rowTimestamp is the newest timestamp of a row's marker and cells.
func rowTimestamp(r *Row) int64 {
	var ts int64
	if r.Marker != nil {
		ts = r.Marker.Timestamp
	}
	for _, cc := range r.Cells {
		if cc.Cell.Timestamp > ts {
			ts = cc.Cell.Timestamp
		}
	}
	return ts
}

// WaitApplies returns once every mutation being applied when it was called
// is applied: after a schema change, no write planned under the old
// schema is still between the commit log and the memtable.
func (e *Engine) WaitApplies() {
	e.applyMu.Lock()
	//lint:ignore SA2001 an empty critical section is the barrier
	e.applyMu.Unlock()
}
