package test

import (
	"fmt"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gocql/gocql"
)

// TestClusterRestartCatchesUp restarts a node of three that was down
// while a table was created and written: from the moment it serves
// clients it knows the table (it caught up with the metadata log before
// serving). Then the whole cluster stops and its first node starts
// alone: it does not wait for peers that are not running, and its
// system.peers gives both peers their rpc addresses (kept on disk, as
// gossip cannot tell them), so a driver connecting to it alone finds the
// other two.
func TestClusterRestartCatchesUp(t *testing.T) {
	if testing.Short() {
		t.Skip("runs three cqld processes")
	}
	tc := startCluster(t, 3)
	s := tc.single(0, gocql.Quorum)
	if err := s.Query(`CREATE KEYSPACE r WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}`).Exec(); err != nil {
		t.Fatal(err)
	}
	tc.stop(tc.nodes[2], syscall.SIGKILL)
	// Down long enough for the leader to back off from node3.
	eventually(t, 60*time.Second, "node1 holding node3 down", func() error {
		if out := tc.nodetool(0); !strings.Contains(out, "DN  127.0.0.3") {
			return fmt.Errorf("nodetool status:\n%s", out)
		}
		return nil
	})
	// gocql waits for every peer in system.peers, node3 included, to
	// report the new schema version: not here.
	ddl := tc.singleConfig(0)
	ddl.MaxWaitSchemaAgreement = time.Millisecond
	sd, err := ddl.CreateSession()
	if err != nil {
		t.Fatal(err)
	}
	defer sd.Close()
	if err := sd.Query(`CREATE TABLE r.t (k int PRIMARY KEY, v int)`).Exec(); err != nil && !strings.Contains(err.Error(), "schema versions not consistent") {
		t.Fatalf("CREATE TABLE with node3 down: %v", err)
	}
	if err := s.Query(`INSERT INTO r.t (k, v) VALUES (1, 1)`).Exec(); err != nil {
		t.Fatalf("write with node3 down: %v", err)
	}
	// The leader backs off from node3 a little longer each time it fails
	// to reach it: without the catch-up, node3 would serve for seconds
	// what it had before.
	time.Sleep(5 * time.Second)

	tc.start(tc.nodes[2])
	// At once: no eventually.
	c := tc.singleConfig(2)
	c.Consistency = gocql.One
	s3, err := c.CreateSession()
	if err != nil {
		t.Fatalf("connect to node3 just restarted: %v", err)
	}
	defer s3.Close()
	var n int
	if err := s3.Query(`SELECT count(*) FROM r.t`).Scan(&n); err != nil {
		t.Errorf("node3, just restarted, reading the table created while it was down: %v", err)
	}
	if line := logLine(tc.nodes[2], "caught up with the cluster's metadata log"); line != "" {
		t.Log(line)
	}

	for _, nd := range tc.nodes {
		tc.stop(nd, syscall.SIGKILL)
	}
	tc.start(tc.nodes[0])
	tc.waitLog(tc.nodes[0], "no other member is running")
	s1 := tc.single(0, gocql.One)
	if err := s1.Query(`SELECT count(*) FROM r.t`).Scan(&n); err != nil {
		t.Errorf("node1 restarted alone: %v", err)
	}
	if err := peersServed(s1, tc.nodes[1].addr, tc.nodes[2].addr); err != nil {
		t.Errorf("node1 restarted alone: %v", err)
	}
}

// logLine is the first line of nd's log since it last started that holds
// s, or "".
func logLine(nd *clusterNode, s string) string {
	for _, l := range strings.Split(nd.log.String(), "\n") {
		if strings.Contains(l, s) {
			return l
		}
	}
	return ""
}

// peersServed checks that s's node lists exactly the peers at addrs in
// system.peers, each with its rpc address.
func peersServed(s *gocql.Session, addrs ...string) error {
	want := map[string]bool{}
	for _, a := range addrs {
		want[a] = true
	}
	iter := s.Query(`SELECT peer, rpc_address FROM system.peers`).Iter()
	var peer, rpc net.IP
	got := 0
	for iter.Scan(&peer, &rpc) {
		got++
		if rpc == nil {
			return fmt.Errorf("system.peers: peer %v has no rpc_address", peer)
		}
		if !want[rpc.String()] {
			return fmt.Errorf("system.peers: peer %v with rpc_address %v", peer, rpc)
		}
	}
	if err := iter.Close(); err != nil {
		return err
	}
	if got != len(addrs) {
		return fmt.Errorf("system.peers: %d peers, want %d", got, len(addrs))
	}
	return nil
}
