package test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gocql/gocql"
	"gopkg.in/yaml.v3"

	"github.com/cqld/cqld/config"
)

// TestClusterWipedNodes restarts nodes of a running three-node cluster
// without their data, so with new host ids, at their old addresses:
//   - node3 (not a seed) is refused when it joins, naming its address
//     and the member that has it, and exits;
//   - node1, the first seed, with node2 as a second seed, asks node2
//     before it bootstraps, joins instead, is refused the same way and
//     exits;
//   - node1 as the only seed has nobody to ask and bootstraps a cluster
//     of its own, and stops (exits) as soon as the running cluster's
//     leader reaches its address;
//
// and the cluster goes on meanwhile; each node restarted on its own data
// again rejoins, every row written before reading back through each.
func TestClusterWipedNodes(t *testing.T) {
	if testing.Short() {
		t.Skip("runs three cqld processes")
	}
	tc := startCluster(t, 3)
	s := tc.session(0, gocql.Quorum)
	for _, q := range []string{
		`CREATE KEYSPACE w WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}`,
		`CREATE TABLE w.t (k int PRIMARY KEY, v int)`,
	} {
		if err := s.Query(q).Exec(); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	tc.allSeeingAllUp(t, "w.t")
	for k := 0; k < 30; k++ {
		if err := s.Query(`INSERT INTO w.t (k, v) VALUES (?, ?)`, k, k).Exec(); err != nil {
			t.Fatal(err)
		}
	}
	storage := tc.storage

	// node3 wiped.
	n3 := tc.nodes[2]
	tc.stop(n3, syscall.SIGKILL)
	tc.moveDataAside(n3)
	out := tc.runToExit(n3)
	if want := fmt.Sprintf("A node with address %s:%d already exists", n3.addr, storage); !strings.Contains(out, want) {
		t.Fatalf("wiped node3 did not exit with %q:\n%s", want, out)
	}
	tc.restoreData(n3)
	tc.start(n3)

	// node1, the first seed, wiped, with node2 as a second seed.
	n1 := tc.nodes[0]
	tc.stop(n1, syscall.SIGKILL)
	tc.moveDataAside(n1)
	tc.setSeeds(n1, fmt.Sprintf("%s:%d,%s:%d", n1.addr, storage, tc.nodes[1].addr, storage))
	out = tc.runToExit(n1)
	if !strings.Contains(out, "joining it instead of bootstrapping") ||
		!strings.Contains(out, fmt.Sprintf("A node with address %s:%d already exists", n1.addr, storage)) {
		t.Fatalf("wiped first seed with a second seed did not join and exit refused:\n%s", out)
	}

	// node1 wiped, its only seed itself.
	tc.wipeData(n1)
	tc.setSeeds(n1, fmt.Sprintf("%s:%d", n1.addr, storage))
	out = tc.runToExit(n1)
	if !strings.Contains(out, "bootstrapped a new cluster metadata log") || !strings.Contains(out, "runs a cluster of its own") {
		t.Fatalf("wiped sole seed did not stop on meeting the running cluster:\n%s", out)
	}

	// The running cluster never lost a row; node1 on its data rejoins.
	s2 := tc.single(1, gocql.Quorum)
	if err := s2.Query(`INSERT INTO w.t (k, v) VALUES (100, 100)`).Exec(); err != nil {
		t.Fatalf("QUORUM write through node2 with node1 out: %v", err)
	}
	tc.restoreData(n1)
	tc.start(n1)
	for i := range tc.nodes {
		si := tc.single(i, gocql.Quorum)
		eventually(t, 60*time.Second, fmt.Sprintf("node%d reading every row", i+1), func() error {
			var n int
			if err := si.Query(`SELECT count(*) FROM w.t`).Scan(&n); err != nil {
				return err
			}
			if n != 32 { // 30, row -1 and row 100
				return fmt.Errorf("%d rows", n)
			}
			return nil
		})
	}
}

// home is the directory of nd's configuration and data.
func (nd *clusterNode) home() string { return filepath.Dir(nd.config) }

var nodeDataDirs = []string{"data", "commitlog", "hints", "saved_caches"}

// moveDataAside renames nd's data away, as if wiped, for restoreData.
func (tc *testCluster) moveDataAside(nd *clusterNode) {
	tc.t.Helper()
	for _, d := range nodeDataDirs {
		p := filepath.Join(nd.home(), d)
		if err := os.Rename(p, p+".saved"); err != nil && !os.IsNotExist(err) {
			tc.t.Fatal(err)
		}
	}
}

// wipeData removes nd's data (not what moveDataAside kept).
func (tc *testCluster) wipeData(nd *clusterNode) {
	tc.t.Helper()
	for _, d := range nodeDataDirs {
		if err := os.RemoveAll(filepath.Join(nd.home(), d)); err != nil {
			tc.t.Fatal(err)
		}
	}
}

// restoreData puts back what moveDataAside kept.
func (tc *testCluster) restoreData(nd *clusterNode) {
	tc.t.Helper()
	tc.wipeData(nd)
	for _, d := range nodeDataDirs {
		p := filepath.Join(nd.home(), d)
		if err := os.Rename(p+".saved", p); err != nil && !os.IsNotExist(err) {
			tc.t.Fatal(err)
		}
	}
}

// setSeeds rewrites nd's seeds.
func (tc *testCluster) setSeeds(nd *clusterNode, seeds string) {
	tc.t.Helper()
	tc.reconfigure(nd, func(c *config.Config) { c.SeedProvider.Parameters = map[string]string{"seeds": seeds} })
}

// reconfigure rewrites nd's configuration with mod applied; nd takes it
// at its next start.
func (tc *testCluster) reconfigure(nd *clusterNode, mod func(*config.Config)) {
	tc.t.Helper()
	c, err := config.Load(nd.config)
	if err != nil {
		tc.t.Fatal(err)
	}
	mod(&c)
	data, err := yaml.Marshal(c)
	if err != nil {
		tc.t.Fatal(err)
	}
	if err := os.WriteFile(nd.config, data, 0o644); err != nil {
		tc.t.Fatal(err)
	}
}

// runToExit starts nd's process and waits for it to exit by itself (a
// bound for a loaded machine, not a timing assertion); it returns the
// process's log.
func (tc *testCluster) runToExit(nd *clusterNode) string {
	tc.t.Helper()
	cmd := exec.Command(cqldBinary(tc.t), "-config", nd.config)
	var log strings.Builder // read once Wait has returned
	cmd.Stderr = &log
	if err := cmd.Start(); err != nil {
		tc.t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err == nil {
			tc.t.Fatalf("node%d exited with status 0:\n%s", nd.index, log.String())
		}
	case <-time.After(90 * time.Second):
		_ = cmd.Process.Kill()
		<-done
		tc.t.Fatalf("node%d did not exit by itself:\n%s", nd.index, log.String())
	}
	return log.String()
}
