package statements

import (
	"errors"
	"reflect"
	"testing"
)

// parseAuth parses a role or permission statement.
func parseAuth(t *testing.T, q string) (Statement, error) {
	t.Helper()
	st, _, err := Parse(q)
	return st, err
}

func strp(s string) *string { return &s }
func boolp(b bool) *bool    { return &b }

func TestParseAuthStatements(t *testing.T) {
	tests := []struct {
		query string
		want  Statement
	}{
		{"CREATE ROLE IF NOT EXISTS Alice WITH PASSWORD = 'pw' AND LOGIN = true AND SUPERUSER = false AND OPTIONS = {'a': 'b'}",
			&CreateRole{Name: "alice", IfNotExists: true, Options: RoleOptions{Password: strp("pw"), Login: boolp(true), Superuser: boolp(false), Options: map[string]string{"a": "b"}}}},
		{"CREATE ROLE 'Bob'", &CreateRole{Name: "Bob"}},
		{`CREATE ROLE "Carol" WITH ACCESS TO DATACENTERS {'dc1', 'dc2'}`, &CreateRole{Name: "Carol", Options: RoleOptions{Datacenters: []string{"dc1", "dc2"}}}},
		{"CREATE ROLE r WITH HASHED PASSWORD = '$2a$10$x' AND ACCESS TO ALL DATACENTERS", &CreateRole{Name: "r", Options: RoleOptions{HashedPassword: strp("$2a$10$x"), AllDatacenters: true}}},
		{"CREATE USER Dave WITH PASSWORD 'pw' SUPERUSER",
			&CreateRole{Name: "Dave", User: true, Options: RoleOptions{Password: strp("pw"), Login: boolp(true), Superuser: boolp(true)}}},
		{"CREATE USER IF NOT EXISTS 'e'", &CreateRole{Name: "e", User: true, IfNotExists: true, Options: RoleOptions{Login: boolp(true), Superuser: boolp(false)}}},
		{"ALTER USER dave WITH PASSWORD 'x'", &AlterRole{Name: "dave", User: true, Options: RoleOptions{Password: strp("x")}}},
		{"ALTER USER dave NOSUPERUSER", &AlterRole{Name: "dave", User: true, Options: RoleOptions{Superuser: boolp(false)}}},
		{"ALTER ROLE IF EXISTS r WITH LOGIN = false;", &AlterRole{Name: "r", IfExists: true, Options: RoleOptions{Login: boolp(false)}}},
		{"DROP ROLE IF EXISTS R", &DropRole{Name: "r", IfExists: true}},
		{"DROP USER Dave", &DropRole{Name: "Dave", User: true}},
		{"GRANT SELECT, MODIFY PERMISSION, SELECT ON ks.t TO r",
			&GrantPermissions{Permissions: Permissions{Names: []string{"SELECT", "MODIFY"}}, Resource: AuthResource{Kind: TableResource, Keyspace: "ks", Table: "t"}, Grantee: "r"}},
		{"GRANT ALL PERMISSIONS ON ALL KEYSPACES TO r", &GrantPermissions{Permissions: Permissions{All: true}, Resource: AuthResource{Kind: AllKeyspacesResource}, Grantee: "r"}},
		{"GRANT ALL ON KEYSPACE ks TO 'R'", &GrantPermissions{Permissions: Permissions{All: true}, Resource: AuthResource{Kind: KeyspaceResource, Keyspace: "ks"}, Grantee: "R"}},
		{"GRANT ALTER ON ROLE bob TO r", &GrantPermissions{Permissions: Permissions{Names: []string{"ALTER"}}, Resource: AuthResource{Kind: RoleResource, Role: "bob"}, Grantee: "r"}},
		{"GRANT DESCRIBE ON ALL ROLES TO r", &GrantPermissions{Permissions: Permissions{Names: []string{"DESCRIBE"}}, Resource: AuthResource{Kind: AllRolesResource}, Grantee: "r"}},
		{"GRANT SELECT ON TABLE t TO r", &GrantPermissions{Permissions: Permissions{Names: []string{"SELECT"}}, Resource: AuthResource{Kind: TableResource, Table: "t"}, Grantee: "r"}},
		{"GRANT SELECT ON function TO r", &GrantPermissions{Permissions: Permissions{Names: []string{"SELECT"}}, Resource: AuthResource{Kind: TableResource, Table: "function"}, Grantee: "r"}},
		{"GRANT EXECUTE ON ALL FUNCTIONS TO r", &GrantPermissions{Permissions: Permissions{Names: []string{"EXECUTE"}}, Resource: AuthResource{Kind: AllFunctionsResource}, Grantee: "r"}},
		{"REVOKE ALL ON ALL FUNCTIONS IN KEYSPACE Ks FROM r", &RevokePermissions{Permissions: Permissions{All: true}, Resource: AuthResource{Kind: KeyspaceFunctionsResource, Keyspace: "ks"}, Revokee: "r"}},
		{"LIST EXECUTE ON ALL FUNCTIONS IN KEYSPACE \"Ks\"", &ListPermissions{Permissions: Permissions{Names: []string{"EXECUTE"}}, On: &AuthResource{Kind: KeyspaceFunctionsResource, Keyspace: "Ks"}}},
		{"GRANT reader TO alice", &GrantRole{Role: "reader", Grantee: "alice"}},
		{"GRANT all TO alice", &GrantRole{Role: "all", Grantee: "alice"}},
		{"REVOKE MODIFY ON ks.t FROM r", &RevokePermissions{Permissions: Permissions{Names: []string{"MODIFY"}}, Resource: AuthResource{Kind: TableResource, Keyspace: "ks", Table: "t"}, Revokee: "r"}},
		{"REVOKE reader FROM alice", &RevokeRole{Role: "reader", Revokee: "alice"}},
		{"LIST ROLES", &ListRoles{}},
		{"LIST ROLES OF alice NORECURSIVE", &ListRoles{Of: "alice", NoRecursive: true}},
		{"LIST USERS", &ListRoles{Users: true}},
		{"LIST ALL;", &ListPermissions{Permissions: Permissions{All: true}}},
		{"LIST ALL PERMISSIONS OF alice", &ListPermissions{Permissions: Permissions{All: true}, Of: "alice"}},
		{"LIST SELECT ON ks.t OF alice NORECURSIVE",
			&ListPermissions{Permissions: Permissions{Names: []string{"SELECT"}}, On: &AuthResource{Kind: TableResource, Keyspace: "ks", Table: "t"}, Of: "alice", NoRecursive: true}},
	}
	for _, tc := range tests {
		got, err := parseAuth(t, tc.query)
		if err != nil {
			t.Errorf("Parse(%q): %v", tc.query, err)
			continue
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Parse(%q):\n got %#v\nwant %#v", tc.query, got, tc.want)
		}
	}
}

// Malformed role and permission statements get Cassandra's syntax errors,
// not the unsupported answer.
func TestParseAuthErrors(t *testing.T) {
	tests := []struct{ query, msg string }{
		{"CREATE ROLE r WITH PASSWORD = 'a' AND PASSWORD = 'b'", "Multiple definition for property 'PASSWORD'"},
		{"CREATE ROLE r WITH LOGIN = true AND LOGIN = false", "Multiple definition for property 'LOGIN'"},
		{"CREATE ROLE r WITH PASSWORD = 'a' AND HASHED PASSWORD = 'b'", "Options 'password' and 'hashed password' are mutually exclusive"},
		{"CREATE ROLE r WITH LOGIN = 1", "line 1:27 mismatched input '1' expecting BOOLEAN"},
		{"CREATE ROLE r WITH PASSWORD 'x'", "line 1:28 mismatched input 'x' expecting '='"},
		{"CREATE ROLE r WITH FOO = 1", "line 1:19 no viable alternative at input 'FOO'"},
		{"CREATE ROLE ?", "Bind variables cannot be used for role names"},
		{"GRANT SELECT ON ks.t TO ?", "Bind variables cannot be used for role names"},
		{`CREATE USER "dave"`, "Quoted strings are are not supported for user names and USER is deprecated, please use ROLE"},
		{"CREATE USER dave WITH PASSWORD = 'x'", "line 1:31 mismatched input '=' expecting STRING_LITERAL"},
		{"GRANT SELECT ON ks.t", "line 0:-1 mismatched input '<EOF>' expecting K_TO"},
		{"GRANT SELECT TO r", "line 1:13 mismatched input 'TO' expecting K_ON"},
		{"REVOKE SELECT ON ks.t TO r", "line 1:22 mismatched input 'TO' expecting K_FROM"},
		{"LIST foo", "line 1:5 no viable alternative at input 'foo'"},
		{"LIST ROLES OF", "line 0:-1 no viable alternative at input '<EOF>'"},
	}
	for _, tc := range tests {
		_, _, err := Parse(tc.query)
		var se *SyntaxError
		if !errors.As(err, &se) || err.Error() != tc.msg {
			t.Errorf("Parse(%q) = %v, want syntax error %q", tc.query, err, tc.msg)
		}
	}
	for q, stmt := range map[string]string{
		"GRANT EXECUTE ON FUNCTION f(int) TO r":       "GRANT ON FUNCTION",
		"REVOKE EXECUTE ON FUNCTION ks.f(int) FROM r": "REVOKE ON FUNCTION",
		"LIST ALL ON ALL MBEANS":                      "LIST ON MBEANS",
		"LIST SUPERUSERS":                             "LIST SUPERUSERS",
	} {
		_, _, err := Parse(q)
		var ue *UnsupportedError
		if !errors.As(err, &ue) || ue.Statement != stmt {
			t.Errorf("Parse(%q) = %v, want unsupported %s", q, err, stmt)
		}
	}
}
