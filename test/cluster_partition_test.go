package test

import (
	"errors"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/gocql/gocql"
)

// TestClusterPartition cuts node3 of a three-node RF 3 cluster off from
// the other two by its fault seam (every internode message dropped, both
// ways): the majority side keeps acknowledging every QUORUM write; the
// cut node answers QUORUM with UNAVAILABLE or a timeout, never success;
// after the partition heals, hints give node3 every write it missed
// (read back at ONE through node3 alone), and every acknowledged write
// reads back at QUORUM.
func TestClusterPartition(t *testing.T) {
	if testing.Short() {
		t.Skip("runs three cqld processes")
	}
	tc := startCluster(t, 3)
	s1 := tc.single(0, gocql.Quorum)
	for _, q := range []string{
		`CREATE KEYSPACE p WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}`,
		`CREATE TABLE p.t (k int PRIMARY KEY, v int)`,
	} {
		if err := s1.Query(q).Exec(); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	singles := tc.allSeeingAllUp(t, "p.t")
	s3 := singles[2]

	acked := map[int]int{}
	write := func(from, to int) {
		t.Helper()
		for k := from; k < to; k++ {
			if err := s1.Query(`INSERT INTO p.t (k, v) VALUES (?, ?)`, k, k*10).Exec(); err != nil {
				t.Fatalf("QUORUM write %d through node1 (majority side): %v", k, err)
			}
			acked[k] = k * 10
		}
	}
	write(0, 50)

	tc.partition(2)
	// Before node1 holds node3 down: node3's share of each write times
	// out in the background and is hinted; QUORUM needs node1 and node2.
	write(50, 100)
	eventually(t, 60*time.Second, "node1 holding node3 down", func() error {
		err := s1.Query(`INSERT INTO p.t (k, v) VALUES (-2, -2)`).Consistency(gocql.All).Exec()
		if unavailable(err, 3, 2) {
			return nil
		}
		return fmt.Errorf("ALL through node1 answered %v", err)
	})
	write(100, 150)

	// The cut node: QUORUM never succeeds, and once it holds its peers
	// down it answers UNAVAILABLE (2 required, 1 alive) without waiting.
	attempts := 0
	eventually(t, 60*time.Second, "node3 answering QUORUM with UNAVAILABLE", func() error {
		attempts++
		k := 10_000 + attempts
		err := s3.Query(`INSERT INTO p.t (k, v) VALUES (?, ?)`, k, k).Consistency(gocql.Quorum).Exec()
		if err == nil {
			t.Fatalf("QUORUM write %d through the cut node3 acknowledged", k)
		}
		var wt *gocql.RequestErrWriteTimeout
		if !unavailable(err, 2, 1) && !errors.As(err, &wt) {
			t.Fatalf("QUORUM write through the cut node3: %v, want UNAVAILABLE or WRITE_TIMEOUT", err)
		}
		if unavailable(err, 2, 1) {
			return nil
		}
		return err
	})
	var v int
	err := s3.Query(`SELECT v FROM p.t WHERE k = 1`).Consistency(gocql.Quorum).Scan(&v)
	if !unavailable(err, 2, 1) {
		t.Fatalf("QUORUM read through the cut node3: %d, %v; want UNAVAILABLE", v, err)
	}
	if n := tc.metric(2, "cqld_internode_dropped_messages_total", `reason="fault"`); n == 0 {
		t.Error("node3 counted no message dropped by the fault seam")
	}

	tc.heal(2)
	eventually(t, 60*time.Second, "node1 seeing node3 up again", func() error {
		return s1.Query(`INSERT INTO p.t (k, v) VALUES (-3, -3)`).Consistency(gocql.All).Exec()
	})
	// ONE through node3 reads node3's own replica: what it missed while
	// cut off came as hints.
	eventually(t, 60*time.Second, "node3 holding every acknowledged write", func() error {
		for k, want := range acked {
			var v int
			if err := s3.Query(`SELECT v FROM p.t WHERE k = ?`, k).Consistency(gocql.One).Scan(&v); err != nil {
				return fmt.Errorf("row %d: %w", k, err)
			}
			if v != want {
				return fmt.Errorf("row %d = %d, want %d", k, v, want)
			}
		}
		return nil
	})
	if n := tc.metric(0, "cqld_hints_replayed_total"); n == 0 {
		t.Error("node1 replayed no hint")
	}
	for i, s := range singles {
		for k, want := range acked {
			if err := s.Query(`SELECT v FROM p.t WHERE k = ?`, k).Consistency(gocql.Quorum).Scan(&v); err != nil || v != want {
				t.Fatalf("node%d: acknowledged row %d at QUORUM: %d, %v; want %d", i+1, k, v, err, want)
			}
		}
	}
	for _, nd := range tc.nodes {
		tc.stop(nd, syscall.SIGTERM)
	}
}

// allSeeingAllUp connects to each node alone and waits until each sees
// every replica up (a write at ALL to table through it succeeds).
func (tc *testCluster) allSeeingAllUp(t *testing.T, table string) []*gocql.Session {
	t.Helper()
	var singles []*gocql.Session
	for i := range tc.nodes {
		si := tc.single(i, gocql.Quorum)
		eventually(t, 60*time.Second, fmt.Sprintf("node%d seeing every replica up", i+1), func() error {
			return si.Query(`INSERT INTO ` + table + ` (k) VALUES (-1)`).Consistency(gocql.All).Exec()
		})
		singles = append(singles, si)
	}
	return singles
}

// unavailable reports whether err is UNAVAILABLE with the given required
// and alive replicas.
func unavailable(err error, required, alive int) bool {
	var ua *gocql.RequestErrUnavailable
	return errors.As(err, &ua) && ua.Required == required && ua.Alive == alive
}
