package coordinator

import (
	"testing"

	"github.com/datastax/go-cassandra-native-protocol/message"

	"github.com/cqld/cqld/storage"
)

// TestIndexBuildingFallsBackToScan simulates a crash in the middle of an
// index build (the index marked building, none of its entries written):
// queries must still find every row (they scan), and the build a restart
// runs (schema.FinishIndexBuilds) must make the index whole again.
func TestIndexBuildingFallsBackToScan(t *testing.T) {
	c := newTestCoordinator(t)
	for _, q := range []string{
		`CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}`,
		`CREATE TABLE ks.t (k int PRIMARY KEY, v int)`,
		`INSERT INTO ks.t (k, v) VALUES (1, 7)`,
		`INSERT INTO ks.t (k, v) VALUES (2, 7)`,
		`INSERT INTO ks.t (k, v) VALUES (3, 8)`,
		`CREATE INDEX vi ON ks.t (v)`,
	} {
		runQuery(t, c, q)
	}
	count := func(stage string) {
		t.Helper()
		rows := runQuery(t, c, `SELECT k FROM ks.t WHERE v = 7`).(*message.RowsResult)
		if len(rows.Data) != 2 {
			t.Errorf("%s: %d rows for v = 7, want 2", stage, len(rows.Data))
		}
	}
	count("built")

	def := c.catalog.Current().Table("ks", "t")
	ti, err := compileTable(def, c.catalog.Current().Keyspace("ks"))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.engine.Truncate(ti.st.IndexTable("vi")); err != nil {
		t.Fatal(err)
	}
	building := *def
	building.Indexes = []storage.IndexDef{def.Indexes[0]}
	building.Indexes[0].Building = true
	if err := c.catalog.ReplaceTable(&building); err != nil {
		t.Fatal(err)
	}
	count("building, no entries")

	if err := c.schema.FinishIndexBuilds(c.opts.Now()); err != nil {
		t.Fatal(err)
	}
	if c.catalog.Current().Table("ks", "t").Indexes[0].Building {
		t.Fatal("still building after FinishIndexBuilds")
	}
	count("rebuilt")
}
