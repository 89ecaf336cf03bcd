package test

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gocql/gocql"

	"github.com/cqld/cqld/config"
	"github.com/cqld/cqld/server"
)

// loginAs opens a gocql session on node as user.
func loginAs(t *testing.T, addr, user, password string) *gocql.Session {
	t.Helper()
	c := gocqlCluster(addr)
	c.Consistency = gocql.One
	// A statement setting a password hashes it with bcrypt at cost 10,
	// which takes seconds under the race detector.
	c.Timeout = 30 * time.Second
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
	if err := admin.Query("SELECT salted_hash FROM system_auth.roles WHERE role = 'alice'").Scan(&hash); err != nil || !strings.HasPrefix(hash, "$2a$") {
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

	// Function resources: the creator of a keyspace holds every
	// permission on its functions; ALL FUNCTIONS takes only what
	// FunctionResource applies; a dropped keyspace takes its functions'
	// permissions along.
	if got, want := rows(t, admin, "LIST ALL PERMISSIONS ON ALL FUNCTIONS IN KEYSPACE mine OF alice NORECURSIVE"), [][]string{
		{"alice", "alice", "<all functions in mine>", "CREATE"}, {"alice", "alice", "<all functions in mine>", "ALTER"},
		{"alice", "alice", "<all functions in mine>", "DROP"}, {"alice", "alice", "<all functions in mine>", "AUTHORIZE"},
		{"alice", "alice", "<all functions in mine>", "EXECUTE"},
	}; !reflect.DeepEqual(got, want) {
		t.Fatalf("alice's permissions on her keyspace's functions: %v, want %v", got, want)
	}
	mustExec(t, alice, "GRANT EXECUTE ON ALL FUNCTIONS IN KEYSPACE mine TO bob")
	mustExec(t, admin, "GRANT EXECUTE ON ALL FUNCTIONS TO bob")
	if got, want := rows(t, admin, "LIST EXECUTE OF bob"), [][]string{
		{"bob", "bob", "<all functions>", "EXECUTE"}, {"bob", "bob", "<all functions in mine>", "EXECUTE"},
	}; !reflect.DeepEqual(got, want) {
		t.Fatalf("LIST EXECUTE OF bob: %v, want %v", got, want)
	}
	wantCode(t, admin.Query("GRANT SELECT ON ALL FUNCTIONS TO bob").Exec(), gocql.ErrCodeSyntax,
		"Resource type FunctionResource does not support any of the requested permissions")
	wantCode(t, admin.Query("GRANT EXECUTE ON ALL FUNCTIONS IN KEYSPACE nope TO bob").Exec(), gocql.ErrCodeInvalid,
		"Resource <all functions in nope> doesn't exist")
	wantCode(t, bob.Query("GRANT EXECUTE ON ALL FUNCTIONS IN KEYSPACE mine TO alice").Exec(), gocql.ErrCodeUnauthorized,
		"User bob has no AUTHORIZE permission on <all functions in mine> or any of its parents")
	mustExec(t, alice, "DROP KEYSPACE mine")
	if got, want := rows(t, admin, "LIST EXECUTE OF bob"), [][]string{{"bob", "bob", "<all functions>", "EXECUTE"}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("LIST EXECUTE OF bob after DROP KEYSPACE mine: %v, want %v", got, want)
	}
	for _, r := range rows(t, admin, "LIST ALL PERMISSIONS OF alice") {
		if strings.Contains(r[2], "mine") {
			t.Fatalf("alice's permissions on mine outlived it: %v", r)
		}
	}
	if got := rows(t, admin, "SELECT resource FROM system_auth.role_permissions WHERE role = 'bob'"); !reflect.DeepEqual(got, [][]string{{"functions"}}) {
		t.Fatalf("system_auth.role_permissions of bob: %v", got)
	}

	// Dropping a role takes its memberships and permissions with it.
	mustExec(t, admin, "DROP ROLE carol")
	for _, r := range rows(t, admin, "LIST ALL PERMISSIONS OF alice") {
		if r[2] == "<role carol>" {
			t.Fatalf("alice's permissions on carol outlived carol: %v", r)
		}
	}
	wantCode(t, admin.Query("LIST ALL PERMISSIONS ON ROLE carol").Exec(), gocql.ErrCodeInvalid, "<role carol> doesn't exist")

	// The old syntax: ALTER USER and DROP USER.
	if got, want := columns(t, admin, "LIST USERS"), []string{"name", "super", "datacenters"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("LIST USERS columns %v, want %v", got, want)
	}
	mustExec(t, admin, "ALTER USER bob WITH PASSWORD 'bob-pw2' SUPERUSER")
	bob.Close()
	bob = loginAs(t, node.Addr(), "bob", "bob-pw2")
	mustExec(t, bob, "CREATE ROLE dave")
	if got, want := rows(t, admin, "LIST USERS"), [][]string{{"alice", "false", "ALL"}, {"bob", "true", "ALL"}, {"cassandra", "true", "ALL"}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("LIST USERS after ALTER USER: %v, want %v", got, want)
	}
	bob.Close()
	mustExec(t, admin, "DROP USER bob")
	mustExec(t, admin, "DROP USER IF EXISTS bob")
	wantCode(t, admin.Query("DROP USER bob").Exec(), gocql.ErrCodeInvalid, "bob doesn't exist")
	if got, want := rows(t, admin, "LIST USERS"), [][]string{{"alice", "false", "ALL"}, {"cassandra", "true", "ALL"}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("LIST USERS after DROP USER: %v, want %v", got, want)
	}
}

// Roles, permissions and their changes survive a restart, applied once:
// a node restarted on its data has them as they were, and the default
// superuser is not made again.
func TestRolesSurviveRestart(t *testing.T) {
	cfg := testConfig(t, t.TempDir())
	cfg.Authenticator = "PasswordAuthenticator"
	cfg.Authorizer = "CassandraAuthorizer"
	node, err := startStoppableWith(t, cfg, authOptions)
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
	node = startNodeWith(t, cfg, authOptions)
	admin = loginAs(t, node.Addr(), "cassandra", "new-pw")
	if got, want := rows(t, admin, "LIST ALL PERMISSIONS OF alice"), [][]string{{"alice", "alice", "<all keyspaces>", "MODIFY"}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("after the restart: %v, want %v", got, want)
	}
	loginAs(t, node.Addr(), "alice", "a")
}

// The bad input of issue 15 for roles, each answered as Cassandra answers
// it, the node serving on: a role granted to itself, DROP ROLE of the
// role in use, GRANT on a missing table or keyspace, a 1 MB role name, an
// empty one, a role dropped while logged in.
func TestRoleBadInput(t *testing.T) {
	node := newAuthNode(t)
	admin := loginAs(t, node.Addr(), "cassandra", "cassandra")
	mustExec(t, admin, "CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
	mustExec(t, admin, "CREATE TABLE ks.t (k int PRIMARY KEY, v int)")
	mustExec(t, admin, "CREATE ROLE alice WITH PASSWORD = 'a' AND LOGIN = true")
	mustExec(t, admin, "GRANT DROP ON ALL ROLES TO alice")
	mustExec(t, admin, "GRANT SELECT ON ks.t TO alice")
	alice := loginAs(t, node.Addr(), "alice", "a")
	big := strings.Repeat("r", 1<<20)
	for _, tc := range []struct {
		s    *gocql.Session
		q    string
		code int
		msg  string
	}{
		{admin, "GRANT alice TO alice", gocql.ErrCodeInvalid, "alice is a member of alice"},
		{admin, "DROP ROLE cassandra", gocql.ErrCodeInvalid, "Cannot DROP primary role for current login"},
		{alice, "DROP ROLE alice", gocql.ErrCodeInvalid, "Cannot DROP primary role for current login"},
		{admin, "GRANT SELECT ON ks.missing TO alice", gocql.ErrCodeInvalid, "Resource <table ks.missing> doesn't exist"},
		{admin, "GRANT SELECT ON KEYSPACE nope TO alice", gocql.ErrCodeInvalid, "Resource <keyspace nope> doesn't exist"},
		{admin, "GRANT SELECT ON ks.t TO nobody", gocql.ErrCodeInvalid, "Role nobody doesn't exist"},
		{admin, "CREATE ROLE \"" + big + "\"", gocql.ErrCodeInvalid, "Key length of 1048576 is longer than maximum of 65535"},
		{admin, "CREATE ROLE ''", gocql.ErrCodeInvalid, "Role name can't be an empty string"},
		{alice, "CREATE ROLE x WITH SUPERUSER = true", gocql.ErrCodeUnauthorized, "User alice does not have sufficient privileges to perform the requested operation"},
		{admin, "GRANT CREATE ON ks.t TO alice", gocql.ErrCodeSyntax, "Resource type DataResource does not support any of the requested permissions"},
	} {
		wantCode(t, tc.s.Query(tc.q).Exec(), tc.code, tc.msg)
	}
	// A role dropped while logged in keeps its connection and has no
	// permission left; it cannot log in again.
	var v int
	mustExec(t, admin, "INSERT INTO ks.t (k, v) VALUES (1, 1)")
	if err := alice.Query("SELECT v FROM ks.t WHERE k = 1").Scan(&v); err != nil {
		t.Fatal(err)
	}
	mustExec(t, admin, "DROP ROLE alice")
	wantCode(t, alice.Query("SELECT v FROM ks.t WHERE k = 1").Exec(), gocql.ErrCodeUnauthorized,
		"User alice has no SELECT permission on <table ks.t> or any of its parents")
	c := gocqlCluster(node.Addr())
	c.Authenticator = gocql.PasswordAuthenticator{Username: "alice", Password: "a"}
	if s, err := c.CreateSession(); err == nil {
		s.Close()
		t.Fatal("a dropped role logged in")
	}
	// The node serves on.
	if got := rows(t, admin, "SELECT v FROM ks.t WHERE k = 1"); len(got) != 1 {
		t.Fatalf("after the bad input: %v", got)
	}
}

// startLogged starts a node on cfg whose log is returned, stopped by the
// caller.
func startLogged(t *testing.T, cfg config.Config) (*server.Node, *syncBuffer) {
	t.Helper()
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	var log syncBuffer
	n, err := server.StartWith(cfg, slog.New(slog.NewTextHandler(&log, nil)), authOptions)
	if err != nil {
		t.Fatal(err)
	}
	return n, &log
}

// A data directory of before the metadata log carried roles (its role
// file has no index) keeps its roles: the node hands them to the log,
// they log in, and they are there after a restart. Start-up warns while
// the default superuser's password is unchanged, and not after; no
// password or hash is logged.
func TestRolesOfAnOlderDataDirectory(t *testing.T) {
	dir := t.TempDir()
	cfg := testConfig(t, dir)
	cfg.Authenticator = "PasswordAuthenticator"
	cfg.Authorizer = "CassandraAuthorizer"
	old, err := os.ReadFile("testdata/auth/roles-v1")
	if err != nil {
		t.Fatal(err)
	}
	authDir := filepath.Join(cfg.DataFileDirectories[0], "system_auth")
	if err := os.MkdirAll(authDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(authDir, "roles"), old, 0o644); err != nil {
		t.Fatal(err)
	}
	node, log := startLogged(t, cfg)
	alice := loginAs(t, node.Addr(), "alice", "alice-pw")
	var release string
	if err := alice.Query(localQuery).Scan(&release); err != nil {
		t.Fatal(err)
	}
	admin := loginAs(t, node.Addr(), "cassandra", "cassandra")
	if got := rows(t, admin, "LIST ALL PERMISSIONS OF alice"); len(got) != 1 || got[0][2] != "<all keyspaces>" || got[0][3] != "SELECT" {
		t.Fatalf("alice's permissions: %v", got)
	}
	mustExec(t, admin, "ALTER ROLE cassandra WITH PASSWORD = 's3cret-new'")
	alice.Close()
	admin.Close()
	if err := stopNode(node); err != nil {
		t.Fatal(err)
	}
	first := log.String()
	if !strings.Contains(first, "roles predate the metadata log") || !strings.Contains(first, "still has the password cassandra") {
		t.Fatalf("the first start's log lacks the hand-over or the warning:\n%s", first)
	}

	node, log = startLogged(t, cfg)
	defer func() {
		if err := stopNode(node); err != nil {
			t.Error(err)
		}
	}()
	loginAs(t, node.Addr(), "alice", "alice-pw")
	loginAs(t, node.Addr(), "cassandra", "s3cret-new")
	second := log.String()
	if strings.Contains(second, "roles predate") || strings.Contains(second, "still has the password") {
		t.Fatalf("the second start handed the roles over again or warned:\n%s", second)
	}
	for _, secret := range []string{"alice-pw", "s3cret-new", "$2a$"} {
		if strings.Contains(first+second, secret) {
			t.Fatalf("%q is in the log", secret)
		}
	}
}

// The Python and Node.js drivers create a role, log in as it with their
// PlainTextAuthProvider, read what it was granted and are refused what
// it was not, with Cassandra's UNAUTHORIZED.
func TestRolesDrivers(t *testing.T) {
	node := newAuthNode(t)
	host, port := hostPort(node.Addr())
	t.Run("python", func(t *testing.T) {
		needPythonDriver(t)
		runDriverScript(t, "drivers/python", debianPython, "roles.py", host, strconv.Itoa(port))
	})
	t.Run("nodejs", func(t *testing.T) {
		needNodejsDriver(t)
		runDriverScript(t, nodejsDriverDir, "node", "roles.js", host, strconv.Itoa(port))
	})
}

// Under CassandraAuthorizer a state-changing admin endpoint (POST
// /nodetool/reloadssl) takes a superuser's credentials: a role that only
// logs in is refused, as one with a wrong password is.
func TestAdminEndpointNeedsSuperuser(t *testing.T) {
	node := newAuthNode(t)
	admin := loginAs(t, node.Addr(), "cassandra", "cassandra")
	mustExec(t, admin, "CREATE ROLE alice WITH PASSWORD = 'a' AND LOGIN = true")
	reload := func(user, password string) (int, string) {
		code, body := postReloadSSL(t, node, user, password)
		return code, string(body)
	}
	if code, body := reload("alice", "a"); code != http.StatusUnauthorized || !strings.Contains(body, "alice is not a superuser") {
		t.Fatalf("reloadssl as alice: %d %s", code, body)
	}
	if code, body := reload("cassandra", "cassandra"); code != http.StatusOK {
		t.Fatalf("reloadssl as cassandra: %d %s", code, body)
	}
}
