package auth

import (
	"slices"
	"testing"

	"github.com/datastax/go-cassandra-native-protocol/primitive"

	"github.com/cqld/cqld/statements"
)

// parsed parses a role or permission statement.
func parsed(t *testing.T, q string) statements.Statement {
	t.Helper()
	st, _, err := statements.Parse(q)
	if err != nil {
		t.Fatalf("Parse(%q): %v", q, err)
	}
	return st
}

// run plans q as performer against the store's state, in keyspace ks
// (where every keyspace but "missing" exists), and submits its changes.
func run(t *testing.T, st *Store, performer, q string) (Result, error) {
	t.Helper()
	return runAs(t, st, Exec{Performer: performer, Authorizer: true}, q)
}

// runAs is run with e's performer and authorizer.
func runAs(t *testing.T, st *Store, e Exec, q string) (Result, error) {
	t.Helper()
	e.State, e.Keyspace, e.Hash = st.State(), "ks", st.Hash
	e.Exists = func(r Resource) bool { return r.Keyspace != "missing" }
	r, err := Plan(e, parsed(t, q))
	if err == nil {
		err = st.Submit(r.Changes...)
	}
	return r, err
}

// Each statement is allowed to whom Cassandra allows it and refused to the
// others with Cassandra's code and message; what is allowed takes effect.
func TestPlanPermissions(t *testing.T) {
	st := testStore(t)
	const denied = "User alice does not have sufficient privileges to perform the requested operation"
	unauthorized, invalid, syntax := primitive.ErrorCodeUnauthorized, primitive.ErrorCodeInvalid, primitive.ErrorCodeSyntaxError
	steps := []struct {
		who, q string
		code   primitive.ErrorCode // 0: allowed
		msg    string
	}{
		{"cassandra", "CREATE ROLE alice WITH PASSWORD = 'pw' AND LOGIN = true", 0, ""},
		{"cassandra", "CREATE ROLE alice", invalid, "alice already exists"},
		{"cassandra", "CREATE ROLE IF NOT EXISTS alice", 0, ""},
		{"cassandra", "CREATE ROLE r WITH OPTIONS = {'a': 'b'}", invalid, "org.apache.cassandra.auth.CassandraRoleManager doesn't support OPTIONS"},
		{"cassandra", "CREATE ROLE r WITH HASHED PASSWORD = 'plain'", invalid, "Invalid hashed password value. Please use jBcrypt."},
		{"alice", "CREATE ROLE bob", unauthorized, denied},
		{"cassandra", "GRANT CREATE ON ALL ROLES TO alice", 0, ""},
		{"alice", "CREATE ROLE bob WITH SUPERUSER = true", unauthorized, "Only superusers can create a role with superuser status"},
		{"alice", "CREATE ROLE bob WITH LOGIN = true AND PASSWORD = 'b'", 0, ""},
		// alice created bob, so she holds ALTER, DROP and AUTHORIZE on it.
		{"alice", "ALTER ROLE bob WITH PASSWORD = 'b2'", 0, ""},
		{"alice", "ALTER ROLE bob WITH SUPERUSER = true", unauthorized, "Only superusers are allowed to alter superuser status"},
		{"alice", "ALTER ROLE cassandra WITH PASSWORD = 'x'", unauthorized, denied},
		{"alice", "ALTER ROLE alice WITH PASSWORD = 'pw2'", 0, ""},
		{"alice", "ALTER ROLE alice WITH LOGIN = false", unauthorized, "You aren't allowed to alter LOGIN"},
		{"cassandra", "ALTER ROLE cassandra WITH SUPERUSER = false", unauthorized, "You aren't allowed to alter your own superuser status or that of a role granted to you"},
		{"cassandra", "ALTER ROLE nobody WITH LOGIN = true", invalid, "nobody doesn't exist"},
		{"cassandra", "ALTER ROLE IF EXISTS nobody WITH LOGIN = true", 0, ""},
		{"cassandra", "DROP ROLE cassandra", invalid, "Cannot DROP primary role for current login"},
		{"alice", "DROP ROLE cassandra", unauthorized, denied},
		{"cassandra", "GRANT DROP ON ALL ROLES TO alice", 0, ""},
		{"alice", "DROP ROLE cassandra", unauthorized, "Only superusers can drop a role with superuser status"},
		{"cassandra", "DROP ROLE nobody", invalid, "nobody doesn't exist"},
		{"cassandra", "DROP ROLE IF EXISTS nobody", 0, ""},
		// Permissions on data.
		{"alice", "GRANT SELECT ON ks.t TO alice", unauthorized, "User alice has no AUTHORIZE permission on <table ks.t> or any of its parents"},
		{"cassandra", "GRANT CREATE ON ks.t TO alice", syntax, "Resource type DataResource does not support any of the requested permissions"},
		{"cassandra", "GRANT SELECT ON missing.t TO alice", invalid, "Resource <table missing.t> doesn't exist"},
		{"cassandra", "GRANT SELECT ON ROLE nobody TO alice", syntax, "Resource type RoleResource does not support any of the requested permissions"},
		{"cassandra", "GRANT ALTER ON ROLE nobody TO alice", invalid, "Resource <role nobody> doesn't exist"},
		{"cassandra", "GRANT SELECT ON t TO nobody", invalid, "Role nobody doesn't exist"},
		{"cassandra", "GRANT SELECT, MODIFY ON t TO alice", 0, ""},
		{"cassandra", "GRANT AUTHORIZE ON KEYSPACE ks TO alice", 0, ""},
		{"alice", "GRANT SELECT ON ks.t TO bob", 0, ""},
		{"alice", "GRANT DROP ON ks.t TO bob", unauthorized, "User alice has no DROP permission on <table ks.t> or any of its parents"},
		// Roles granted to roles.
		{"alice", "GRANT alice TO bob", unauthorized, denied},
		{"cassandra", "GRANT alice TO alice", invalid, "alice is a member of alice"},
		{"alice", "GRANT bob TO alice", 0, ""},
		{"cassandra", "GRANT alice TO bob", invalid, "alice is a member of bob"},
		{"cassandra", "GRANT nobody TO bob", invalid, "nobody doesn't exist"},
		// Listing.
		{"alice", "LIST ROLES OF cassandra", unauthorized, "You are not authorized to view roles granted to cassandra "},
		{"cassandra", "LIST ROLES OF nobody", invalid, "<role nobody> doesn't exist"},
		{"alice", "LIST ALL PERMISSIONS", unauthorized, "You are not authorized to view everyone's permissions"},
		{"alice", "LIST ALL PERMISSIONS OF cassandra", unauthorized, "You are not authorized to view cassandra's permissions"},
		{"cassandra", "LIST ALL ON missing.t", invalid, "<table missing.t> doesn't exist"},
		{"alice", "REVOKE bob FROM alice", 0, ""},
		{"cassandra", "REVOKE bob FROM alice", invalid, "alice is not a member of bob"},
	}
	for _, s := range steps {
		_, err := run(t, st, s.who, s.q)
		if s.code == 0 {
			if err != nil {
				t.Fatalf("%s: %q: %v", s.who, s.q, err)
			}
			continue
		}
		wantErr(t, err, s.code, s.msg)
	}

	a, err := NewAuthenticator(st.State, st.Cost(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Authenticate(client, plain("alice", "pw2")); err != nil {
		t.Fatalf("alice with her new password: %v", err)
	}
	if _, err := a.Authenticate(client, plain("bob", "b2")); err != nil {
		t.Fatalf("bob: %v", err)
	}
	s := st.State()
	if err := s.Authorize("bob", Select, Table("ks", "t")); err != nil {
		t.Fatalf("bob's grant: %v", err)
	}
	if err := s.Authorize("alice", Drop, RoleResource("bob")); err != nil {
		t.Fatalf("the creator's permissions: %v", err)
	}
}

func TestPlanLists(t *testing.T) {
	st := testStore(t)
	for _, q := range []string{
		"CREATE ROLE alice WITH LOGIN = true AND PASSWORD = 'a'",
		"CREATE ROLE reader",
		"CREATE ROLE team",
		"GRANT reader TO team",
		"GRANT team TO alice",
		"GRANT SELECT ON KEYSPACE ks TO reader",
		"GRANT MODIFY ON ks.t TO alice",
	} {
		if _, err := run(t, st, "cassandra", q); err != nil {
			t.Fatalf("%q: %v", q, err)
		}
	}
	names := func(r Result) (out []string) {
		for _, role := range r.Roles {
			out = append(out, role.Name)
		}
		return out
	}
	for _, tc := range []struct {
		who, q string
		want   []string
	}{
		{"cassandra", "LIST ROLES", []string{"alice", "cassandra", "reader", "team"}},
		{"cassandra", "LIST USERS", []string{"alice", "cassandra"}},
		{"cassandra", "LIST ROLES OF alice", []string{"alice", "reader", "team"}},
		{"cassandra", "LIST ROLES OF alice NORECURSIVE", []string{"alice", "team"}},
		{"alice", "LIST ROLES", []string{"alice", "reader", "team"}},
		{"alice", "LIST ROLES OF team", []string{"reader", "team"}},
	} {
		r, err := run(t, st, tc.who, tc.q)
		if err != nil || !slices.Equal(names(r), tc.want) || !r.Listed {
			t.Errorf("%s %q: %v %v, want %v", tc.who, tc.q, names(r), err, tc.want)
		}
	}
	for _, tc := range []struct {
		who, q string
		want   []Grant
	}{
		{"alice", "LIST ALL PERMISSIONS OF alice", []Grant{{"alice", Table("ks", "t"), Modify}, {"reader", Keyspace("ks"), Select}}},
		{"alice", "LIST SELECT OF alice", []Grant{{"reader", Keyspace("ks"), Select}}},
		{"alice", "LIST ALL ON ks.t OF alice", []Grant{{"alice", Table("ks", "t"), Modify}, {"reader", Keyspace("ks"), Select}}},
		{"alice", "LIST ALL ON ks.t OF alice NORECURSIVE", []Grant{{"alice", Table("ks", "t"), Modify}}},
		{"cassandra", "LIST ALL ON KEYSPACE ks", []Grant{{"reader", Keyspace("ks"), Select}}},
	} {
		r, err := run(t, st, tc.who, tc.q)
		if err != nil || !slices.Equal(r.Grants, tc.want) {
			t.Errorf("%s %q: %v %v, want %v", tc.who, tc.q, r.Grants, err, tc.want)
		}
	}
}

// Under AllowAllAuthenticator the connection's user is anonymous: role
// statements pass the authorizer (AllowAllAuthorizer's) and the option
// checks, then are refused; under PasswordAuthenticator with
// AllowAllAuthorizer roles are managed but permissions are not, with
// Cassandra's messages for each.
func TestPlanAllowAll(t *testing.T) {
	st := testStore(t)
	anonymous := Exec{}
	const notAnonymous = "You have to be logged in and not anonymous to perform this request"
	unauthorized, invalid, server := primitive.ErrorCodeUnauthorized, primitive.ErrorCodeInvalid, primitive.ErrorCodeServerError
	for _, s := range []struct {
		e    Exec
		q    string
		code primitive.ErrorCode
		msg  string
	}{
		{anonymous, "CREATE ROLE alice WITH PASSWORD = 'a' AND LOGIN = true", invalid, "org.apache.cassandra.auth.CassandraRoleManager doesn't support PASSWORD"},
		{anonymous, "CREATE USER alice WITH PASSWORD 'a' SUPERUSER", unauthorized, "Only superusers can create a role with superuser status"},
		{anonymous, "CREATE ROLE alice", unauthorized, notAnonymous},
		{anonymous, "ALTER ROLE cassandra WITH LOGIN = false", unauthorized, notAnonymous},
		{anonymous, "ALTER ROLE cassandra WITH SUPERUSER = false", unauthorized, "Only superusers are allowed to alter superuser status"},
		{anonymous, "DROP ROLE cassandra", unauthorized, "Only superusers can drop a role with superuser status"},
		{anonymous, "DROP ROLE nobody", unauthorized, notAnonymous},
		{anonymous, "GRANT cassandra TO nobody", unauthorized, notAnonymous},
		{anonymous, "GRANT SELECT ON ALL KEYSPACES TO cassandra", unauthorized, notAnonymous},
		{anonymous, "LIST ROLES", unauthorized, notAnonymous},
		{anonymous, "LIST ALL PERMISSIONS", unauthorized, notAnonymous},
		{Exec{Performer: "cassandra"}, "CREATE ROLE alice WITH PASSWORD = 'a' AND LOGIN = true", 0, ""},
		{Exec{Performer: "alice"}, "CREATE ROLE bob", 0, ""},
		{Exec{Performer: "alice"}, "GRANT SELECT ON ks.t TO bob", server, "java.lang.UnsupportedOperationException: GRANT operation is not supported by AllowAllAuthorizer"},
		{Exec{Performer: "alice"}, "REVOKE SELECT ON ks.t FROM bob", server, "java.lang.UnsupportedOperationException: REVOKE operation is not supported by AllowAllAuthorizer"},
		{Exec{Performer: "alice"}, "LIST ALL PERMISSIONS", invalid, "LIST PERMISSIONS operation is not supported by AllowAllAuthorizer"},
		{Exec{Performer: "alice"}, "CREATE ROLE carol WITH ACCESS TO DATACENTERS {'dc1'}", invalid, "ACCESS TO DATACENTERS operations not supported by AllowAllNetworkAuthorizer"},
	} {
		_, err := runAs(t, st, s.e, s.q)
		if s.msg == "" {
			if err != nil {
				t.Fatalf("%q as %q: %v", s.q, s.e.Performer, err)
			}
			continue
		}
		wantErr(t, err, s.code, s.msg)
	}
	// Without an authorizer, the creator is granted nothing, and every
	// role is listed (AllowAllAuthorizer gives DESCRIBE on ALL ROLES).
	if g := st.State().Grants(nil, nil, AllPermissions); len(g) != 0 {
		t.Fatalf("grants without an authorizer: %v", g)
	}
	r, err := runAs(t, st, Exec{Performer: "alice"}, "LIST ROLES")
	if err != nil || len(r.Roles) != 3 {
		t.Fatalf("LIST ROLES as alice: %v %v", r.Roles, err)
	}
	// LIST USERS finding roles, none of which may log in, has no rows but
	// is not VOID.
	r, err = runAs(t, st, Exec{Performer: "bob", Authorizer: true}, "LIST USERS")
	if err != nil || len(r.Roles) != 0 || r.Void || !r.Listed {
		t.Fatalf("LIST USERS as bob: %+v %v", r, err)
	}
}
