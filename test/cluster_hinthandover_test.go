package test

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gocql/gocql"

	"github.com/cqld/cqld/config"
	"github.com/cqld/cqld/ring"
)

// TestClusterDecommissionHandsHintsOver: rows written at ONE through
// node4 while node2 is down are hints on node4 for node2; node4 is
// decommissioned while node2 is still down and hands its hints over to
// node1 or node3, which keeps them for node2. node2 comes back and gets
// them: read at ONE through node2 with the others paused, node2's own
// replica holds every row. Without the handover the hints leave with
// node4 and node2 has none.
//
// Four nodes, RF 4 (decommissioned forcibly), so that no range streams to
// node2 while it is down, and the metadata log keeps a majority (two of
// three) once node4 has left it.
func TestClusterDecommissionHandsHintsOver(t *testing.T) {
	if testing.Short() {
		t.Skip("runs three cqld processes")
	}
	tc := startCluster(t, 4)
	s4 := tc.single(3, gocql.One)
	execAll(t, s4,
		`CREATE KEYSPACE hh WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 4}`,
		`CREATE TABLE hh.t (k int PRIMARY KEY, v int)`,
	)
	tc.allSeeingAllUp(t, "hh.t")
	tc.stop(tc.nodes[1], syscall.SIGKILL)
	eventually(t, 60*time.Second, "node4 holding node2 down", func() error {
		err := s4.Query(`INSERT INTO hh.t (k) VALUES (-2)`).Consistency(gocql.All).Exec()
		if unavailable(err, 4, 3) {
			return nil
		}
		return fmt.Errorf("ALL answered %v", err)
	})
	const rows = 50
	keys := firstKeys(rows)
	for _, k := range keys {
		if err := s4.Query(`INSERT INTO hh.t (k, v) VALUES (?, ?)`, k, k).Exec(); err != nil {
			t.Fatal(err)
		}
	}
	if n := tc.metric(3, "cqld_hints_written_total"); n < rows {
		t.Fatalf("node4 wrote %v hints for node2, want at least %d", n, rows)
	}
	// What node1 and node3, the nodes that may take node4's hints, count.
	survivors := func(name string) float64 { return tc.metric(0, name) + tc.metric(2, name) }
	written := survivors("cqld_hints_written_total")

	if out, err := tc.nodetoolRun(3, "decommission", "--force"); err != nil {
		t.Fatalf("decommission: %v\n%s", err, out)
	}
	select {
	case <-tc.nodes[3].done:
	case <-time.After(30 * time.Second):
		t.Fatalf("node4 still runs after its decommission:\n%s", tc.nodes[3].logTail(40))
	}
	handed := survivors("cqld_hints_written_total") - written
	if handed < rows {
		// Not fatal: the rows missing on node2 below say what it costs.
		t.Errorf("node1 and node3 kept %v hints handed over by node4, want at least %d", handed, rows)
	}

	replayed := survivors("cqld_hints_replayed_total")
	tc.start(tc.nodes[1])
	eventually(t, 60*time.Second, "node4's hints delivered to node2", func() error {
		if n := survivors("cqld_hints_replayed_total") - replayed; n < handed {
			return fmt.Errorf("%v of %v hints replayed", n, handed)
		}
		if pending := survivors("cqld_hints_pending_bytes"); pending > 0 {
			return fmt.Errorf("%v bytes of hints pending", pending)
		}
		return nil
	})
	r, ids := tc.ringOf(t, 0, 1, 2)
	if got := tc.readsBack(t, 1, r, ids[1], ring.SimpleStrategy{RF: 4}, "hh.t", keys); got != rows {
		t.Fatalf("node2 replicates %d of %d keys", got, rows)
	}
}

// TestClusterDecommissionKeepsHintsNoneTakes: node3 holds hints for node2,
// which is down. With node2 down, the metadata log left without node3
// (node1 and node2) could not commit node3's removal, so the decommission
// is refused before it starts (it used to stream, hand over, and stay
// LEAVING); node3 stays NORMAL with its hints, which it delivers to node2
// itself once node2 is back. node1 keeps no hints (hinted_handoff_enabled
// false), of the writes it coordinates either: had the decommission gone
// on, it had nowhere to hand them.
func TestClusterDecommissionKeepsHintsNoneTakes(t *testing.T) {
	if testing.Short() {
		t.Skip("runs three cqld processes")
	}
	tc := newTestCluster(t, 3)
	tc.reconfigure(tc.nodes[0], func(c *config.Config) { c.HintedHandoffEnabled = false })
	for _, nd := range tc.nodes {
		tc.start(nd)
		tc.waitNormal(nd)
	}
	s3 := tc.single(2, gocql.One)
	execAll(t, s3,
		`CREATE KEYSPACE hk WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}`,
		`CREATE TABLE hk.t (k int PRIMARY KEY, v int)`,
	)
	tc.allSeeingAllUp(t, "hk.t")
	tc.stop(tc.nodes[1], syscall.SIGKILL)
	eventually(t, 60*time.Second, "node3 holding node2 down", func() error {
		err := s3.Query(`INSERT INTO hk.t (k) VALUES (-2)`).Consistency(gocql.All).Exec()
		if unavailable(err, 3, 2) {
			return nil
		}
		return fmt.Errorf("ALL answered %v", err)
	})
	const rows = 20
	keys := firstKeys(rows)
	for _, k := range keys {
		if err := s3.Query(`INSERT INTO hk.t (k, v) VALUES (?, ?)`, k, k).Exec(); err != nil {
			t.Fatal(err)
		}
	}

	// node1 coordinates writes that miss node2 as well, and with
	// hinted_handoff_enabled false keeps no hint of them.
	s1 := tc.single(0, gocql.One)
	eventually(t, 60*time.Second, "node1 holding node2 down", func() error {
		err := s1.Query(`INSERT INTO hk.t (k) VALUES (-3)`).Consistency(gocql.All).Exec()
		if unavailable(err, 3, 2) {
			return nil
		}
		return fmt.Errorf("ALL answered %v", err)
	})
	for k := -10; k > -15; k-- {
		if err := s1.Query(`INSERT INTO hk.t (k, v) VALUES (?, ?)`, k, k).Exec(); err != nil {
			t.Fatal(err)
		}
	}
	if n := tc.metric(0, "cqld_hints_written_total"); n != 0 {
		t.Errorf("node1, hinted_handoff_enabled false, wrote %v hints", n)
	}

	out, err := tc.nodetoolRun(2, "decommission", "--force")
	if err == nil || !strings.Contains(out, "Cannot decommission this node: 1 of the 2 members of the cluster metadata log are up") {
		t.Fatalf("decommission with one of the other two nodes down: %v\n%s", err, out)
	}
	tc.waitNormal(tc.nodes[2])
	if pending := tc.metric(2, "cqld_hints_pending_bytes"); pending == 0 {
		t.Fatal("node3 has no hints left after a failed handover")
	}

	tc.start(tc.nodes[1])
	eventually(t, 60*time.Second, "node3 delivering its hints to node2", func() error {
		if pending := tc.metric(2, "cqld_hints_pending_bytes"); pending > 0 {
			return fmt.Errorf("%v bytes of hints pending", pending)
		}
		return nil
	})
	r, ids := tc.ringOf(t, 0, 1, 2)
	if got := tc.readsBack(t, 1, r, ids[1], ring.SimpleStrategy{RF: 3}, "hk.t", keys); got != rows {
		t.Fatalf("node2 replicates %d of %d keys", got, rows)
	}
}
