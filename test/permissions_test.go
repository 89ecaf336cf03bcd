package test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gocql/gocql"
)

// permissionCase is one statement kind of the permission matrix: what it
// needs, granted on one resource, and how it is run.
type permissionCase struct {
	name string
	// on is the resource the permissions are granted on, as GRANT
	// spells it.
	on string
	// needs are the permissions the statement checks, in the order it
	// checks them.
	needs []string
	// setup runs as the superuser before each attempt; stmt is run by the
	// role under test (%d is the attempt's number, for names that must
	// be new); cleanup runs as the superuser after.
	setup, cleanup []string
	stmt           string
	// denied is the refusal when the permission named is missing; ""
	// means Cassandra's "User u has no P permission on <resource> or any
	// of its parents".
	denied string
	// resource is the refusal's resource, as Cassandra prints it.
	resource string
}

// applicable are the permissions GRANT takes on each kind of resource.
var applicable = map[string][]string{
	"ALL KEYSPACES": {"CREATE", "ALTER", "DROP", "SELECT", "MODIFY", "AUTHORIZE"},
	"KEYSPACE":      {"CREATE", "ALTER", "DROP", "SELECT", "MODIFY", "AUTHORIZE"},
	"TABLE":         {"ALTER", "DROP", "SELECT", "MODIFY", "AUTHORIZE"},
	"ALL ROLES":     {"CREATE", "ALTER", "DROP", "AUTHORIZE", "DESCRIBE"},
	"ROLE":          {"ALTER", "DROP", "AUTHORIZE"},
	"FUNCTIONS":     {"CREATE", "ALTER", "DROP", "AUTHORIZE", "EXECUTE"},
}

func (c permissionCase) kind() string {
	if strings.HasPrefix(c.on, "ALL FUNCTIONS") {
		return "FUNCTIONS"
	}
	for _, k := range []string{"ALL KEYSPACES", "ALL ROLES", "KEYSPACE", "ROLE"} {
		if strings.HasPrefix(c.on, k) {
			return k
		}
	}
	return "TABLE"
}

// The permission matrix: each statement kind, run by a role holding one
// permission on the resource the statement needs it on, for each
// permission that resource takes, over gocql on one node. It is allowed
// exactly when that permission is all it needs, and otherwise refused
// with Cassandra's UNAUTHORIZED and words; a statement needing two
// permissions is allowed with both and refused with either alone. Grants
// and revokes take effect on the next request. At the end the role holds
// no permission: the revokes, and the drops of what it created, took
// its permissions away.
func TestPermissionMatrix(t *testing.T) {
	node := newAuthUDFNode(t)
	admin := loginAs(t, node.Addr(), "cassandra", "cassandra")
	for _, q := range []string{
		"CREATE KEYSPACE m WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
		"CREATE TABLE m.t (k int PRIMARY KEY, v int)",
		"CREATE TABLE m.ix (k int PRIMARY KEY, v int)",
		"CREATE TYPE m.ty (a int)",
		"CREATE FUNCTION m.fn(a int) RETURNS NULL ON NULL INPUT RETURNS int LANGUAGE javascript AS 'a'",
		"CREATE FUNCTION m.st(s int, a int) CALLED ON NULL INPUT RETURNS int LANGUAGE javascript AS 's + a'",
		"CREATE ROLE u WITH PASSWORD = 'u-pw' AND LOGIN = true",
		"CREATE ROLE other",
	} {
		mustExec(t, admin, q)
	}
	u := loginAs(t, node.Addr(), "u", "u-pw")
	const roleDenied = "User u does not have sufficient privileges to perform the requested operation"
	cases := []permissionCase{
		{name: "SELECT", on: "TABLE m.t", needs: []string{"SELECT"}, stmt: "SELECT v FROM m.t WHERE k = 1", resource: "<table m.t>"},
		{name: "SELECT prepared", on: "TABLE m.t", needs: []string{"SELECT"}, stmt: "SELECT v FROM m.t WHERE k = ?", resource: "<table m.t>"},
		{name: "INSERT", on: "TABLE m.t", needs: []string{"MODIFY"}, stmt: "INSERT INTO m.t (k, v) VALUES (1, 1)", resource: "<table m.t>"},
		{name: "UPDATE", on: "TABLE m.t", needs: []string{"MODIFY"}, stmt: "UPDATE m.t SET v = 2 WHERE k = 1", resource: "<table m.t>"},
		{name: "DELETE", on: "TABLE m.t", needs: []string{"MODIFY"}, stmt: "DELETE FROM m.t WHERE k = 1", resource: "<table m.t>"},
		{name: "BATCH", on: "TABLE m.t", needs: []string{"MODIFY"}, resource: "<table m.t>",
			stmt: "BEGIN BATCH INSERT INTO m.t (k, v) VALUES (1, 1); INSERT INTO m.t (k, v) VALUES (2, 2); APPLY BATCH"},
		{name: "conditional INSERT", on: "TABLE m.t", needs: []string{"MODIFY", "SELECT"}, resource: "<table m.t>",
			stmt: "INSERT INTO m.t (k, v) VALUES (%d, 1) IF NOT EXISTS"},
		{name: "TRUNCATE", on: "TABLE m.t", needs: []string{"MODIFY"}, stmt: "TRUNCATE m.t", resource: "<table m.t>"},
		{name: "CREATE KEYSPACE", on: "ALL KEYSPACES", needs: []string{"CREATE"}, resource: "<all keyspaces>",
			stmt:    "CREATE KEYSPACE k%d WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
			cleanup: []string{"DROP KEYSPACE IF EXISTS k%d"}},
		{name: "DROP KEYSPACE", on: "KEYSPACE d", needs: []string{"DROP"}, resource: "<keyspace d>",
			setup: []string{"CREATE KEYSPACE IF NOT EXISTS d WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}"},
			stmt:  "DROP KEYSPACE d"},
		{name: "ALTER KEYSPACE", on: "KEYSPACE m", needs: []string{"ALTER"}, resource: "<keyspace m>",
			stmt: "ALTER KEYSPACE m WITH durable_writes = true"},
		{name: "CREATE TABLE", on: "KEYSPACE m", needs: []string{"CREATE"}, resource: "<keyspace m>",
			stmt: "CREATE TABLE m.new%d (k int PRIMARY KEY)", cleanup: []string{"DROP TABLE IF EXISTS m.new%d"}},
		{name: "ALTER TABLE", on: "TABLE m.t", needs: []string{"ALTER"}, stmt: "ALTER TABLE m.t ADD c%d int", resource: "<table m.t>"},
		{name: "DROP TABLE", on: "TABLE m.gone", needs: []string{"DROP"}, resource: "<table m.gone>",
			setup: []string{"CREATE TABLE IF NOT EXISTS m.gone (k int PRIMARY KEY)"}, stmt: "DROP TABLE m.gone"},
		{name: "CREATE INDEX", on: "TABLE m.ix", needs: []string{"ALTER"}, resource: "<table m.ix>",
			stmt: "CREATE INDEX ix_v ON m.ix (v)", cleanup: []string{"DROP INDEX IF EXISTS m.ix_v"}},
		{name: "DROP INDEX", on: "TABLE m.ix", needs: []string{"ALTER"}, resource: "<table m.ix>",
			setup: []string{"CREATE INDEX IF NOT EXISTS ix_v ON m.ix (v)"}, stmt: "DROP INDEX m.ix_v"},
		{name: "CREATE TYPE", on: "KEYSPACE m", needs: []string{"CREATE"}, resource: "<keyspace m>",
			stmt: "CREATE TYPE m.ty%d (a int)", cleanup: []string{"DROP TYPE IF EXISTS m.ty%d"}},
		{name: "ALTER TYPE", on: "KEYSPACE m", needs: []string{"ALTER"}, stmt: "ALTER TYPE m.ty ADD f%d int", resource: "<keyspace m>"},
		{name: "DROP TYPE", on: "KEYSPACE m", needs: []string{"DROP"}, resource: "<keyspace m>",
			setup: []string{"CREATE TYPE IF NOT EXISTS m.gone_type (a int)"}, stmt: "DROP TYPE m.gone_type"},
		{name: "CREATE FUNCTION", on: "ALL FUNCTIONS IN KEYSPACE m", needs: []string{"CREATE"}, resource: "<all functions in m>",
			stmt:    "CREATE FUNCTION m.f%d(a int) RETURNS NULL ON NULL INPUT RETURNS int LANGUAGE javascript AS 'a'",
			cleanup: []string{"DROP FUNCTION IF EXISTS m.f%d"}},
		{name: "CREATE OR REPLACE FUNCTION", on: "ALL FUNCTIONS IN KEYSPACE m", needs: []string{"ALTER"}, resource: "<all functions in m>",
			stmt: "CREATE OR REPLACE FUNCTION m.fn(a int) RETURNS NULL ON NULL INPUT RETURNS int LANGUAGE javascript AS 'a'"},
		{name: "DROP FUNCTION", on: "ALL FUNCTIONS IN KEYSPACE m", needs: []string{"DROP"}, resource: "<all functions in m>",
			setup: []string{"CREATE FUNCTION IF NOT EXISTS m.gone_fn(a int) RETURNS NULL ON NULL INPUT RETURNS int LANGUAGE javascript AS 'a'"},
			stmt:  "DROP FUNCTION m.gone_fn"},
		{name: "DROP AGGREGATE", on: "ALL FUNCTIONS IN KEYSPACE m", needs: []string{"DROP"}, resource: "<all functions in m>",
			setup: []string{"CREATE AGGREGATE IF NOT EXISTS m.gone_agg(int) SFUNC st STYPE int INITCOND 0"},
			stmt:  "DROP AGGREGATE m.gone_agg"},
		{name: "call a function", on: "ALL FUNCTIONS IN KEYSPACE m", needs: []string{"EXECUTE"}, resource: "<function m.fn(int)>",
			stmt: "SELECT m.fn(1) FROM system.local"},
		{name: "CREATE ROLE", on: "ALL ROLES", needs: []string{"CREATE"}, denied: roleDenied,
			stmt: "CREATE ROLE r%d", cleanup: []string{"DROP ROLE IF EXISTS r%d"}},
		{name: "ALTER ROLE", on: "ROLE other", needs: []string{"ALTER"}, denied: roleDenied, stmt: "ALTER ROLE other WITH LOGIN = false"},
		{name: "DROP ROLE", on: "ROLE victim", needs: []string{"DROP"}, denied: roleDenied,
			setup: []string{"CREATE ROLE IF NOT EXISTS victim"}, stmt: "DROP ROLE victim"},
		{name: "GRANT role", on: "ROLE other", needs: []string{"AUTHORIZE"}, denied: roleDenied,
			stmt: "GRANT other TO u", cleanup: []string{"REVOKE other FROM u"}},
		{name: "REVOKE role", on: "ROLE other", needs: []string{"AUTHORIZE"}, denied: roleDenied,
			setup: []string{"GRANT other TO holder"}, stmt: "REVOKE other FROM holder", cleanup: []string{"REVOKE other FROM holder"}},
		{name: "GRANT permission", on: "TABLE m.t", needs: []string{"AUTHORIZE", "SELECT"}, resource: "<table m.t>",
			stmt: "GRANT SELECT ON m.t TO other", cleanup: []string{"REVOKE SELECT ON m.t FROM other"}},
		{name: "REVOKE permission", on: "TABLE m.t", needs: []string{"AUTHORIZE", "MODIFY"}, resource: "<table m.t>",
			setup: []string{"GRANT MODIFY ON m.t TO other"}, stmt: "REVOKE MODIFY ON m.t FROM other"},
		{name: "LIST ROLES OF", on: "ALL ROLES", needs: []string{"DESCRIBE"}, stmt: "LIST ROLES OF other",
			denied: "You are not authorized to view roles granted to other "},
		{name: "SELECT system_auth", on: "TABLE system_auth.role_permissions", needs: []string{"SELECT"},
			stmt: "SELECT * FROM system_auth.role_permissions", resource: "<table system_auth.role_permissions>"},
	}
	mustExec(t, admin, "CREATE ROLE holder")
	attempt := 0
	try := func(t *testing.T, c permissionCase, granted []string) error {
		attempt++
		sub := func(q string) string {
			if strings.Contains(q, "%d") {
				return fmt.Sprintf(q, attempt)
			}
			return q
		}
		for _, q := range c.setup {
			mustExec(t, admin, sub(q))
		}
		if len(granted) > 0 {
			mustExec(t, admin, fmt.Sprintf("GRANT %s ON %s TO u", strings.Join(granted, ", "), c.on))
		}
		q := u.Query(sub(c.stmt))
		if strings.Contains(c.stmt, "?") {
			q = u.Query(c.stmt, 1)
		}
		err := q.Exec()
		// Fails for a resource the statement dropped, with its
		// permissions.
		_ = admin.Query(fmt.Sprintf("REVOKE ALL ON %s FROM u", c.on)).Exec()
		for _, q := range c.cleanup {
			_ = admin.Query(sub(q)).Exec()
		}
		return err
	}
	refusal := func(c permissionCase, missing string) string {
		if c.denied != "" {
			return c.denied
		}
		return fmt.Sprintf("User u has no %s permission on %s or any of its parents", missing, c.resource)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, p := range applicable[c.kind()] {
				err := try(t, c, []string{p})
				if len(c.needs) == 1 && c.needs[0] == p {
					if err != nil {
						t.Fatalf("with %s on %s: %v", p, c.on, err)
					}
					continue
				}
				missing := c.needs[0]
				if missing == p {
					missing = c.needs[1]
				}
				wantCode(t, err, gocql.ErrCodeUnauthorized, refusal(c, missing))
			}
			if len(c.needs) > 1 {
				if err := try(t, c, c.needs); err != nil {
					t.Fatalf("with %v on %s: %v", c.needs, c.on, err)
				}
			}
			// Without any permission, refused for the first it needs.
			wantCode(t, try(t, c, nil), gocql.ErrCodeUnauthorized, refusal(c, c.needs[0]))
		})
	}
	if got := rows(t, admin, "LIST ALL PERMISSIONS OF u"); len(got) != 0 {
		t.Fatalf("u still holds %v", got)
	}

	// Inherited: a permission of a role granted to u, or on a parent of
	// the resource, is u's.
	mustExec(t, admin, "CREATE ROLE readers")
	mustExec(t, admin, "GRANT SELECT ON ALL KEYSPACES TO readers")
	wantCode(t, u.Query("SELECT v FROM m.t WHERE k = 1").Exec(), gocql.ErrCodeUnauthorized,
		"User u has no SELECT permission on <table m.t> or any of its parents")
	mustExec(t, admin, "GRANT readers TO u")
	mustExec(t, u, "SELECT v FROM m.t WHERE k = 1")
	// A superuser role granted to u makes u a superuser.
	mustExec(t, admin, "CREATE ROLE admins WITH SUPERUSER = true")
	wantCode(t, u.Query("DROP TABLE m.t").Exec(), gocql.ErrCodeUnauthorized,
		"User u has no DROP permission on <table m.t> or any of its parents")
	mustExec(t, admin, "GRANT admins TO u")
	mustExec(t, u, "TRUNCATE m.t")
	// Schema changes to system keyspaces are refused even to superusers.
	wantCode(t, admin.Query("DROP TABLE system_auth.roles").Exec(), gocql.ErrCodeUnauthorized, "Cannot DROP <table system_auth.roles>")
	wantCode(t, admin.Query("DROP TABLE system.local").Exec(), gocql.ErrCodeUnauthorized, "system keyspace is not user-modifiable.")
}
