package test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	gocql2 "github.com/apache/cassandra-gocql-driver/v2"
	"github.com/gocql/gocql"

	"github.com/cqld/cqld/server"
)

// TestTombstoneThresholds reads partitions of deleted rows on a node with
// tombstone_warn_threshold 10 and tombstone_failure_threshold 50: a read
// of one partition meeting 30 row deletions, or a range read meeting them,
// is answered with Cassandra's warning; one meeting 60 fails with
// READ_FAILURE, its reason map (protocol v5) naming this node with
// READ_TOO_MANY_TOMBSTONES. Dead cells and range tombstones count too.
func TestTombstoneThresholds(t *testing.T) {
	cfg := testConfig(t, t.TempDir())
	cfg.TombstoneWarnThreshold, cfg.TombstoneFailureThreshold = 10, 50
	clock := newFakeClock()
	node := startNodeWith(t, cfg, server.Options{Now: clock.Now})
	s := tableSession(t, node.Addr(), "tomb")
	for _, q := range []string{
		`CREATE TABLE t (k int, c int, v int, PRIMARY KEY (k, c))`,
	} {
		if err := s.Query(q).Exec(); err != nil {
			t.Fatal(err)
		}
	}
	deleteRows := func(k, n int) {
		for c := 0; c < n; c++ {
			if err := s.Query(`INSERT INTO t (k, c, v) VALUES (?, ?, 1)`, k, c).Exec(); err != nil {
				t.Fatal(err)
			}
			if err := s.Query(`DELETE FROM t WHERE k = ? AND c = ?`, k, c).Exec(); err != nil {
				t.Fatal(err)
			}
		}
	}
	deleteRows(1, 30)
	if err := s.Query(`INSERT INTO t (k, c, v) VALUES (1, 100, 1)`).Exec(); err != nil {
		t.Fatal(err)
	}
	warned := func(q string, want string) {
		t.Helper()
		iter := s.Query(q).Iter()
		w := iter.Warnings()
		if err := iter.Close(); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		if len(w) != 1 || !strings.HasPrefix(w[0], want) || !strings.HasSuffix(w[0], "(see tombstone_warn_threshold)") {
			t.Errorf("%s: warnings %q, want %q...", q, w, want)
		}
	}
	warned(`SELECT * FROM t WHERE k = 1`, "Read 1 live rows and 30 tombstone cells for query SELECT * FROM t WHERE k = 1; token ")
	warned(`SELECT * FROM t`, "Read 1 live rows and 30 tombstone cells for query SELECT * FROM t; token ")

	// Dead cells and a range tombstone (two bounds) count as well.
	for c := 0; c < 6; c++ {
		if err := s.Query(`INSERT INTO t (k, c, v) VALUES (2, ?, 1) USING TTL 1`, c).Exec(); err != nil {
			t.Fatal(err)
		}
		if err := s.Query(`UPDATE t SET v = null WHERE k = 2 AND c = ?`, c+10).Exec(); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Query(`DELETE FROM t WHERE k = 2 AND c > 50`).Exec(); err != nil {
		t.Fatal(err)
	}
	clock.Advance(2 * time.Second) // the TTLs run out
	warned(`SELECT * FROM t WHERE k = 2`, "Read 0 live rows and 14 tombstone cells")

	deleteRows(3, 60)
	err := s.Query(`SELECT * FROM t WHERE k = 3`).Exec()
	var rf *gocql.RequestErrReadFailure
	host, _ := hostPort(node.Addr())
	want := fmt.Sprintf("Operation failed - received 0 responses and 1 failures: READ_TOO_MANY_TOMBSTONES from /%s:%d", host, cfg.StoragePort)
	if !errors.As(err, &rf) || rf.NumFailures != 1 || rf.Received != 0 || rf.BlockFor != 1 || rf.Message() != want {
		t.Fatalf("60 tombstones: %v, want ReadFailure %q", err, want)
	}

	// Protocol v5 names the node and the reason.
	c := gocql2.NewCluster(host)
	_, c.Port = hostPort(node.Addr())
	c.Timeout = 5 * time.Second
	s2, err := c.CreateSession()
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	err = s2.Query(`SELECT * FROM tomb.t`).Exec()
	var rf2 *gocql2.RequestErrReadFailure
	if !errors.As(err, &rf2) || len(rf2.ErrorMap) != 1 || rf2.ErrorMap[host] != 1 {
		t.Fatalf("v5 range read over 60 tombstones: %v (%+v)", err, rf2)
	}
}
