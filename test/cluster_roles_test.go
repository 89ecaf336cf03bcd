package test

import (
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/gocql/gocql"

	"github.com/cqld/cqld/config"
)

// startAuthCluster starts three cqld processes on 127.0.0.1-3 with
// PasswordAuthenticator and CassandraAuthorizer.
func startAuthCluster(t *testing.T) *testCluster {
	t.Helper()
	tc := newTestCluster(t, 0)
	for i := 1; i <= 3; i++ {
		for _, p := range []int{tc.native, tc.storage, tc.metrics} {
			if !portFreeOn(fmt.Sprintf("127.0.0.%d", i), p) {
				t.Fatalf("port %d is taken on 127.0.0.%d", p, i)
			}
		}
		tc.nodes = append(tc.nodes, tc.newNode(i, fmt.Sprint("node", i), func(c *config.Config) {
			c.Authenticator = "PasswordAuthenticator"
			c.Authorizer = "CassandraAuthorizer"
		}))
	}
	for _, nd := range tc.nodes {
		tc.start(nd)
	}
	return tc
}

// loginTo opens a gocql session coordinated by node i alone as user.
func (tc *testCluster) loginTo(i int, user, password string) (*gocql.Session, error) {
	c := tc.singleConfig(i)
	c.Consistency = gocql.Quorum
	c.Authenticator = gocql.PasswordAuthenticator{Username: user, Password: password}
	s, err := c.CreateSession()
	if err == nil {
		tc.t.Cleanup(s.Close)
	}
	return s, err
}

func (tc *testCluster) mustLogin(i int, user, password string) *gocql.Session {
	tc.t.Helper()
	s, err := tc.loginTo(i, user, password)
	if err != nil {
		tc.t.Fatalf("login as %s through node%d: %v", user, i+1, err)
	}
	return s
}

// Roles and permissions on a three-node cluster: every node has the
// default superuser once; a role created through node1 logs in through
// node3 at once; a REVOKE through node2 is refused on node1 on the next
// request, with no wait; every node shows the same system_auth; a node
// that was down while a role was made learns it from the log, and one
// restarted keeps its roles.
func TestClusterRoles(t *testing.T) {
	if testing.Short() {
		t.Skip("runs three cqld processes")
	}
	tc := startAuthCluster(t)
	admin1 := tc.mustLogin(0, "cassandra", "cassandra")
	admin2 := tc.mustLogin(1, "cassandra", "cassandra")
	for _, q := range []string{
		"CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}",
		"CREATE TABLE ks.t (k int PRIMARY KEY, v int)",
		"INSERT INTO ks.t (k, v) VALUES (1, 10)",
	} {
		mustExec(t, admin1, q)
	}
	if got := rows(t, admin2, "SELECT role FROM system_auth.roles"); len(got) != 1 || got[0][0] != "cassandra" {
		t.Fatalf("roles through node2: %v, want the default superuser once", got)
	}

	for round := range 3 {
		user := fmt.Sprint("alice", round)
		mustExec(t, admin1, fmt.Sprintf("CREATE ROLE %s WITH PASSWORD = 'pw' AND LOGIN = true", user))
		mustExec(t, admin1, fmt.Sprintf("GRANT SELECT ON ks.t TO %s", user))
		// At once: no retry.
		s3 := tc.mustLogin(2, user, "pw")
		var v int
		if err := s3.Query("SELECT v FROM ks.t WHERE k = 1").Scan(&v); err != nil || v != 10 {
			t.Fatalf("round %d: %s's SELECT through node3: %d %v", round, user, v, err)
		}
		s1 := tc.mustLogin(0, user, "pw")
		if err := s1.Query("SELECT v FROM ks.t WHERE k = 1").Exec(); err != nil {
			t.Fatalf("round %d: %s's SELECT through node1: %v", round, user, err)
		}
		mustExec(t, admin2, fmt.Sprintf("REVOKE SELECT ON ks.t FROM %s", user))
		wantCode(t, s1.Query("SELECT v FROM ks.t WHERE k = 1").Exec(), gocql.ErrCodeUnauthorized,
			fmt.Sprintf("User %s has no SELECT permission on <table ks.t> or any of its parents", user))
		wantCode(t, s3.Query("SELECT v FROM ks.t WHERE k = 1").Exec(), gocql.ErrCodeUnauthorized,
			fmt.Sprintf("User %s has no SELECT permission on <table ks.t> or any of its parents", user))
	}
	want := rows(t, admin1, "SELECT role, can_login, is_superuser FROM system_auth.roles")
	for i := 1; i < 3; i++ {
		s := tc.mustLogin(i, "cassandra", "cassandra")
		if got := rows(t, s, "SELECT role, can_login, is_superuser FROM system_auth.roles"); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("node%d's roles %v, node1's %v", i+1, got, want)
		}
	}

	// node3 down: a role made meanwhile reaches it from the log.
	tc.stop(tc.nodes[2], syscall.SIGKILL)
	mustExec(t, admin1, "CREATE ROLE bob WITH PASSWORD = 'bob-pw' AND LOGIN = true")
	mustExec(t, admin1, "ALTER ROLE cassandra WITH PASSWORD = 'changed'")
	tc.start(tc.nodes[2])
	eventually(t, 30*time.Second, "bob logs in through the restarted node3", func() error {
		s, err := tc.loginTo(2, "bob", "bob-pw")
		if err == nil {
			s.Close()
		}
		return err
	})
	if _, err := tc.loginTo(2, "cassandra", "cassandra"); err == nil {
		t.Fatal("the old password of cassandra still works through node3")
	}
	tc.mustLogin(2, "cassandra", "changed")
}
