package test

import (
	"errors"
	"net"
	"slices"
	"strings"
	"testing"

	"github.com/gocql/gocql"
)

// TestSystemViews reads system_views over the wire: the clients connected
// (this one among them), the settings of the node's configuration, its
// pools, the prepared statement cache, and the latencies of a table read
// and written here, counted both as coordinator and as replica; and the
// writes Cassandra refuses on virtual tables.
func TestSystemViews(t *testing.T) {
	node, cfg := newNode(t)
	s := tableSession(t, node.Addr(), "vw")
	if err := s.Query(`CREATE TABLE t (k int PRIMARY KEY, v int)`).Exec(); err != nil {
		t.Fatal(err)
	}
	const rows = 20
	for k := 0; k < rows; k++ {
		if err := s.Query(`INSERT INTO t (k, v) VALUES (?, ?)`, k, k).Exec(); err != nil {
			t.Fatal(err)
		}
	}
	var v int
	for k := 0; k < rows; k++ {
		if err := s.Query(`SELECT v FROM t WHERE k = ?`, k).Scan(&v); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := s.Query(`SELECT * FROM t`).Iter().SliceMap(); err != nil || len(n) != rows {
		t.Fatalf("scan: %d rows, %v", len(n), err)
	}

	// Clients: this session's connections, ready, on protocol v4, with
	// the requests they made.
	var requests int64
	iter := s.Query(`SELECT address, port, connection_stage, protocol_version, request_count, ssl_enabled, username FROM system_views.clients`).Iter()
	var (
		addr        net.IP
		port, proto int
		stage       string
		count       int64
		ssl         bool
		user        *string
	)
	clients := 0
	for iter.Scan(&addr, &port, &stage, &proto, &count, &ssl, &user) {
		clients++
		if !addr.IsLoopback() || port == 0 || stage != "ready" || proto != 4 || ssl || user != nil {
			t.Errorf("client %v:%d %s v%d ssl %v user %v", addr, port, stage, proto, ssl, user)
		}
		requests += count
	}
	if err := iter.Close(); err != nil {
		t.Fatal(err)
	}
	if clients == 0 || requests < 2*rows {
		t.Errorf("%d clients made %d requests, want at least %d", clients, requests, 2*rows)
	}

	var value string
	if err := s.Query(`SELECT value FROM system_views.settings WHERE name = 'cluster_name'`).Scan(&value); err != nil || value != cfg.ClusterName {
		t.Errorf("settings cluster_name: %q, %v", value, err)
	}
	var limit int
	var completed int64
	if err := s.Query(`SELECT active_tasks_limit, completed_tasks FROM system_views.thread_pools WHERE name = 'Native-Transport-Requests'`).Scan(&limit, &completed); err != nil ||
		limit != cfg.NativeTransportMaxThreads || completed < rows {
		t.Errorf("thread pool: limit %d completed %d, %v", limit, completed, err)
	}
	var entries int
	var hits int64
	if err := s.Query(`SELECT entry_count, hit_count FROM system_views.caches WHERE name = 'prepared_statements'`).Scan(&entries, &hits); err != nil ||
		entries < 2 || hits < rows {
		t.Errorf("prepared statement cache: %d entries, %d hits, %v", entries, hits, err)
	}

	for _, tc := range []struct {
		table string
		min   int64
	}{
		{"coordinator_write_latency", rows}, {"coordinator_read_latency", rows}, {"coordinator_scan_latency", 1},
		{"local_write_latency", rows}, {"local_read_latency", rows}, {"local_scan_latency", 1},
	} {
		var n int64
		var p50, max, rate float64
		err := s.Query(`SELECT count, p50th_ms, max_ms, per_second FROM system_views.`+tc.table+` WHERE keyspace_name = 'vw' AND table_name = 't'`).Scan(&n, &p50, &max, &rate)
		if err != nil || n < tc.min || p50 < 0 || max < p50 {
			t.Errorf("%s: count %d p50 %v max %v, %v", tc.table, n, p50, max, err)
		}
	}

	var tables []string
	iter = s.Query(`SELECT table_name FROM system_virtual_schema.tables WHERE keyspace_name = 'system_views'`).Iter()
	var name string
	for iter.Scan(&name) {
		tables = append(tables, name)
	}
	if err := iter.Close(); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"caches", "clients", "coordinator_read_latency", "local_write_latency", "settings", "sstable_tasks", "thread_pools"} {
		if !slices.Contains(tables, want) {
			t.Errorf("system_virtual_schema.tables lacks system_views.%s: %q", want, tables)
		}
	}

	for _, tc := range []struct{ q, want string }{
		{`INSERT INTO system_views.settings (name, value) VALUES ('a', 'b')`, "Modification is not supported by table system_views.settings"},
		{`UPDATE system_views.settings SET value = 'b' WHERE name = 'a'`, "Modification is not supported by table system_views.settings"},
		{`DELETE FROM system_views.settings WHERE name = 'a'`, "Virtual tables don't support DELETE statements"},
		{`TRUNCATE system_views.clients`, "Cannot truncate virtual tables"},
		{`INSERT INTO system_views.nope (name) VALUES ('a')`, "unconfigured table nope"},
	} {
		err := s.Query(tc.q).Exec()
		var rerr gocql.RequestError
		if !errors.As(err, &rerr) || rerr.Code() != gocql.ErrCodeInvalid || rerr.Message() != tc.want {
			t.Errorf("%s: %v, want Invalid %q", tc.q, err, tc.want)
		}
	}

	got := describeRows(t, s, "DESCRIBE TABLE system_views.settings")
	if len(got) != 1 || !strings.HasPrefix(got[0][3], "/*\nWarning: Table system_views.settings is a virtual table and cannot be recreated with CQL.\nStructure, for reference:\nVIRTUAL TABLE system_views.settings (\n    name text PRIMARY KEY,\n    value text\n) WITH comment = 'current settings';\n*/") {
		t.Errorf("DESCRIBE TABLE system_views.settings: %q", got)
	}
}

// TestSizeEstimates reads system.size_estimates as Spark's connector does:
// for a table, one row per token range this node is the primary replica
// of (a node alone: every range, the one that wraps split at the minimum
// token), whose partition counts add up to the table's.
func TestSizeEstimates(t *testing.T) {
	node, _ := newNode(t)
	s := tableSession(t, node.Addr(), "se")
	if err := s.Query(`CREATE TABLE t (k int PRIMARY KEY, v text)`).Exec(); err != nil {
		t.Fatal(err)
	}
	const rows = 200
	for k := 0; k < rows; k++ {
		if err := s.Query(`INSERT INTO t (k, v) VALUES (?, ?)`, k, strings.Repeat("v", k)).Exec(); err != nil {
			t.Fatal(err)
		}
	}
	var tokens []string
	if err := s.Query(`SELECT tokens FROM system.local`).Scan(&tokens); err != nil {
		t.Fatal(err)
	}
	check := func(flushed bool) {
		t.Helper()
		iter := s.Query(`SELECT range_start, range_end, mean_partition_size, partitions_count FROM system.size_estimates WHERE keyspace_name = 'se' AND table_name = 't'`).Iter()
		var start, end string
		var mean, count int64
		var total int64
		ranges := 0
		ends := map[string]bool{}
		for iter.Scan(&start, &end, &mean, &count) {
			ranges++
			total += count
			ends[end] = true
			if flushed && count > 0 && mean <= 0 {
				t.Errorf("range (%s, %s]: %d partitions of %d bytes", start, end, count, mean)
			}
		}
		if err := iter.Close(); err != nil {
			t.Fatal(err)
		}
		if ranges != len(tokens)+1 || total != rows || !ends["-9223372036854775808"] {
			t.Errorf("flushed %v: %d ranges (%d tokens), %d partitions, ends %v", flushed, ranges, len(tokens), total, ends)
		}
		for _, tok := range tokens {
			if !ends[tok] {
				t.Errorf("no range ends at token %s", tok)
			}
		}
	}
	// Not flushed yet: counted, of no size on disk (storage's tests
	// check the sizes once flushed).
	check(false)
}
