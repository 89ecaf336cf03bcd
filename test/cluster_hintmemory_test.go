package test

import (
	"errors"
	"flag"
	"fmt"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/gocql/gocql"
)

var hintMiB = flag.Int("cqld.hintmib", 64, "MiB written in each phase of TestClusterHintsMemoryBounded")

// TestClusterHintsMemoryBounded writes the same load at ONE through node1
// of a three-node RF 3 cluster twice: with every node up, then with node3
// killed, so that node1 keeps a hint of every write for node3. The hints
// go to disk: node1's live Go heap while it writes them stays within half
// the hints' bytes of its live heap under the same load with no hints at
// all (were hints kept in memory, it would grow by all of them). The heap
// is sampled just after a collection, since the heap in use holds garbage
// too, up to as much again as is live. Hints written more slowly than the
// writes come (the disk throttling the hints file's writes) are bounded
// by the proxy's hints in progress: the writes it refuses OVERLOADED
// meanwhile are sent again. The figures are logged;
// docs/benchmarks/hints-memory.txt has a run.
func TestClusterHintsMemoryBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("runs three cqld processes")
	}
	tc := startCluster(t, 3)
	s := tc.single(0, gocql.One)
	for _, q := range []string{
		`CREATE KEYSPACE hm WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}`,
		`CREATE TABLE hm.t (k int PRIMARY KEY, v blob)`,
	} {
		if err := s.Query(q).Exec(); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	tc.allSeeingAllUp(t, "hm.t")

	const valueSize = 16 << 10
	total := *hintMiB << 20
	rows := total / valueSize
	value := make([]byte, valueSize)
	for i := range value {
		value[i] = byte(i * 7)
	}
	// phase writes rows keys from base at ONE through node1, with eight
	// writers, and returns node1's largest live heap and resident set
	// sampled meanwhile.
	var refused atomic.Int64
	phase := func(name string, base int) (heap, rss float64) {
		var next atomic.Int64
		var wg sync.WaitGroup
		errc := make(chan error, 8)
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					i := int(next.Add(1)) - 1
					if i >= rows {
						return
					}
					for giveUp := time.Now().Add(30 * time.Second); ; {
						err := s.Query(`INSERT INTO hm.t (k, v) VALUES (?, ?)`, base+i, value).Exec()
						if re, ok := err.(gocql.RequestError); ok && re.Code() == gocql.ErrCodeOverloaded && time.Now().Before(giveUp) {
							// Too many hints in progress: the client backs off.
							refused.Add(1)
							time.Sleep(time.Millisecond)
							continue
						}
						if err != nil {
							errc <- fmt.Errorf("%s: write %d: %w", name, base+i, err)
							return
						}
						break
					}
				}
			}()
		}
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		for sampling := true; sampling; {
			select {
			case <-done:
				sampling = false
			case <-time.After(100 * time.Millisecond):
			}
			heap = max(heap, tc.liveHeap(0))
			rss = max(rss, tc.metric(0, "process_resident_memory_bytes"))
		}
		close(errc)
		if err := <-errc; err != nil {
			t.Fatal(err)
		}
		return heap, rss
	}

	heapUp, rssUp := phase("all up", 0)
	tc.stop(tc.nodes[2], syscall.SIGKILL)
	eventually(t, 60*time.Second, "node1 holding node3 down", func() error {
		err := s.Query(`INSERT INTO hm.t (k, v) VALUES (-2, 0x00)`).Consistency(gocql.All).Exec()
		if unavailable(err, 3, 2) {
			return nil
		}
		return errors.Join(errors.New("ALL through node1 answered"), err)
	})
	hintsBefore := tc.metric(0, "cqld_hints_pending_bytes")
	heapDown, rssDown := phase("node3 down", rows)
	hinted := tc.metric(0, "cqld_hints_pending_bytes") - hintsBefore

	const mib = 1 << 20
	t.Logf("node1 writing %d MiB at ONE (%d rows of %d KiB): all up: live heap max %.1f MiB, RSS max %.1f MiB; "+
		"node3 down: live heap max %.1f MiB, RSS max %.1f MiB, %.1f MiB of hints pending for node3",
		total/mib, rows, valueSize>>10, heapUp/mib, rssUp/mib, heapDown/mib, rssDown/mib, hinted/mib)
	t.Logf("writes refused OVERLOADED (too many hints in progress) and sent again: %d", refused.Load())
	if hinted < 0.9*float64(total) {
		t.Fatalf("%.1f MiB of hints pending for node3, want about %d MiB", hinted/mib, total/mib)
	}
	if heapDown > heapUp+hinted/2 {
		t.Errorf("node1's live heap grew from %.1f MiB (no hints) to %.1f MiB with %.1f MiB of hints: hints are kept in memory",
			heapUp/mib, heapDown/mib, hinted/mib)
	}
}
