package test

import (
	"fmt"
	"testing"
	"time"
)

// TestPurgeTombstones deletes rows, cells and partitions of two tables,
// one with gc_grace_seconds = 0, runs the node's purge, and checks that
// reads are unchanged (also after a restart), that the zero-grace table
// lost its tombstones while the other kept them, and that a write older
// than a purged tombstone comes back, as it does in Cassandra after a
// compaction past gc_grace_seconds.
func TestPurgeTombstones(t *testing.T) {
	cfg := testConfig(t, t.TempDir())
	node, err := startStoppable(t, cfg)
	if err != nil {
		t.Fatal(err)
	}
	s := tableSession(t, node.Addr(), "app")
	mustExec(t, s, `CREATE TABLE zero (k int, c int, v text, PRIMARY KEY (k, c)) WITH gc_grace_seconds = 0`)
	mustExec(t, s, `CREATE TABLE grace (k int, c int, v text, PRIMARY KEY (k, c))`)
	for _, table := range []string{"zero", "grace"} {
		for k := 0; k < 10; k++ {
			for c := 0; c < 10; c++ {
				mustExec(t, s, fmt.Sprintf(`INSERT INTO %s (k, c, v) VALUES (?, ?, ?) USING TIMESTAMP 1000`, table), k, c, fmt.Sprint(k, c))
			}
		}
		mustExec(t, s, fmt.Sprintf(`DELETE FROM %s WHERE k = 0`, table))
		mustExec(t, s, fmt.Sprintf(`DELETE FROM %s WHERE k = 1 AND c > 4`, table))
		mustExec(t, s, fmt.Sprintf(`DELETE FROM %s WHERE k = 2 AND c = 0`, table))
		mustExec(t, s, fmt.Sprintf(`DELETE v FROM %s WHERE k = 3 AND c = 0`, table))
	}
	read := func() string {
		var out []string
		for _, table := range []string{"zero", "grace"} {
			out = append(out, fmt.Sprint(rowsOf(t, s, fmt.Sprintf(`SELECT k, c, v FROM %s`, table))))
		}
		return fmt.Sprint(out)
	}
	before := read()
	// Cassandra purges tombstones whose deletion time is before now minus
	// gc_grace_seconds: judge a little later than the deletions' second.
	later := time.Now().Add(2 * time.Second)
	first, err := node.Coord.Purge(later)
	if err != nil {
		t.Fatal(err)
	}
	if after := read(); after != before {
		t.Fatalf("reads changed by the purge:\n%s\n%s", before, after)
	}
	// Both tables drop the shadowed rows (10 + 5 + 1 rows of marker and v:
	// 32 keys in partitions 0, 1 and 2); the zero-grace table also drops
	// its four tombstones (partition, range, row, and v of row (3, 0)).
	if first.Partitions != 7 || first.Keys != 2*32+4 {
		t.Errorf("first purge: %+v, want 7 partitions, %d keys", first, 2*32+4)
	}
	// A second purge finds nothing more to do.
	second, err := node.Coord.Purge(later)
	if err != nil || second.Keys != 0 {
		t.Fatalf("second purge: %+v, %v", second, err)
	}

	// The grace table still shadows a late write older than its deletion;
	// the zero table, whose tombstone is gone, does not.
	for _, table := range []string{"zero", "grace"} {
		mustExec(t, s, fmt.Sprintf(`INSERT INTO %s (k, c, v) VALUES (0, 0, 'late') USING TIMESTAMP 1`, table))
	}
	if got := rowsOf(t, s, `SELECT v FROM zero WHERE k = 0`); len(got) != 1 {
		t.Errorf("zero: late write older than the purged tombstone reads %v, want it back", got)
	}
	if got := rowsOf(t, s, `SELECT v FROM grace WHERE k = 0`); len(got) != 0 {
		t.Errorf("grace: late write older than the kept tombstone reads %v, want nothing", got)
	}

	want := read()
	s.Close()
	if err := stopNode(node); err != nil {
		t.Fatal(err)
	}
	node = startNode(t, cfg)
	s = tableSession(t, node.Addr(), "app")
	if got := read(); got != want {
		t.Fatalf("after restart:\n%s\nwant\n%s", got, want)
	}
}
