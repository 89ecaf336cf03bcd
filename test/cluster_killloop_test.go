package test

import (
	"flag"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/gocql/gocql"

	"github.com/cqld/cqld/config"
)

var clusterKillsFlag = flag.Int("cqld.clusterkills", 4, "TestClusterKillLoop: nodes killed -9 and restarted, one after another")

// TestClusterKillLoop is the kill -9 test on a cluster: four writers
// write at QUORUM through node1 to a three-node RF 3 cluster while node2
// and node3 in turn are killed -9 and restarted (-cqld.clusterkills
// times). Writes go on being acknowledged with a node down; afterwards
// every acknowledged write reads back at QUORUM, and, once the hints of
// what the killed nodes missed are delivered, at ONE from every node,
// each node answering from its own replica.
//
// The nodes sync their commit log before they acknowledge (adaptive, the
// default): a node killed -9 keeps what it acknowledged. node1, the
// coordinator, is not killed: a coordinator's hints are synced every
// hints_flush_period, and one killed loses those of the last period, as
// Cassandra's do (read repair and repair make up for them), which the
// check at ONE would see.
func TestClusterKillLoop(t *testing.T) {
	if testing.Short() {
		t.Skip("runs three cqld processes")
	}
	tc := newTestCluster(t, 3)
	for _, nd := range tc.nodes {
		tc.reconfigure(nd, func(c *config.Config) { c.CommitlogSync = config.Default().CommitlogSync })
		tc.start(nd)
	}
	s := tc.single(0, gocql.Quorum)
	for _, q := range []string{
		`CREATE KEYSPACE kl WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}`,
		`CREATE TABLE kl.t (k int PRIMARY KEY, v int)`,
	} {
		if err := s.Query(q).Exec(); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	tc.allSeeingAllUp(t, "kl.t")

	load := startWriteLoad(t, s, "kl.t", 0, 0)
	load.progress("writes before the kills", 100)
	for cycle := range *clusterKillsFlag {
		nd := tc.nodes[1+cycle%2]
		tc.stop(nd, syscall.SIGKILL)
		load.progress(fmt.Sprintf("cycle %d: writes with node%d killed", cycle+1, nd.index), 150)
		tc.start(nd)
		// Its peers hold it up again before the next kill, else QUORUM
		// would have one replica alive.
		eventually(t, 60*time.Second, fmt.Sprintf("cycle %d: node1 seeing node%d up", cycle+1, nd.index), func() error {
			return s.Query(`INSERT INTO kl.t (k) VALUES (-1)`).Consistency(gocql.All).Exec()
		})
		load.progress(fmt.Sprintf("cycle %d: writes with node%d back", cycle+1, nd.index), 100)
	}
	keys := load.finish()
	t.Logf("%d kill cycles: %d writes acknowledged at QUORUM, %d failed", *clusterKillsFlag, len(keys), load.failed.Load())
	for _, k := range keys {
		var v int
		if err := s.Query(`SELECT v FROM kl.t WHERE k = ?`, k).Scan(&v); err != nil || v != k {
			t.Fatalf("acknowledged write %d reads back %d at QUORUM, %v", k, v, err)
		}
	}
	// ONE through each node reads that node's replica first: once the
	// hints are delivered, every node holds every acknowledged write.
	for i := range tc.nodes {
		si := tc.single(i, gocql.One)
		eventually(t, 120*time.Second, fmt.Sprintf("node%d holding every acknowledged write", i+1), func() error {
			missing := 0
			for _, k := range keys {
				var v int
				if err := si.Query(`SELECT v FROM kl.t WHERE k = ?`, k).Scan(&v); err != nil || v != k {
					missing++
				}
			}
			if missing > 0 {
				return fmt.Errorf("%d of %d acknowledged writes missing at ONE", missing, len(keys))
			}
			return nil
		})
	}
}
