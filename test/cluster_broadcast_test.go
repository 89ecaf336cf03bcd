package test

import (
	"fmt"
	"io"
	"net"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/gocql/gocql"

	"github.com/cqld/cqld/config"
)

// TestClusterBroadcastRPCAddress: a node whose rpc_address is the
// wildcard (0.0.0.0, on a native port of its own, since the others hold
// the cluster's port on their addresses) tells its peers the address and
// port clients reach it at, broadcast_rpc_address and its
// native_transport_port: node1's system.peers lists it at 127.0.0.2, and
// system.peers_v2 with its native_port, and clients reach it there.
func TestClusterBroadcastRPCAddress(t *testing.T) {
	if testing.Short() {
		t.Skip("runs two cqld processes")
	}
	tc := newTestCluster(t, 1)
	own := freePort(t)
	if !portFreeOn("127.0.0.2", own) || !portFreeOn("127.0.0.2", tc.storage) || !portFreeOn("127.0.0.2", tc.metrics) {
		t.Skip("ports taken on 127.0.0.2")
	}
	n2 := tc.newNode(2, "node2", func(c *config.Config) {
		c.RPCAddress, c.BroadcastRPCAddress = "0.0.0.0", "127.0.0.2"
		c.NativeTransportPort = own
	})
	n2.native = own
	tc.nodes = append(tc.nodes, n2)
	for _, nd := range tc.nodes {
		tc.start(nd)
		tc.waitNormal(nd)
	}

	s := tc.single(0, gocql.One)
	eventually(t, 30*time.Second, "node1's peers listing node2", func() error {
		var rpc, native net.IP
		var port int
		if err := s.Query(`SELECT rpc_address FROM system.peers`).Scan(&rpc); err != nil {
			return err
		}
		if err := s.Query(`SELECT native_address, native_port FROM system.peers_v2`).Scan(&native, &port); err != nil {
			return err
		}
		if rpc.String() != "127.0.0.2" || native.String() != "127.0.0.2" || port != own {
			return fmt.Errorf("peers rpc_address %v, peers_v2 %v:%d; want 127.0.0.2 and port %d", rpc, native, port, own)
		}
		return nil
	})
	// Clients reach node2 where its peers say it is.
	c := gocql.NewCluster("127.0.0.2")
	c.Port = own
	c.Timeout = 10 * time.Second
	c.DisableInitialHostLookup = true
	s2, err := c.CreateSession()
	if err != nil {
		t.Fatalf("connect to node2 at 127.0.0.2:%s: %v", strconv.Itoa(own), err)
	}
	defer s2.Close()
	var cluster string
	if err := s2.Query(`SELECT cluster_name FROM system.local`).Scan(&cluster); err != nil || cluster != "test cluster" {
		t.Fatalf("node2's system.local: %q, %v", cluster, err)
	}
}

// TestClusterBroadcastAddress: node3 listens for its peers on 127.0.0.3
// but gives them broadcast_address 127.0.0.4, where a forwarder stands in
// for the NAT a node behind one would have (connections to 127.0.0.4 are
// relayed to 127.0.0.3). Its peers list it at 127.0.0.4 and reach it there:
// writes at ALL succeed; with the forwarder gone, node1 can no longer
// reach node3 and ALL answers UNAVAILABLE, so the peers used the broadcast
// address, not the one node3 listens on.
func TestClusterBroadcastAddress(t *testing.T) {
	if testing.Short() {
		t.Skip("runs three cqld processes")
	}
	tc := newTestCluster(t, 3)
	if !portFreeOn("127.0.0.4", tc.storage) {
		t.Skip("the storage port is taken on 127.0.0.4")
	}
	fwd := forward(t, fmt.Sprintf("127.0.0.4:%d", tc.storage), fmt.Sprintf("127.0.0.3:%d", tc.storage))
	tc.reconfigure(tc.nodes[2], func(c *config.Config) { c.BroadcastAddress = "127.0.0.4" })
	for _, nd := range tc.nodes {
		tc.start(nd)
		tc.waitNormal(nd)
	}
	s := tc.single(0, gocql.All)
	eventually(t, 60*time.Second, "node1 listing node3 at its broadcast address", func() error {
		var peers []string
		iter := s.Query(`SELECT peer, rpc_address FROM system.peers`).Iter()
		var peer, rpc net.IP
		for iter.Scan(&peer, &rpc) {
			peers = append(peers, peer.String()+"/"+rpc.String())
		}
		if err := iter.Close(); err != nil {
			return err
		}
		if !slices.Contains(peers, "127.0.0.4/127.0.0.3") {
			return fmt.Errorf("peers %v, want node3 as 127.0.0.4 (rpc 127.0.0.3)", peers)
		}
		return nil
	})
	execAll(t, s,
		`CREATE KEYSPACE b WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}`,
		`CREATE TABLE b.t (k int PRIMARY KEY, v int)`,
	)
	eventually(t, 60*time.Second, "a write at ALL through node1", func() error {
		return s.Query(`INSERT INTO b.t (k, v) VALUES (1, 1)`).Exec()
	})
	fwd()
	eventually(t, 60*time.Second, "node1 losing node3 with the forwarder gone", func() error {
		err := s.Query(`INSERT INTO b.t (k, v) VALUES (2, 2)`).Exec()
		if unavailable(err, 3, 2) {
			return nil
		}
		return fmt.Errorf("ALL answered %v", err)
	})
}

// forward relays every connection made to from to to until the returned
// stop is called (or the test ends), which closes the listener and every
// relayed connection.
func forward(t *testing.T, from, to string) (stop func()) {
	t.Helper()
	l, err := net.Listen("tcp", from)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	stopped := false
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			d, err := net.Dial("tcp", to)
			if err != nil {
				c.Close()
				continue
			}
			mu.Lock()
			if stopped {
				mu.Unlock()
				c.Close()
				d.Close()
				return
			}
			conns = append(conns, c, d)
			mu.Unlock()
			wg.Add(2)
			go func() { defer wg.Done(); _, _ = io.Copy(d, c); d.Close() }()
			go func() { defer wg.Done(); _, _ = io.Copy(c, d); c.Close() }()
		}
	}()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			l.Close()
			mu.Lock()
			stopped = true
			for _, c := range conns {
				c.Close()
			}
			mu.Unlock()
			wg.Wait()
		})
	}
	t.Cleanup(stop)
	return stop
}
