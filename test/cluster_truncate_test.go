package test

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gocql/gocql"

	"github.com/cqld/cqld/config"
)

// TestClusterHintsAfterTruncate: rows written at QUORUM while node3 is
// down are hinted for it; node3 comes back, and the table is truncated
// while node1 is still delivering those hints (its hint replay throttled
// to 1 KiB/s). Once every hint is delivered, node3's own replica (ONE
// through node3) holds none of the rows: a hint written before the
// TRUNCATE does not bring its rows back.
func TestClusterHintsAfterTruncate(t *testing.T) {
	if testing.Short() {
		t.Skip("runs three cqld processes")
	}
	tc := newTestCluster(t, 3)
	tc.reconfigure(tc.nodes[0], func(c *config.Config) { c.HintedHandoffThrottle = config.KiB })
	for _, nd := range tc.nodes {
		tc.start(nd)
	}
	s1 := tc.single(0, gocql.Quorum)
	for _, q := range []string{
		`CREATE KEYSPACE tr WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}`,
		`CREATE TABLE tr.t (k int PRIMARY KEY, v text)`,
	} {
		if err := s1.Query(q).Exec(); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	tc.allSeeingAllUp(t, "tr.t")
	tc.stop(tc.nodes[2], syscall.SIGKILL)
	eventually(t, 60*time.Second, "node1 holding node3 down", func() error {
		err := s1.Query(`INSERT INTO tr.t (k) VALUES (-2)`).Consistency(gocql.All).Exec()
		if unavailable(err, 3, 2) {
			return nil
		}
		return fmt.Errorf("ALL answered %v", err)
	})
	const rows = 60
	value := strings.Repeat("x", 200)
	for k := 0; k < rows; k++ {
		if err := s1.Query(`INSERT INTO tr.t (k, v) VALUES (?, ?)`, k, value).Exec(); err != nil {
			t.Fatal(err)
		}
	}
	tc.start(tc.nodes[2])
	eventually(t, 60*time.Second, "node1 delivering hints to node3", func() error {
		if n := tc.metric(0, "cqld_hints_replayed_total"); n == 0 {
			return fmt.Errorf("%v hints replayed", n)
		}
		return nil
	})
	if err := s1.Query(`TRUNCATE tr.t`).Exec(); err != nil {
		t.Fatal(err)
	}
	if pending := tc.metric(0, "cqld_hints_pending_bytes"); pending == 0 {
		t.Fatal("every hint was delivered before the TRUNCATE: the test proves nothing")
	}
	eventually(t, 120*time.Second, "node1 delivering every hint", func() error {
		if pending := tc.metric(0, "cqld_hints_pending_bytes"); pending > 0 {
			return fmt.Errorf("%v bytes of hints pending", pending)
		}
		return nil
	})
	s3 := tc.single(2, gocql.One)
	var n int
	if err := s3.Query(`SELECT count(*) FROM tr.t`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	// count(*) at ONE may read a range from another replica; a key read
	// at ONE through node3 is node3's own replica's.
	back := 0
	for k := 0; k < rows; k++ {
		var v string
		if err := s3.Query(`SELECT v FROM tr.t WHERE k = ?`, k).Scan(&v); err == nil {
			back++
		}
	}
	if back > 0 || n > 0 {
		t.Fatalf("after the TRUNCATE, %d of %d hinted rows came back on node3 (count(*) %d)", back, rows, n)
	}
}
