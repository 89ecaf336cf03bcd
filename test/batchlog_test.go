package test

import (
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gocql/gocql"
	"gopkg.in/yaml.v3"

	"github.com/cqld/cqld/config"
)

// TestClusterBatchlogReplay: a logged batch over two partitions is in the
// batchlogs of two nodes when its coordinator dies (killed by itself, -9,
// through test_batchlog_kill_after_store, before any of the batch's writes
// is sent). The batchlog nodes replay it: both partitions appear on them,
// read at ONE from each, and reach the dead coordinator too once it is
// back (hinted by the replay).
func TestClusterBatchlogReplay(t *testing.T) {
	if testing.Short() {
		t.Skip("runs three cqld processes")
	}
	tc := newTestCluster(t, 3)
	for i := range tc.nodes {
		tc.nodes[i] = tc.newNode(i+1, "node"+strconv.Itoa(i+1), func(c *config.Config) {
			// Batches are replayed twice the write timeout after they
			// are written.
			c.WriteRequestTimeout = config.Duration{Duration: time.Second}
			c.TestBatchlogKillAfterStore = i == 0
		})
	}
	for _, nd := range tc.nodes {
		tc.start(nd)
		tc.waitNormal(nd)
	}
	s := tc.session(1, gocql.Quorum)
	for _, q := range []string{
		`CREATE KEYSPACE bl WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}`,
		`CREATE TABLE bl.t (k int PRIMARY KEY, v text)`,
	} {
		if err := s.Query(q).Exec(); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	coord := tc.nodes[0]
	c1 := tc.single(0, gocql.Quorum)
	err := c1.Query(`BEGIN BATCH INSERT INTO bl.t (k, v) VALUES (1, 'one'); INSERT INTO bl.t (k, v) VALUES (2, 'two'); APPLY BATCH`).Exec()
	if err == nil {
		t.Fatal("the batch was acknowledged by a coordinator that was to die")
	}
	c1.Close()
	select {
	case <-coord.done:
	case <-time.After(30 * time.Second):
		t.Fatalf("node1 did not kill itself after logging the batch:\n%s", coord.log)
	}
	if !strings.Contains(coord.log.String(), "killing this node") {
		t.Fatalf("node1 died, but not at the batchlog:\n%s", coord.log)
	}

	rows := func(i int) func() error {
		s := tc.single(i, gocql.One)
		return func() error {
			for k, want := range map[int]string{1: "one", 2: "two"} {
				var v string
				if err := s.Query(`SELECT v FROM bl.t WHERE k = ?`, k).Scan(&v); err != nil {
					return fmt.Errorf("node%d, k %d: %w", i+1, k, err)
				}
				if v != want {
					return fmt.Errorf("node%d, k %d: %q", i+1, k, v)
				}
			}
			return nil
		}
	}
	for _, i := range []int{1, 2} {
		eventually(t, 30*time.Second, fmt.Sprintf("the batch on node%d", i+1), rows(i))
	}
	replayed := 0.0
	for _, i := range []int{1, 2} {
		replayed += tc.metric(i, "cqld_batchlog_replayed_total")
	}
	if replayed < 1 {
		t.Fatalf("the batch arrived, but no node counts a replay")
	}

	// node1 back, without the crash point: the replay's hint reaches it.
	var c config.Config
	data, err := os.ReadFile(coord.config)
	if err == nil {
		err = yaml.Unmarshal(data, &c)
	}
	if err != nil {
		t.Fatal(err)
	}
	c.TestBatchlogKillAfterStore = false
	if data, err = yaml.Marshal(c); err == nil {
		err = os.WriteFile(coord.config, data, 0o644)
	}
	if err != nil {
		t.Fatal(err)
	}
	tc.start(coord)
	eventually(t, 60*time.Second, "the batch on node1", rows(0))

	// What the issue lists, on a node's /metrics after all this:
	// internode messages and bytes by verb and peer, hints written and
	// replayed and pending, read repairs, speculative retries, latencies
	// by level, ring and raft state.
	eventually(t, 30*time.Second, "hints replayed to node1", func() error {
		if n := tc.metric(1, "cqld_hints_replayed_total") + tc.metric(2, "cqld_hints_replayed_total"); n < 1 {
			return fmt.Errorf("%v hints replayed", n)
		}
		return nil
	})
	if err := tc.single(1, gocql.Quorum).Query(`INSERT INTO bl.t (k, v) VALUES (3, 'three')`).Exec(); err != nil {
		t.Fatal(err)
	}
	// The two batchlog nodes, which both replayed the batch.
	body := tc.scrape(t, 1) + tc.scrape(t, 2)
	for _, want := range []string{
		`cqld_internode_messages_total{direction="sent",peer="127.0.0.1:`,
		`cqld_internode_messages_total{direction="received",peer="127.0.0.3:`,
		`cqld_internode_bytes_total{direction="sent",peer="127.0.0.3:`,
		`verb="MUTATION"}`,
		`verb="BATCH_STORE"}`,
		`cqld_hints_written_total `,
		`cqld_hints_replayed_total `,
		`cqld_hints_pending_bytes{host_id="`,
		`cqld_proxy_read_repairs_total `,
		`cqld_proxy_digest_mismatches_total `,
		`cqld_proxy_speculative_retries_total `,
		`cqld_proxy_request_seconds_count{consistency="ONE",op="read"} `,
		`cqld_proxy_request_seconds_count{consistency="QUORUM",op="write"} `,
		`cqld_batchlog_stored_total `,
		`cqld_batchlog_pending `,
		`cqld_gossip_members{state="up"} 3`,
		`cqld_ring_members{status="NORMAL"} 3`,
		`cqld_ring_tokens 8`,
		`cqld_ring_owned_ratio 0.`,
		`cqld_metalog_term `,
		`cqld_metalog_leader `,
		`cqld_metalog_applied_index `,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the /metrics of node2 and node3 lack %q", want)
		}
	}
	if n := tc.metric(1, "cqld_hints_written_total") + tc.metric(2, "cqld_hints_written_total"); n < 1 {
		t.Errorf("%v hints written for the dead coordinator", n)
	}
	tc.stop(coord, syscall.SIGTERM)
}

// scrape is node i's /metrics.
func (tc *testCluster) scrape(t *testing.T, i int) string {
	t.Helper()
	_, body := httpDo(t, http.MethodGet, fmt.Sprintf("http://%s:%d/metrics", tc.nodes[i].addr, tc.metrics), "", "")
	return string(body)
}
