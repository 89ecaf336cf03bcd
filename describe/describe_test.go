package describe

import (
	"strings"
	"testing"

	"github.com/datastax/go-cassandra-native-protocol/primitive"

	"github.com/cqld/cqld/cqlerr"
	"github.com/cqld/cqld/statements"
	"github.com/cqld/cqld/statements/types"
	"github.com/cqld/cqld/storage"
)

// The expected outputs below are Cassandra 4.0's, from its
// DescribeStatementTest.

const tableParams = `additional_write_policy = '99p'
    AND bloom_filter_fp_chance = 0.01
    AND caching = {'keys': 'ALL', 'rows_per_partition': 'NONE'}
    AND cdc = false
    AND comment = ''
    AND compaction = {'class': 'org.apache.cassandra.db.compaction.SizeTieredCompactionStrategy', 'max_threshold': '32', 'min_threshold': '4'}
    AND compression = {'chunk_length_in_kb': '16', 'class': 'org.apache.cassandra.io.compress.LZ4Compressor'}
    AND crc_check_chance = 1.0
    AND default_time_to_live = 0
    AND extensions = {}
    AND gc_grace_seconds = 864000
    AND max_index_interval = 2048
    AND memtable_flush_period_in_ms = 0
    AND min_index_interval = 128
    AND read_repair = 'BLOCKING'
    AND speculative_retry = '99p';`

func col(name, typ, kind string, pos int, order string) storage.ColumnDef {
	return storage.ColumnDef{Name: name, Type: typ, Kind: kind, Position: pos, Order: order}
}

func reg(name, typ string) storage.ColumnDef {
	return col(name, typ, storage.KindRegular, -1, "none")
}

func table(ks, name string, cols ...storage.ColumnDef) *storage.TableDef {
	return &storage.TableDef{Keyspace: ks, Name: name, Columns: cols, Options: storage.DefaultTableOptions(), ID: [16]byte{0x5a, 0x1c, 0x39, 0x5e, 0xb4, 0x1f, 0x11, 0xe5, 0x9f, 0x22, 0xba, 0x0b, 0xe0, 0x48, 0x3c, 0x18}}
}

// testSchema is the schema of Cassandra's testDescribe, without the
// materialized view.
func testSchema() Schema {
	var allTypes []storage.ColumnDef
	allTypes = append(allTypes, col("num", "int", storage.KindPartitionKey, 0, "none"))
	for _, c := range [][2]string{
		{"setcol", "set<tinyint>"}, {"asciicol", "ascii"}, {"bigintcol", "bigint"}, {"blobcol", "blob"},
		{"booleancol", "boolean"}, {"decimalcol", "decimal"}, {"doublecol", "double"}, {"durationcol", "duration"},
		{"floatcol", "float"}, {"frozenlistcol", "frozen<list<text>>"}, {"frozenmapcol", "frozen<map<timestamp, timeuuid>>"},
		{"frozensetcol", "frozen<set<bigint>>"}, {"intcol", "int"}, {"smallintcol", "smallint"}, {"textcol", "text"},
		{"timestampcol", "timestamp"}, {"tinyintcol", "tinyint"}, {"tuplecol", "frozen<tuple<text, int, frozen<tuple<timestamp>>>>"},
		{"uuidcol", "uuid"}, {"varcharcol", "text"}, {"varintcol", "varint"}, {"listcol", "list<decimal>"},
		{"mapcol", "map<timestamp, timeuuid>"},
	} {
		allTypes = append(allTypes, reg(c[0], c[1]))
	}
	test := &storage.KeyspaceDef{Name: "test", DurableWrites: true,
		Replication: map[string]string{"class": "org.apache.cassandra.locator.SimpleStrategy", "replication_factor": "1"},
		Tables:      map[string]*storage.TableDef{}}
	for _, t := range []*storage.TableDef{
		table("test", "has_all_types", allTypes...),
		table("test", "Test", col("id", "int", storage.KindPartitionKey, 0, "none"), col("col", "int", storage.KindClustering, 0, "asc"), reg("val", "text")),
		table("test", "users", col("userid", "text", storage.KindPartitionKey, 0, "none"), reg("age", "int"), reg("firstname", "text"), reg("lastname", "text")),
	} {
		test.Tables[t.Name] = t
	}
	test.Tables["Test"].Indexes = []storage.IndexDef{{Name: "Test_val_idx", Column: "val", Target: "val"}, {Name: "Test_col_idx", Column: "col", Target: "col"}}
	test.Tables["users"].Indexes = []storage.IndexDef{{Name: "myindex", Column: "age", Target: "age"}}
	other := &storage.KeyspaceDef{Name: "cql_test_keyspace", DurableWrites: true,
		Replication: map[string]string{"class": "org.apache.cassandra.locator.SimpleStrategy", "replication_factor": "1"}}
	system := &storage.KeyspaceDef{Name: "system", DurableWrites: true, Replication: map[string]string{"class": "org.apache.cassandra.locator.LocalStrategy"}}
	vs := &storage.KeyspaceDef{Name: "system_virtual_schema", Tables: map[string]*storage.TableDef{}}
	vcols := table("system_virtual_schema", "columns",
		col("keyspace_name", "text", storage.KindPartitionKey, 0, "none"),
		col("table_name", "text", storage.KindClustering, 0, "asc"),
		col("column_name", "text", storage.KindClustering, 1, "asc"),
		reg("clustering_order", "text"), reg("column_name_bytes", "blob"), reg("kind", "text"), reg("position", "int"), reg("type", "text"))
	vcols.Options = storage.TableOptions{Comment: "virtual column definitions"}
	vs.Tables["columns"] = vcols
	return Schema{Keyspaces: []*storage.KeyspaceDef{test, other, system, vs}, Virtual: map[string]bool{"system_virtual_schema": true}}
}

const (
	allTypesCQL = `CREATE TABLE test.has_all_types (
    num int PRIMARY KEY,
    asciicol ascii,
    bigintcol bigint,
    blobcol blob,
    booleancol boolean,
    decimalcol decimal,
    doublecol double,
    durationcol duration,
    floatcol float,
    frozenlistcol frozen<list<text>>,
    frozenmapcol frozen<map<timestamp, timeuuid>>,
    frozensetcol frozen<set<bigint>>,
    intcol int,
    smallintcol smallint,
    textcol text,
    timestampcol timestamp,
    tinyintcol tinyint,
    tuplecol frozen<tuple<text, int, frozen<tuple<timestamp>>>>,
    uuidcol uuid,
    varcharcol text,
    varintcol varint,
    listcol list<decimal>,
    mapcol map<timestamp, timeuuid>,
    setcol set<tinyint>
) WITH ` + tableParams
	testTableCQL = `CREATE TABLE test."Test" (
    id int,
    col int,
    val text,
    PRIMARY KEY (id, col)
) WITH CLUSTERING ORDER BY (col ASC)
    AND ` + tableParams
	usersCQL = `CREATE TABLE test.users (
    userid text PRIMARY KEY,
    age int,
    firstname text,
    lastname text
) WITH ` + tableParams
	testKeyspaceCQL = `CREATE KEYSPACE test WITH replication = {'class': 'SimpleStrategy', 'replication_factor': '1'}  AND durable_writes = true;`
)

func describe(t *testing.T, session, query string, s Schema) [][]string {
	t.Helper()
	rows, err := describeErr(session, query, s)
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return rows
}

func describeErr(session, query string, s Schema) ([][]string, error) {
	st, _, err := statements.Parse(query)
	if err != nil {
		return nil, err
	}
	res, err := Describe(&Request{Statement: st.(*statements.Describe), Session: session, Schema: s, ReleaseVersion: "4.0.11", Version: primitive.ProtocolVersion4})
	if err != nil {
		return nil, err
	}
	var out [][]string
	for _, r := range res.Rows {
		var row []string
		for _, v := range r {
			row = append(row, string(v))
		}
		out = append(out, row)
	}
	return out, nil
}

func checkRows(t *testing.T, query string, got, want [][]string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d rows, want %d:\n%q", query, len(got), len(want), got)
	}
	for i := range want {
		for j := range want[i] {
			if j >= len(got[i]) || got[i][j] != want[i][j] {
				t.Errorf("%s: row %d column %d:\n%s\nwant:\n%s", query, i, j, at(got[i], j), want[i][j])
			}
		}
		if len(got[i]) != len(want[i]) {
			t.Errorf("%s: row %d has %d columns, want %d", query, i, len(got[i]), len(want[i]))
		}
	}
}

func at(r []string, j int) string {
	if j < len(r) {
		return r[j]
	}
	return "<missing>"
}

func TestDescribeSchema(t *testing.T) {
	s := testSchema()
	want := [][]string{
		{"cql_test_keyspace", "keyspace", "cql_test_keyspace", `CREATE KEYSPACE cql_test_keyspace WITH replication = {'class': 'SimpleStrategy', 'replication_factor': '1'}  AND durable_writes = true;`},
		{"test", "keyspace", "test", testKeyspaceCQL},
		{"test", "table", "has_all_types", allTypesCQL},
		{"test", "table", `"Test"`, testTableCQL},
		{"test", "index", `"Test_col_idx"`, `CREATE INDEX "Test_col_idx" ON test."Test" (col);`},
		{"test", "index", `"Test_val_idx"`, `CREATE INDEX "Test_val_idx" ON test."Test" (val);`},
		{"test", "table", "users", usersCQL},
		{"test", "index", "myindex", `CREATE INDEX myindex ON test.users (age);`},
	}
	for _, q := range []string{"DESCRIBE SCHEMA", "DESC SCHEMA"} {
		checkRows(t, q, describe(t, "cql_test_keyspace", q, s), want)
	}
	checkRows(t, "DESCRIBE KEYSPACE test", describe(t, "", "DESCRIBE KEYSPACE test", s), want[1:])
	checkRows(t, "DESCRIBE test", describe(t, "", "DESCRIBE test", s), want[1:])
	checkRows(t, "DESCRIBE ONLY KEYSPACE test", describe(t, "", "DESCRIBE ONLY KEYSPACE test", s), want[1:2])
	checkRows(t, "DESCRIBE KEYSPACE", describe(t, "test", "DESCRIBE KEYSPACE", s), want[1:])

	full := describe(t, "", "DESCRIBE FULL SCHEMA", s)
	if len(full) != len(want)+3 || full[1][2] != "system" || full[2][2] != "system_virtual_schema" || full[3][1] != "table" {
		t.Fatalf("FULL SCHEMA: %q", full)
	}
	checkRows(t, "system", full[1:2], [][]string{{"system", "keyspace", "system", `CREATE KEYSPACE system WITH replication = {'class': 'LocalStrategy'}  AND durable_writes = true;`}})
	checkRows(t, "FULL SCHEMA", append(full[:1:1], full[4:]...), want)
}

func TestDescribeTables(t *testing.T) {
	s := testSchema()
	for _, q := range []string{"describe TABLES", "DESC tables"} {
		checkRows(t, q, describe(t, "test", q, s), [][]string{
			{"test", "table", "has_all_types"}, {"test", "table", `"Test"`}, {"test", "table", "users"},
		})
	}
	for _, tc := range []struct{ session, query string }{
		{"", `DESCRIBE TABLE test."Test"`}, {"", `desc columnfamily test."Test"`}, {"", `DESCRIBE test."Test"`},
		{"test", `DESCRIBE TABLE "Test"`}, {"test", `DESCRIBE "Test"`},
	} {
		checkRows(t, tc.query, describe(t, tc.session, tc.query, s), [][]string{
			{"test", "table", `"Test"`, testTableCQL},
			{"test", "index", `"Test_col_idx"`, `CREATE INDEX "Test_col_idx" ON test."Test" (col);`},
			{"test", "index", `"Test_val_idx"`, `CREATE INDEX "Test_val_idx" ON test."Test" (val);`},
		})
	}
	for _, tc := range []struct{ session, query string }{
		{"", "DESCRIBE INDEX test.myindex"}, {"", "DESCRIBE test.myindex"}, {"test", "DESCRIBE INDEX myindex"}, {"test", "desc myindex"},
	} {
		checkRows(t, tc.query, describe(t, tc.session, tc.query, s), [][]string{{"test", "index", "myindex", `CREATE INDEX myindex ON test.users (age);`}})
	}
	checkRows(t, "allTypes", describe(t, "", "DESCRIBE TABLE test.has_all_types", s), [][]string{{"test", "table", "has_all_types", allTypesCQL}})
}

func TestDescribeKeyspaces(t *testing.T) {
	s := testSchema()
	want := [][]string{
		{"cql_test_keyspace", "keyspace", "cql_test_keyspace"}, {"system", "keyspace", "system"},
		{"system_virtual_schema", "keyspace", "system_virtual_schema"}, {"test", "keyspace", "test"},
	}
	for _, session := range []string{"", "test"} {
		checkRows(t, "DESCRIBE KEYSPACES", describe(t, session, "DESCRIBE KEYSPACES", s), want)
	}
}

func TestDescribeVirtual(t *testing.T) {
	s := testSchema()
	checkRows(t, "keyspace", describe(t, "", "DESCRIBE ONLY KEYSPACE system_virtual_schema;", s), [][]string{{
		"system_virtual_schema", "keyspace", "system_virtual_schema",
		"/*\nWarning: Keyspace system_virtual_schema is a virtual keyspace and cannot be recreated with CQL.\nStructure, for reference:\nVIRTUAL KEYSPACE system_virtual_schema;\n*/"}})
	checkRows(t, "table", describe(t, "", "DESCRIBE TABLE system_virtual_schema.columns;", s), [][]string{{
		"system_virtual_schema", "table", "columns",
		"/*\n" +
			"Warning: Table system_virtual_schema.columns is a virtual table and cannot be recreated with CQL.\n" +
			"Structure, for reference:\n" +
			"VIRTUAL TABLE system_virtual_schema.columns (\n" +
			"    keyspace_name text,\n" +
			"    table_name text,\n" +
			"    column_name text,\n" +
			"    clustering_order text,\n" +
			"    column_name_bytes blob,\n" +
			"    kind text,\n" +
			"    position int,\n" +
			"    type text,\n" +
			"    PRIMARY KEY (keyspace_name, table_name, column_name)\n" +
			") WITH CLUSTERING ORDER BY (table_name ASC, column_name ASC)\n" +
			"    AND comment = 'virtual column definitions';\n" +
			"*/"}})
}

func TestDescribeInternals(t *testing.T) {
	tb := table("ks", "t", col("pk1", "text", storage.KindPartitionKey, 0, "none"), col("pk2", "int", storage.KindPartitionKey, 1, "none"),
		col("c", "int", storage.KindClustering, 0, "asc"), col("s", "decimal", storage.KindStatic, -1, "none"),
		reg("v1", "text"), reg("v2", "int"), reg("v3", "int"))
	s := Schema{Keyspaces: []*storage.KeyspaceDef{{Name: "ks", Replication: map[string]string{"class": "org.apache.cassandra.locator.SimpleStrategy", "replication_factor": "1"}, DurableWrites: true, Tables: map[string]*storage.TableDef{"t": tb}}}}
	create := "CREATE TABLE ks.t (\n" +
		"    pk1 text,\n" +
		"    pk2 int,\n" +
		"    c int,\n" +
		"    s decimal static,\n" +
		"    v1 text,\n" +
		"    v2 int,\n" +
		"    v3 int,\n" +
		"    PRIMARY KEY ((pk1, pk2), c)\n" +
		") WITH ID = 5a1c395e-b41f-11e5-9f22-ba0be0483c18\n" +
		"    AND CLUSTERING ORDER BY (c ASC)\n" +
		"    AND " + tableParams
	const q = "DESCRIBE TABLE ks.t WITH INTERNALS"
	checkRows(t, q, describe(t, "", q, s), [][]string{{"ks", "table", "t", create}})

	tb.Columns = tb.Columns[:len(tb.Columns)-1]
	tb.Dropped = map[string]storage.DroppedColumn{"v3": {Type: "int", Time: 1589286942065000}}
	drop := "ALTER TABLE ks.t DROP v3 USING TIMESTAMP 1589286942065000;"
	checkRows(t, q, describe(t, "", q, s), [][]string{{"ks", "table", "t", create + "\n" + drop}})

	tb.Columns = append(tb.Columns, reg("v3", "int"))
	checkRows(t, q, describe(t, "", q, s), [][]string{{"ks", "table", "t", create + "\n" + drop + "\nALTER TABLE ks.t ADD v3 int;"}})

	// A one-column primary key (testPrimaryKeyPositionWithAndWithoutInternals).
	one := table("ks", "o", col("pk", "text", storage.KindPartitionKey, 0, "none"), reg("v1", "text"), reg("v2", "int"))
	one.Dropped = map[string]storage.DroppedColumn{"v3": {Type: "int", Time: 1589286942065000}}
	s.Keyspaces[0].Tables["o"] = one
	checkRows(t, "o", describe(t, "", "DESCRIBE TABLE ks.o WITH INTERNALS", s), [][]string{{"ks", "table", "o",
		"CREATE TABLE ks.o (\n    pk text PRIMARY KEY,\n    v1 text,\n    v2 int,\n    v3 int\n) WITH ID = 5a1c395e-b41f-11e5-9f22-ba0be0483c18\n    AND " + tableParams +
			"\nALTER TABLE ks.o DROP v3 USING TIMESTAMP 1589286942065000;"}})
	checkRows(t, "o", describe(t, "", "DESCRIBE TABLE ks.o", s), [][]string{{"ks", "table", "o",
		"CREATE TABLE ks.o (\n    pk text PRIMARY KEY,\n    v1 text,\n    v2 int\n) WITH " + tableParams}})
}

func TestDescribeTypes(t *testing.T) {
	k := &storage.KeyspaceDef{Name: "ks", Replication: map[string]string{"class": "org.apache.cassandra.locator.SimpleStrategy", "replication_factor": "1"}, DurableWrites: true,
		Types: map[string]*storage.TypeDef{
			"type_00":  {Keyspace: "ks", Name: "type_00", FieldNames: []string{"a", "b"}, FieldTypes: []string{"int", "frozen<type_02>"}},
			"type_01":  {Keyspace: "ks", Name: "type_01", FieldNames: []string{"x", "y"}, FieldTypes: []string{"text", "text"}},
			"type_02":  {Keyspace: "ks", Name: "type_02", FieldNames: []string{"a", "b"}, FieldTypes: []string{"text", "frozen<type_01>"}},
			"reserved": {Keyspace: "ks", Name: "reserved", FieldNames: []string{"token", "desc"}, FieldTypes: []string{"text", "text"}},
		}}
	s := Schema{Keyspaces: []*storage.KeyspaceDef{k}}
	checkRows(t, "TYPES", describe(t, "ks", "DESCRIBE TYPES", s), [][]string{
		{"ks", "type", "reserved"}, {"ks", "type", "type_00"}, {"ks", "type", "type_01"}, {"ks", "type", "type_02"}})
	t00 := "CREATE TYPE ks.type_00 (\n    a int,\n    b frozen<type_02>\n);"
	t01 := "CREATE TYPE ks.type_01 (\n    x text,\n    y text\n);"
	t02 := "CREATE TYPE ks.type_02 (\n    a text,\n    b frozen<type_01>\n);"
	res := "CREATE TYPE ks.reserved (\n    \"token\" text,\n    \"desc\" text\n);"
	checkRows(t, "TYPE", describe(t, "ks", "DESCRIBE TYPE type_00", s), [][]string{{"ks", "type", "type_00", t00}})
	checkRows(t, "KEYSPACE", describe(t, "ks", "DESCRIBE KEYSPACE ks", s), [][]string{
		{"ks", "keyspace", "ks", "CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': '1'}  AND durable_writes = true;"},
		{"ks", "type", "reserved", res},
		{"ks", "type", "type_01", t01}, {"ks", "type", "type_02", t02}, {"ks", "type", "type_00", t00}})
}

func TestDescribeErrors(t *testing.T) {
	s := testSchema()
	for _, tc := range []struct{ session, query, want string }{
		{"", "DESCRIBE TABLE foop", "No keyspace specified and no current keyspace"},
		{"", "DESCRIBE MATERIALIZED VIEW foop", "No keyspace specified and no current keyspace"},
		{"", "DESCRIBE INDEX foop", "No keyspace specified and no current keyspace"},
		{"", "DESCRIBE TYPE foop", "No keyspace specified and no current keyspace"},
		{"", "DESCRIBE FUNCTION foop", "No keyspace specified and no current keyspace"},
		{"", "DESCRIBE AGGREGATE foop", "No keyspace specified and no current keyspace"},
		{"", "DESCRIBE AGGREGATE test.aggr_foo", "User defined aggregate 'aggr_foo' not found in 'test'"},
		{"", "DESCRIBE FUNCTION test.func_foo", "User defined function 'func_foo' not found in 'test'"},
		{"", "DESCRIBE test.func_foo", "'func_foo' not found in keyspace 'test'"},
		{"", "DESCRIBE foo", "'foo' not found in keyspaces"},
		{"", "DESCRIBE test2", "'test2' not found in keyspaces"},
		{"test", "DESCRIBE users2", "'users2' not found in keyspace 'test'"},
		{"", "DESCRIBE test.users2", "'users2' not found in keyspace 'test'"},
		{"", "DESCRIBE TABLE test.nope", "Table 'nope' not found in keyspace 'test'"},
		{"", "DESCRIBE TYPE test.nope", "User defined type 'nope' not found in 'test'"},
		{"", "DESCRIBE INDEX test.nope", "Table for existing index 'nope' not found in 'test'"},
		{"", "DESCRIBE MATERIALIZED VIEW test.nope", "Materialized view 'nope' not found in 'test'"},
		{"gone", "DESCRIBE TABLES", "'gone' not found in keyspaces"},
	} {
		_, err := describeErr(tc.session, tc.query, s)
		var ce *cqlerr.Error
		if !asInvalid(err, &ce) || ce.Msg != tc.want {
			t.Errorf("%s: %v, want Invalid %q", tc.query, err, tc.want)
		}
	}
}

func asInvalid(err error, ce **cqlerr.Error) bool {
	e, ok := err.(*cqlerr.Error)
	*ce = e
	return ok && e.Code == primitive.ErrorCodeInvalid
}

// TestJavaDouble: DESCRIBE prints the double table options as Java's
// Double.toString does.
func TestJavaDouble(t *testing.T) {
	for in, want := range map[float64]string{
		0.01: "0.01", 1: "1.0", 0.1: "0.1", 0.001: "0.001", 0.0001: "1.0E-4", 1e7: "1.0E7", 1234567: "1234567.0",
		0.5: "0.5", 12345678.9: "1.23456789E7", 0.00012: "1.2E-4", 100: "100.0", 0: "0.0",
	} {
		if got := types.JavaFloatString(in, 64); got != want {
			t.Errorf("JavaFloatString(%v, 64) = %q, want %q", in, got, want)
		}
	}
}

func TestReplicationOrder(t *testing.T) {
	// Cassandra keeps the options in a HashMap made from the schema's map
	// of four entries (class included): capacity 8. "dc1".hashCode() is
	// 99218 (0x18392), spread to bucket 3; dc2 goes to bucket 2 and dc3
	// to 5.
	k := &storage.KeyspaceDef{Name: "ks", DurableWrites: false, Replication: map[string]string{
		"class": "org.apache.cassandra.locator.NetworkTopologyStrategy", "dc1": "3", "dc2": "2", "dc3": "1"}}
	got := keyspaceCQL(k, false)
	want := "CREATE KEYSPACE ks WITH replication = {'class': 'NetworkTopologyStrategy', 'dc2': '2', 'dc1': '3', 'dc3': '1'}  AND durable_writes = false;"
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if !strings.Contains(keyspaceCQL(&storage.KeyspaceDef{Name: "ks", Replication: map[string]string{"class": "com.example.Strategy", "a": "1"}}, false), "{'class': 'com.example.Strategy', 'a': '1'}") {
		t.Error("a strategy of another package keeps its full name")
	}
}

// functionSchema is the functions and aggregates of Cassandra's
// testDescribeFunctionAndAggregate and testDescribeFunctionWithTuples, as
// system_schema keeps them.
func functionSchema() Schema {
	fn := func(name string, args [][2]string, ret string, called bool, body string) *storage.FunctionDef {
		f := &storage.FunctionDef{Keyspace: "fk", Name: name, ReturnType: ret, Language: "java", Body: body, CalledOnNullInput: called}
		for _, a := range args {
			f.ArgNames, f.ArgTypes = append(f.ArgNames, a[0]), append(f.ArgTypes, a[1])
		}
		return f
	}
	initcond := "42"
	k := &storage.KeyspaceDef{Name: "fk", DurableWrites: true,
		Replication: map[string]string{"class": "org.apache.cassandra.locator.SimpleStrategy", "replication_factor": "1"},
		Tables:      map[string]*storage.TableDef{"t": table("fk", "t", col("k", "int", storage.KindPartitionKey, 0, "none"))},
		Types:       map[string]*storage.TypeDef{"u": {Keyspace: "fk", Name: "u", FieldNames: []string{"f"}, FieldTypes: []string{"int"}}},
		Functions: []*storage.FunctionDef{
			fn("f_over", [][2]string{{"input", "int"}, {"other_in", "ascii"}}, "text", false, `return "Hello World";`),
			fn("f_over", [][2]string{{"input", "text"}, {"other_in", "ascii"}}, "text", false, `return "Hello World";`),
			fn("Final", [][2]string{{"state", "int"}}, "int", false, "return state;"),
			fn("f", nil, "int", true, "throw new RuntimeException();"),
			fn("int_state", [][2]string{{"state", "int"}, {"add_to", "int"}}, "int", true, "return state + add_to;"),
			fn("tuples", [][2]string{{"t", "frozen<tuple<int>>"}, {"l", "list<frozen<tuple<int, text>>>"}, {"nt", "frozen<tuple<frozen<tuple<int, text>>, text>>"}},
				"frozen<tuple<int, text>>", true, "throw new RuntimeException();"),
		},
		Aggregates: []*storage.AggregateDef{
			{Keyspace: "fk", Name: "a_nondet", ArgTypes: []string{"int"}, StateFunc: "int_state", StateType: "int", InitCond: &initcond, ReturnType: "int"},
			{Keyspace: "fk", Name: "a_det", ArgTypes: []string{"int"}, StateFunc: "int_state", StateType: "int", FinalFunc: "Final", ReturnType: "int"},
		},
	}
	return Schema{Keyspaces: []*storage.KeyspaceDef{k}}
}

const (
	fCQL       = "CREATE FUNCTION fk.f()\n    CALLED ON NULL INPUT\n    RETURNS int\n    LANGUAGE java\n    AS $$throw new RuntimeException();$$;"
	fOverInt   = "CREATE FUNCTION fk.f_over(input int, other_in ascii)\n    RETURNS NULL ON NULL INPUT\n    RETURNS text\n    LANGUAGE java\n    AS $$return \"Hello World\";$$;"
	fOverText  = "CREATE FUNCTION fk.f_over(input text, other_in ascii)\n    RETURNS NULL ON NULL INPUT\n    RETURNS text\n    LANGUAGE java\n    AS $$return \"Hello World\";$$;"
	aNondetCQL = "CREATE AGGREGATE fk.a_nondet(int)\n    SFUNC int_state\n    STYPE int\n    INITCOND 42;"
	aDetCQL    = "CREATE AGGREGATE fk.a_det(int)\n    SFUNC int_state\n    STYPE int\n    FINALFUNC \"Final\";"
)

func TestDescribeFunctions(t *testing.T) {
	s := functionSchema()
	for _, kw := range []string{"DESCRIBE", "DESC"} {
		checkRows(t, kw+" FUNCTION f", describe(t, "fk", kw+" FUNCTION f", s), [][]string{{"fk", "function", "f()", fCQL}})
		checkRows(t, kw+" FUNCTION fk.f_over", describe(t, "", kw+" FUNCTION fk.f_over", s), [][]string{
			{"fk", "function", "f_over(int, ascii)", fOverInt},
			{"fk", "function", "f_over(text, ascii)", fOverText},
		})
		checkRows(t, kw+" AGGREGATE a_nondet", describe(t, "fk", kw+" AGGREGATE a_nondet", s), [][]string{{"fk", "aggregate", "a_nondet(int)", aNondetCQL}})
		checkRows(t, kw+" AGGREGATE a_det", describe(t, "fk", kw+" AGGREGATE a_det", s), [][]string{{"fk", "aggregate", "a_det(int)", aDetCQL}})
	}
	checkRows(t, "DESCRIBE FUNCTION tuples", describe(t, "fk", "DESCRIBE FUNCTION tuples", s), [][]string{{"fk", "function",
		"tuples(tuple<int>, list<frozen<tuple<int, text>>>, tuple<frozen<tuple<int, text>>, text>)",
		"CREATE FUNCTION fk.tuples(t tuple<int>, l list<frozen<tuple<int, text>>>, nt tuple<frozen<tuple<int, text>>, text>)\n" +
			"    CALLED ON NULL INPUT\n    RETURNS tuple<int, text>\n    LANGUAGE java\n    AS $$throw new RuntimeException();$$;"}})
	// Listings by name(types) ignoring case; a name Cassandra quotes is
	// quoted, its types not.
	wantFunctions := [][]string{{"fk", "function", "f()"}, {"fk", "function", "f_over(int, ascii)"},
		{"fk", "function", "f_over(text, ascii)"}, {"fk", "function", `"Final"(int)`}, {"fk", "function", "int_state(int, int)"},
		{"fk", "function", "tuples(tuple<int>, list<frozen<tuple<int, text>>>, tuple<frozen<tuple<int, text>>, text>)"}}
	checkRows(t, "DESCRIBE FUNCTIONS", describe(t, "fk", "DESCRIBE FUNCTIONS", s), wantFunctions)
	checkRows(t, "DESCRIBE FUNCTIONS without a keyspace", describe(t, "", "DESCRIBE FUNCTIONS", s), wantFunctions)
	checkRows(t, "DESCRIBE AGGREGATES", describe(t, "fk", "DESCRIBE AGGREGATES", s), [][]string{{"fk", "aggregate", "a_det(int)"}, {"fk", "aggregate", "a_nondet(int)"}})

	// A keyspace: its types, functions, aggregates, then its tables.
	var kinds []string
	for _, r := range describe(t, "", "DESCRIBE KEYSPACE fk", s) {
		kinds = append(kinds, r[1]+" "+r[2])
	}
	want := []string{"keyspace fk", "type u", "function f()", "function f_over(int, ascii)", "function f_over(text, ascii)", `function "Final"(int)`,
		"function int_state(int, int)", "function tuples(tuple<int>, list<frozen<tuple<int, text>>>, tuple<frozen<tuple<int, text>>, text>)",
		"aggregate a_det(int)", "aggregate a_nondet(int)", "table t"}
	if strings.Join(kinds, "\n") != strings.Join(want, "\n") {
		t.Errorf("DESCRIBE KEYSPACE fk gave\n%q\nwant\n%q", kinds, want)
	}

	for _, tc := range []struct{ q, want string }{
		{"DESCRIBE FUNCTION nope", "User defined function 'nope' not found in 'fk'"},
		{"DESCRIBE AGGREGATE f", "User defined aggregate 'f' not found in 'fk'"},
		{"DESCRIBE FUNCTION a_det", "User defined function 'a_det' not found in 'fk'"},
	} {
		if _, err := describeErr("fk", tc.q, s); err == nil || err.Error() != tc.want {
			t.Errorf("%s: %v, want %q", tc.q, err, tc.want)
		}
	}
}
