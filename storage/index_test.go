package storage

import (
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/datastax/go-cassandra-native-protocol/datatype"
)

// indexedTable is testTable with indexes on v (regular), s (static) and
// c (clustering).
func indexedTable(t testing.TB) *Table {
	t.Helper()
	base := testTable(t, true)
	def := *base.Def
	def.Indexes = []IndexDef{{Name: "v_idx", Column: "v", Target: "v"}, {Name: "s_idx", Column: "s", Target: "s"}, {Name: "c_idx", Column: "c", Target: "c"}}
	tbl, err := NewTable(&def, testTypeOf)
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

// scanIndex returns "k/c" (or "k/static") for each row ScanIndex passes.
func scanIndex(t *testing.T, e *Engine, tbl *Table, name, value string, o ScanOptions) []string {
	t.Helper()
	var out []string
	err := e.ScanIndex(tbl, name, []byte(value), o, func(pk []byte, r *Row) bool {
		k := int32(binary.BigEndian.Uint32(pk))
		if r.Static {
			out = append(out, fmt.Sprintf("%d/static", k))
		} else {
			out = append(out, fmt.Sprintf("%d/%d", k, int32(binary.BigEndian.Uint32(r.Clustering[0]))))
		}
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestScanIndex(t *testing.T) {
	e := openTestEngine(t, vfs.NewMem(), "batch")
	defer e.Close()
	tbl := indexedTable(t)
	write := func(k, c int, v string, ts int64) {
		m := e.NewMutation()
		if err := m.WriteCell(tbl, i32(k), CellTarget{Clustering: [][]byte{i32(c)}, Column: "v"}, live(ts, v)); err != nil {
			t.Fatal(err)
		}
		if err := e.Apply(m); err != nil {
			t.Fatal(err)
		}
	}
	// Partitions 1..20 in token order (what Scan answers).
	var order []int
	for k := 1; k <= 20; k++ {
		write(k, 1, "a", 1)
		write(k, 2, fmt.Sprint("b", k%2), 1)
	}
	if err := e.Scan(tbl, ScanOptions{}, func(pk []byte, r *Row) bool {
		if k := int(int32(binary.BigEndian.Uint32(pk))); len(order) == 0 || order[len(order)-1] != k {
			order = append(order, k)
		}
		return true
	}); err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, k := range order {
		if k%2 == 1 {
			want = append(want, fmt.Sprintf("%d/2", k))
		}
	}
	if got := scanIndex(t, e, tbl, "v_idx", "b1", ScanOptions{}); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("v_idx b1 = %v, want %v (token order)", got, want)
	}
	if got := scanIndex(t, e, tbl, "v_idx", "zzz", ScanOptions{}); len(got) != 0 {
		t.Errorf("v_idx zzz = %v, want nothing", got)
	}
	// An overwrite leaves a stale entry: the row is still passed (the
	// caller checks its value), and the new value finds it.
	write(order[0], 1, "moved", 2)
	if got := scanIndex(t, e, tbl, "v_idx", "moved", ScanOptions{}); fmt.Sprint(got) != fmt.Sprintf("[%d/1]", order[0]) {
		t.Errorf("v_idx moved = %v", got)
	}
	if got := scanIndex(t, e, tbl, "v_idx", "a", ScanOptions{}); len(got) != 20 {
		t.Errorf("v_idx a = %d rows, want 20 (one stale)", len(got))
	}
	// Resuming at a partition starts there, included.
	if got := scanIndex(t, e, tbl, "v_idx", "a", ScanOptions{FromPartition: i32(order[5])}); len(got) != 15 || got[0] != fmt.Sprintf("%d/1", order[5]) {
		t.Errorf("v_idx a from %d = %v", order[5], got)
	}
	// A resume partition before the scan's lower token does not move the
	// start back (a proxy scan's later segment).
	lo := Token(i32(order[10]))
	if got := scanIndex(t, e, tbl, "v_idx", "a", ScanOptions{FromPartition: i32(order[5]), MinToken: &lo}); len(got) != 10 || got[0] != fmt.Sprintf("%d/1", order[10]) {
		t.Errorf("v_idx a from %d, tokens from %d's = %v", order[5], order[10], got)
	}
	// A clustering index finds rows by their clustering value; a static
	// index yields the static row and every row of the partition.
	if got := scanIndex(t, e, tbl, "c_idx", string(i32(2)), ScanOptions{}); len(got) != 20 {
		t.Errorf("c_idx 2 = %v", got)
	}
	m := e.NewMutation()
	if err := m.WriteCell(tbl, i32(7), CellTarget{Static: true, Column: "s"}, live(1, "st")); err != nil {
		t.Fatal(err)
	}
	if err := e.Apply(m); err != nil {
		t.Fatal(err)
	}
	if got := scanIndex(t, e, tbl, "s_idx", "st", ScanOptions{}); fmt.Sprint(got) != "[7/static 7/2 7/1]" {
		t.Errorf("s_idx st = %v", got)
	}
	// Entries are a superset: a deleted row is not passed.
	m = e.NewMutation()
	if err := m.DeletePartition(tbl, i32(7), Cell{Timestamp: 5, Tombstone: true, LocalDeletionTime: 1}); err != nil {
		t.Fatal(err)
	}
	if err := e.Apply(m); err != nil {
		t.Fatal(err)
	}
	if got := scanIndex(t, e, tbl, "s_idx", "st", ScanOptions{}); len(got) != 0 {
		t.Errorf("s_idx st after partition delete = %v", got)
	}
}

func TestBuildIndex(t *testing.T) {
	e := openTestEngine(t, vfs.NewMem(), "batch")
	defer e.Close()
	plain := testTable(t, true)
	m := e.NewMutation()
	for k := 0; k < 1200; k++ {
		if err := m.WriteCell(plain, i32(k), CellTarget{Clustering: [][]byte{i32(0)}, Column: "v"}, live(1, fmt.Sprint(k%3))); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.Apply(m); err != nil {
		t.Fatal(err)
	}
	tbl := indexedTable(t)
	if got := scanIndex(t, e, tbl, "v_idx", "1", ScanOptions{}); len(got) != 0 {
		t.Fatalf("entries before the build: %d", len(got))
	}
	if err := e.BuildIndex(tbl, "v_idx", 0); err != nil {
		t.Fatal(err)
	}
	if got := scanIndex(t, e, tbl, "v_idx", "1", ScanOptions{}); len(got) != 400 {
		t.Errorf("after the build: %d rows for v = '1', want 400", len(got))
	}
}

// An index of a collection's elements has an entry per element cell,
// under the value ElementIndexValue computes for the query: written with
// the element, and built over the elements written before the index.
func TestElementIndexes(t *testing.T) {
	e := openTestEngine(t, vfs.NewMem(), "batch")
	defer e.Close()
	def := &TableDef{Keyspace: "ks", Name: "e", ID: [16]byte{9}, Columns: []ColumnDef{
		{Name: "k", Type: "int", Kind: KindPartitionKey, Position: 0, Order: "none"},
		{Name: "c", Type: "int", Kind: KindClustering, Position: 0, Order: "asc"},
		{Name: "m", Type: "map<text, int>", Kind: KindRegular, Position: -1, Order: "none"},
		{Name: "s", Type: "set<text>", Kind: KindRegular, Position: -1, Order: "none"},
	}}
	plain, err := NewTable(def, testTypeOf)
	if err != nil {
		t.Fatal(err)
	}
	indexed := *def
	indexed.Indexes = []IndexDef{
		{Name: "mk", Column: "m", Target: "keys(m)", Elements: "keys"},
		{Name: "mv", Column: "m", Target: "values(m)", Elements: "values"},
		{Name: "me", Column: "m", Target: "entries(m)", Elements: "entries"},
		{Name: "sv", Column: "s", Target: "values(s)", Elements: "values"},
	}
	tbl, err := NewTable(&indexed, testTypeOf)
	if err != nil {
		t.Fatal(err)
	}
	write := func(tb *Table, k int, col, key string, v []byte) {
		m := e.NewMutation()
		tg := CellTarget{Clustering: [][]byte{i32(1)}, Column: col, PathType: testTypeOf0, Path: []byte(key)}
		if err := m.WriteCell(tb, i32(k), tg, Cell{Timestamp: 1, Value: v}); err != nil {
			t.Fatal(err)
		}
		if err := e.Apply(m); err != nil {
			t.Fatal(err)
		}
	}
	write(plain, 1, "m", "x", i32(7)) // before the index exists
	if err := e.BuildIndex(tbl, "mk", 0); err != nil {
		t.Fatal(err)
	}
	if err := e.BuildIndex(tbl, "me", 0); err != nil {
		t.Fatal(err)
	}
	write(tbl, 2, "m", "y", i32(7))
	write(tbl, 3, "s", "red", []byte{})
	lookup := func(name string, k, v []byte, elem bool) []string {
		var et = testTypeOf0
		if !elem {
			et = nil
		}
		val, err := tbl.ElementIndexValue(name, testTypeOf0, k, v, et)
		if err != nil {
			t.Fatal(err)
		}
		return scanIndex(t, e, tbl, name, string(val), ScanOptions{})
	}
	for _, tc := range []struct {
		name string
		got  []string
		want string
	}{
		{"keys(m) x, built", lookup("mk", []byte("x"), nil, false), "[1/1]"},
		{"keys(m) y, written", lookup("mk", []byte("y"), nil, false), "[2/1]"},
		{"values(m) 7, written only", lookup("mv", nil, i32(7), false), "[2/1]"},
		{"entries(m) x=7, built", lookup("me", []byte("x"), i32(7), false), "[1/1]"},
		{"entries(m) y=8", lookup("me", []byte("y"), i32(8), false), "[]"},
		{"values(s) red", lookup("sv", nil, []byte("red"), true), "[3/1]"},
	} {
		if fmt.Sprint(tc.got) != tc.want {
			t.Errorf("%s: %v, want %s", tc.name, tc.got, tc.want)
		}
	}
}

// testTypeOf0 is the text type of testTable's paths.
var testTypeOf0 = func() datatype.DataType { t, _ := testTypeOf("text"); return t }()
