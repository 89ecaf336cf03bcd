package statements

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

type syntaxErrorTest struct {
	query     string
	line, col int
	token     string
	msg       string
}

func runSyntaxErrorTests(t *testing.T, tests []syntaxErrorTest) {
	t.Helper()
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

func TestParseSyntaxErrorsModification(t *testing.T) {
	runSyntaxErrorTests(t, []syntaxErrorTest{
		// INSERT
		{"INSERT INTO t VALUES (1)", 1, 14, "VALUES", "no viable alternative at input 'VALUES'"},
		{"INSERT t (a) VALUES (1)", 1, 7, "t", "mismatched input 't' expecting K_INTO"},
		{"INSERT INTO t (a) VALUES 1", 1, 25, "1", "mismatched input '1' expecting '('"},
		{"INSERT INTO t (a) VALUES (1", 0, -1, "<EOF>", "mismatched input '<EOF>' expecting ')'"},
		{"INSERT INTO t (a) (1)", 1, 18, "(", "mismatched input '(' expecting K_VALUES"},
		{"INSERT INTO t (a) VALUES (1) IF EXISTS", 1, 32, "EXISTS", "mismatched input 'EXISTS' expecting K_NOT"},
		{"INSERT INTO t (a) VALUES (1) USING TTL 'x'", 1, 39, "x", "no viable alternative at input 'x'"},
		{"INSERT INTO t (a) VALUES (1) USING FOO 1", 1, 35, "FOO", "no viable alternative at input 'FOO'"},
		{"INSERT INTO t (a) VALUES (1) USING TTL 1 IF NOT EXISTS", 1, 41, "IF", "mismatched input 'IF' expecting EOF"},
		{"INSERT INTO t (a) VALUES (1);\nINSERT INTO t (a) VALUES (2)", 2, 0, "INSERT", "mismatched input 'INSERT' expecting EOF"},
		{"INSERT INTO t JSON 1", 1, 19, "1", "no viable alternative at input '1'"},
		{"INSERT INTO t JSON '{}' DEFAULT FOO", 1, 32, "FOO", "no viable alternative at input 'FOO'"},
		// UPDATE
		{"UPDATE t SET a = 1", 0, -1, "<EOF>", "mismatched input '<EOF>' expecting K_WHERE"},
		{"UPDATE t a = 1 WHERE k = 1", 1, 9, "a", "mismatched input 'a' expecting K_SET"},
		{"UPDATE t USING TTL 1 WHERE k = 1", 1, 21, "WHERE", "mismatched input 'WHERE' expecting K_SET"},
		{"UPDATE t SET a = b WHERE k = 1", 1, 19, "WHERE", "no viable alternative at input 'WHERE'"},
		{"UPDATE t SET a == 1 WHERE k = 1", 1, 16, "=", "no viable alternative at input '='"},
		{"UPDATE t SET a = 1 WHERE k = 1 IF", 0, -1, "<EOF>", "no viable alternative at input '<EOF>'"},
		{"UPDATE t SET a = 1 WHERE k = 1 IF a LIKE 'x'", 1, 36, "LIKE", "no viable alternative at input 'LIKE'"},
		{"UPDATE t SET a = 1 WHERE k = 1 IF m[1] CONTAINS 1", 1, 39, "CONTAINS", "no viable alternative at input 'CONTAINS'"},
		{"UPDATE t SET a = 1 WHERE k = 1 IF NOT EXISTS", 1, 34, "NOT", "no viable alternative at input 'NOT'"},
		{"UPDATE t SET a = 1 WHERE k = 1 IF EXISTS AND a = 1", 1, 41, "AND", "mismatched input 'AND' expecting EOF"},
		{"UPDATE t SET\n  a = 1,\n  b = WHERE k = 1", 3, 6, "WHERE", "no viable alternative at input 'WHERE'"},
		// DELETE
		{"DELETE FROM t", 0, -1, "<EOF>", "mismatched input '<EOF>' expecting K_WHERE"},
		{"DELETE a b FROM t WHERE k = 1", 1, 9, "b", "mismatched input 'b' expecting K_FROM"},
		{"DELETE WHERE k = 1", 1, 7, "WHERE", "mismatched input 'WHERE' expecting K_FROM"},
		{"DELETE FROM t USING TTL 1 WHERE k = 1", 1, 20, "TTL", "mismatched input 'TTL' expecting K_TIMESTAMP"},
		{"DELETE a[1 FROM t WHERE k = 1", 1, 11, "FROM", "mismatched input 'FROM' expecting ']'"},
		// BATCH
		{"BEGIN BATCH SELECT * FROM t APPLY BATCH", 1, 12, "SELECT", "mismatched input 'SELECT' expecting K_APPLY"},
		{"BEGIN BATCH INSERT INTO t (a) VALUES (1)", 0, -1, "<EOF>", "mismatched input '<EOF>' expecting K_APPLY"},
		{"BEGIN LOGGED BATCH APPLY BATCH", 1, 6, "LOGGED", "mismatched input 'LOGGED' expecting K_BATCH"},
		{"BEGIN BATCH INSERT INTO t (a) VALUES (1) APPLY", 0, -1, "<EOF>", "mismatched input '<EOF>' expecting K_BATCH"},
		{"BEGIN BATCH INSERT INTO t (a) VALUES (1);; APPLY BATCH", 1, 41, ";", "mismatched input ';' expecting K_APPLY"},
		{"BEGIN BATCH BEGIN BATCH APPLY BATCH APPLY BATCH", 1, 12, "BEGIN", "mismatched input 'BEGIN' expecting K_APPLY"},
		// TRUNCATE
		{"TRUNCATE", 0, -1, "<EOF>", "no viable alternative at input '<EOF>'"},
		{"TRUNCATE TABLE", 0, -1, "<EOF>", "no viable alternative at input '<EOF>'"},
		{"TRUNCATE a b", 1, 11, "b", "mismatched input 'b' expecting EOF"},
		// checks made while parsing (no position)
		{"INSERT INTO ? (a) VALUES (1)", 0, 0, "", "Bind variables cannot be used for table names"},
		{"UPDATE ?.t SET a = 1 WHERE k = 1", 0, 0, "", "Bind variables cannot be used for keyspace names"},
		{"INSERT INTO t (a) VALUES (1) USING TTL 1 AND TTL 2", 0, 0, "", "Multiple definition for TTL in USING clause"},
		{"UPDATE t USING TIMESTAMP ? AND TIMESTAMP ? SET a = 1 WHERE k = 1", 0, 0, "", "Multiple definition for TIMESTAMP in USING clause"},
		{"UPDATE t SET a = b + 1 WHERE k = 1", 0, 0, "", "Only expressions of the form X = X +<value> are supported."},
		{"UPDATE t SET a = b - 1 WHERE k = 1", 0, 0, "", "Only expressions of the form X = X -<value> are supported."},
		{"UPDATE t SET a = b -1 WHERE k = 1", 0, 0, "", "Only expressions of the form X = X - <value> are supported."},
		{"UPDATE t SET a = b 1 WHERE k = 1", 0, 0, "", "Only expressions of the form X = X + <value> are supported."},
		{"UPDATE t SET a = 1 + b WHERE k = 1", 0, 0, "", "Only expressions of the form X = <value> + X are supported."},
		{"UPDATE t SET a = 1, a = 2 WHERE k = 1", 0, 0, "", "Multiple incompatible setting of column a"},
		{"UPDATE t SET a[1] = 1, a = [2] WHERE k = 1", 0, 0, "", "Multiple incompatible setting of column a"},
		{"UPDATE t SET \"U\".f = 1, \"U\".f = 2 WHERE k = 1", 0, 0, "", "Multiple incompatible setting of column U"},
		// a syntax error before a recognition error wins, as in Cassandra
		{"UPDATE t SET a = b + WHERE k = 1", 1, 21, "WHERE", "no viable alternative at input 'WHERE'"},
	})
}

func TestParseSyntaxErrorsSchema(t *testing.T) {
	runSyntaxErrorTests(t, []syntaxErrorTest{
		// CREATE TABLE
		{"CREATE TABLE t", 0, -1, "<EOF>", "mismatched input '<EOF>' expecting '('"},
		{"CREATE TABLE t ()", 1, 16, ")", "no viable alternative at input ')'"},
		{"CREATE TABLE t (k int PRIMARY)", 1, 29, ")", "mismatched input ')' expecting K_KEY"},
		{"CREATE TABLE t (k int, 5)", 1, 23, "5", "mismatched input '5' expecting ')'"},
		{"CREATE TABLE t (k int PRIMARY KEY", 0, -1, "<EOF>", "mismatched input '<EOF>' expecting ')'"},
		{"CREATE TABLE t (k PRIMARY KEY)", 1, 18, "PRIMARY", "no viable alternative at input 'PRIMARY'"},
		{"CREATE TABLE t (PRIMARY KEY (a b))", 1, 31, "b", "mismatched input 'b' expecting ')'"},
		{"CREATE TABLE t (PRIMARY KEY a)", 1, 28, "a", "mismatched input 'a' expecting '('"},
		{"CREATE TABLE t (k int PRIMARY KEY) WITH CLUSTERING ORDER BY (c)", 1, 62, ")", "no viable alternative at input ')'"},
		{"CREATE TABLE t (k int PRIMARY KEY) WITH CLUSTERING ORDER (c ASC)", 1, 57, "(", "mismatched input '(' expecting K_BY"},
		{"CREATE TABLE t (k int PRIMARY KEY) WITH COMPACT", 0, -1, "<EOF>", "mismatched input '<EOF>' expecting '='"},
		{"CREATE TABLE t (k int PRIMARY KEY) WITH a = ?", 1, 44, "?", "no viable alternative at input '?'"},
		{"CREATE TABLE t (k int PRIMARY KEY) WITH", 0, -1, "<EOF>", "no viable alternative at input '<EOF>'"},
		{"CREATE TABLE t (k int PRIMARY KEY) AND a = 1", 1, 35, "AND", "mismatched input 'AND' expecting EOF"},
		{"CREATE TABLE IF EXISTS t (k int PRIMARY KEY)", 1, 16, "EXISTS", "mismatched input 'EXISTS' expecting K_NOT"},
		{"CREATE OR REPLACE TABLE t (k int PRIMARY KEY)", 1, 18, "TABLE", "no viable alternative at input 'TABLE'"},
		{"CREATE TABLE t (\n  k int,\n  v map<int, >,\n  PRIMARY KEY (k))", 3, 13, ">", "no viable alternative at input '>'"},
		// ALTER TABLE
		{"ALTER TABLE t", 0, -1, "<EOF>", "no viable alternative at input '<EOF>'"},
		{"ALTER TABLE t FOO", 1, 14, "FOO", "no viable alternative at input 'FOO'"},
		{"ALTER TABLE t ADD", 0, -1, "<EOF>", "no viable alternative at input '<EOF>'"},
		{"ALTER TABLE t ADD (a int, b)", 1, 27, ")", "no viable alternative at input ')'"},
		{"ALTER TABLE t DROP (a b)", 1, 22, "b", "mismatched input 'b' expecting ')'"},
		{"ALTER TABLE t DROP a USING TIMESTAMP ?", 1, 37, "?", "mismatched input '?' expecting INTEGER"},
		{"ALTER TABLE t DROP a USING TTL 1", 1, 27, "TTL", "mismatched input 'TTL' expecting K_TIMESTAMP"},
		{"ALTER TABLE t RENAME a b", 1, 23, "b", "mismatched input 'b' expecting K_TO"},
		{"ALTER TABLE t ALTER a int", 1, 22, "int", "mismatched input 'int' expecting K_TYPE"},
		{"ALTER TABLE t WITH CLUSTERING ORDER BY (a ASC)", 1, 30, "ORDER", "mismatched input 'ORDER' expecting '='"},
		// keyspaces, tables, types
		{"ALTER KEYSPACE ks", 0, -1, "<EOF>", "mismatched input '<EOF>' expecting K_WITH"},
		{"ALTER KEYSPACE IF NOT EXISTS ks WITH durable_writes = true", 1, 18, "NOT", "mismatched input 'NOT' expecting K_EXISTS"},
		{"DROP TABLE", 0, -1, "<EOF>", "no viable alternative at input '<EOF>'"},
		{"DROP TABLE IF t", 1, 14, "t", "mismatched input 't' expecting K_EXISTS"},
		{"CREATE TYPE t", 0, -1, "<EOF>", "mismatched input '<EOF>' expecting '('"},
		{"CREATE TYPE t ()", 1, 15, ")", "no viable alternative at input ')'"},
		{"CREATE TYPE text (a int)", 1, 12, "text", "no viable alternative at input 'text'"},
		{"CREATE TYPE t (a int b int)", 1, 21, "b", "mismatched input 'b' expecting ')'"},
		{"ALTER TYPE t DROP a", 1, 13, "DROP", "no viable alternative at input 'DROP'"},
		{"ALTER TYPE t ADD a", 0, -1, "<EOF>", "no viable alternative at input '<EOF>'"},
		{"DROP TYPE int", 1, 10, "int", "no viable alternative at input 'int'"},
		// CREATE FUNCTION
		{"CREATE FUNCTION f() RETURNS int LANGUAGE java AS 'x'", 1, 28, "int", "mismatched input 'int' expecting K_NULL"},
		{"CREATE FUNCTION f() CALLED ON NULL INPUT RETURNS int LANGUAGE 'java' AS 'x'", 1, 62, "java", "mismatched input 'java' expecting IDENT"},
		{"CREATE FUNCTION f() CALLED ON NULL INPUT RETURNS int LANGUAGE java AS x", 1, 70, "x", "mismatched input 'x' expecting STRING_LITERAL"},
		{"CREATE FUNCTION f(a) CALLED ON NULL INPUT RETURNS int LANGUAGE java AS 'x'", 1, 19, ")", "no viable alternative at input ')'"},
		{"CREATE FUNCTION f() CALLED NULL INPUT RETURNS int LANGUAGE java AS 'x'", 1, 27, "NULL", "mismatched input 'NULL' expecting K_ON"},
		// checks made while parsing (no position)
		{"CREATE TABLE t (k int PRIMARY KEY) WITH a = 1 AND a = 2", 0, 0, "", "Multiple definition for property 'a'"},
		{"CREATE TABLE t (k int PRIMARY KEY) WITH a = {'x': ?}", 0, 0, "", "Invalid property value: ? for property: 'x' (bind variables are not supported in DDL queries)"},
		{"CREATE TABLE t (k frozen<int> PRIMARY KEY)", 0, 0, "", "frozen<> is only allowed on collections, tuples, and user-defined types (got int)"},
		{"CREATE TABLE ?.t (k int PRIMARY KEY)", 0, 0, "", "Bind variables cannot be used for keyspace names"},
		{"ALTER TABLE t WITH comment = 'a' AND COMMENT = 'b'", 0, 0, "", "Multiple definition for property 'comment'"},
		{"ALTER KEYSPACE ks WITH foo = 1", 0, 0, "", "Unknown property 'foo'"},
		{"ALTER KEYSPACE ks WITH replication = 'x'", 0, 0, "", "Invalid value for property 'replication'. It should be a map."},
		{"CREATE TYPE byte (a int)", 0, 0, "", "Invalid (reserved) user type name byte"},
		{"DROP TYPE ks.interval", 0, 0, "", "Invalid (reserved) user type name interval"},
	})
}

// TestSyntaxErrorQuotesAtMost1KiB: an error quotes the start of a long
// token, since an error message can hold at most 65535 bytes.
func TestSyntaxErrorQuotesAtMost1KiB(t *testing.T) {
	long := strings.Repeat("x", 100_000)
	for _, q := range []string{
		"INSERT INTO t (a) VALUES '" + long + "'",
		"SELECT * FROM t WHERE a = 1 " + long,
		"CREATE KEYSPACE k WITH replication = {'" + long + "': [1]}",
	} {
		_, _, err := Parse(q)
		var se *SyntaxError
		if !errors.As(err, &se) || len(err.Error()) > 1200 || !strings.Contains(err.Error(), "...[") {
			t.Errorf("%.40s...: got a %d-byte error %.100v", q, len(fmt.Sprint(err)), err)
		}
	}
}

// TestAbbreviate: error messages quote at most 1 KiB of a value, cut
// between UTF-8 sequences.
func TestAbbreviate(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"abc", "abc"},
		{strings.Repeat("x", 1024), strings.Repeat("x", 1024)},
		{strings.Repeat("x", 1025), strings.Repeat("x", 1024) + "...[1 bytes more]"},
		{strings.Repeat("x", 1023) + "é", strings.Repeat("x", 1023) + "...[2 bytes more]"},
	} {
		if got := Abbreviate(tc.in); got != tc.want {
			t.Errorf("Abbreviate(%d bytes) = ...%s", len(tc.in), got[max(0, len(got)-30):])
		}
	}
}
