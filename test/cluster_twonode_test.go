package test

import (
	"errors"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gocql/gocql"
)

// TestClusterTwoNodesOneDown: a metadata log of two members with one down
// commits nothing, so a schema change through the live node is refused
// with an Unavailable that says why, rather than waiting out the request
// timeout; reads and writes at ONE still work; removenode of the dead
// node is refused the same way.
func TestClusterTwoNodesOneDown(t *testing.T) {
	if testing.Short() {
		t.Skip("runs two cqld processes")
	}
	tc := startCluster(t, 2)
	s := tc.single(0, gocql.One)
	if err := s.Query(`CREATE KEYSPACE two WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 2}`).Exec(); err != nil {
		t.Fatal(err)
	}
	if err := s.Query(`CREATE TABLE two.t (k int PRIMARY KEY, v int)`).Exec(); err != nil {
		t.Fatal(err)
	}
	tc.stop(tc.nodes[1], syscall.SIGKILL)
	eventually(t, 60*time.Second, "node1 holding node2 down", func() error {
		if out := tc.nodetool(0); !strings.Contains(out, "DN  127.0.0.2") {
			return fmt.Errorf("nodetool status:\n%s", out)
		}
		return nil
	})
	if err := s.Query(`INSERT INTO two.t (k, v) VALUES (1, 1)`).Exec(); err != nil {
		t.Errorf("write at ONE with one of two nodes down: %v", err)
	}
	start := time.Now()
	err := s.Query(`CREATE TABLE two.u (k int PRIMARY KEY)`).Exec()
	t.Logf("CREATE TABLE with one of two nodes down: %v after %v", err, time.Since(start).Round(time.Millisecond))
	var un *gocql.RequestErrUnavailable
	if !errors.As(err, &un) || un.Required != 2 || un.Alive != 1 || !strings.Contains(un.Message(), "1 of the 2 members of the cluster metadata log are up") {
		t.Fatalf("CREATE TABLE with one of two nodes down: %v (%T), want Unavailable naming the metadata log", err, err)
	}
	if err := s.Query(`SELECT * FROM two.t WHERE k = 1`).Exec(); err != nil {
		t.Errorf("read at ONE with one of two nodes down: %v", err)
	}
	var gone gocql.UUID
	if err := s.Query(`SELECT host_id FROM system.peers`).Scan(&gone); err != nil {
		t.Fatal(err)
	}
	if out, err := tc.nodetoolRun(0, "removenode", gone.String()); err == nil || !strings.Contains(out, "a cluster of two nodes changes nothing while one is down") {
		t.Errorf("removenode of the dead node of two: %v\n%s", err, out)
	}
	// Leaving would need the dead node to commit the removal: refused
	// before the node becomes LEAVING, not left LEAVING after.
	if out, err := tc.nodetoolRun(0, "decommission", "--force"); err == nil || !strings.Contains(out, "Cannot decommission this node: 0 of the 1 members") {
		t.Errorf("decommission of the live node of two: %v\n%s", err, out)
	}
	if err := s.Query(`SELECT * FROM two.t WHERE k = 1`).Exec(); err != nil {
		t.Errorf("read at ONE after the refused decommission: %v", err)
	}
}
