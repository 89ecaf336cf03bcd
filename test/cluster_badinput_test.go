package test

import (
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gocql/gocql"

	"github.com/cqld/cqld/config"
)

// TestClusterBadInput starts a three-node cluster the wrong way round and
// throws at it what a cluster meets from outside:
//   - seeds unreachable at start: node2 starts before its seed, retries
//     with a log line naming the seed, and joins once node1 is up;
//   - garbage on the storage port: the connection is closed and the node
//     keeps serving clients and its peers;
//   - a node of another cluster: refused, the node exits with a message
//     naming both cluster names, and node1 counts it;
//   - a second node with node2's listen_address: refused at start with a
//     message, node2 serving on.
func TestClusterBadInput(t *testing.T) {
	if testing.Short() {
		t.Skip("runs three cqld processes")
	}
	tc := newTestCluster(t, 3)
	for _, addr := range []string{"127.0.0.4", "127.0.0.5"} {
		if !portFreeOn(addr, tc.storage) || !portFreeOn(addr, tc.native) || !portFreeOn(addr, tc.metrics) {
			t.Skipf("the cluster's ports are taken on %s", addr)
		}
	}
	seed := fmt.Sprintf("127.0.0.1:%d", tc.storage)

	n1, n2, n3 := tc.nodes[0], tc.nodes[1], tc.nodes[2]
	tc.spawn(n2)
	tc.waitLog(n2, "metalog: no seed could add this node; retrying")
	if log := n2.logTail(200); !strings.Contains(log, seed) {
		t.Fatalf("node2's retry lines do not name its seed %s:\n%s", seed, log)
	}
	tc.start(n1)
	tc.waitServing(n2)
	tc.start(n3)
	s := tc.single(0, gocql.Quorum)
	for _, q := range []string{
		`CREATE KEYSPACE b WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}`,
		`CREATE TABLE b.t (k int PRIMARY KEY, v int)`,
	} {
		if err := s.Query(q).Exec(); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	tc.allSeeingAllUp(t, "b.t")

	t.Run("garbage on the storage port", func(t *testing.T) {
		before := tc.metric(0, "cqld_internode_connection_errors_total", `reason="handshake"`)
		for _, garbage := range [][]byte{
			[]byte("GET / HTTP/1.1\r\nHost: cqld\r\n\r\n"),
			// The hello's magic and version, then a broken body and CRC.
			append([]byte("CQLM\x01\x01\x00\x00\x00\x08"), make([]byte, 64)...),
			make([]byte, 4096),
		} {
			c, err := net.Dial("tcp", seed)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.Write(garbage); err != nil {
				t.Fatal(err)
			}
			c.SetReadDeadline(time.Now().Add(30 * time.Second))
			// Closed: EOF, or a reset when node1 closed with bytes unread.
			n, err := io.Copy(io.Discard, c)
			c.Close()
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				t.Fatalf("%q...: the connection was not closed: %v", garbage[:8], err)
			}
			if n != 0 {
				t.Fatalf("%q...: node1 answered %d bytes", garbage[:8], n)
			}
		}
		if after := tc.metric(0, "cqld_internode_connection_errors_total", `reason="handshake"`); after < before+3 {
			t.Errorf("handshake errors %v -> %v, want 3 more", before, after)
		}
		// Node1 serves clients, and its peers (ALL needs all three).
		for k := 0; k < 10; k++ {
			if err := s.Query(`INSERT INTO b.t (k, v) VALUES (?, ?)`, k, k).Consistency(gocql.All).Exec(); err != nil {
				t.Fatalf("write at ALL through node1 after the garbage: %v", err)
			}
		}
	})

	t.Run("a node of another cluster", func(t *testing.T) {
		foreign := tc.newNode(4, "foreign", func(c *config.Config) { c.ClusterName = "other cluster" })
		before := tc.metric(0, "cqld_internode_connection_errors_total", `reason="foreign"`)
		out := tc.runToExit(foreign)
		if !strings.Contains(out, `"other cluster"`) || !strings.Contains(out, `"test cluster"`) ||
			!strings.Contains(out, "every seed belongs to another cluster") {
			t.Fatalf("the foreign node's log does not name both clusters:\n%s", out)
		}
		if after := tc.metric(0, "cqld_internode_connection_errors_total", `reason="foreign"`); after <= before {
			t.Errorf("node1 counted no foreign connection (%v -> %v)", before, after)
		}
		if n := peers(t, s); n != 2 {
			t.Errorf("node1 has %d peers after the foreign node, want 2", n)
		}
	})

	t.Run("two nodes with one listen_address", func(t *testing.T) {
		twin := tc.newNode(2, "twin", func(c *config.Config) { c.RPCAddress = "127.0.0.5" })
		out := tc.runToExit(twin)
		want := "127.0.0.2:" + strconv.Itoa(tc.storage)
		if !strings.Contains(out, want) || !strings.Contains(out, "address already in use") ||
			!strings.Contains(out, "another node running with this listen_address") {
			t.Fatalf("the second node on %s did not exit with a message naming it:\n%s", want, out)
		}
		s2 := tc.single(1, gocql.All)
		if err := s2.Query(`INSERT INTO b.t (k, v) VALUES (100, 100)`).Exec(); err != nil {
			t.Fatalf("node2 after its twin was refused: %v", err)
		}
	})
}

// peers counts the rows of system.peers on the node s is connected to.
func peers(t *testing.T, s *gocql.Session) int {
	t.Helper()
	var n int
	if err := s.Query(`SELECT count(*) FROM system.peers`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
