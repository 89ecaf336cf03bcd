package test

import (
	"fmt"
	"net"
	"strconv"
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
