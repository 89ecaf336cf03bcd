package test

import (
	"fmt"
	"reflect"
	"sort"
	"testing"
	"time"

	"github.com/gocql/gocql"

	"github.com/cqld/cqld/server"
)

// TestSecondaryIndexGocql drives an index on a regular column through
// gocql: rows written before and after CREATE INDEX, updates that move a
// row to another value, deletes, TTL expiry, paged reads in token order,
// and a restart.
func TestSecondaryIndexGocql(t *testing.T) {
	cfg := testConfig(t, t.TempDir())
	// One clock across the restart, so the row that expired stays expired.
	clock := newFakeClock()
	n1, err := startStoppableWith(t, cfg, server.Options{Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	s := connect(t, n1.Addr())
	mustExec(t, s, `CREATE KEYSPACE ix WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}`)
	mustExec(t, s, `CREATE TABLE ix.t (k int, c int, v int, PRIMARY KEY (k, c))`)
	// want[v] is the set of "k/c" rows whose current v is v.
	want := map[int]map[string]bool{}
	set := func(k, c, v int) {
		for _, rows := range want {
			delete(rows, fmt.Sprintf("%d/%d", k, c))
		}
		if want[v] == nil {
			want[v] = map[string]bool{}
		}
		want[v][fmt.Sprintf("%d/%d", k, c)] = true
	}
	ins := s.Query(`INSERT INTO ix.t (k, c, v) VALUES (?, ?, ?)`)
	for k := 0; k < 40; k++ {
		for c := 0; c < 3; c++ {
			if err := ins.Bind(k, c, (k+c)%4).Exec(); err != nil {
				t.Fatal(err)
			}
			set(k, c, (k+c)%4)
		}
	}
	if err := s.Query(`SELECT k FROM ix.t WHERE v = 1`).Exec(); err == nil {
		t.Fatal("a query on an unindexed column ran without ALLOW FILTERING")
	}
	mustExec(t, s, `CREATE INDEX ON ix.t (v)`)
	for k := 40; k < 60; k++ {
		if err := ins.Bind(k, 0, k%4).Exec(); err != nil {
			t.Fatal(err)
		}
		set(k, 0, k%4)
	}
	check := func(s *gocql.Session, stage string) {
		t.Helper()
		for v := 0; v < 5; v++ {
			iter := s.Query(`SELECT token(k), k, c FROM ix.t WHERE v = ?`, v).PageSize(7).Iter()
			got := map[string]bool{}
			var tok, last int64 = 0, -1 << 63
			var k, c int
			for iter.Scan(&tok, &k, &c) {
				if tok < last {
					t.Errorf("%s: v=%d: token %d after %d: not in token order", stage, v, tok, last)
				}
				last = tok
				key := fmt.Sprintf("%d/%d", k, c)
				if got[key] {
					t.Errorf("%s: v=%d: row %s twice", stage, v, key)
				}
				got[key] = true
			}
			if err := iter.Close(); err != nil {
				t.Fatalf("%s: v=%d: %v", stage, v, err)
			}
			if !equalSets(got, want[v]) {
				t.Errorf("%s: v=%d: got %v, want %v", stage, v, sortedKeys(got), sortedKeys(want[v]))
			}
		}
	}
	check(s, "after create")

	for k := 0; k < 40; k += 3 {
		mustExec(t, s, `UPDATE ix.t SET v = 4 WHERE k = ? AND c = 1`, k)
		set(k, 1, 4)
	}
	for k := 1; k < 40; k += 5 {
		mustExec(t, s, `DELETE FROM ix.t WHERE k = ? AND c = 2`, k)
		for _, rows := range want {
			delete(rows, fmt.Sprintf("%d/2", k))
		}
	}
	mustExec(t, s, `DELETE v FROM ix.t WHERE k = 2 AND c = 0`)
	for _, rows := range want {
		delete(rows, "2/0")
	}
	check(s, "after updates and deletes")

	mustExec(t, s, `INSERT INTO ix.t (k, c, v) VALUES (100, 0, 3) USING TTL 1`)
	set(100, 0, 3)
	check(s, "before TTL expiry")
	// Once the row itself has expired the index must not return it.
	clock.Advance(time.Second)
	delete(want[3], "100/0")
	var n int
	if err := s.Query(`SELECT count(*) FROM ix.t WHERE k = 100`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("a row written with TTL 1, a second later: count %d, %v; want 0", n, err)
	}
	check(s, "after TTL expiry")

	var limited int
	iter := s.Query(`SELECT k FROM ix.t WHERE v = 3 LIMIT 5`).PageSize(2).Iter()
	for iter.Scan(new(int)) {
		limited++
	}
	if err := iter.Close(); err != nil {
		t.Fatal(err)
	}
	if limited != 5 {
		t.Errorf("LIMIT 5 over pages of 2 returned %d rows", limited)
	}

	s.Close()
	if err := stopNode(n1); err != nil {
		t.Fatal(err)
	}
	n2 := startNodeWith(t, cfg, server.Options{Now: clock.Now})
	s2 := connect(t, n2.Addr())
	defer s2.Close()
	var name string
	var opts map[string]string
	if err := s2.Query(`SELECT index_name, options FROM system_schema.indexes WHERE keyspace_name = 'ix' AND table_name = 't'`).Scan(&name, &opts); err != nil {
		t.Fatal(err)
	}
	if name != "t_v_idx" || opts["target"] != "v" {
		t.Errorf("after restart: index %q %v", name, opts)
	}
	check(s2, "after restart")

	if err := s2.Query(`DROP INDEX ix.t_v_idx`).Exec(); err != nil {
		t.Fatal(err)
	}
	if err := s2.Query(`SELECT k FROM ix.t WHERE v = 1`).Exec(); err == nil {
		t.Error("a query on a dropped index ran without ALLOW FILTERING")
	}
}

func connect(t *testing.T, addr string) *gocql.Session {
	t.Helper()
	s, err := gocqlCluster(addr).CreateSession()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func equalSets(a, b map[string]bool) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if !b[k] {
			return false
		}
	}
	return true
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// TestIndexSchemaChanges checks that CREATE INDEX and DROP INDEX answer,
// and push, SCHEMA_CHANGE UPDATED on the index's table, as Cassandra 4.0
// does.
func TestIndexSchemaChanges(t *testing.T) {
	node, _ := newNode(t)
	s := tableSession(t, node.Addr(), "ix_ev")
	mustExec(t, s, `CREATE TABLE ix_ev.t (k int PRIMARY KEY, v int)`)
	listener, other := schemaConns(t, node.Addr())
	for _, q := range []string{`CREATE INDEX vi ON ix_ev.t (v)`, `DROP INDEX ix_ev.vi`} {
		res, ev := schemaChange(t, other, listener, q)
		if want := []string{"UPDATED", "TABLE", "ix_ev", "t"}; !reflect.DeepEqual(res, want) {
			t.Fatalf("%s: result %q, want %q", q, res, want)
		}
		if want := []string{"SCHEMA_CHANGE", "UPDATED", "TABLE", "ix_ev", "t"}; !reflect.DeepEqual(ev, want) {
			t.Fatalf("%s: event %q, want %q", q, ev, want)
		}
	}
}
