package test

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The fault seam of cqld processes: every node of startCluster runs with
// internode_fault_injection, whose endpoints on the metrics port cut a
// node off from its peers (server/faults.go).

// partition cuts node i off from the nodes others (indexes into tc.nodes;
// none: every other node): node i drops every internode message to and
// from them, gossip and the metadata log included, until heal. It
// replaces node i's previous partition.
func (tc *testCluster) partition(i int, others ...int) {
	tc.t.Helper()
	if len(others) == 0 {
		for j := range tc.nodes {
			if j != i {
				others = append(others, j)
			}
		}
	}
	var peers []string
	for _, j := range others {
		peers = append(peers, tc.nodes[j].addr)
	}
	got := tc.debugPost(i, "/debug/internode/partition?peers="+strings.Join(peers, ","))
	if len(strings.Split(got, ",")) != len(peers) {
		tc.t.Fatalf("node%d partitioned from %q, want %v", i+1, got, peers)
	}
}

// heal ends node i's partition.
func (tc *testCluster) heal(i int) {
	tc.t.Helper()
	if got := tc.debugPost(i, "/debug/internode/heal"); got != "" {
		tc.t.Fatalf("node%d still partitioned from %q after heal", i+1, got)
	}
}

// debugPost posts to path on node i's metrics endpoint and returns the
// answer's first line.
func (tc *testCluster) debugPost(i int, path string) string {
	tc.t.Helper()
	c := http.Client{Timeout: 10 * time.Second}
	resp, err := c.Post(tc.metricsURL(i)+path, "text/plain", nil)
	if err != nil {
		tc.t.Fatalf("node%d: POST %s: %v", i+1, path, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode != http.StatusOK {
		tc.t.Fatalf("node%d: POST %s: %s: %s", i+1, path, resp.Status, body)
	}
	return strings.TrimSpace(string(body))
}

func (tc *testCluster) metricsURL(i int) string {
	return fmt.Sprintf("http://%s:%d", tc.nodes[i].addr, tc.metrics)
}

// metric sums the samples of metric name on node i's /metrics whose labels
// include every label given as name="value".
func (tc *testCluster) metric(i int, name string, labels ...string) float64 {
	tc.t.Helper()
	c := http.Client{Timeout: 10 * time.Second}
	resp, err := c.Get(tc.metricsURL(i) + "/metrics")
	if err != nil {
		tc.t.Fatalf("node%d: scrape: %v", i+1, err)
	}
	defer resp.Body.Close()
	sum := 0.0
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
next:
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, name) || len(line) == len(name) || (line[len(name)] != '{' && line[len(name)] != ' ') {
			continue
		}
		for _, l := range labels {
			if !strings.Contains(line, l) {
				continue next
			}
		}
		f := strings.Fields(line)
		v, err := strconv.ParseFloat(f[len(f)-1], 64)
		if err != nil {
			tc.t.Fatalf("node%d: metric line %q: %v", i+1, line, err)
		}
		sum += v
	}
	if err := sc.Err(); err != nil {
		tc.t.Fatalf("node%d: scrape: %v", i+1, err)
	}
	return sum
}

// liveHeap is node i's Go heap in use just after a collection, which its
// pprof endpoint runs on request (heap?gc=1).
func (tc *testCluster) liveHeap(i int) float64 {
	tc.t.Helper()
	c := http.Client{Timeout: 10 * time.Second}
	resp, err := c.Get(tc.metricsURL(i) + "/debug/pprof/heap?gc=1")
	if err != nil {
		tc.t.Fatalf("node%d: heap profile: %v", i+1, err)
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK {
		tc.t.Fatalf("node%d: heap profile: %s %v", i+1, resp.Status, err)
	}
	return tc.metric(i, "go_memstats_heap_inuse_bytes")
}

// syncBuffer is a bytes.Buffer safe for a process's output copier and a
// test reading it at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// waitLog waits until nd's log holds want, and fails the test if nd
// exits first.
func (tc *testCluster) waitLog(nd *clusterNode, want string) {
	tc.t.Helper()
	eventually(tc.t, 60*time.Second, fmt.Sprintf("node%d logging %q", nd.index, want), func() error {
		if strings.Contains(nd.log.String(), want) {
			return nil
		}
		select {
		case <-nd.done:
			tc.t.Fatalf("node%d exited:\n%s", nd.index, nd.log)
		default:
		}
		return errors.New("not yet")
	})
}
