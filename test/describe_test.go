package test

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/gocql/gocql"

	"github.com/cqld/cqld/server"
)

// describeSchemaDDL makes a schema with every type, user types (nested,
// frozen and not, one using another declared after it), indexes (regular,
// static, clustering and full()), clustering orders, static columns,
// counters, quoted and reserved names, every table option, a
// NetworkTopologyStrategy keyspace without durable writes, and a dropped
// column, and user-defined functions (overloaded, quoted, with tuple,
// collection and user type arguments) and aggregates using them.
var describeSchemaDDL = []string{
	`CREATE KEYSPACE rt WITH replication = {'class': 'NetworkTopologyStrategy', 'datacenter1': 1, 'dc2': 3} AND durable_writes = false`,
	`CREATE KEYSPACE "Rt2" WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 2}`,
	`CREATE TYPE rt.phone (country int, number text)`,
	`CREATE TYPE rt.b_used (v int, w varchar)`,
	`CREATE TYPE rt.a_user (u frozen<b_used>, "Name" text)`,
	`CREATE TYPE rt.address (street text, "City" text, phones list<frozen<phone>>, tags set<text>, loc frozen<tuple<double, double>>)`,
	`CREATE TABLE rt.all_types (k int PRIMARY KEY, a ascii, bi bigint, b blob, bo boolean, d date, de decimal, db double, du duration,
		f float, i inet, n int, si smallint, tx text, ti time, ts timestamp, tu timeuuid, tiny tinyint, u uuid, vc varchar, vi varint,
		l list<text>, s set<int>, m map<text, frozen<list<int>>>, fl frozen<list<int>>, fs frozen<set<text>>, fm frozen<map<int, text>>,
		tup tuple<int, text, frozen<address>>, addr frozen<address>, ph phone, au frozen<a_user>)`,
	`CREATE TABLE rt.clustered (p1 int, p2 text, c1 timestamp, c2 text, c3 int, s text static, "Value" blob, PRIMARY KEY ((p1, p2), c1, c2, c3))
		WITH CLUSTERING ORDER BY (c1 DESC, c2 ASC, c3 DESC) AND comment = 'it''s clustered' AND default_time_to_live = 3600
		AND gc_grace_seconds = 7200 AND bloom_filter_fp_chance = 0.0001 AND caching = {'keys': 'NONE', 'rows_per_partition': '10'}
		AND compaction = {'class': 'LeveledCompactionStrategy', 'sstable_size_in_mb': '160'}
		AND compression = {'class': 'SnappyCompressor', 'chunk_length_in_kb': '64'} AND crc_check_chance = 0.5
		AND speculative_retry = 'ALWAYS' AND additional_write_policy = 'NEVER' AND read_repair = 'NONE'
		AND memtable_flush_period_in_ms = 60000 AND min_index_interval = 64 AND max_index_interval = 1024`,
	`CREATE INDEX ON rt.clustered (s)`,
	`CREATE INDEX by_c2 ON rt.clustered (c2)`,
	`CREATE INDEX ON rt.clustered ("Value")`,
	`CREATE INDEX full_fl ON rt.all_types (full(fl))`,
	`CREATE TABLE rt.counts (k text PRIMARY KEY, hits counter, misses counter)`,
	`CREATE TABLE rt.lexical (k 'LexicalUUIDType', c 'org.apache.cassandra.db.marshal.LexicalUUIDType', v int, PRIMARY KEY (k, c))`,
	`CREATE TABLE "Rt2"."MixedCase" ("Key" int PRIMARY KEY, "select" text, "from" int)`,
	`CREATE FUNCTION rt.plus(a int, b int) CALLED ON NULL INPUT RETURNS int LANGUAGE javascript AS 'a + b'`,
	`CREATE FUNCTION rt.plus(a text, b text) RETURNS NULL ON NULL INPUT RETURNS text LANGUAGE javascript AS $$a + b$$`,
	`CREATE FUNCTION rt."Half"(s int) RETURNS NULL ON NULL INPUT RETURNS double LANGUAGE javascript AS 's / 2'`,
	`CREATE FUNCTION rt.describe_it(t tuple<int, text>, l list<frozen<tuple<int, text>>>, a address) CALLED ON NULL INPUT RETURNS text
		LANGUAGE javascript AS 'var s = "it''s";
s'`,
	`CREATE FUNCTION rt.pair_add(p tuple<int, text>, v int) CALLED ON NULL INPUT RETURNS tuple<int, text> LANGUAGE javascript AS 'p'`,
	`CREATE AGGREGATE rt.total(int) SFUNC plus STYPE int FINALFUNC "Half" INITCOND 0`,
	`CREATE AGGREGATE rt.pairs(int) SFUNC pair_add STYPE tuple<int, text> INITCOND (0, 'none')`,
	`ALTER TABLE rt.all_types DROP f`,
	`ALTER TABLE rt.counts DROP misses`,
}

// describeRows runs a DESCRIBE through s, a few rows a page, and returns
// its rows.
func describeRows(t *testing.T, s *gocql.Session, q string) [][]string {
	t.Helper()
	iter := s.Query(q).PageSize(3).Iter()
	cols := iter.Columns()
	var out [][]string
	for {
		row := make([]string, len(cols))
		dest := make([]any, len(cols))
		for i := range row {
			dest[i] = &row[i]
		}
		if !iter.Scan(dest...) {
			break
		}
		out = append(out, row)
	}
	if err := iter.Close(); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return out
}

// schemaRows returns the system_schema rows of keyspaces ks (each a map
// of column to value), table by table, leaving out the columns in skip.
func schemaRows(t *testing.T, s *gocql.Session, ks []string, skip ...string) map[string][]map[string]any {
	t.Helper()
	out := map[string][]map[string]any{}
	for _, table := range []string{"keyspaces", "tables", "columns", "types", "indexes", "dropped_columns", "functions", "aggregates"} {
		for _, k := range ks {
			rows, err := s.Query(`SELECT * FROM system_schema.`+table+` WHERE keyspace_name = ?`, k).Iter().SliceMap()
			if err != nil {
				t.Fatalf("system_schema.%s: %v", table, err)
			}
			for _, r := range rows {
				for _, c := range skip {
					delete(r, c)
				}
			}
			out[table] = append(out[table], rows...)
		}
	}
	return out
}

// TestDescribeRoundTrip runs DESCRIBE SCHEMA's output, as cqlsh pages it,
// on an empty node: the schema it makes is the one described, in
// system_schema and in DESCRIBE's own output. WITH INTERNALS the tables
// keep their ids and their dropped columns too.
func TestDescribeRoundTrip(t *testing.T) {
	src := newUDFNode(t)
	s, err := gocqlCluster(src.Addr()).CreateSession()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, q := range describeSchemaDDL {
		if err := s.Query(q).Exec(); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	keyspaces := []string{"Rt2", "rt"}
	for _, internals := range []bool{false, true} {
		t.Run(fmt.Sprintf("internals=%v", internals), func(t *testing.T) {
			q := "DESCRIBE SCHEMA"
			skip := []string{"id"}
			if internals {
				q += " WITH INTERNALS"
				skip = nil
			}
			described := describeRows(t, s, q)
			var names []string
			for _, r := range described {
				names = append(names, r[1]+" "+r[0]+"."+r[2])
			}
			// Keyspaces by name ignoring case, each followed by its types in
			// the order that creates them, its functions and aggregates by
			// name and its tables with their indexes.
			want := []string{"keyspace rt.rt", "type rt.b_used", "type rt.a_user", "type rt.phone", "type rt.address",
				"function rt.describe_it(tuple<int, text>, list<frozen<tuple<int, text>>>, address)", "function rt.\"Half\"(int)",
				"function rt.pair_add(tuple<int, text>, int)", "function rt.plus(int, int)", "function rt.plus(text, text)",
				"aggregate rt.pairs(int)", "aggregate rt.total(int)",
				"table rt.all_types", "index rt.full_fl", "table rt.clustered", "index rt.by_c2", "index rt.clustered_s_idx",
				"index rt.\"clustered_Value_idx\"", "table rt.counts", "table rt.lexical",
				"keyspace \"Rt2\".\"Rt2\"", "table \"Rt2\".\"MixedCase\""}
			if !reflect.DeepEqual(names, want) {
				t.Fatalf("DESCRIBE SCHEMA gave\n%q\nwant\n%q", names, want)
			}

			dst := newUDFNode(t)
			d, err := gocqlCluster(dst.Addr()).CreateSession()
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			for _, r := range described {
				// WITH INTERNALS, a table's drops follow its CREATE, as
				// statements of their own.
				for _, stmt := range strings.SplitAfter(r[3], ";\nALTER TABLE ") {
					stmt = strings.TrimSuffix(stmt, "\nALTER TABLE ")
					if !strings.HasPrefix(stmt, "CREATE") {
						stmt = "ALTER TABLE " + stmt
					}
					if err := d.Query(stmt).Exec(); err != nil {
						t.Fatalf("%s: %v", stmt, err)
					}
				}
			}
			again := describeRows(t, d, q)
			if !reflect.DeepEqual(again, described) {
				for i := range described {
					if i >= len(again) || !reflect.DeepEqual(again[i], described[i]) {
						t.Fatalf("row %d described again:\n%q\nfirst:\n%q", i, at(again, i), described[i])
					}
				}
				t.Fatalf("described again: %d rows, first %d", len(again), len(described))
			}
			a, b := schemaRows(t, s, keyspaces, skip...), schemaRows(t, d, keyspaces, skip...)
			if !internals {
				// Only WITH INTERNALS recreates the drops.
				delete(a, "dropped_columns")
				delete(b, "dropped_columns")
			}
			if !reflect.DeepEqual(a, b) {
				for table := range a {
					if !reflect.DeepEqual(a[table], b[table]) {
						t.Errorf("system_schema.%s differs:\n%v\nrecreated:\n%v", table, a[table], b[table])
					}
				}
			}
			if n := len(schemaRows(t, d, keyspaces)["dropped_columns"]); (n == 2) != internals {
				t.Errorf("%d dropped columns recreated", n)
			}
		})
	}
}

// newUDFNode is newNode with user-defined functions enabled.
func newUDFNode(t *testing.T) *server.Node {
	cfg := testConfig(t, t.TempDir())
	cfg.UserDefinedFunctionsEnabled, cfg.ScriptedUserDefinedFunctionsEnabled = true, true
	return startNode(t, cfg)
}

func at(rows [][]string, i int) []string {
	if i < len(rows) {
		return rows[i]
	}
	return nil
}

// TestDescribeStatements checks what DESCRIBE answers over the wire in a
// session's keyspace and without one: the columns of a listing and of an
// element, the session's keyspace for TABLES and for a bare name, CLUSTER
// with the keyspace's range ownership, and the errors.
func TestDescribeStatements(t *testing.T) {
	node := newUDFNode(t)
	s := tableSession(t, node.Addr(), "dk")
	for _, q := range []string{
		`CREATE TABLE t (k int PRIMARY KEY, v text)`,
		`CREATE TYPE u (f int)`,
		`CREATE FUNCTION inc(x int) RETURNS NULL ON NULL INPUT RETURNS int LANGUAGE javascript AS 'x + 1'`,
		`CREATE FUNCTION inc(x bigint) RETURNS NULL ON NULL INPUT RETURNS bigint LANGUAGE javascript AS 'x + 1'`,
		`CREATE FUNCTION plus(s int, x int) CALLED ON NULL INPUT RETURNS int LANGUAGE javascript AS 's + x'`,
		`CREATE AGGREGATE incs(int) SFUNC plus STYPE int FINALFUNC inc`,
	} {
		if err := s.Query(q).Exec(); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	iter := s.Query("DESCRIBE TABLES").Iter()
	var cols []string
	for _, c := range iter.Columns() {
		cols = append(cols, c.Keyspace+"."+c.Table+"."+c.Name+" "+c.TypeInfo.Type().String())
	}
	if err := iter.Close(); err != nil {
		t.Fatal(err)
	}
	if want := []string{"system.describe.keyspace_name varchar", "system.describe.type varchar", "system.describe.name varchar"}; !reflect.DeepEqual(cols, want) {
		t.Errorf("DESCRIBE TABLES columns %q, want %q", cols, want)
	}
	if got := describeRows(t, s, "DESCRIBE TABLES"); !reflect.DeepEqual(got, [][]string{{"dk", "table", "t"}}) {
		t.Errorf("DESCRIBE TABLES in dk: %q", got)
	}
	if got := describeRows(t, s, "DESC t"); len(got) != 1 || len(got[0]) != 4 || !strings.HasPrefix(got[0][3], "CREATE TABLE dk.t (\n    k int PRIMARY KEY,\n    v text\n) WITH additional_write_policy = '99p'\n") {
		t.Errorf("DESC t: %q", got)
	}
	if got := describeRows(t, s, "DESCRIBE TYPES"); !reflect.DeepEqual(got, [][]string{{"dk", "type", "u"}}) {
		t.Errorf("DESCRIBE TYPES in dk: %q", got)
	}
	// SCHEMA leaves the system keyspaces out, FULL SCHEMA has them.
	keyspaces := func(q string) map[string]bool {
		in := map[string]bool{}
		for _, r := range describeRows(t, s, q) {
			in[r[0]] = true
		}
		return in
	}
	if in := keyspaces("DESCRIBE SCHEMA"); !in["dk"] || in["system"] || in["system_schema"] {
		t.Errorf("DESCRIBE SCHEMA describes the keyspaces %v", in)
	}
	if in := keyspaces("DESCRIBE FULL SCHEMA"); !in["dk"] || !in["system"] || !in["system_schema"] || !in["system_views"] {
		t.Errorf("DESCRIBE FULL SCHEMA describes the keyspaces %v", in)
	}
	if got := describeRows(t, s, "DESCRIBE TYPE u"); !reflect.DeepEqual(got, [][]string{{"dk", "type", "u", "CREATE TYPE dk.u (\n    f int\n);"}}) {
		t.Errorf("DESCRIBE TYPE u: %q", got)
	}

	if got := describeRows(t, s, "DESCRIBE FUNCTIONS"); !reflect.DeepEqual(got, [][]string{{"dk", "function", "inc(bigint)"}, {"dk", "function", "inc(int)"}, {"dk", "function", "plus(int, int)"}}) {
		t.Errorf("DESCRIBE FUNCTIONS in dk: %q", got)
	}
	if got := describeRows(t, s, "DESCRIBE AGGREGATES"); !reflect.DeepEqual(got, [][]string{{"dk", "aggregate", "incs(int)"}}) {
		t.Errorf("DESCRIBE AGGREGATES in dk: %q", got)
	}
	if got, want := describeRows(t, s, "DESCRIBE FUNCTION inc"), [][]string{
		{"dk", "function", "inc(bigint)", "CREATE FUNCTION dk.inc(x bigint)\n    RETURNS NULL ON NULL INPUT\n    RETURNS bigint\n    LANGUAGE javascript\n    AS $$x + 1$$;"},
		{"dk", "function", "inc(int)", "CREATE FUNCTION dk.inc(x int)\n    RETURNS NULL ON NULL INPUT\n    RETURNS int\n    LANGUAGE javascript\n    AS $$x + 1$$;"},
	}; !reflect.DeepEqual(got, want) {
		t.Errorf("DESCRIBE FUNCTION inc: %q", got)
	}
	if got := describeRows(t, s, "DESCRIBE AGGREGATE dk.incs"); !reflect.DeepEqual(got, [][]string{{"dk", "aggregate", "incs(int)", "CREATE AGGREGATE dk.incs(int)\n    SFUNC plus\n    STYPE int\n    FINALFUNC inc;"}}) {
		t.Errorf("DESCRIBE AGGREGATE dk.incs: %q", got)
	}

	var name, partitioner, snitch string
	var ownership map[string][]string
	if err := s.Query("DESCRIBE CLUSTER").Scan(&name, &partitioner, &snitch, &ownership); err != nil {
		t.Fatal(err)
	}
	var tokens []string
	if err := s.Query(`SELECT tokens FROM system.local`).Scan(&tokens); err != nil {
		t.Fatal(err)
	}
	host, _ := hostPort(node.Addr())
	if name != "Test Cluster" || partitioner != "Murmur3Partitioner" || snitch != "DynamicEndpointSnitch" || len(ownership) != len(tokens) {
		t.Errorf("DESCRIBE CLUSTER: %q %q %q %v (tokens %v)", name, partitioner, snitch, ownership, tokens)
	}
	for _, tok := range tokens {
		if eps := ownership[tok]; len(eps) != 1 || !strings.HasPrefix(eps[0], "/"+host+":") {
			t.Errorf("range ending at %s owned by %q", tok, eps)
		}
	}

	for _, tc := range []struct{ q, want string }{
		{"DESCRIBE TABLE nope", "Table 'nope' not found in keyspace 'dk'"},
		{"DESCRIBE nope", "'nope' not found in keyspace 'dk'"},
		{"DESCRIBE KEYSPACE nope", "'nope' not found in keyspaces"},
		{"DESCRIBE FUNCTION f", "User defined function 'f' not found in 'dk'"},
		{"DESCRIBE AGGREGATE inc", "User defined aggregate 'inc' not found in 'dk'"},
	} {
		err := s.Query(tc.q).Exec()
		var rerr gocql.RequestError
		if !errors.As(err, &rerr) || rerr.Code() != gocql.ErrCodeInvalid || rerr.Message() != tc.want {
			t.Errorf("%s: %v, want Invalid %q", tc.q, err, tc.want)
		}
	}

	// Without a keyspace: every keyspace, the node's own too.
	o, err := gocqlCluster(node.Addr()).CreateSession()
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	var ks []string
	for _, r := range describeRows(t, o, "DESCRIBE KEYSPACES") {
		ks = append(ks, r[2])
	}
	for _, want := range []string{"dk", "system", "system_schema", "system_virtual_schema"} {
		if !slices.Contains(ks, want) {
			t.Errorf("DESCRIBE KEYSPACES: %q lacks %s", ks, want)
		}
	}
	err = o.Query("DESCRIBE TABLE t").Exec()
	var rerr gocql.RequestError
	if !errors.As(err, &rerr) || rerr.Message() != "No keyspace specified and no current keyspace" {
		t.Errorf("DESCRIBE TABLE t without a keyspace: %v", err)
	}
	if err := o.Query("DESCRIBE CLUSTER").Scan(&name, &partitioner, &snitch); err != nil {
		t.Errorf("DESCRIBE CLUSTER without a keyspace: %v", err)
	}
}

// TestDescribePythonDriver runs drivers/python/describe.py: DESCRIBE as
// cqlsh sends it through the Python driver, paged, run back into the node
// and described the same; DESCRIBE CLUSTER's map of lists; the errors.
func TestDescribePythonDriver(t *testing.T) {
	needPythonDriver(t)
	node := newUDFNode(t)
	host, port := hostPort(node.Addr())
	runDriverScript(t, "drivers/python", debianPython, "describe.py", host, strconv.Itoa(port), "pydescribe")
}
