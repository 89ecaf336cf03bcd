package schema

import (
	"encoding/binary"
	"errors"
	"testing"
	"time"

	"github.com/cqld/cqld/mutation"
	"github.com/cqld/cqld/replica"
	"github.com/cqld/cqld/statements"
	"github.com/cqld/cqld/storage"
)

func i32(n int) []byte { return binary.BigEndian.AppendUint32(nil, uint32(n)) }

// apply applies cql in session keyspace ks on n, failing t on an error.
func (n *testNode) apply(t *testing.T, ks, cql string, at int64) {
	t.Helper()
	stmt, _, err := statements.Parse(cql)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := n.schema.Apply(NewChange(stmt, cql, ks, at, []string{"dc1"})); err != nil {
		t.Fatalf("%s: %v", cql, err)
	}
}

// compiled is ks.name as the current schema defines it.
func (n *testNode) compiled(t *testing.T, ks, name string) *storage.Table {
	t.Helper()
	cur := n.catalog.Current()
	tbl, err := compile(cur.Table(ks, name), cur.Keyspace(ks))
	if err != nil {
		t.Fatal(err)
	}
	return tbl.st
}

// An index created over rows already written is built from them before
// the change answers; a dropped table's rows and index entries are gone.
func TestDataFollowsTheSchema(t *testing.T) {
	n := newTestNode(t)
	n.apply(t, "", `CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}`, 1)
	n.apply(t, "ks", `CREATE TABLE t (k int PRIMARY KEY, v int)`, 2)
	tbl := n.compiled(t, "ks", "t")
	m := mutation.New()
	for k, v := range map[int]int{1: 7, 2: 7, 3: 8} {
		m.WriteCell(tbl, i32(k), storage.CellTarget{Column: "v"}, storage.Cell{Timestamp: 10, Value: i32(v)})
	}
	if err := replica.NewLocal(n.engine).Apply(t.Context(), m, nil); err != nil {
		t.Fatal(err)
	}
	m.Release()

	n.apply(t, "ks", `CREATE INDEX vi ON t (v)`, 3)
	indexed := n.compiled(t, "ks", "t")
	if ix := indexed.Def.IndexOn("v"); ix == nil || ix.Building {
		t.Fatalf("index after CREATE INDEX: %+v", ix)
	}
	count := func(what string, tbl *storage.Table, want int) {
		t.Helper()
		got := 0
		if err := n.engine.ScanIndex(tbl, "vi", i32(7), storage.ScanOptions{Now: 1}, func([]byte, *storage.Row) bool { got++; return true }); err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Fatalf("%s: %d rows indexed under v = 7, want %d", what, got, want)
		}
	}
	count("built", indexed, 2)

	n.apply(t, "ks", `DROP TABLE t`, 4)
	rows := 0
	if err := n.engine.Scan(tbl, storage.ScanOptions{Now: 1}, func([]byte, *storage.Row) bool { rows++; return true }); err != nil {
		t.Fatal(err)
	}
	if rows != 0 {
		t.Fatalf("%d rows of a dropped table remain", rows)
	}
	count("dropped", indexed, 0)
}

// failingBuilds is an engine whose index builds fail, as on a full disk.
type failingBuilds struct{ *storage.Engine }

func (failingBuilds) BuildIndex(*storage.Table, string, int32) error {
	return errors.New("injected build failure")
}

// A failed index build is this node's alone: the index stays in the
// schema, marked building (queries scan), and a restart builds it.
func TestFailedIndexBuildKeepsTheIndex(t *testing.T) {
	n := newTestNode(t)
	n.schema.data = failingBuilds{n.engine}
	n.apply(t, "", `CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}`, 1)
	n.apply(t, "ks", `CREATE TABLE t (k int PRIMARY KEY, v int)`, 2)
	n.apply(t, "ks", `CREATE INDEX vi ON t (v)`, 3)
	if ix := n.catalog.Current().Table("ks", "t").IndexOn("v"); ix == nil || !ix.Building {
		t.Fatalf("index after a failed build: %+v, want it kept, building", ix)
	}
	n.schema.data = n.engine
	if err := n.schema.FinishIndexBuilds(time.Unix(4, 0)); err != nil {
		t.Fatal(err)
	}
	if ix := n.catalog.Current().Table("ks", "t").IndexOn("v"); ix == nil || ix.Building {
		t.Fatalf("index after FinishIndexBuilds: %+v, want built", ix)
	}
}

// applyAll applies cql, as one change, on every node.
func applyAll(t *testing.T, ks, cql string, at int64, nodes ...*testNode) {
	t.Helper()
	stmt, _, err := statements.Parse(cql)
	if err != nil {
		t.Fatal(err)
	}
	ch := NewChange(stmt, cql, ks, at, []string{"dc1"})
	for _, n := range nodes {
		if _, err := n.schema.Apply(ch); err != nil {
			t.Fatalf("%s: %v", cql, err)
		}
	}
}

// A node restored from another's snapshot (it fell behind the log) builds
// the indexes the snapshot brings over the rows it holds, and keeps its
// own build state of the indexes it had.
func TestRestoreBuildsTheIndexesItBrings(t *testing.T) {
	a, b := newTestNode(t), newTestNode(t)
	applyAll(t, "", `CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}`, 1, a, b)
	applyAll(t, "ks", `CREATE TABLE t (k int PRIMARY KEY, v int, w int)`, 2, a, b)
	// b builds an index on w that fails: it stays building there.
	b.schema.data = failingBuilds{b.engine}
	applyAll(t, "ks", `CREATE INDEX wi ON t (w)`, 3, a, b)
	b.schema.data = b.engine
	// b holds rows; then a applies an index b never hears of.
	tbl := b.compiled(t, "ks", "t")
	m := mutation.New()
	for k, v := range map[int]int{1: 7, 2: 7, 3: 8} {
		m.WriteCell(tbl, i32(k), storage.CellTarget{Column: "v"}, storage.Cell{Timestamp: 10, Value: i32(v)})
	}
	if err := replica.NewLocal(b.engine).Apply(t.Context(), m, nil); err != nil {
		t.Fatal(err)
	}
	m.Release()
	a.apply(t, "ks", `CREATE INDEX vi ON t (v)`, 4)
	snap, err := a.schema.Snapshot()
	if err != nil {
		t.Fatal(err)
	}

	if err := b.schema.Restore(snap); err != nil {
		t.Fatal(err)
	}
	got := b.catalog.Current().Table("ks", "t")
	if ix := got.IndexOn("v"); ix == nil || ix.Building {
		t.Fatalf("the index the snapshot brought: %+v, want built", ix)
	}
	if ix := got.IndexOn("w"); ix == nil || !ix.Building {
		t.Fatalf("the index b had, building: %+v, want still building", ix)
	}
	rows := 0
	if err := b.engine.ScanIndex(b.compiled(t, "ks", "t"), "vi", i32(7), storage.ScanOptions{Now: 1},
		func([]byte, *storage.Row) bool { rows++; return true }); err != nil {
		t.Fatal(err)
	}
	if rows != 2 {
		t.Fatalf("%d of b's rows indexed under v = 7, want 2", rows)
	}
	if a.catalog.Digest() != b.catalog.Digest() {
		t.Fatal("schema versions differ after the restore")
	}
}
