package test

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/gocql/gocql"
)

// loginAs opens a gocql session on node as user.
func loginAs(t *testing.T, addr, user, password string) *gocql.Session {
	t.Helper()
	c := gocqlCluster(addr)
	c.Consistency = gocql.One
	c.Authenticator = gocql.PasswordAuthenticator{Username: user, Password: password}
	s, err := c.CreateSession()
	if err != nil {
		t.Fatalf("login as %s: %v", user, err)
	}
	t.Cleanup(s.Close)
	return s
}

// wantCode checks that err is a request error with code and message.
func wantCode(t *testing.T, err error, code int, msg string) {
	t.Helper()
	var re gocql.RequestError
	if !errors.As(err, &re) || re.Code() != code || re.Message() != msg {
		t.Fatalf("got %v, want code 0x%04x %q", err, code, msg)
	}
}

// rows reads every row of q as strings.
func rows(t *testing.T, s *gocql.Session, q string, args ...any) [][]string {
	t.Helper()
	it := s.Query(q, args...).Iter()
	var out [][]string
	for {
		m := map[string]any{}
		if !it.MapScan(m) {
			break
		}
		var row []string
		for _, c := range it.Columns() {
			row = append(row, fmt.Sprint(m[c.Name]))
		}
		out = append(out, row)
	}
	if err := it.Close(); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return out
}

// columns are the names of q's result columns.
func columns(t *testing.T, s *gocql.Session, q string) []string {
	t.Helper()
	it := s.Query(q).Iter()
	var out []string
	for _, c := range it.Columns() {
		out = append(out, c.Name)
	}
	if err := it.Close(); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return out
}

// The role statements run through gocql as Cassandra 4.0 answers them:
// roles are created, altered, listed with Cassandra's columns and dropped;
// a created role logs in; permissions are granted, listed, inherited and
// checked on every statement, and take effect on the next request.
func TestRoleStatements(t *testing.T) {
	node := newAuthNode(t)
	admin := loginAs(t, node.Addr(), "cassandra", "cassandra")
	for _, q := range []string{
		"CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
		"CREATE TABLE ks.t (k int PRIMARY KEY, v int)",
		"INSERT INTO ks.t (k, v) VALUES (1, 10)",
		"CREATE ROLE alice WITH PASSWORD = 'alice-pw' AND LOGIN = true",
		"CREATE USER bob WITH PASSWORD 'bob-pw' NOSUPERUSER",
		"CREATE ROLE readers",
		"GRANT readers TO alice",
	} {
		mustExec(t, admin, q)
	}
	if got, want := columns(t, admin, "LIST ROLES"), []string{"role", "super", "login", "options", "datacenters"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("LIST ROLES columns %v, want %v", got, want)
	}
	if got, want := rows(t, admin, "LIST ROLES"), [][]string{
		{"alice", "false", "true", "map[]", "ALL"},
		{"bob", "false", "true", "map[]", "ALL"},
		{"cassandra", "true", "true", "map[]", "ALL"},
		{"readers", "false", "false", "map[]", "ALL"},
	}; !reflect.DeepEqual(got, want) {
		t.Fatalf("LIST ROLES: %v, want %v", got, want)
	}
	if got, want := rows(t, admin, "LIST USERS"), [][]string{{"alice", "false", "ALL"}, {"bob", "false", "ALL"}, {"cassandra", "true", "ALL"}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("LIST USERS: %v, want %v", got, want)
	}

	alice := loginAs(t, node.Addr(), "alice", "alice-pw")
	wantCode(t, alice.Query("SELECT v FROM ks.t WHERE k = 1").Exec(), gocql.ErrCodeUnauthorized,
		"User alice has no SELECT permission on <table ks.t> or any of its parents")
	// A grant to a role alice holds takes effect at once.
	mustExec(t, admin, "GRANT SELECT ON KEYSPACE ks TO readers")
	var v int
	if err := alice.Query("SELECT v FROM ks.t WHERE k = ?", 1).Scan(&v); err != nil || v != 10 {
		t.Fatalf("alice's SELECT after the grant: %d %v", v, err)
	}
	wantCode(t, alice.Query("INSERT INTO ks.t (k, v) VALUES (2, 20)").Exec(), gocql.ErrCodeUnauthorized,
		"User alice has no MODIFY permission on <table ks.t> or any of its parents")
	if got, want := rows(t, admin, "LIST ALL PERMISSIONS OF alice"), [][]string{{"readers", "readers", "<keyspace ks>", "SELECT"}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("LIST ALL PERMISSIONS OF alice: %v, want %v", got, want)
	}
	if got, want := columns(t, admin, "LIST ALL PERMISSIONS OF alice"), []string{"role", "username", "resource", "permission"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("LIST PERMISSIONS columns %v", got)
	}
	// A revoke, too.
	mustExec(t, admin, "REVOKE readers FROM alice")
	wantCode(t, alice.Query("SELECT v FROM ks.t WHERE k = ?", 1).Exec(), gocql.ErrCodeUnauthorized,
		"User alice has no SELECT permission on <table ks.t> or any of its parents")

	// The system tables drivers read need no permission; system_auth does.
	var release string
	if err := alice.Query(localQuery).Scan(&release); err != nil {
		t.Fatalf("system.local as alice: %v", err)
	}
	if n := len(rows(t, alice, "SELECT table_name FROM system_schema.tables WHERE keyspace_name = 'ks'")); n != 1 {
		t.Fatalf("system_schema.tables as alice: %d rows", n)
	}
	wantCode(t, alice.Query("SELECT role FROM system_auth.roles").Exec(), gocql.ErrCodeUnauthorized,
		"User alice has no SELECT permission on <table system_auth.roles> or any of its parents")
	// A superuser reads system_auth, salted hashes included, as in
	// Cassandra.
	var hash string
	if err := admin.Query("SELECT salted_hash FROM system_auth.roles WHERE role = 'alice'").Scan(&hash); err != nil || !strings.HasPrefix(hash, "$2a$10$") {
		t.Fatalf("alice's salted_hash as a superuser: %q %v", hash, err)
	}

	// The creator of a keyspace, a table and a role holds every
	// permission on it; a dropped table's permissions go with it.
	mustExec(t, admin, "GRANT CREATE ON ALL KEYSPACES TO alice")
	mustExec(t, admin, "GRANT CREATE ON ALL ROLES TO alice")
	mustExec(t, alice, "CREATE KEYSPACE mine WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
	mustExec(t, alice, "CREATE TABLE mine.t (k int PRIMARY KEY, v int)")
	mustExec(t, alice, "INSERT INTO mine.t (k, v) VALUES (1, 1)")
	mustExec(t, alice, "CREATE ROLE carol")
	mustExec(t, alice, "ALTER ROLE carol WITH LOGIN = true")
	mustExec(t, alice, "GRANT SELECT ON mine.t TO bob")
	bob := loginAs(t, node.Addr(), "bob", "bob-pw")
	if err := bob.Query("SELECT v FROM mine.t WHERE k = 1").Scan(&v); err != nil {
		t.Fatalf("bob's SELECT on alice's table: %v", err)
	}
	mustExec(t, alice, "DROP TABLE mine.t")
	mustExec(t, alice, "CREATE TABLE mine.t (k int PRIMARY KEY, v int)")
	wantCode(t, bob.Query("SELECT v FROM mine.t WHERE k = 1").Exec(), gocql.ErrCodeUnauthorized,
		"User bob has no SELECT permission on <table mine.t> or any of its parents")
	if got := rows(t, admin, "LIST ALL PERMISSIONS OF bob"); len(got) != 0 {
		t.Fatalf("bob's permissions after the drop: %v", got)
	}

	// Dropping a role takes its memberships and permissions with it.
	mustExec(t, admin, "DROP ROLE carol")
	for _, r := range rows(t, admin, "LIST ALL PERMISSIONS OF alice") {
		if r[2] == "<role carol>" {
			t.Fatalf("alice's permissions on carol outlived carol: %v", r)
		}
	}
	wantCode(t, admin.Query("LIST ALL PERMISSIONS ON ROLE carol").Exec(), gocql.ErrCodeInvalid, "<role carol> doesn't exist")
}

// Roles, permissions and their changes survive a restart, applied once:
// a node restarted on its data has them as they were, and the default
// superuser is not made again.
func TestRolesSurviveRestart(t *testing.T) {
	cfg := testConfig(t, t.TempDir())
	cfg.Authenticator = "PasswordAuthenticator"
	cfg.Authorizer = "CassandraAuthorizer"
	node, err := startStoppable(t, cfg)
	if err != nil {
		t.Fatal(err)
	}
	admin := loginAs(t, node.Addr(), "cassandra", "cassandra")
	mustExec(t, admin, "CREATE ROLE alice WITH PASSWORD = 'a' AND LOGIN = true")
	mustExec(t, admin, "GRANT SELECT ON ALL KEYSPACES TO alice")
	mustExec(t, admin, "REVOKE SELECT ON ALL KEYSPACES FROM alice")
	mustExec(t, admin, "GRANT MODIFY ON ALL KEYSPACES TO alice")
	mustExec(t, admin, "ALTER ROLE cassandra WITH PASSWORD = 'new-pw'")
	admin.Close()
	if err := stopNode(node); err != nil {
		t.Fatal(err)
	}
	node = startNode(t, cfg)
	admin = loginAs(t, node.Addr(), "cassandra", "new-pw")
	if got, want := rows(t, admin, "LIST ALL PERMISSIONS OF alice"), [][]string{{"alice", "alice", "<all keyspaces>", "MODIFY"}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("after the restart: %v, want %v", got, want)
	}
	loginAs(t, node.Addr(), "alice", "a")
}
