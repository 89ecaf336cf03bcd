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
