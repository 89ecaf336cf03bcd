package test

import (
	"fmt"
	"testing"
	"time"

	gocql2 "github.com/apache/cassandra-gocql-driver/v2"
	"github.com/apache/cassandra-gocql-driver/v2/lz4"
)

// The apache/cassandra-gocql-driver v2 starts at protocol v5, so this runs
// the whole session over v5 segments, with and without LZ4.
func TestGocqlV2OverV5(t *testing.T) {
	node, _ := newNode(t)
	for _, tc := range []struct {
		name string
		lz4  bool
	}{{"plain", false}, {"lz4", true}} {
		t.Run(tc.name, func(t *testing.T) {
			host, port := hostPort(node.Addr())
			c := gocql2.NewCluster(host)
			c.Port = port
			c.Timeout = 5 * time.Second
			c.ConnectTimeout = 5 * time.Second
			if tc.lz4 {
				c.Compressor = lz4.LZ4Compressor{}
			}
			logs := &logSink{}
			c.Logger = logs
			s, err := c.CreateSession()
			if err != nil {
				t.Fatalf("connect: %v", err)
			}
			defer s.Close()
			ks := "v2_" + tc.name
			if err := s.Query(fmt.Sprintf(`CREATE KEYSPACE IF NOT EXISTS %s WITH replication = {'class': 'NetworkTopologyStrategy', 'datacenter1': 1}`, ks)).Exec(); err != nil {
				t.Fatalf("create keyspace: %v", err)
			}
			var version, dc string
			if err := s.Query(`SELECT native_protocol_version, data_center FROM system.local WHERE key = ?`, "local").Scan(&version, &dc); err != nil {
				t.Fatalf("prepared system.local: %v", err)
			}
			if dc != "datacenter1" {
				t.Errorf("data_center %q", dc)
			}
			// A result bigger than one segment payload (128 KiB) exercises
			// envelopes split across segments.
			iter := s.Query(`SELECT keyspace_name, table_name, column_name, type FROM system_schema.columns`).PageSize(0).Iter()
			n := 0
			var a, b, cc, d string
			for iter.Scan(&a, &b, &cc, &d) {
				n++
			}
			if err := iter.Close(); err != nil {
				t.Fatalf("columns: %v", err)
			}
			if n < 100 {
				t.Errorf("system_schema.columns has %d rows", n)
			}
			// The driver refreshes its schema cache on the SCHEMA_CHANGE
			// event, debounced by a second.
			md, err := s.KeyspaceMetadata(ks)
			for deadline := time.Now().Add(10 * time.Second); err != nil && time.Now().Before(deadline); {
				time.Sleep(100 * time.Millisecond)
				md, err = s.KeyspaceMetadata(ks)
			}
			if err != nil {
				t.Fatalf("keyspace metadata after the schema event: %v", err)
			}
			if md.StrategyClass != "org.apache.cassandra.locator.NetworkTopologyStrategy" {
				t.Errorf("strategy %q", md.StrategyClass)
			}
			// A second session bound to the keyspace: the driver USEs it on
			// every connection.
			c.Keyspace = ks
			s2, err := c.CreateSession()
			if err != nil {
				t.Fatalf("connect with keyspace %s: %v", ks, err)
			}
			var key string
			if err := s2.Query(`SELECT key FROM system.local`).Scan(&key); err != nil || key != "local" {
				t.Errorf("system.local from the keyspace session: %q %v", key, err)
			}
			s2.Close()
			comp := "none"
			if tc.lz4 {
				comp = "lz4"
			}
			if v := metricValue(t, node.Registry, "cqld_native_startups_total", map[string]string{"version": "5", "compression": comp}); v == 0 {
				t.Errorf("no v5 handshake with compression %s was counted", comp)
			}
			if logs.n() > 0 {
				t.Errorf("driver logged: %q", logs.lines())
			}
		})
	}
}
