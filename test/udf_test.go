package test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gocql/gocql"
)

// udfConfigNode starts a node whose user-defined functions are enabled as
// enabled and scripted say, with the given warn and fail timeouts.
func udfNode(t *testing.T, enabled, scripted bool, warn, fail time.Duration) *gocql.Session {
	t.Helper()
	cfg := testConfig(t, t.TempDir())
	cfg.UserDefinedFunctionsEnabled, cfg.ScriptedUserDefinedFunctionsEnabled = enabled, scripted
	cfg.UserDefinedFunctionsWarnTimeout.Duration, cfg.UserDefinedFunctionsFailTimeout.Duration = warn, fail
	n := startNode(t, cfg)
	s := tableSession(t, n.Addr(), "fn")
	mustExec(t, s, `CREATE TABLE t (k int PRIMARY KEY, v int)`)
	mustExec(t, s, `INSERT INTO t (k, v) VALUES (1, 10)`)
	return s
}

// The configuration's keys gate CREATE FUNCTION with Cassandra 4.0's
// answers, naming the keys to set.
func TestUDFDisabled(t *testing.T) {
	const create = `CREATE FUNCTION f(a int) RETURNS NULL ON NULL INPUT RETURNS int LANGUAGE javascript AS 'a'`
	s := udfNode(t, false, false, 500*time.Millisecond, 1500*time.Millisecond)
	err := s.Query(create).Exec()
	if err == nil || !strings.Contains(err.Error(), "User-defined functions are disabled in cassandra.yaml - set enable_user_defined_functions=true to enable") {
		t.Fatalf("with user-defined functions off: %v", err)
	}
	s = udfNode(t, true, false, 500*time.Millisecond, 1500*time.Millisecond)
	err = s.Query(create).Exec()
	if err == nil || !strings.Contains(err.Error(), "set enable_scripted_user_defined_functions=true to enable if you are aware of the security risks") {
		t.Fatalf("with scripted functions off: %v", err)
	}
	// Any language but java is a script to Cassandra.
	err = s.Query(`CREATE FUNCTION f(a int) RETURNS NULL ON NULL INPUT RETURNS int LANGUAGE python AS 'a'`).Exec()
	if err == nil || !strings.Contains(err.Error(), "set enable_scripted_user_defined_functions=true to enable if you are aware of the security risks") {
		t.Fatalf("LANGUAGE python with scripted functions off: %v", err)
	}
}

// A call past the fail timeout is stopped and answers FUNCTION_FAILURE; one
// past the warn timeout answers with a client warning. The bodies loop
// forever, or for ten times the warn timeout, so the outcome does not
// depend on the machine's speed.
func TestUDFTimeouts(t *testing.T) {
	s := udfNode(t, true, true, 20*time.Millisecond, 300*time.Millisecond)
	mustExec(t, s, `CREATE FUNCTION spin(a int) RETURNS NULL ON NULL INPUT RETURNS int LANGUAGE javascript AS 'while (true) {}'`)
	mustExec(t, s, `CREATE FUNCTION slow(a int) RETURNS NULL ON NULL INPUT RETURNS int LANGUAGE javascript AS 'var s = Date.now(); while (Date.now() - s < 200) {} a'`)

	var v int
	err := s.Query(`SELECT spin(v) FROM t WHERE k = 1`).Scan(&v)
	var ff *gocql.RequestErrFunctionFailure
	if !errors.As(err, &ff) {
		t.Fatalf("a call looping forever answered %v (%T), want FUNCTION_FAILURE", err, err)
	}
	if ff.Keyspace != "fn" || ff.Function != "spin" || len(ff.ArgTypes) != 1 || ff.ArgTypes[0] != "int" ||
		!strings.Contains(ff.Message(), "ran longer than 300ms") {
		t.Fatalf("FUNCTION_FAILURE %+v: %s", ff, ff.Message())
	}

	iter := s.Query(`SELECT slow(v) FROM t WHERE k = 1`).Iter()
	iter.Scan(&v)
	warnings := iter.Warnings()
	if err := iter.Close(); err != nil {
		t.Fatal(err)
	}
	if v != 10 || len(warnings) != 1 || !strings.Contains(warnings[0], "User defined function fn.slow : (int) -> int ran longer than 20ms") {
		t.Fatalf("slow(v) = %d with warnings %q", v, warnings)
	}
	// The node is still serving.
	if err := s.Query(`SELECT v FROM t WHERE k = 1`).Scan(&v); err != nil || v != 10 {
		t.Fatalf("after the failures: %d, %v", v, err)
	}
}

// A prepared statement calling a function that was replaced runs the new
// body: the driver is answered UNPREPARED and prepares it again. Once the
// function is dropped, it answers that the function is unknown.
func TestUDFReplacedUnderPreparedStatement(t *testing.T) {
	s := udfNode(t, true, true, 500*time.Millisecond, 1500*time.Millisecond)
	mustExec(t, s, `CREATE FUNCTION twice(a int) RETURNS NULL ON NULL INPUT RETURNS int LANGUAGE javascript AS 'a * 2'`)
	var v int
	q := `SELECT twice(v) FROM t WHERE k = ?`
	if err := s.Query(q, 1).Scan(&v); err != nil || v != 20 {
		t.Fatalf("twice(10) = %d, %v", v, err)
	}
	mustExec(t, s, `CREATE OR REPLACE FUNCTION twice(a int) RETURNS NULL ON NULL INPUT RETURNS int LANGUAGE javascript AS 'a * 3'`)
	if err := s.Query(q, 1).Scan(&v); err != nil || v != 30 {
		t.Fatalf("after CREATE OR REPLACE, twice(10) = %d, %v; want the new body's 30", v, err)
	}
	mustExec(t, s, `DROP FUNCTION twice`)
	err := s.Query(q, 1).Scan(&v)
	if err == nil || !strings.Contains(err.Error(), "Unknown function 'twice'") {
		t.Fatalf("after DROP FUNCTION: %v", err)
	}
}
