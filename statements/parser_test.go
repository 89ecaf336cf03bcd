package statements

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/cqld/cqld/internal/israce"
)

// ---- AST construction helpers ----

func str(s string) *Literal     { return &Literal{Kind: LiteralString, Text: s} }
func integer(s string) *Literal { return &Literal{Kind: LiteralInteger, Text: s} }
func float(s string) *Literal   { return &Literal{Kind: LiteralFloat, Text: s} }
func boolean(s string) *Literal { return &Literal{Kind: LiteralBoolean, Text: s} }
func null() *Literal            { return &Literal{Kind: LiteralNull, Text: "null"} }
func qm(i int) *BindMarker      { return &BindMarker{Index: i} }
func named(i int, n string) *BindMarker {
	return &BindMarker{Index: i, Name: n}
}
func col(name string) *ColumnRef { return &ColumnRef{Name: name} }
func sel(e SelectorExpr) Selector {
	return Selector{Expr: e}
}
func cols(names ...string) []Selector {
	var s []Selector
	for _, n := range names {
		s = append(s, sel(col(n)))
	}
	return s
}
func rel(c string, op Operator, v Term) Relation {
	return Relation{Columns: []string{c}, Op: op, Value: v}
}
func boolPtr(b bool) *bool { return &b }

// dump renders a value recursively, following pointers, for readable diffs.
func dump(v any) string {
	var b strings.Builder
	dumpValue(&b, reflect.ValueOf(v))
	return b.String()
}

func dumpValue(b *strings.Builder, v reflect.Value) {
	switch v.Kind() {
	case reflect.Invalid:
		b.WriteString("nil")
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			b.WriteString("nil")
			return
		}
		if v.Kind() == reflect.Pointer {
			b.WriteString("&")
		}
		dumpValue(b, v.Elem())
	case reflect.Struct:
		b.WriteString(v.Type().Name() + "{")
		first := true
		for i := 0; i < v.NumField(); i++ {
			f := v.Field(i)
			if f.IsZero() {
				continue
			}
			if !first {
				b.WriteString(", ")
			}
			first = false
			b.WriteString(v.Type().Field(i).Name + ":")
			dumpValue(b, f)
		}
		b.WriteString("}")
	case reflect.Slice:
		if v.IsNil() {
			b.WriteString("nil")
			return
		}
		b.WriteString("[")
		for i := 0; i < v.Len(); i++ {
			if i > 0 {
				b.WriteString(", ")
			}
			dumpValue(b, v.Index(i))
		}
		b.WriteString("]")
	case reflect.Map:
		fmt.Fprintf(b, "%v", v.Interface())
	case reflect.String:
		fmt.Fprintf(b, "%q", v.String())
	default:
		fmt.Fprintf(b, "%v", v.Interface())
	}
}

type parseTest struct {
	query string
	want  Statement
	nbind int
}

func runParseTests(t *testing.T, tests []parseTest) {
	t.Helper()
	for _, tc := range tests {
		got, n, err := Parse(tc.query)
		if err != nil {
			t.Errorf("Parse(%q): unexpected error: %v", tc.query, err)
			continue
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Parse(%q):\n got %s\nwant %s", tc.query, dump(got), dump(tc.want))
		}
		if n != tc.nbind {
			t.Errorf("Parse(%q): %d bind markers, want %d", tc.query, n, tc.nbind)
		}
	}
}

// The queries drivers (gocql, the DataStax Java and Python drivers) send
// during connection setup and schema discovery.
func TestParseDriverQueries(t *testing.T) {
	runParseTests(t, []parseTest{
		{"SELECT * FROM system.local WHERE key='local'",
			&Select{Keyspace: "system", Table: "local", Where: []Relation{rel("key", OpEq, str("local"))}}, 0},
		{"SELECT schema_version FROM system.local WHERE key='local'",
			&Select{Keyspace: "system", Table: "local", Selectors: cols("schema_version"), Where: []Relation{rel("key", OpEq, str("local"))}}, 0},
		{"SELECT * FROM system.peers_v2",
			&Select{Keyspace: "system", Table: "peers_v2"}, 0},
		{"select peer, rpc_address, data_center from system.peers",
			&Select{Keyspace: "system", Table: "peers", Selectors: cols("peer", "rpc_address", "data_center")}, 0},
		{"SELECT durable_writes, replication FROM system_schema.keyspaces WHERE keyspace_name = ?",
			&Select{Keyspace: "system_schema", Table: "keyspaces", Selectors: cols("durable_writes", "replication"),
				Where: []Relation{rel("keyspace_name", OpEq, qm(0))}}, 1},
		{"SELECT keyspace_name, table_name, column_name, clustering_order, type, kind, position FROM system_schema.columns",
			&Select{Keyspace: "system_schema", Table: "columns",
				Selectors: cols("keyspace_name", "table_name", "column_name", "clustering_order", "type", "kind", "position")}, 0},
		{"SELECT * FROM system_schema.tables WHERE keyspace_name='ks' AND table_name='t'",
			&Select{Keyspace: "system_schema", Table: "tables",
				Where: []Relation{rel("keyspace_name", OpEq, str("ks")), rel("table_name", OpEq, str("t"))}}, 0},
		{"SELECT count(*) FROM system_schema.keyspaces",
			&Select{Keyspace: "system_schema", Table: "keyspaces",
				Selectors: []Selector{sel(&FunctionCall{Name: "count", Args: []SelectorExpr{Star{}}})}}, 0},
		{"CREATE KEYSPACE IF NOT EXISTS gocql_test WITH replication = {'class':'SimpleStrategy','replication_factor':1}",
			&CreateKeyspace{Keyspace: "gocql_test", IfNotExists: true,
				Replication: map[string]string{"class": "SimpleStrategy", "replication_factor": "1"}}, 0},
		{"CREATE KEYSPACE ks WITH REPLICATION = { 'class' : 'NetworkTopologyStrategy', 'datacenter1' : 3 } AND DURABLE_WRITES = false;",
			&CreateKeyspace{Keyspace: "ks",
				Replication:   map[string]string{"class": "NetworkTopologyStrategy", "datacenter1": "3"},
				DurableWrites: boolPtr(false)}, 0},
		{"DROP KEYSPACE IF EXISTS gocql_test", &DropKeyspace{Keyspace: "gocql_test", IfExists: true}, 0},
		{`USE "gocql_test"`, &Use{Keyspace: "gocql_test"}, 0},
		// More queries seen from drivers.
		{"SELECT peer, data_center, host_id, preferred_ip, rack, release_version, rpc_address, schema_version, tokens FROM system.peers",
			&Select{Keyspace: "system", Table: "peers",
				Selectors: cols("peer", "data_center", "host_id", "preferred_ip", "rack", "release_version", "rpc_address", "schema_version", "tokens")}, 0},
		{"SELECT * FROM system_schema.keyspaces", &Select{Keyspace: "system_schema", Table: "keyspaces"}, 0},
		{"SELECT cluster_name, data_center, rack, tokens, partitioner, release_version FROM system.local WHERE key='local'",
			&Select{Keyspace: "system", Table: "local",
				Selectors: cols("cluster_name", "data_center", "rack", "tokens", "partitioner", "release_version"),
				Where:     []Relation{rel("key", OpEq, str("local"))}}, 0},
		{"SELECT * FROM system_schema.columns WHERE keyspace_name = ? AND table_name = ?",
			&Select{Keyspace: "system_schema", Table: "columns",
				Where: []Relation{rel("keyspace_name", OpEq, qm(0)), rel("table_name", OpEq, qm(1))}}, 2},
	})
}

func TestParseUseAndKeyspaceDDL(t *testing.T) {
	runParseTests(t, []parseTest{
		{"USE ks", &Use{Keyspace: "ks"}, 0},
		{"use MyKs;", &Use{Keyspace: "myks"}, 0},
		{`USE "MyKs"`, &Use{Keyspace: "MyKs"}, 0},
		{`USE "a""b"`, &Use{Keyspace: `a"b`}, 0},
		{"USE type", &Use{Keyspace: "type"}, 0}, // unreserved keyword as a name
		{"USE ks ; ; -- done", &Use{Keyspace: "ks"}, 0},
		{"CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': '3'}",
			&CreateKeyspace{Keyspace: "ks", Replication: map[string]string{"class": "SimpleStrategy", "replication_factor": "3"}}, 0},
		{"create schema \"Ks\" with durable_writes = TRUE and replication = {}",
			&CreateKeyspace{Keyspace: "Ks", Replication: map[string]string{}, DurableWrites: boolPtr(true)}, 0},
		{"CREATE KEYSPACE ks WITH replication = {'class': 'org.apache.cassandra.locator.SimpleStrategy', 'replication_factor': 1.0} AND durable_writes = 'no'",
			&CreateKeyspace{Keyspace: "ks",
				Replication:   map[string]string{"class": "org.apache.cassandra.locator.SimpleStrategy", "replication_factor": "1.0"},
				DurableWrites: boolPtr(false)}, 0},
		{"CREATE KEYSPACE ks WITH durable_writes = true", &CreateKeyspace{Keyspace: "ks", DurableWrites: boolPtr(true)}, 0},
		{"DROP KEYSPACE ks", &DropKeyspace{Keyspace: "ks"}, 0},
		{"DROP SCHEMA IF EXISTS \"Ks\";", &DropKeyspace{Keyspace: "Ks", IfExists: true}, 0},
	})
}

func TestParseSelect(t *testing.T) {
	runParseTests(t, []parseTest{
		// modifiers
		{"SELECT DISTINCT pk FROM t", &Select{Table: "t", Distinct: true, Selectors: cols("pk")}, 0},
		{"SELECT JSON * FROM t", &Select{Table: "t", Json: true}, 0},
		{"SELECT JSON DISTINCT a, b FROM t", &Select{Table: "t", Json: true, Distinct: true, Selectors: cols("a", "b")}, 0},
		// json and distinct are also valid column names
		{"SELECT json FROM t", &Select{Table: "t", Selectors: cols("json")}, 0},
		{"SELECT distinct, json FROM t", &Select{Table: "t", Selectors: cols("distinct", "json")}, 0},
		{"SELECT json json FROM t", &Select{Table: "t", Json: true, Selectors: cols("json")}, 0},
		// names
		{`SELECT "Col", "a""b", key, ttl, count, writetime FROM "Ks"."Tbl"`,
			&Select{Keyspace: "Ks", Table: "Tbl", Selectors: cols("Col", `a"b`, "key", "ttl", "count", "writetime")}, 0},
		{"SELECT A AS x, b AS \"Y\" FROM T", &Select{Table: "t", Selectors: []Selector{{Expr: col("a"), Alias: "x"}, {Expr: col("b"), Alias: "Y"}}}, 0},
		// functions
		{"SELECT COUNT(*) AS n, COUNT(1), count(a) FROM t",
			&Select{Table: "t", Selectors: []Selector{
				{Expr: &FunctionCall{Name: "count", Args: []SelectorExpr{Star{}}}, Alias: "n"},
				sel(&FunctionCall{Name: "count", Args: []SelectorExpr{&TermSelector{Term: integer("1")}}}),
				sel(&FunctionCall{Name: "count", Args: []SelectorExpr{col("a")}}),
			}}, 0},
		{"SELECT writetime(v), WRITETIME(v.f), ttl(v), maxwritetime(m['k']) FROM t",
			&Select{Table: "t", Selectors: []Selector{
				sel(&FunctionCall{Name: "writetime", Args: []SelectorExpr{col("v")}}),
				sel(&FunctionCall{Name: "writetime", Args: []SelectorExpr{&FieldSelector{Expr: col("v"), Field: "f"}}}),
				sel(&FunctionCall{Name: "ttl", Args: []SelectorExpr{col("v")}}),
				sel(&FunctionCall{Name: "maxwritetime", Args: []SelectorExpr{&ElementSelector{Expr: col("m"), Key: str("k")}}}),
			}}, 0},
		{"SELECT token(a, b), now(), toTimestamp(now()), ks.fn(a, 'x'), \"MyFn\"(), blobAsText(b) FROM t",
			&Select{Table: "t", Selectors: []Selector{
				sel(&FunctionCall{Name: "token", Args: []SelectorExpr{col("a"), col("b")}}),
				sel(&FunctionCall{Name: "now"}),
				sel(&FunctionCall{Name: "totimestamp", Args: []SelectorExpr{&FunctionCall{Name: "now"}}}),
				sel(&FunctionCall{Keyspace: "ks", Name: "fn", Args: []SelectorExpr{col("a"), &TermSelector{Term: str("x")}}}),
				sel(&FunctionCall{Name: "MyFn"}),
				sel(&FunctionCall{Name: "blobastext", Args: []SelectorExpr{col("b")}}),
			}}, 0},
		{"SELECT CAST(a AS text), cast(count(*) as BIGINT) AS c FROM t",
			&Select{Table: "t", Selectors: []Selector{
				sel(&Cast{Expr: col("a"), Type: "text"}),
				{Expr: &Cast{Expr: &FunctionCall{Name: "count", Args: []SelectorExpr{Star{}}}, Type: "bigint"}, Alias: "c"},
			}}, 0},
		// literals, markers and expressions in the selection
		{"SELECT 1, 'a', ?, :n, null, (int)?, (text)'x', a + 1 * b, -a, (a, b), [a, 1], {a, b}, {a: 1}, {}, (a) FROM t",
			&Select{Table: "t", Selectors: []Selector{
				sel(&TermSelector{Term: integer("1")}),
				sel(&TermSelector{Term: str("a")}),
				sel(&TermSelector{Term: qm(0)}),
				sel(&TermSelector{Term: named(1, "n")}),
				sel(&TermSelector{Term: null()}),
				sel(&TypeHintSelector{Type: "int", Expr: &TermSelector{Term: qm(2)}}),
				sel(&TypeHintSelector{Type: "text", Expr: &TermSelector{Term: str("x")}}),
				sel(&ArithmeticSelector{Op: "+", Left: col("a"), Right: &ArithmeticSelector{Op: "*", Left: &TermSelector{Term: integer("1")}, Right: col("b")}}),
				sel(&NegatedSelector{Expr: col("a")}),
				sel(&TupleSelector{Elems: []SelectorExpr{col("a"), col("b")}}),
				sel(&ListSelector{Elems: []SelectorExpr{col("a"), &TermSelector{Term: integer("1")}}}),
				sel(&SetSelector{Elems: []SelectorExpr{col("a"), col("b")}}),
				sel(&MapSelector{Keys: []SelectorExpr{col("a")}, Values: []SelectorExpr{&TermSelector{Term: integer("1")}}}),
				sel(&SetSelector{}),
				sel(col("a")),
			}}, 3},
		{"SELECT m[1..3], m[..'b'], m['a'..], u.f.g FROM t",
			&Select{Table: "t", Selectors: []Selector{
				sel(&SliceSelector{Expr: col("m"), From: integer("1"), To: integer("3")}),
				sel(&SliceSelector{Expr: col("m"), To: str("b")}),
				sel(&SliceSelector{Expr: col("m"), From: str("a")}),
				sel(&FieldSelector{Expr: &FieldSelector{Expr: col("u"), Field: "f"}, Field: "g"}),
			}}, 0},
		{"SELECT (a) AS x FROM t", &Select{Table: "t", Selectors: []Selector{{Expr: col("a"), Alias: "x"}}}, 0},
		// WHERE
		{"SELECT * FROM t WHERE a = 1 AND b != 2 AND c < 3 AND d <= 4 AND e > 5 AND f >= -6",
			&Select{Table: "t", Where: []Relation{
				rel("a", OpEq, integer("1")), rel("b", OpNeq, integer("2")), rel("c", OpLt, integer("3")),
				rel("d", OpLte, integer("4")), rel("e", OpGt, integer("5")), rel("f", OpGte, integer("-6")),
			}}, 0},
		{"SELECT * FROM t WHERE a IN (1, 2, 3) AND b IN ? AND c IN () AND d IN :vals AND e NOT IN ('x')",
			&Select{Table: "t", Where: []Relation{
				rel("a", OpIn, &ListLiteral{Elems: []Term{integer("1"), integer("2"), integer("3")}}),
				rel("b", OpIn, qm(0)),
				rel("c", OpIn, &ListLiteral{}),
				rel("d", OpIn, named(1, "vals")),
				rel("e", OpNotIn, &ListLiteral{Elems: []Term{str("x")}}),
			}}, 2},
		{"SELECT * FROM t WHERE (a, b) > (?, ?) AND (c, d) IN ((1, 2), (3, 4)) AND (e) IN ? AND (f, g) IN (?, ?) AND (h, i) = ?",
			&Select{Table: "t", Where: []Relation{
				{Columns: []string{"a", "b"}, Op: OpGt, Value: &TupleLiteral{Elems: []Term{qm(0), qm(1)}}},
				{Columns: []string{"c", "d"}, Op: OpIn, Value: &ListLiteral{Elems: []Term{
					&TupleLiteral{Elems: []Term{integer("1"), integer("2")}}, &TupleLiteral{Elems: []Term{integer("3"), integer("4")}}}}},
				{Columns: []string{"e"}, Op: OpIn, Value: qm(2)},
				{Columns: []string{"f", "g"}, Op: OpIn, Value: &ListLiteral{Elems: []Term{qm(3), qm(4)}}},
				{Columns: []string{"h", "i"}, Op: OpEq, Value: qm(5)},
			}}, 6},
		{"SELECT * FROM t WHERE token(a, b) > ? AND token(a, b) <= token('x', 1)",
			&Select{Table: "t", Where: []Relation{
				{Columns: []string{"a", "b"}, Token: true, Op: OpGt, Value: qm(0)},
				{Columns: []string{"a", "b"}, Token: true, Op: OpLte, Value: &FunctionTerm{Name: "token", Args: []Term{str("x"), integer("1")}}},
			}}, 1},
		{"SELECT * FROM t WHERE s CONTAINS 'x' AND m CONTAINS KEY 'k' AND l NOT CONTAINS 1 AND m NOT CONTAINS KEY ? AND m['k'] = 2 AND n LIKE 'a%' AND v IS NOT NULL AND w BETWEEN 1 AND 5",
			&Select{Table: "t", Where: []Relation{
				rel("s", OpContains, str("x")),
				rel("m", OpContainsKey, str("k")),
				rel("l", OpNotContains, integer("1")),
				rel("m", OpNotContainsKey, qm(0)),
				{Columns: []string{"m"}, MapKey: str("k"), Op: OpEq, Value: integer("2")},
				rel("n", OpLike, str("a%")),
				rel("v", OpIsNot, null()),
				{Columns: []string{"w"}, Op: OpBetween, Value: integer("1"), UpperBound: integer("5")},
			}}, 1},
		{"SELECT * FROM t WHERE (a = 1) AND ((b = 2)) AND \"\" = 3 AND expr(ks.idx, 'q')",
			&Select{Table: "t", Where: []Relation{
				rel("a", OpEq, integer("1")), rel("b", OpEq, integer("2")), rel("", OpEq, integer("3")),
				{Columns: []string{"idx"}, IndexKeyspace: "ks", Op: OpCustomIndex, Value: str("q")},
			}}, 0},
		// terms
		{"SELECT * FROM t WHERE a = [1, 2] AND b = {1, 2} AND c = {'k': 'v', 'k2': ?} AND d = (1, 'x') AND e = {f: 1, \"G\": 'x'} AND f = {} AND g = []",
			&Select{Table: "t", Where: []Relation{
				rel("a", OpEq, &ListLiteral{Elems: []Term{integer("1"), integer("2")}}),
				rel("b", OpEq, &SetLiteral{Elems: []Term{integer("1"), integer("2")}}),
				rel("c", OpEq, &MapLiteral{Keys: []Term{str("k"), str("k2")}, Values: []Term{str("v"), qm(0)}}),
				rel("d", OpEq, &TupleLiteral{Elems: []Term{integer("1"), str("x")}}),
				rel("e", OpEq, &UserTypeLiteral{Fields: []string{"f", "G"}, Values: []Term{integer("1"), str("x")}}),
				rel("f", OpEq, &SetLiteral{}),
				rel("g", OpEq, &ListLiteral{}),
			}}, 1},
		{"SELECT * FROM t WHERE a = (set<int>){1} AND b = (map<int, text>){} AND c = (ks.udt){f: 1}",
			&Select{Table: "t", Where: []Relation{
				rel("a", OpEq, &TypeHintTerm{Type: "set<int>", Term: &SetLiteral{Elems: []Term{integer("1")}}}),
				rel("b", OpEq, &TypeHintTerm{Type: "map<int, text>", Term: &SetLiteral{}}),
				rel("c", OpEq, &TypeHintTerm{Type: "ks.udt", Term: &UserTypeLiteral{Fields: []string{"f"}, Values: []Term{integer("1")}}}),
			}}, 0},
		{"SELECT * FROM t WHERE a = now() AND b = toTimestamp(now()) AND c = (int)? AND d = (frozen<list<int>>)[1] AND e = CAST(1 AS text) AND f = 1 + 2 * 3 AND g = -a() AND h = system.uuid()",
			&Select{Table: "t", Where: []Relation{
				rel("a", OpEq, &FunctionTerm{Name: "now"}),
				rel("b", OpEq, &FunctionTerm{Name: "totimestamp", Args: []Term{&FunctionTerm{Name: "now"}}}),
				rel("c", OpEq, &TypeHintTerm{Type: "int", Term: qm(0)}),
				rel("d", OpEq, &TypeHintTerm{Type: "frozen<list<int>>", Term: &ListLiteral{Elems: []Term{integer("1")}}}),
				rel("e", OpEq, &CastTerm{Term: integer("1"), Type: "text"}),
				rel("f", OpEq, &ArithmeticTerm{Op: "+", Left: integer("1"), Right: &ArithmeticTerm{Op: "*", Left: integer("2"), Right: integer("3")}}),
				rel("g", OpEq, &NegatedTerm{Term: &FunctionTerm{Name: "a"}}),
				rel("h", OpEq, &FunctionTerm{Keyspace: "system", Name: "uuid"}),
			}}, 1},
		{"SELECT * FROM t WHERE a = 1.5 AND b = -NaN AND c = Infinity AND d = -infinity AND e = true AND f = FALSE AND g = 0xCAFE AND h = 123e4567-e89b-12d3-a456-426614174000 AND i = 1h30m AND j = P1D AND k = null AND l = $$it's$$ AND m = 'it''s'",
			&Select{Table: "t", Where: []Relation{
				rel("a", OpEq, float("1.5")),
				rel("b", OpEq, float("NaN")),
				rel("c", OpEq, float("Infinity")),
				rel("d", OpEq, float("-Infinity")),
				rel("e", OpEq, boolean("true")),
				rel("f", OpEq, boolean("false")),
				rel("g", OpEq, &Literal{Kind: LiteralHex, Text: "0xCAFE"}),
				rel("h", OpEq, &Literal{Kind: LiteralUUID, Text: "123e4567-e89b-12d3-a456-426614174000"}),
				rel("i", OpEq, &Literal{Kind: LiteralDuration, Text: "1h30m"}),
				rel("j", OpEq, &Literal{Kind: LiteralDuration, Text: "P1D"}),
				rel("k", OpEq, null()),
				rel("l", OpEq, str("it's")),
				rel("m", OpEq, str("it's")),
			}}, 0},
		// GROUP BY, ORDER BY, limits, ALLOW FILTERING
		{"SELECT a, count(*) FROM t WHERE pk = ? GROUP BY a, floor(b, 1h) ORDER BY c DESC, d ASC, e PER PARTITION LIMIT 2 LIMIT ? ALLOW FILTERING",
			&Select{Table: "t",
				Selectors:         []Selector{sel(col("a")), sel(&FunctionCall{Name: "count", Args: []SelectorExpr{Star{}}})},
				Where:             []Relation{rel("pk", OpEq, qm(0))},
				GroupBy:           []SelectorExpr{col("a"), &FunctionCall{Name: "floor", Args: []SelectorExpr{col("b"), &TermSelector{Term: &Literal{Kind: LiteralDuration, Text: "1h"}}}}},
				OrderBy:           []Ordering{{Column: "c", Desc: true}, {Column: "d"}, {Column: "e"}},
				PerPartitionLimit: integer("2"),
				Limit:             qm(1),
				AllowFiltering:    true,
			}, 2},
		{"SELECT * FROM t LIMIT :l", &Select{Table: "t", Limit: named(0, "l")}, 1},
		{"SELECT * FROM t PER PARTITION LIMIT ? LIMIT 10", &Select{Table: "t", PerPartitionLimit: qm(0), Limit: integer("10")}, 1},
		{"SELECT * FROM t ORDER BY v ANN OF [1.0, 2.0] LIMIT 3",
			&Select{Table: "t", OrderBy: []Ordering{{Column: "v", Ann: &ListLiteral{Elems: []Term{float("1.0"), float("2.0")}}}}, Limit: integer("3")}, 0},
		// whitespace, comments and case
		{"\n  select /* all */ *\n  from KS.Tbl -- the table\n  where K = 'x' ; ",
			&Select{Keyspace: "ks", Table: "tbl", Where: []Relation{rel("k", OpEq, str("x"))}}, 0},
	})
}

func TestParseBindMarkerOrder(t *testing.T) {
	st, n, err := Parse("SELECT ?, :a FROM t WHERE x IN (?, ?) AND (y, z) = (?, :b) AND w = ? LIMIT ?")
	if err != nil {
		t.Fatal(err)
	}
	if n != 8 {
		t.Fatalf("got %d markers, want 8", n)
	}
	s := st.(*Select)
	var got []*BindMarker
	got = append(got, s.Selectors[0].Expr.(*TermSelector).Term.(*BindMarker), s.Selectors[1].Expr.(*TermSelector).Term.(*BindMarker))
	for _, e := range s.Where[0].Value.(*ListLiteral).Elems {
		got = append(got, e.(*BindMarker))
	}
	for _, e := range s.Where[1].Value.(*TupleLiteral).Elems {
		got = append(got, e.(*BindMarker))
	}
	got = append(got, s.Where[2].Value.(*BindMarker), s.Limit.(*BindMarker))
	for i, m := range got {
		if m.Index != i {
			t.Errorf("marker %d has index %d", i, m.Index)
		}
	}
	if got[1].Name != "a" || got[5].Name != "b" || got[0].Name != "" {
		t.Errorf("names: %s", dump(got))
	}
}

func TestParseSyntaxErrors(t *testing.T) {
	tests := []struct {
		query     string
		line, col int
		token     string
		msg       string
	}{
		{"SELECT * FROMM system.local", 1, 9, "FROMM", "mismatched input 'FROMM' expecting K_FROM"},
		{"SELEC * FROM t", 1, 0, "SELEC", "no viable alternative at input 'SELEC'"},
		{"CREATE FROMM", 1, 7, "FROMM", "no viable alternative at input 'FROMM'"},
		{"SELECT a b FROM t", 1, 9, "b", "mismatched input 'b' expecting K_FROM"},
		{"SELECT * FROM", 0, -1, "<EOF>", "no viable alternative at input '<EOF>'"},
		{"SELECT * FROM t WHERE", 0, -1, "<EOF>", "no viable alternative at input '<EOF>'"},
		{"SELECT * FROM t WHERE a IN (1, 2", 0, -1, "<EOF>", "mismatched input '<EOF>' expecting ')'"},
		{"SELECT * FROM t extra", 1, 16, "extra", "mismatched input 'extra' expecting EOF"},
		{"SELECT * FROM t LIMIT 'a'", 1, 22, "a", "no viable alternative at input 'a'"},
		{"SELECT * FROM t LIMIT 1.5", 1, 22, "1.5", "no viable alternative at input '1.5'"},
		{"SELECT * FROM t ORDER x", 1, 22, "x", "mismatched input 'x' expecting K_BY"},
		{"SELECT * FROM t ALLOW", 0, -1, "<EOF>", "mismatched input '<EOF>' expecting K_FILTERING"},
		{"SELECT * FROM t WHERE a IS NULL", 1, 27, "NULL", "mismatched input 'NULL' expecting K_NOT"},
		{"SELECT * FROM t WHERE a", 0, -1, "<EOF>", "no viable alternative at input '<EOF>'"},
		{"SELECT * FROM t WHERE a = 1 OR b = 2", 1, 28, "OR", "mismatched input 'OR' expecting EOF"},
		{"SELECT *\nFROM t\nWHERE a = = 1", 3, 10, "=", "no viable alternative at input '='"},
		{"SELECT * FROM t WHERE from = 1", 1, 22, "from", "no viable alternative at input 'from'"},
		// As in Cassandra, DISTINCT is a modifier when a selection follows it, and "AS" is a valid column name.
		{"SELECT distinct AS d FROM t", 1, 19, "d", "mismatched input 'd' expecting K_FROM"},
		{"SELECT count(*, FROM t", 1, 14, ",", "mismatched input ',' expecting ')'"},
		{"SELECT CAST(a AS foo) FROM t", 1, 17, "foo", "no viable alternative at input 'foo'"},
		{"SELECT * FROM t WHERE a = 'x\ny' AND", 0, -1, "<EOF>", "no viable alternative at input '<EOF>'"},
		{"SELECT * FROM t WHERE a = 'x\ny' b", 2, 3, "b", "mismatched input 'b' expecting EOF"},
		{"SELECT * FROM t WHERE a = 'multi\nline' 'z'", 2, 6, "z", "mismatched input 'z' expecting EOF"},
		{"USE", 0, -1, "<EOF>", "no viable alternative at input '<EOF>'"},
		{"USE ks extra", 1, 7, "extra", "mismatched input 'extra' expecting EOF"},
		{"USE select", 1, 4, "select", "no viable alternative at input 'select'"},
		{"", 0, -1, "<EOF>", "no viable alternative at input '<EOF>'"},
		{"  -- nothing but a comment\n", 0, -1, "<EOF>", "no viable alternative at input '<EOF>'"},
		{";", 1, 0, ";", "no viable alternative at input ';'"},
		{"CREATE KEYSPACE ks", 0, -1, "<EOF>", "mismatched input '<EOF>' expecting K_WITH"},
		{"CREATE KEYSPACE IF EXISTS ks WITH replication = {}", 1, 19, "EXISTS", "mismatched input 'EXISTS' expecting K_NOT"},
		{"CREATE KEYSPACE ks WITH replication = {'class' 'x'}", 1, 47, "x", "mismatched input 'x' expecting ':'"},
		{"CREATE KEYSPACE ks WITH replication {}", 1, 36, "{", "mismatched input '{' expecting '='"},
		{"DROP KEYSPACE IF ks", 1, 17, "ks", "mismatched input 'ks' expecting K_EXISTS"},
		{"DROP FOO", 1, 5, "FOO", "no viable alternative at input 'FOO'"},
		// lexer errors
		{"SELECT * FROM t WHERE k = 'abc", 1, 30, "<EOF>", "mismatched character '<EOF>' expecting '''"},
		{"SELECT * FROM t WHERE k = \"abc", 1, 30, "<EOF>", "mismatched character '<EOF>' expecting '\"'"},
		{"SELECT * FROM t WHERE k ! 1", 1, 25, " ", "mismatched character ' ' expecting '='"},
		{"SELECT * FROM t WHERE k = #", 1, 26, "#", "no viable alternative at character '#'"},
		// checks made while parsing (no position, as Cassandra's addRecognitionError)
		{"USE ?", 0, 0, "", "Bind variables cannot be used for keyspace names"},
		{"SELECT * FROM ?", 0, 0, "", "Bind variables cannot be used for table names"},
		{"SELECT * FROM ?.t", 0, 0, "", "Bind variables cannot be used for keyspace names"},
		{"CREATE KEYSPACE ks WITH replication = 'x'", 0, 0, "", "Invalid value for property 'replication'. It should be a map."},
		{"CREATE KEYSPACE ks WITH foo = 1", 0, 0, "", "Unknown property 'foo'"},
		{"CREATE KEYSPACE ks WITH durable_writes = true AND DURABLE_WRITES = false", 0, 0, "", "Multiple definition for property 'durable_writes'"},
		{"CREATE KEYSPACE ks WITH replication = {'class': 'a', 'class': 'b'}", 0, 0, "", "Multiple definition for property class"},
		{"CREATE KEYSPACE ks WITH replication = {'class': ?}", 0, 0, "", "Invalid property value: ? for property: 'class' (bind variables are not supported in DDL queries)"},
		{"CREATE KEYSPACE ks WITH replication = {now(): 'x'}", 0, 0, "", "Invalid property name: now()"},
		{"CREATE KEYSPACE ks WITH durable_writes = maybe", 1, 41, "maybe", "no viable alternative at input 'maybe'"},
		{"CREATE KEYSPACE ks WITH durable_writes = 'maybe'", 0, 0, "", "Invalid boolean value maybe for 'durable_writes'. Positive values can be '1', 'true' or 'yes' (case insensitive) and negative values can be '0', 'false' or 'no' (case insensitive)."},
		{"CREATE KEYSPACE ks WITH durable_writes = {}", 0, 0, "", "Invalid value for property 'durable_writes'. It should be a string"},
	}
	for _, tc := range tests {
		st, n, err := Parse(tc.query)
		var se *SyntaxError
		if !errors.As(err, &se) {
			t.Errorf("Parse(%q) = %s, %d, %v; want a *SyntaxError", tc.query, dump(st), n, err)
			continue
		}
		if st != nil || n != 0 {
			t.Errorf("Parse(%q) returned a statement with an error", tc.query)
		}
		if se.Line != tc.line || se.Col != tc.col || se.Token != tc.token || se.Msg != tc.msg {
			t.Errorf("Parse(%q):\n got %d:%d token %q msg %q\nwant %d:%d token %q msg %q",
				tc.query, se.Line, se.Col, se.Token, se.Msg, tc.line, tc.col, tc.token, tc.msg)
		}
		want := tc.msg
		if tc.line != 0 || tc.col != 0 {
			want = fmt.Sprintf("line %d:%d %s", tc.line, tc.col, tc.msg)
		}
		if err.Error() != want {
			t.Errorf("Parse(%q).Error() = %q, want %q", tc.query, err.Error(), want)
		}
	}
}

func TestParseUnsupported(t *testing.T) {
	tests := []struct{ query, stmt string }{
		{"CREATE CUSTOM INDEX ON t (v) USING 'x'", "CREATE CUSTOM INDEX"},
		{"CREATE INDEX ON t (v) USING 'x'", "CREATE CUSTOM INDEX"},
		{"CREATE MATERIALIZED VIEW v AS SELECT * FROM t", "CREATE MATERIALIZED VIEW"},
		{"CREATE TRIGGER tr ON t USING 'x'", "CREATE TRIGGER"},
		{"DROP TRIGGER tr ON t", "DROP TRIGGER"},
	}
	for _, tc := range tests {
		_, _, err := Parse(tc.query)
		var ue *UnsupportedError
		if !errors.As(err, &ue) {
			t.Errorf("Parse(%q): got %v, want *UnsupportedError", tc.query, err)
			continue
		}
		if ue.Statement != tc.stmt {
			t.Errorf("Parse(%q): Statement %q, want %q", tc.query, ue.Statement, tc.stmt)
		}
		var se *SyntaxError
		if errors.As(err, &se) {
			t.Errorf("Parse(%q): unsupported statement reported as a syntax error", tc.query)
		}
	}
	// A lexing error still comes first, as in Cassandra.
	if _, _, err := Parse("INSERT INTO t (a) VALUES ('x"); err == nil || err.Error() != "line 1:28 mismatched character '<EOF>' expecting '''" {
		t.Errorf("got %v", err)
	}
	if got := (&UnsupportedError{Statement: "INSERT"}).Error(); got != "INSERT statements are not supported yet" {
		t.Errorf("Error() = %q", got)
	}
	// Cassandra 4.0 with views disabled, its default.
	if _, _, err := Parse("CREATE MATERIALIZED VIEW v AS SELECT * FROM t"); err == nil || err.Error() != "Materialized views are disabled. Enable in cassandra.yaml to use." {
		t.Errorf("CREATE MATERIALIZED VIEW: %v", err)
	}
}

// DROP and ALTER MATERIALIZED VIEW parse as Cassandra's grammar has them,
// so that the schema answers that the view does not exist.
func TestParseViewStatements(t *testing.T) {
	for _, tc := range []struct {
		query string
		want  Statement
	}{
		{"DROP MATERIALIZED VIEW v", &DropTable{Table: "v", View: true}},
		{"DROP MATERIALIZED VIEW IF EXISTS ks.v", &DropTable{Keyspace: "ks", Table: "v", IfExists: true, View: true}},
		{"ALTER MATERIALIZED VIEW ks.v WITH comment = 'x'", &AlterTable{Keyspace: "ks", Table: "v", View: true, Op: AlterTableWith,
			Properties: Properties{"comment": {Value: "x", Kind: LiteralString}}}},
	} {
		st, _, err := Parse(tc.query)
		if err != nil || !reflect.DeepEqual(st, tc.want) {
			t.Errorf("Parse(%q) = %#v, %v; want %#v", tc.query, st, err, tc.want)
		}
	}
	for _, q := range []string{"ALTER MATERIALIZED VIEW v ADD c int", "DROP MATERIALIZED v"} {
		var se *SyntaxError
		if _, _, err := Parse(q); !errors.As(err, &se) {
			t.Errorf("Parse(%q): %v, want a syntax error", q, err)
		}
	}
}

func TestParseDeepNesting(t *testing.T) {
	q := "SELECT * FROM t WHERE a = " + strings.Repeat("[", 10000) + strings.Repeat("]", 10000)
	_, _, err := Parse(q)
	var se *SyntaxError
	if !errors.As(err, &se) || !strings.Contains(se.Msg, "nesting too deep") {
		t.Errorf("got %v", err)
	}
	q = "SELECT * FROM t WHERE a = " + strings.Repeat("[", 50) + strings.Repeat("]", 50)
	if _, _, err := Parse(q); err != nil {
		t.Errorf("moderate nesting: %v", err)
	}
	// Every construct that nests in the tree, at a depth well under the
	// bound and past it, where it is refused at the token that goes too
	// deep.
	for _, tc := range []struct {
		name         string
		build        func(n int) string
		refusedAtCol int
	}{
		{"sums", func(n int) string { return "SELECT * FROM t WHERE a = " + strings.Repeat("1+", n) + "1" }, 26 + 2*maxDepth},
		{"products", func(n int) string { return "SELECT * FROM t WHERE a = " + strings.Repeat("1*", n) + "1" }, 26 + 2*maxDepth},
		{"assignment", func(n int) string { return "UPDATE t SET a = " + strings.Repeat("1+", n) + "1 WHERE k = 1" }, 17 + 2*maxDepth},
		{"selector sums", func(n int) string { return "SELECT " + strings.Repeat("a-", n) + "a FROM t" }, 7 + 2*maxDepth},
		{"field chain", func(n int) string { return "SELECT a" + strings.Repeat(".f", n) + " FROM t" }, 8 + 2*maxDepth},
		{"element chain", func(n int) string { return "SELECT a" + strings.Repeat("[1]", n) + " FROM t" }, 8 + 3*maxDepth},
		{"selector hints", func(n int) string { return "SELECT " + strings.Repeat("(int)", n) + "a FROM t" }, 7 + 5*maxDepth},
		{"term hints", func(n int) string { return "SELECT * FROM t WHERE a = " + strings.Repeat("(int)", n) + "1" }, 26 + 5*maxDepth - 5},
	} {
		if _, _, err := Parse(tc.build(maxDepth / 2)); err != nil {
			t.Errorf("%s of %d: %v", tc.name, maxDepth/2, err)
		}
		_, _, err := Parse(tc.build(4 * maxDepth))
		if !errors.As(err, &se) || se.Msg != "expression nesting too deep" {
			t.Errorf("%s of %d: got %v", tc.name, 4*maxDepth, err)
		} else if se.Line != 1 || se.Col > tc.refusedAtCol {
			t.Errorf("%s of %d: refused at %d:%d, want 1:%d or before", tc.name, 4*maxDepth, se.Line, se.Col, tc.refusedAtCol)
		}
	}
}

func TestParseAllocations(t *testing.T) {
	if israce.Enabled {
		t.Skip("sync.Pool drops items under the race detector")
	}
	q := "SELECT * FROM system.local WHERE key='local'"
	Parse(q) // warm the pool
	allocs := testing.AllocsPerRun(200, func() {
		if _, _, err := Parse(q); err != nil {
			t.Fatal(err)
		}
	})
	// *Select, the relation slice, its column slice and the literal.
	if allocs > 4 {
		t.Errorf("Parse allocated %v times per run, want <= 4", allocs)
	}
}

func TestParseInsertAllocations(t *testing.T) {
	if israce.Enabled {
		t.Skip("sync.Pool drops items under the race detector")
	}
	q := "INSERT INTO ks.t (a, b, c, d) VALUES (?, ?, ?, ?)"
	Parse(q) // warm the pool
	allocs := testing.AllocsPerRun(200, func() {
		if _, _, err := Parse(q); err != nil {
			t.Fatal(err)
		}
	})
	// *Insert, the column and value slices and the four markers.
	if allocs > 7 {
		t.Errorf("Parse allocated %v times per run, want <= 7", allocs)
	}
}

func BenchmarkParseInsert(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		Parse("INSERT INTO ks.t (a, b, c, d) VALUES (?, ?, ?, ?) USING TTL ?")
	}
}

func BenchmarkParseSystemLocal(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		Parse("SELECT * FROM system.local WHERE key='local'")
	}
}

func BenchmarkParseSchemaColumns(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		Parse("SELECT keyspace_name, table_name, column_name, clustering_order, type, kind, position FROM system_schema.columns WHERE keyspace_name = ? AND table_name = ?")
	}
}
