package statements

import (
	"testing"
)

func coldef(name, typ string) ColumnDef { return ColumnDef{Name: name, Type: typ} }
func simple(v string, k LiteralKind) PropertyValue {
	return PropertyValue{Value: v, Kind: k}
}

func TestParseCreateTable(t *testing.T) {
	runParseTests(t, []parseTest{
		{"CREATE TABLE t (k int PRIMARY KEY)",
			&CreateTable{Table: "t", Columns: []ColumnDef{coldef("k", "int")}, PartitionKey: []string{"k"}, PrimaryKeys: 1}, 0},
		{"CREATE TABLE IF NOT EXISTS ks.t (id uuid PRIMARY KEY, m map<text, frozen<list<int>>>, s int static)",
			&CreateTable{Keyspace: "ks", Table: "t", IfNotExists: true,
				Columns:      []ColumnDef{coldef("id", "uuid"), coldef("m", "map<text, frozen<list<int>>>"), {Name: "s", Type: "int", Static: true}},
				PartitionKey: []string{"id"}, PrimaryKeys: 1}, 0},
		{"CREATE TABLE t (a int, b text, c timestamp, d bigint, v blob, PRIMARY KEY ((a, b), c, d)) " +
			"WITH CLUSTERING ORDER BY (c DESC, d ASC) AND default_time_to_live = 10 AND gc_grace_seconds = 0 AND comment = 'x';",
			&CreateTable{Table: "t",
				Columns:         []ColumnDef{coldef("a", "int"), coldef("b", "text"), coldef("c", "timestamp"), coldef("d", "bigint"), coldef("v", "blob")},
				PartitionKey:    []string{"a", "b"},
				Clustering:      []string{"c", "d"},
				PrimaryKeys:     1,
				ClusteringOrder: []ClusteringOrder{{Column: "c", Desc: true}, {Column: "d"}},
				Properties: Properties{
					"default_time_to_live": simple("10", LiteralInteger),
					"gc_grace_seconds":     simple("0", LiteralInteger),
					"comment":              simple("x", LiteralString),
				}}, 0},
		{"CREATE TABLE t (a int, c int, v text, PRIMARY KEY (a, c))",
			&CreateTable{Table: "t", Columns: []ColumnDef{coldef("a", "int"), coldef("c", "int"), coldef("v", "text")},
				PartitionKey: []string{"a"}, Clustering: []string{"c"}, PrimaryKeys: 1}, 0},
		{"CREATE TABLE t (a int, PRIMARY KEY ((a)))",
			&CreateTable{Table: "t", Columns: []ColumnDef{coldef("a", "int")}, PartitionKey: []string{"a"}, PrimaryKeys: 1}, 0},
		// gocql-style schema with every kind of type
		{"CREATE TABLE gocql_test.everything (\n" +
			"  id timeuuid, \"Name\" varchar, l LIST<INT>, s set<frozen<tuple<int, text>>>, tp tuple<int, text>,\n" +
			"  u frozen<address>, u2 ks.\"Addr\", c 'org.apache.cassandra.db.marshal.BytesType', n counter, key int, static int static,\n" +
			"  PRIMARY KEY (id, \"Name\")\n" +
			") WITH compaction = {'class': 'SizeTieredCompactionStrategy', 'min_threshold': 4} " +
			"AND caching = {'keys': 'ALL', 'rows_per_partition': 'NONE'} AND bloom_filter_fp_chance = 0.01 AND speculative_retry = '99PERCENTILE' AND cdc = false AND \"Quoted\" = ALL",
			&CreateTable{Keyspace: "gocql_test", Table: "everything",
				Columns: []ColumnDef{
					coldef("id", "timeuuid"), coldef("Name", "varchar"), coldef("l", "list<int>"),
					coldef("s", "set<frozen<tuple<int, text>>>"), coldef("tp", "tuple<int, text>"),
					coldef("u", "frozen<address>"), coldef("u2", `ks."Addr"`), coldef("c", "blob"),
					coldef("n", "counter"), coldef("key", "int"), {Name: "static", Type: "int", Static: true},
				},
				PartitionKey: []string{"id"}, Clustering: []string{"Name"}, PrimaryKeys: 1,
				Properties: Properties{
					"compaction":             {Map: map[string]string{"class": "SizeTieredCompactionStrategy", "min_threshold": "4"}},
					"caching":                {Map: map[string]string{"keys": "ALL", "rows_per_partition": "NONE"}},
					"bloom_filter_fp_chance": simple("0.01", LiteralFloat),
					"speculative_retry":      simple("99PERCENTILE", LiteralString),
					"cdc":                    simple("false", LiteralBoolean),
					"Quoted":                 {Value: "ALL"},
				}}, 0},
		// empty definitions, COMPACT STORAGE, column family, clustering as a property name
		{"create columnfamily t (a int, b int, , PRIMARY KEY (a, b),) with compact storage and clustering = 1",
			&CreateTable{Table: "t", Columns: []ColumnDef{coldef("a", "int"), coldef("b", "int")},
				PartitionKey: []string{"a"}, Clustering: []string{"b"}, PrimaryKeys: 1, CompactStorage: true,
				Properties: Properties{"clustering": simple("1", LiteralInteger)}}, 0},
		// no or several primary keys, duplicates: left to analysis
		{"CREATE TABLE t (a int, a text)",
			&CreateTable{Table: "t", Columns: []ColumnDef{coldef("a", "int"), coldef("a", "text")}}, 0},
		{"CREATE TABLE t (a int PRIMARY KEY, b int PRIMARY KEY, PRIMARY KEY (b, a)) WITH CLUSTERING ORDER BY (a ASC, a DESC)",
			&CreateTable{Table: "t", Columns: []ColumnDef{coldef("a", "int"), coldef("b", "int")}, PartitionKey: []string{"a"}, PrimaryKeys: 3,
				ClusteringOrder: []ClusteringOrder{{Column: "a"}, {Column: "a", Desc: true}}}, 0},
	})
}

func TestParseAlterTable(t *testing.T) {
	runParseTests(t, []parseTest{
		{"ALTER TABLE t ADD c int",
			&AlterTable{Table: "t", Op: AlterTableAdd, Columns: []ColumnDef{coldef("c", "int")}}, 0},
		{"ALTER TABLE ks.t ADD s set<text> static",
			&AlterTable{Keyspace: "ks", Table: "t", Op: AlterTableAdd, Columns: []ColumnDef{{Name: "s", Type: "set<text>", Static: true}}}, 0},
		{"ALTER TABLE t ADD (a int, b text static, c frozen<map<int, text>>)",
			&AlterTable{Table: "t", Op: AlterTableAdd, Columns: []ColumnDef{
				coldef("a", "int"), {Name: "b", Type: "text", Static: true}, coldef("c", "frozen<map<int, text>>")}}, 0},
		{"ALTER TABLE IF EXISTS t ADD IF NOT EXISTS c int",
			&AlterTable{Table: "t", IfExists: true, Op: AlterTableAdd, IfColumnNotExists: true, Columns: []ColumnDef{coldef("c", "int")}}, 0},
		{"ALTER TABLE t DROP c", &AlterTable{Table: "t", Op: AlterTableDrop, Drop: []string{"c"}}, 0},
		{"ALTER TABLE t DROP IF EXISTS (a, \"B\") USING TIMESTAMP 1234",
			&AlterTable{Table: "t", Op: AlterTableDrop, IfColumnExists: true, Drop: []string{"a", "B"}, DropTimestamp: integer("1234")}, 0},
		{"ALTER TABLE t DROP compact", &AlterTable{Table: "t", Op: AlterTableDrop, Drop: []string{"compact"}}, 0},
		{"ALTER TABLE t DROP COMPACT STORAGE", &AlterTable{Table: "t", Op: AlterTableDropCompactStorage}, 0},
		{"ALTER TABLE t RENAME a TO b", &AlterTable{Table: "t", Op: AlterTableRename, Renames: []Rename{{From: "a", To: "b"}}}, 0},
		{"ALTER TABLE t RENAME IF EXISTS a TO b AND \"C\" TO d;",
			&AlterTable{Table: "t", Op: AlterTableRename, IfColumnExists: true, Renames: []Rename{{From: "a", To: "b"}, {From: "C", To: "d"}}}, 0},
		{"ALTER TABLE t WITH comment = 'c' AND compaction = {'class': 'LeveledCompactionStrategy'}",
			&AlterTable{Table: "t", Op: AlterTableWith, Properties: Properties{
				"comment":    simple("c", LiteralString),
				"compaction": {Map: map[string]string{"class": "LeveledCompactionStrategy"}},
			}}, 0},
		{"ALTER TABLE t ALTER c TYPE blob",
			&AlterTable{Table: "t", Op: AlterTableAlterType, Columns: []ColumnDef{coldef("c", "blob")}}, 0},
	})
}

func TestParseSchemaMisc(t *testing.T) {
	runParseTests(t, []parseTest{
		{"DROP TABLE t", &DropTable{Table: "t"}, 0},
		{"DROP TABLE IF EXISTS ks.t;", &DropTable{Keyspace: "ks", Table: "t", IfExists: true}, 0},
		{"DROP COLUMNFAMILY \"T\"", &DropTable{Table: "T"}, 0},
		{"ALTER KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
			&AlterKeyspace{Keyspace: "ks", Replication: map[string]string{"class": "SimpleStrategy", "replication_factor": "1"}}, 0},
		{"ALTER SCHEMA IF EXISTS ks WITH durable_writes = false AND replication = {'class': 'NetworkTopologyStrategy', 'dc1': 3}",
			&AlterKeyspace{Keyspace: "ks", IfExists: true, DurableWrites: boolPtr(false),
				Replication: map[string]string{"class": "NetworkTopologyStrategy", "dc1": "3"}}, 0},
		// user types
		{"CREATE TYPE address (street text, city text, zip int)",
			&CreateType{Name: "address", Fields: []FieldDef{{"street", "text"}, {"city", "text"}, {"zip", "int"}}}, 0},
		{"CREATE TYPE IF NOT EXISTS ks.\"Phone\" (kind text, numbers frozen<set<text>>, key int,)",
			&CreateType{Keyspace: "ks", Name: "Phone", IfNotExists: true,
				Fields: []FieldDef{{"kind", "text"}, {"numbers", "frozen<set<text>>"}, {"key", "int"}}}, 0},
		{"CREATE TYPE key (a ks.other)", &CreateType{Name: "key", Fields: []FieldDef{{"a", "ks.other"}}}, 0},
		{"ALTER TYPE address ADD country text",
			&AlterType{Name: "address", Op: AlterTypeAdd, Field: FieldDef{"country", "text"}}, 0},
		{"ALTER TYPE IF EXISTS ks.address ADD IF NOT EXISTS tags list<text>",
			&AlterType{Keyspace: "ks", Name: "address", IfExists: true, Op: AlterTypeAdd, IfFieldNotExists: true, Field: FieldDef{"tags", "list<text>"}}, 0},
		{"ALTER TYPE address RENAME IF EXISTS zip TO zipcode AND city TO town",
			&AlterType{Name: "address", Op: AlterTypeRename, IfFieldExists: true,
				Renames: []Rename{{From: "zip", To: "zipcode"}, {From: "city", To: "town"}}}, 0},
		{"ALTER TYPE address ALTER zip TYPE varint",
			&AlterType{Name: "address", Op: AlterTypeAlterType, Field: FieldDef{"zip", "varint"}}, 0},
		{"DROP TYPE address", &DropType{Name: "address"}, 0},
		{"DROP TYPE IF EXISTS ks.address;", &DropType{Keyspace: "ks", Name: "address", IfExists: true}, 0},
	})
}

func TestParseCreateFunction(t *testing.T) {
	runParseTests(t, []parseTest{
		{"CREATE OR REPLACE FUNCTION f() RETURNS NULL ON NULL INPUT RETURNS int LANGUAGE java AS 'return 1;'",
			&CreateFunction{OrReplace: true, Name: "f", ReturnType: "int", Language: "java", Body: "return 1;"}, 0},
		{"CREATE FUNCTION IF NOT EXISTS ks.\"AvgState\"(state tuple<int, bigint>, val int) CALLED ON NULL INPUT " +
			"RETURNS tuple<int,bigint> LANGUAGE JAVA AS $$ if (val != null) { state.setInt(0, state.getInt(0)+1); } return state; $$;",
			&CreateFunction{IfNotExists: true, Keyspace: "ks", Name: "AvgState",
				Args:              []FunctionArg{{Name: "state", Type: "tuple<int, bigint>"}, {Name: "val", Type: "int"}},
				CalledOnNullInput: true, ReturnType: "tuple<int, bigint>", Language: "java",
				Body: " if (val != null) { state.setInt(0, state.getInt(0)+1); } return state; "}, 0},
		{"create function text(input text) returns null on null input returns text language javascript as 'input'",
			&CreateFunction{Name: "text", Args: []FunctionArg{{Name: "input", Type: "text"}},
				ReturnType: "text", Language: "javascript", Body: "input"}, 0},
	})
}

func TestParseAggregatesAndDrops(t *testing.T) {
	zero := &Literal{Kind: LiteralInteger, Text: "0"}
	runParseTests(t, []parseTest{
		{"CREATE AGGREGATE ks.total(int) SFUNC plus STYPE int INITCOND 0",
			&CreateAggregate{Keyspace: "ks", Name: "total", ArgTypes: []string{"int"}, StateFunc: "plus", StateType: "int", InitCond: zero}, 0},
		{"CREATE OR REPLACE AGGREGATE IF NOT EXISTS avg2(int, bigint) SFUNC st STYPE tuple<int,bigint> FINALFUNC fin",
			&CreateAggregate{OrReplace: true, IfNotExists: true, Name: "avg2", ArgTypes: []string{"int", "bigint"},
				StateFunc: "st", StateType: "tuple<int, bigint>", FinalFunc: "fin"}, 0},
		{"CREATE AGGREGATE none() SFUNC s STYPE text", &CreateAggregate{Name: "none", StateFunc: "s", StateType: "text"}, 0},
		{"DROP FUNCTION f", &DropFunction{Name: "f"}, 0},
		{"DROP FUNCTION IF EXISTS ks.f()", &DropFunction{IfExists: true, Keyspace: "ks", Name: "f", HasArgs: true}, 0},
		{"DROP AGGREGATE ks.total(int, list<text>)",
			&DropFunction{Aggregate: true, Keyspace: "ks", Name: "total", HasArgs: true, ArgTypes: []string{"int", "list<text>"}}, 0},
	})
}
