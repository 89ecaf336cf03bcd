package test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gocql/gocql"
)

// gocqlCluster is a gocql v1 cluster config as an application would write
// it: no protocol version, so the driver discovers it.
func gocqlCluster(addr string) *gocql.ClusterConfig {
	host, port := hostPort(addr)
	c := gocql.NewCluster(host)
	c.Port = port
	c.Timeout = 5 * time.Second
	c.ConnectTimeout = 5 * time.Second
	c.Consistency = gocql.Quorum
	return c
}

func TestGocqlConnectDiscoverAndUse(t *testing.T) {
	node, cfg := newNode(t)
	for _, tc := range []struct {
		name   string
		snappy bool
	}{{"plain", false}, {"snappy", true}} {
		t.Run(tc.name, func(t *testing.T) {
			ks := "ks_" + tc.name
			c := gocqlCluster(node.Addr())
			if tc.snappy {
				c.Compressor = gocql.SnappyCompressor{}
			}
			logs := &logSink{}
			c.Logger = logs
			s, err := c.CreateSession()
			if err != nil {
				t.Fatalf("connect: %v", err)
			}
			defer s.Close()

			var release, partitioner, dc, rack, cluster string
			var hostID, schemaVersion gocql.UUID
			var tokens []string
			if err := s.Query(`SELECT release_version, partitioner, data_center, rack, cluster_name, host_id, schema_version, tokens FROM system.local WHERE key='local'`).
				Scan(&release, &partitioner, &dc, &rack, &cluster, &hostID, &schemaVersion, &tokens); err != nil {
				t.Fatalf("system.local: %v", err)
			}
			if !strings.HasPrefix(release, "4.") || partitioner != "org.apache.cassandra.dht.Murmur3Partitioner" ||
				dc != "datacenter1" || rack != "rack1" || cluster != cfg.ClusterName {
				t.Errorf("system.local = %q %q %q %q %q", release, partitioner, dc, rack, cluster)
			}
			if len(tokens) != cfg.NumTokens {
				t.Errorf("tokens: got %d, want %d", len(tokens), cfg.NumTokens)
			}
			if hostID.String() != fmt.Sprintf("%x", node.Info.HostID[:]) && hostID != gocql.UUID(node.Info.HostID) {
				t.Errorf("host_id %v, want %x", hostID, node.Info.HostID)
			}

			if err := s.Query(fmt.Sprintf(`CREATE KEYSPACE %s WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}`, ks)).Exec(); err != nil {
				t.Fatalf("create keyspace: %v", err)
			}
			var after gocql.UUID
			if err := s.Query(`SELECT schema_version FROM system.local WHERE key='local'`).Scan(&after); err != nil {
				t.Fatal(err)
			}
			if after == schemaVersion {
				t.Errorf("schema_version did not change after CREATE KEYSPACE")
			}

			// A second session that USEs the keyspace, routes by token and
			// reads keyspace metadata, as applications do.
			c2 := gocqlCluster(node.Addr())
			c2.Keyspace = ks
			c2.PoolConfig.HostSelectionPolicy = gocql.TokenAwareHostPolicy(gocql.RoundRobinHostPolicy())
			if tc.snappy {
				c2.Compressor = gocql.SnappyCompressor{}
			}
			c2.Logger = logs
			s2, err := c2.CreateSession()
			if err != nil {
				t.Fatalf("connect with keyspace: %v", err)
			}
			defer s2.Close()
			md, err := s2.KeyspaceMetadata(ks)
			if err != nil {
				t.Fatalf("keyspace metadata: %v", err)
			}
			if md.StrategyClass != "org.apache.cassandra.locator.SimpleStrategy" || md.StrategyOptions["replication_factor"] == nil || !md.DurableWrites {
				t.Errorf("keyspace metadata = %+v", md)
			}
			var names []string
			iter := s2.Query(`SELECT keyspace_name FROM system_schema.keyspaces`).Iter()
			var name string
			for iter.Scan(&name) {
				names = append(names, name)
			}
			if err := iter.Close(); err != nil {
				t.Fatal(err)
			}
			if !contains(names, ks) || !contains(names, "system") {
				t.Errorf("keyspaces = %v", names)
			}
			if logs.n() > 0 {
				t.Errorf("driver logged: %q", logs.lines())
			}
		})
	}
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
