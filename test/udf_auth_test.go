package test

import (
	"testing"

	"github.com/cqld/cqld/server"
)

// A role needs EXECUTE on a user-defined function to call it, as in
// Cassandra: without it a SELECT with f(v) and a prepared INSERT with
// f(?) are refused with Cassandra's UNAUTHORIZED message; granted EXECUTE
// ON ALL FUNCTIONS IN KEYSPACE, both work.
func TestUDFExecutePermission(t *testing.T) {
	node := newAuthUDFNode(t)
	admin := loginAs(t, node.Addr(), "cassandra", "cassandra")
	for _, q := range []string{
		`CREATE KEYSPACE fx WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}`,
		`CREATE TABLE fx.t (k int PRIMARY KEY, v int)`,
		`INSERT INTO fx.t (k, v) VALUES (1, 10)`,
		`CREATE FUNCTION fx.f(a int) RETURNS NULL ON NULL INPUT RETURNS int LANGUAGE javascript AS 'a + 1'`,
		`CREATE ROLE caller WITH PASSWORD = 'pw' AND LOGIN = true`,
		`GRANT SELECT ON KEYSPACE fx TO caller`,
		`GRANT MODIFY ON KEYSPACE fx TO caller`,
	} {
		mustExec(t, admin, q)
	}
	s := loginAs(t, node.Addr(), "caller", "pw")
	const refused = "User caller has no EXECUTE permission on <function fx.f(int)> or any of its parents"
	var v int
	wantCode(t, s.Query(`SELECT fx.f(v) FROM fx.t WHERE k = 1`).Scan(&v), 0x2100, refused)
	wantCode(t, s.Query(`INSERT INTO fx.t (k, v) VALUES (2, fx.f(?))`, 20).Exec(), 0x2100, refused)
	// A statement calling no user function is unaffected.
	if err := s.Query(`SELECT v FROM fx.t WHERE k = 1`).Scan(&v); err != nil || v != 10 {
		t.Fatalf("SELECT v without EXECUTE: %d, %v", v, err)
	}

	mustExec(t, admin, `GRANT EXECUTE ON ALL FUNCTIONS IN KEYSPACE fx TO caller`)
	if err := s.Query(`INSERT INTO fx.t (k, v) VALUES (2, fx.f(?))`, 20).Exec(); err != nil {
		t.Fatalf("INSERT with f(?) granted EXECUTE: %v", err)
	}
	if err := s.Query(`SELECT fx.f(v) FROM fx.t WHERE k = 2`).Scan(&v); err != nil || v != 22 {
		t.Fatalf("SELECT f(v) granted EXECUTE: %d, %v, want 22", v, err)
	}
}

// newAuthUDFNode is newAuthNode with user-defined functions enabled.
func newAuthUDFNode(t *testing.T) *server.Node {
	t.Helper()
	cfg := testConfig(t, t.TempDir())
	cfg.Authenticator = "PasswordAuthenticator"
	cfg.Authorizer = "CassandraAuthorizer"
	cfg.UserDefinedFunctionsEnabled, cfg.ScriptedUserDefinedFunctionsEnabled = true, true
	return startNodeWith(t, cfg, authOptions)
}
