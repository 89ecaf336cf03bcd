package schema

import (
	"strings"
	"testing"

	"github.com/cqld/cqld/statements"
)

// Each answer to a function or aggregate change is Cassandra 4.0's, with
// its class; the definitions land in the catalog.
func TestFunctionChanges(t *testing.T) {
	n := newTestNode(t)
	for _, tc := range []struct{ cql, want string }{
		{`CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}`, ""},
		{`CREATE TYPE ks.addr (zip int)`, ""},
		{`CREATE FUNCTION ks.plus(a int, b int) RETURNS NULL ON NULL INPUT RETURNS int LANGUAGE javascript AS 'a + b'`,
			"*message.SchemaChangeResult RESULT SCHEMA CHANGE (type=CREATED target=FUNCTION keyspace=ks object=plus args=[int int])"},
		{`CREATE FUNCTION ks.plus(a int, b int) RETURNS NULL ON NULL INPUT RETURNS int LANGUAGE javascript AS 'a + b'`,
			"error 0x2200 Function 'plus' already exists"},
		{`CREATE FUNCTION IF NOT EXISTS ks.plus(a int, b int) RETURNS NULL ON NULL INPUT RETURNS int LANGUAGE javascript AS 'a'`,
			"*message.VoidResult RESULT VOID"},
		{`CREATE OR REPLACE FUNCTION IF NOT EXISTS ks.plus(a int, b int) RETURNS NULL ON NULL INPUT RETURNS int LANGUAGE javascript AS 'a'`,
			"error 0x2200 Cannot use both 'OR REPLACE' and 'IF NOT EXISTS' directives"},
		{`CREATE OR REPLACE FUNCTION ks.plus(a int, b int) CALLED ON NULL INPUT RETURNS int LANGUAGE javascript AS 'a'`,
			"error 0x2200 Function 'plus' must have CALLED ON NULL INPUT directive"},
		{`CREATE OR REPLACE FUNCTION ks.plus(a int, b int) RETURNS NULL ON NULL INPUT RETURNS text LANGUAGE javascript AS 'a'`,
			"error 0x2200 Cannot replace function 'plus', the new return type text is not compatible with the return type int of existing function"},
		{`CREATE OR REPLACE FUNCTION ks.plus(a int, b int) RETURNS NULL ON NULL INPUT RETURNS int LANGUAGE javascript AS 'b + a'`,
			"*message.SchemaChangeResult RESULT SCHEMA CHANGE (type=UPDATED target=FUNCTION keyspace=ks object=plus args=[int int])"},
		{`CREATE FUNCTION ks.j(a int) RETURNS NULL ON NULL INPUT RETURNS int LANGUAGE java AS 'return a;'`,
			"error 0x2200 " + errJava},
		{`CREATE FUNCTION ks.p(a int) RETURNS NULL ON NULL INPUT RETURNS int LANGUAGE python AS 'a'`,
			"error 0x2200 Invalid language 'python' for function 'ks.p'"},
		{`CREATE FUNCTION ks.bad(a int) RETURNS NULL ON NULL INPUT RETURNS int LANGUAGE javascript AS 'a +'`, "compile"},
		{`CREATE FUNCTION ks.dup(a int, a int) RETURNS NULL ON NULL INPUT RETURNS int LANGUAGE javascript AS 'a'`,
			"error 0x2200 Duplicate argument names for given function dup with argument names [a, a]"},
		{`CREATE FUNCTION ks.fr(a frozen<list<int>>) RETURNS NULL ON NULL INPUT RETURNS int LANGUAGE javascript AS '1'`,
			"error 0x2200 Argument 'frozen<list<int>>' cannot be frozen; remove frozen<> modifier from 'frozen<list<int>>'"},
		{`CREATE FUNCTION nowhere.f(a int) RETURNS NULL ON NULL INPUT RETURNS int LANGUAGE javascript AS 'a'`,
			"error 0x2200 Keyspace 'nowhere' doesn't exist"},
		{`CREATE FUNCTION ks.zip(a addr) RETURNS NULL ON NULL INPUT RETURNS int LANGUAGE javascript AS 'a.zip'`, "CREATED"},
		{`DROP TYPE ks.addr`, "error 0x2200 Cannot drop user type 'ks.addr' as it is still used by functions ks.zip"},
		{`CREATE FUNCTION ks.plus(a bigint) CALLED ON NULL INPUT RETURNS bigint LANGUAGE javascript AS 'a'`, "CREATED"},
		{`CREATE AGGREGATE ks.total(int) SFUNC plus STYPE int`,
			"error 0x2200 Cannot create aggregate 'total' without INITCOND because state function ks.plus does not accept 'null' arguments"},
		{`CREATE AGGREGATE ks.total(int) SFUNC nope STYPE int INITCOND 0`, "error 0x2200 State function ks.nope(int, int) doesn't exist"},
		{`CREATE AGGREGATE ks.total(int) SFUNC plus STYPE text INITCOND 'a'`, "error 0x2200 State function ks.plus(text, int) doesn't exist"},
		{`CREATE AGGREGATE ks.total(int) SFUNC plus STYPE int FINALFUNC nope INITCOND 0`, "error 0x2200 Final function ks.nope(int) doesn't exist"},
		{`CREATE AGGREGATE ks.total(int) SFUNC plus STYPE int INITCOND 'x'`, "error 0x2200"},
		{`CREATE AGGREGATE ks.total(int) SFUNC plus STYPE int INITCOND 0`,
			"*message.SchemaChangeResult RESULT SCHEMA CHANGE (type=CREATED target=AGGREGATE keyspace=ks object=total args=[int])"},
		{`CREATE AGGREGATE ks.plus(int, int) SFUNC plus STYPE int INITCOND 0`, "error 0x2200"},
		{`DROP FUNCTION ks.plus`, "error 0x2200 'DROP FUNCTION plus' matches multiple function definitions; specify the argument types by issuing a statement like 'DROP FUNCTION plus (type, type, ...)'. You can use cqlsh 'DESCRIBE FUNCTION plus' command to find all overloads"},
		{`DROP FUNCTION ks.plus(int, int)`, "error 0x2200 Function 'ks.plus(int, int)' is still referenced by aggregates ks.total"},
		{`DROP FUNCTION ks.plus(text)`, "error 0x2200 Function 'ks.plus(text)' doesn't exist"},
		{`DROP FUNCTION IF EXISTS ks.plus(text)`, "*message.VoidResult RESULT VOID"},
		{`DROP AGGREGATE ks.total`,
			"*message.SchemaChangeResult RESULT SCHEMA CHANGE (type=DROPPED target=AGGREGATE keyspace=ks object=total args=[int])"},
		{`DROP FUNCTION ks.plus(int, int)`, "DROPPED"},
		{`DROP FUNCTION ks.plus`, "DROPPED"},
		{`DROP FUNCTION ks.plus`, "error 0x2200 Function 'ks.plus' doesn't exist"},
	} {
		stmt, _, err := statements.Parse(tc.cql)
		if err != nil {
			t.Fatalf("%s: %v", tc.cql, err)
		}
		res, err := n.schema.Apply(NewChange(stmt, tc.cql, "", 1, nil))
		got := outcome(res, err)
		if tc.want == "" && err != nil || !strings.Contains(got, tc.want) {
			t.Errorf("%s:\n got %s\nwant %s", tc.cql, got, tc.want)
		}
	}
	k := n.catalog.Current().Keyspace("ks")
	if len(k.Functions) != 1 || k.Functions[0].Name != "zip" || len(k.Aggregates) != 0 {
		t.Fatalf("functions %v, aggregates %v left; want zip alone", k.Functions, k.Aggregates)
	}
}
