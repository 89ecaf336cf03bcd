package statements

import (
	"testing"
)

func tuple(elems ...Term) *TupleLiteral { return &TupleLiteral{Elems: elems} }
func list(elems ...Term) *ListLiteral   { return &ListLiteral{Elems: elems} }
func set(elems ...Term) *SetLiteral     { return &SetLiteral{Elems: elems} }
func terms(ts ...Term) []Term           { return ts }
func assign(c string, op AssignmentOp, v Term) Assignment {
	return Assignment{Column: c, Op: op, Value: v}
}
func cond(c string, op Operator, v Term) Condition {
	return Condition{Column: c, Op: op, Value: v}
}
func where(rels ...Relation) []Relation { return rels }

func TestParseInsert(t *testing.T) {
	runParseTests(t, []parseTest{
		// gocql's TestTuple and friends
		{"INSERT INTO tuple_test (id, coord) VALUES(?, (?, ?))",
			&Insert{Table: "tuple_test", Columns: []string{"id", "coord"}, Values: terms(qm(0), tuple(qm(1), qm(2)))}, 3},
		{"INSERT INTO tuple_test (id, coord) VALUES(?, (?, ?));",
			&Insert{Table: "tuple_test", Columns: []string{"id", "coord"}, Values: terms(qm(0), tuple(qm(1), qm(2)))}, 3},
		{"INSERT INTO gocql_test.tuple_nested (id, val) VALUES (?, (?, (?, ?)))",
			&Insert{Keyspace: "gocql_test", Table: "tuple_nested", Columns: []string{"id", "val"},
				Values: terms(qm(0), tuple(qm(1), tuple(qm(2), qm(3))))}, 4},
		{"INSERT INTO t (a) VALUES (1)", &Insert{Table: "t", Columns: []string{"a"}, Values: terms(integer("1"))}, 0},
		{`insert into KS."T" (K, "V", "") values ('x', [1, 2], {'a': 1}) ; `,
			&Insert{Keyspace: "ks", Table: "T", Columns: []string{"k", "V", ""},
				Values: terms(str("x"), list(integer("1"), integer("2")), &MapLiteral{Keys: terms(str("a")), Values: terms(integer("1"))})}, 0},
		{"INSERT INTO t (a, b, c, d) VALUES (now(), (int)?, {f: :x}, null)",
			&Insert{Table: "t", Columns: []string{"a", "b", "c", "d"}, Values: terms(
				&FunctionTerm{Name: "now"}, &TypeHintTerm{Type: "int", Term: qm(0)},
				&UserTypeLiteral{Fields: []string{"f"}, Values: terms(named(1, "x"))}, null())}, 2},
		// IF NOT EXISTS and USING
		{"INSERT INTO t (a) VALUES (?) IF NOT EXISTS",
			&Insert{Table: "t", Columns: []string{"a"}, Values: terms(qm(0)), IfNotExists: true}, 1},
		{"INSERT INTO t (a) VALUES (?) USING TTL ? AND TIMESTAMP 123",
			&Insert{Table: "t", Columns: []string{"a"}, Values: terms(qm(0)), Using: Using{TTL: qm(1), Timestamp: integer("123")}}, 2},
		{"INSERT INTO t (a) VALUES (?) IF NOT EXISTS USING TIMESTAMP :ts",
			&Insert{Table: "t", Columns: []string{"a"}, Values: terms(qm(0)), IfNotExists: true, Using: Using{Timestamp: named(1, "ts")}}, 2},
		// JSON
		{`INSERT INTO t JSON '{"a": 1}'`, &Insert{Table: "t", Json: str(`{"a": 1}`)}, 0},
		{"INSERT INTO t JSON ? DEFAULT UNSET", &Insert{Table: "t", Json: qm(0), DefaultUnset: true}, 1},
		{"INSERT INTO t JSON :j DEFAULT NULL IF NOT EXISTS USING TTL 10",
			&Insert{Table: "t", Json: named(0, "j"), IfNotExists: true, Using: Using{TTL: integer("10")}}, 1},
		{"INSERT INTO json JSON $$[]$$", &Insert{Table: "json", Json: str("[]")}, 0},
	})
}

func TestParseUpdate(t *testing.T) {
	k := rel("k", OpEq, qm(0))
	runParseTests(t, []parseTest{
		{"UPDATE t SET a = 1 WHERE k = 0",
			&Update{Table: "t", Assignments: []Assignment{assign("a", AssignSet, integer("1"))}, Where: where(rel("k", OpEq, integer("0")))}, 0},
		{"UPDATE ks.t USING TTL ? AND TIMESTAMP 123 SET a = ?, b = ? WHERE k = ?;",
			&Update{Keyspace: "ks", Table: "t", Using: Using{TTL: qm(0), Timestamp: integer("123")},
				Assignments: []Assignment{assign("a", AssignSet, qm(1)), assign("b", AssignSet, qm(2))},
				Where:       where(rel("k", OpEq, qm(3)))}, 4},
		// counters and collections
		{"UPDATE t SET c = c + 1, d = d - ?, e = e -2, f += 3, g -= 4 WHERE k = ?",
			&Update{Table: "t", Assignments: []Assignment{
				assign("c", AssignAdd, integer("1")),
				assign("d", AssignSubtract, qm(0)),
				assign("e", AssignAdd, integer("-2")),
				assign("f", AssignAdd, integer("3")),
				assign("g", AssignSubtract, integer("4")),
			}, Where: where(rel("k", OpEq, qm(1)))}, 2},
		{"UPDATE t SET l = l + [1, 2], s = s - {'x'}, m = m + {'k': 'v'}, p = [0] + p, q = ? + q WHERE k = ?",
			&Update{Table: "t", Assignments: []Assignment{
				assign("l", AssignAdd, list(integer("1"), integer("2"))),
				assign("s", AssignSubtract, set(str("x"))),
				assign("m", AssignAdd, &MapLiteral{Keys: terms(str("k")), Values: terms(str("v"))}),
				assign("p", AssignPrepend, list(integer("0"))),
				assign("q", AssignPrepend, qm(0)),
			}, Where: where(rel("k", OpEq, qm(1)))}, 2},
		// element, index and field setters
		{"UPDATE t SET m[?] = ?, l[2] = 'x', u.f = ?, u.\"G\" = 1 WHERE k = ?",
			&Update{Table: "t", Assignments: []Assignment{
				{Column: "m", Op: AssignSet, Key: qm(0), Value: qm(1)},
				{Column: "l", Op: AssignSet, Key: integer("2"), Value: str("x")},
				{Column: "u", Op: AssignSet, Field: "f", Value: qm(2)},
				{Column: "u", Op: AssignSet, Field: "G", Value: integer("1")},
			}, Where: where(rel("k", OpEq, qm(3)))}, 4},
		// values that look like columns: function calls and arithmetic
		{"UPDATE t SET a = now(), b = 1 + count(1), c = 1 + ks.fn(2) - 3 WHERE k = ?",
			&Update{Table: "t", Assignments: []Assignment{
				assign("a", AssignSet, &FunctionTerm{Name: "now"}),
				assign("b", AssignSet, &ArithmeticTerm{Op: "+", Left: integer("1"), Right: &FunctionTerm{Name: "count", Args: terms(integer("1"))}}),
				assign("c", AssignSet, &ArithmeticTerm{Op: "-",
					Left:  &ArithmeticTerm{Op: "+", Left: integer("1"), Right: &FunctionTerm{Keyspace: "ks", Name: "fn", Args: terms(integer("2"))}},
					Right: integer("3")}),
			}, Where: where(k)}, 1},
		// the same column twice is fine when compatible
		{"UPDATE t SET m['a'] = 1, m = m + {'b': 2}, u.x = 1, u.y = 2 WHERE k = ?",
			&Update{Table: "t", Assignments: []Assignment{
				{Column: "m", Op: AssignSet, Key: str("a"), Value: integer("1")},
				assign("m", AssignAdd, &MapLiteral{Keys: terms(str("b")), Values: terms(integer("2"))}),
				{Column: "u", Op: AssignSet, Field: "x", Value: integer("1")},
				{Column: "u", Op: AssignSet, Field: "y", Value: integer("2")},
			}, Where: where(k)}, 1},
		// conditions
		{"UPDATE t SET a = ? WHERE k = ? IF EXISTS",
			&Update{Table: "t", Assignments: []Assignment{assign("a", AssignSet, qm(0))}, Where: where(rel("k", OpEq, qm(1))), IfExists: true}, 2},
		{"UPDATE t SET a = ? WHERE k = ? IF a = ? AND b != 1 AND c < 2 AND d <= 3 AND e > 4 AND f >= 5 AND g IN (1, ?) AND h IN ?",
			&Update{Table: "t", Assignments: []Assignment{assign("a", AssignSet, qm(0))}, Where: where(rel("k", OpEq, qm(1))),
				Conditions: []Condition{
					cond("a", OpEq, qm(2)), cond("b", OpNeq, integer("1")), cond("c", OpLt, integer("2")),
					cond("d", OpLte, integer("3")), cond("e", OpGt, integer("4")), cond("f", OpGte, integer("5")),
					cond("g", OpIn, list(integer("1"), qm(3))), cond("h", OpIn, qm(4)),
				}}, 5},
		{"UPDATE t SET a = 1 WHERE k = 1 IF m['x'] = 'y' AND l[0] IN ('a') AND u.f != null AND u.g IN ? AND s CONTAINS 1 AND m CONTAINS KEY 'x'",
			&Update{Table: "t", Assignments: []Assignment{assign("a", AssignSet, integer("1"))}, Where: where(rel("k", OpEq, integer("1"))),
				Conditions: []Condition{
					{Column: "m", Key: str("x"), Op: OpEq, Value: str("y")},
					{Column: "l", Key: integer("0"), Op: OpIn, Value: list(str("a"))},
					{Column: "u", Field: "f", Op: OpNeq, Value: null()},
					{Column: "u", Field: "g", Op: OpIn, Value: qm(0)},
					cond("s", OpContains, integer("1")),
					cond("m", OpContainsKey, str("x")),
				}}, 1},
		// exists is also a column name
		{"UPDATE t SET exists = 1 WHERE k = 1 IF exists = 2",
			&Update{Table: "t", Assignments: []Assignment{assign("exists", AssignSet, integer("1"))}, Where: where(rel("k", OpEq, integer("1"))),
				Conditions: []Condition{cond("exists", OpEq, integer("2"))}}, 0},
		{"UPDATE t SET a = 1 WHERE k IN (1, 2) AND c = 3 IF EXISTS;",
			&Update{Table: "t", Assignments: []Assignment{assign("a", AssignSet, integer("1"))},
				Where: where(rel("k", OpIn, list(integer("1"), integer("2"))), rel("c", OpEq, integer("3"))), IfExists: true}, 0},
	})
}

func TestParseDelete(t *testing.T) {
	runParseTests(t, []parseTest{
		{"DELETE FROM t WHERE k = 0", &Delete{Table: "t", Where: where(rel("k", OpEq, integer("0")))}, 0},
		{"DELETE a, b[?], c.f, \"D\"['x'] FROM ks.t USING TIMESTAMP ? WHERE k = ? AND c > ?",
			&Delete{Keyspace: "ks", Table: "t",
				Columns: []Deletion{{Column: "a"}, {Column: "b", Key: qm(0)}, {Column: "c", Field: "f"}, {Column: "D", Key: str("x")}},
				Using:   Using{Timestamp: qm(1)},
				Where:   where(rel("k", OpEq, qm(2)), rel("c", OpGt, qm(3)))}, 4},
		{"DELETE FROM t WHERE k = ? IF EXISTS", &Delete{Table: "t", Where: where(rel("k", OpEq, qm(0))), IfExists: true}, 1},
		{"DELETE v FROM t WHERE k = ? IF v = ? AND m[?] != 1;",
			&Delete{Table: "t", Columns: []Deletion{{Column: "v"}}, Where: where(rel("k", OpEq, qm(0))),
				Conditions: []Condition{cond("v", OpEq, qm(1)), {Column: "m", Key: qm(2), Op: OpNeq, Value: integer("1")}}}, 3},
		{"DELETE FROM t WHERE (a, b) IN ((1, 2)) AND token(k) > 0",
			&Delete{Table: "t", Where: where(
				Relation{Columns: []string{"a", "b"}, Op: OpIn, Value: list(tuple(integer("1"), integer("2")))},
				Relation{Columns: []string{"k"}, Token: true, Op: OpGt, Value: integer("0")})}, 0},
	})
}

func TestParseBatch(t *testing.T) {
	ins := func(first int) *Insert {
		return &Insert{Table: "t", Columns: []string{"a", "b"}, Values: terms(qm(first), qm(first+1))}
	}
	runParseTests(t, []parseTest{
		{"BEGIN BATCH APPLY BATCH", &Batch{}, 0},
		{"BEGIN BATCH INSERT INTO t (a, b) VALUES (?, ?) APPLY BATCH",
			&Batch{Statements: []Statement{ins(0)}}, 2},
		{"BEGIN UNLOGGED BATCH INSERT INTO t (a, b) VALUES (?, ?); INSERT INTO t (a, b) VALUES (?, ?); APPLY BATCH;",
			&Batch{Type: BatchUnlogged, Statements: []Statement{ins(0), ins(2)}}, 4},
		{"begin counter batch using timestamp ? update c set n = n + 1 where k = ? update c set n = n - ? where k = ? apply batch",
			&Batch{Type: BatchCounter, Using: Using{Timestamp: qm(0)}, Statements: []Statement{
				&Update{Table: "c", Assignments: []Assignment{assign("n", AssignAdd, integer("1"))}, Where: where(rel("k", OpEq, qm(1)))},
				&Update{Table: "c", Assignments: []Assignment{assign("n", AssignSubtract, qm(2))}, Where: where(rel("k", OpEq, qm(3)))},
			}}, 4},
		{"BEGIN BATCH USING TIMESTAMP 1 AND TTL 2\n" +
			"  INSERT INTO t (a, b) VALUES (?, ?) IF NOT EXISTS;\n" +
			"  UPDATE t SET b = ? WHERE a = ? IF EXISTS;\n" +
			"  DELETE b FROM t WHERE a = ? IF b = ?\n" +
			"APPLY BATCH",
			&Batch{Using: Using{Timestamp: integer("1"), TTL: integer("2")}, Statements: []Statement{
				&Insert{Table: "t", Columns: []string{"a", "b"}, Values: terms(qm(0), qm(1)), IfNotExists: true},
				&Update{Table: "t", Assignments: []Assignment{assign("b", AssignSet, qm(2))}, Where: where(rel("a", OpEq, qm(3))), IfExists: true},
				&Delete{Table: "t", Columns: []Deletion{{Column: "b"}}, Where: where(rel("a", OpEq, qm(4))), Conditions: []Condition{cond("b", OpEq, qm(5))}},
			}}, 6},
	})
}

func TestParseTruncate(t *testing.T) {
	runParseTests(t, []parseTest{
		{"TRUNCATE t", &Truncate{Table: "t"}, 0},
		{"TRUNCATE TABLE ks.t;", &Truncate{Keyspace: "ks", Table: "t"}, 0},
		{"truncate columnfamily \"Ks\".\"T\"", &Truncate{Keyspace: "Ks", Table: "T"}, 0},
	})
}

// Bind markers are numbered across the whole statement, in order of
// appearance, whatever clause they are in.
func TestParseBindMarkerOrderModification(t *testing.T) {
	tests := []struct {
		query string
		n     int
	}{
		{"INSERT INTO t (a, b, c) VALUES (?, (?, [?, :x]), {?: ?}) IF NOT EXISTS USING TTL ? AND TIMESTAMP ?", 8},
		{"UPDATE t USING TIMESTAMP ? SET a = ?, b = b + ?, c[?] = ?, d.f = ?, e = ? + e WHERE k = ? AND c IN (?, ?) IF a = ? AND m[?] IN ?", 13},
		{"DELETE a[?], b FROM t USING TIMESTAMP ? WHERE k = ? IF c = ?", 4},
		{"BEGIN BATCH USING TIMESTAMP ? INSERT INTO t (a) VALUES (?) UPDATE t SET a = ? WHERE k = ? DELETE FROM t WHERE k = ? IF a = ? APPLY BATCH", 6},
		{"INSERT INTO t JSON ?", 1},
	}
	for _, tc := range tests {
		st, n, err := Parse(tc.query)
		if err != nil {
			t.Errorf("Parse(%q): %v", tc.query, err)
			continue
		}
		if n != tc.n {
			t.Errorf("Parse(%q): %d markers, want %d", tc.query, n, tc.n)
		}
		var idx []int
		collectMarkersInOrder(st, &idx)
		for i, got := range idx {
			if got != i {
				t.Errorf("Parse(%q): marker %d has index %d (all: %v)", tc.query, i, got, idx)
				break
			}
		}
		if len(idx) != tc.n {
			t.Errorf("Parse(%q): %d markers in tree, want %d", tc.query, len(idx), tc.n)
		}
	}
}

// collectMarkersInOrder walks a modification statement in source order.
func collectMarkersInOrder(st Statement, idx *[]int) {
	var term func(Term)
	term = func(t Term) {
		switch t := t.(type) {
		case *BindMarker:
			*idx = append(*idx, t.Index)
		case *TupleLiteral:
			for _, e := range t.Elems {
				term(e)
			}
		case *ListLiteral:
			for _, e := range t.Elems {
				term(e)
			}
		case *MapLiteral:
			for i := range t.Keys {
				term(t.Keys[i])
				term(t.Values[i])
			}
		}
	}
	using := func(u Using) {
		// Source order is the order written; these tests write TIMESTAMP
		// last when both are present, except in batches which have one.
		term(u.TTL)
		term(u.Timestamp)
	}
	where := func(rels []Relation) {
		for _, r := range rels {
			term(r.MapKey)
			term(r.Value)
			term(r.UpperBound)
		}
	}
	conds := func(cs []Condition) {
		for _, c := range cs {
			term(c.Key)
			term(c.Value)
		}
	}
	switch s := st.(type) {
	case *Insert:
		for _, v := range s.Values {
			term(v)
		}
		term(s.Json)
		using(s.Using)
	case *Update:
		using(s.Using)
		for _, a := range s.Assignments {
			term(a.Key)
			term(a.Value)
		}
		where(s.Where)
		conds(s.Conditions)
	case *Delete:
		for _, d := range s.Columns {
			term(d.Key)
		}
		using(s.Using)
		where(s.Where)
		conds(s.Conditions)
	case *Batch:
		using(s.Using)
		for _, c := range s.Statements {
			collectMarkersInOrder(c, idx)
		}
	}
}
