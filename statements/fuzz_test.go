package statements

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

var fuzzSeeds = []string{
	"SELECT * FROM system.local WHERE key='local'",
	"SELECT schema_version FROM system.local WHERE key='local'",
	"SELECT * FROM system.peers_v2",
	"select peer, rpc_address, data_center from system.peers",
	"SELECT durable_writes, replication FROM system_schema.keyspaces WHERE keyspace_name = ?",
	"SELECT keyspace_name, table_name, column_name, clustering_order, type, kind, position FROM system_schema.columns",
	"SELECT * FROM system_schema.tables WHERE keyspace_name='ks' AND table_name='t'",
	"SELECT count(*) FROM system_schema.keyspaces",
	"CREATE KEYSPACE IF NOT EXISTS gocql_test WITH replication = {'class':'SimpleStrategy','replication_factor':1}",
	"CREATE KEYSPACE ks WITH REPLICATION = { 'class' : 'NetworkTopologyStrategy', 'datacenter1' : 3 } AND DURABLE_WRITES = false;",
	"DROP KEYSPACE IF EXISTS gocql_test",
	`USE "gocql_test"`,
	"SELECT JSON DISTINCT a, writetime(b), CAST(c AS text), (int)?, m[1..2], u.f AS x FROM ks.t WHERE token(a) > ? AND (b, c) IN ((1, 2)) AND d CONTAINS KEY :k GROUP BY a ORDER BY b DESC PER PARTITION LIMIT 1 LIMIT 10 ALLOW FILTERING",
	"SELECT * FROM t WHERE a = {f: 1} AND b = {'k': [1, 2]} AND c = (1, 'x') AND d = -1.5E-3 AND e = 0xCAFE AND f = 1h30m AND g = P1D AND h = 123e4567-e89b-12d3-a456-426614174000 AND i = $$x$$",
	"SELECT * FROM t WHERE k = 'abc",
	"INSERT INTO t (a) VALUES (1)",
	"/* c */ SELECT -- x\n * FROM t; // y",
	"INSERT INTO tuple_test (id, coord) VALUES(?, (?, ?));",
	"INSERT INTO t JSON ? DEFAULT UNSET IF NOT EXISTS USING TTL ? AND TIMESTAMP 1",
	"UPDATE ks.t USING TTL ? SET a = a + 1, l = [?] + l, m[?] = ?, u.f = ?, c = c -1, s -= {1} WHERE k = ? IF a = ? AND m['x'] IN (1, ?) AND u.f > 0",
	"DELETE a, b[?], c.f FROM ks.t USING TIMESTAMP ? WHERE k = ? IF EXISTS",
	"BEGIN UNLOGGED BATCH USING TIMESTAMP ? INSERT INTO t (a) VALUES (?); UPDATE t SET a = ? WHERE k = ? DELETE FROM t WHERE k = ? IF a = ?; APPLY BATCH",
	"TRUNCATE TABLE ks.t",
	"CREATE INDEX IF NOT EXISTS ks.i ON ks.t (full(fl))",
	"CREATE INDEX ON t (keys(m), v)",
	"DROP INDEX IF EXISTS ks.i",
	"CREATE TABLE IF NOT EXISTS ks.t (a int, b text, c timestamp, m map<text, frozen<list<int>>>, s int static, PRIMARY KEY ((a, b), c)) WITH CLUSTERING ORDER BY (c DESC) AND default_time_to_live = 10 AND compaction = {'class': 'LeveledCompactionStrategy'} AND COMPACT STORAGE",
	"ALTER TABLE IF EXISTS t ADD IF NOT EXISTS (a int, b set<text> static)",
	"ALTER TABLE t DROP IF EXISTS (a, b) USING TIMESTAMP 1",
	"ALTER TABLE t RENAME a TO b AND c TO d",
	"ALTER TABLE t WITH comment = 'x' AND gc_grace_seconds = 0",
	"DROP TABLE IF EXISTS ks.t",
	"ALTER KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1} AND durable_writes = true",
	"CREATE TYPE IF NOT EXISTS ks.addr (street text, zip frozen<tuple<int, int>>)",
	"ALTER TYPE ks.addr RENAME IF EXISTS zip TO code AND street TO road",
	"DROP TYPE IF EXISTS addr",
	"CREATE OR REPLACE FUNCTION ks.f(a int, b text) CALLED ON NULL INPUT RETURNS int LANGUAGE java AS 'return a;'",
	"CREATE ROLE IF NOT EXISTS r WITH PASSWORD = 'p' AND LOGIN = true AND OPTIONS = {'a': 'b'} AND ACCESS TO DATACENTERS {'dc1'}",
	"ALTER USER 'u' WITH HASHED PASSWORD 'h' NOSUPERUSER",
	"GRANT SELECT, MODIFY PERMISSION ON TABLE ks.t TO 'r'",
	"REVOKE ALL PERMISSIONS ON ROLE r FROM \"R\"",
	"LIST ALL ON KEYSPACE ks OF r NORECURSIVE",
	// Deep and long inputs: each nesting construct just under and over
	// the bound.
	"SELECT * FROM t WHERE a = " + strings.Repeat("[", maxDepth-1) + strings.Repeat("]", maxDepth-1),
	"SELECT * FROM t WHERE a = " + strings.Repeat("(", 4*maxDepth),
	"SELECT * FROM t WHERE a = " + strings.Repeat("{1:", 4*maxDepth) + "1",
	"SELECT * FROM t WHERE a = " + strings.Repeat("f(", 4*maxDepth),
	"SELECT * FROM t WHERE a = " + strings.Repeat("CAST(", 4*maxDepth),
	"SELECT * FROM t WHERE a = " + strings.Repeat("(int)", 4*maxDepth) + "1",
	"SELECT * FROM t WHERE a = " + strings.Repeat("1+", 4*maxDepth) + "1",
	"SELECT * FROM t WHERE a = " + strings.Repeat("-(", 4*maxDepth),
	"SELECT " + strings.Repeat("(int)", 4*maxDepth) + "a FROM t",
	"SELECT " + strings.Repeat("a*", 4*maxDepth) + "a FROM t",
	"SELECT a" + strings.Repeat(".f[1]", 2*maxDepth) + " FROM t",
	"SELECT * FROM t WHERE " + strings.Repeat("(", 4*maxDepth) + "a = 1",
	"UPDATE t SET a = " + strings.Repeat("1-", 4*maxDepth) + "1 WHERE k = 1",
	"CREATE TABLE t (k int PRIMARY KEY, v " + strings.Repeat("frozen<list<", maxDepth) + "int)",
	"SELECT * FROM t WHERE a = " + strings.Repeat("(", 4*maxDepth) + "'",
}

// treeDepth is the most Terms and SelectorExprs nested in one another in
// the tree v.
func treeDepth(v reflect.Value) int {
	d := 0
	switch v.Kind() {
	case reflect.Interface, reflect.Pointer:
		if v.IsNil() {
			return 0
		}
		if v.Kind() == reflect.Interface && (v.Type() == reflect.TypeFor[Term]() || v.Type() == reflect.TypeFor[SelectorExpr]()) {
			d = 1
		}
		return d + treeDepth(v.Elem())
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			d = max(d, treeDepth(v.Field(i)))
		}
	case reflect.Slice:
		for i := 0; i < v.Len(); i++ {
			d = max(d, treeDepth(v.Index(i)))
		}
	}
	return d
}

func FuzzParse(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, query string) {
		st, n, err := Parse(query)
		if err != nil {
			var se *SyntaxError
			var ue *UnsupportedError
			if !errors.As(err, &se) && !errors.As(err, &ue) {
				t.Fatalf("Parse(%q): unexpected error type %T: %v", query, err, err)
			}
			if st != nil || n != 0 {
				t.Fatalf("Parse(%q): statement returned with error", query)
			}
			return
		}
		if st == nil || n < 0 {
			t.Fatalf("Parse(%q) = %v, %d", query, st, n)
		}
		// The tree is as shallow as the nesting bound says: whatever walks
		// it recursively has a bounded stack.
		if d := treeDepth(reflect.ValueOf(st)); d > 2*maxDepth+2 {
			t.Fatalf("Parse(%.100q): a tree %d deep", query, d)
		}
		// The bind markers in the tree are numbered 0..n-1 in order.
		var idx []int
		collectMarkers(reflect.ValueOf(st), &idx)
		if len(idx) != n {
			t.Fatalf("Parse(%q): %d markers in tree, count %d", query, len(idx), n)
		}
		seen := make([]bool, n)
		for _, i := range idx {
			if i < 0 || i >= n || seen[i] {
				t.Fatalf("Parse(%q): bad marker indexes %v", query, idx)
			}
			seen[i] = true
		}
		// Parsing is deterministic (the pooled parser state does not leak).
		st2, n2, err2 := Parse(query)
		if err2 != nil || n2 != n || !reflect.DeepEqual(st, st2) {
			t.Fatalf("Parse(%q) not deterministic", query)
		}
	})
}

// collectMarkers appends the Index of every *BindMarker reachable from v.
func collectMarkers(v reflect.Value, idx *[]int) {
	switch v.Kind() {
	case reflect.Interface, reflect.Pointer:
		if v.IsNil() {
			return
		}
		if m, ok := v.Interface().(*BindMarker); ok {
			*idx = append(*idx, m.Index)
			return
		}
		collectMarkers(v.Elem(), idx)
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			collectMarkers(v.Field(i), idx)
		}
	case reflect.Slice:
		for i := 0; i < v.Len(); i++ {
			collectMarkers(v.Index(i), idx)
		}
	}
}

func FuzzParseType(f *testing.F) {
	for _, s := range []string{"int", "frozen<map<text, text>>", "list<frozen<tuple<int, text>>>", "map<uuid,blob>", "tuple<int,int>", "'x.Y'", "ks.udt", "vector<float, 3>"} {
		f.Add(s)
	}
	f.Add("tuple<int, frozen<ks.addr>>")
	f.Fuzz(func(t *testing.T, s string) {
		// A normalised type parses and normalises to itself.
		if n, err := NormalizeType(s); err == nil {
			if n2, err := NormalizeType(n); err != nil || n2 != n {
				t.Fatalf("NormalizeType(%q) = %q, which normalises to %q, %v", s, n, n2, err)
			}
		}
		dt, frozen, err := ParseTypeFrozen(s)
		if err != nil {
			return
		}
		// TypeString output parses back to the same type and is stable.
		str := TypeString(dt, frozen)
		dt2, frozen2, err := ParseTypeFrozen(str)
		if err != nil || !reflect.DeepEqual(dt, dt2) || TypeString(dt2, frozen2) != str {
			t.Fatalf("round trip of %q via %q: %v %v", s, str, dt2, err)
		}
	})
}
