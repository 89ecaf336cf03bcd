package test

import (
	"flag"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/gocql/gocql"
)

var (
	killCyclesFlag = flag.Int("killcycles", 0,
		"TestKillCycles: SIGKILL cycles per sync mode (default 20, 3 with -short)")
	killBudgetFlag = flag.Duration("killcycles.budget", 0,
		"TestKillCycles: time after which a sync mode stops starting new cycles, once it has run 3 (default: none, every cycle runs)")
)

// TestKillCycles checks the durability contract of every sync mode that
// acknowledges only durable writes: concurrent writers insert distinct keys
// through a cqld process, which is killed with SIGKILL at a random moment;
// after a restart on the same directories every acknowledged key must read
// back with its value. Each mode repeats the cycle on the same data, so
// replay also meets the torn tails and recycled segments of earlier kills.
func TestKillCycles(t *testing.T) {
	// The issue asks for at least 20 cycles per mode in CI, so by default
	// every cycle runs however slow the machine is.
	cycles, budget := 20, time.Duration(0)
	if testing.Short() {
		cycles = 3
	}
	if *killCyclesFlag > 0 {
		cycles = *killCyclesFlag
	}
	if *killBudgetFlag > 0 {
		budget = *killBudgetFlag
	}
	for _, mode := range []string{"batch", "group", "adaptive"} {
		t.Run(mode, func(t *testing.T) { killCycles(t, mode, cycles, budget) })
	}
}

// killCycles runs up to cycles kill cycles in one sync mode.
func killCycles(t *testing.T, mode string, cycles int, budget time.Duration) {
	const writers = 8
	start := time.Now()
	dir := t.TempDir()
	args := []string{"-commitlog_sync", mode}
	acked := map[string]int{} // every acknowledged key and its value
	p := startProc(t, dir, args...)
	s := killCycleSession(t, p.addr, "")
	mustExec(t, s, `CREATE KEYSPACE killcycle WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}`)
	mustExec(t, s, `CREATE TABLE killcycle.kv (k text PRIMARY KEY, v int)`)
	ran := 0
	for cycle := range cycles {
		if budget > 0 && ran >= 3 && time.Since(start) > budget {
			t.Logf("%s: stopping after %d of %d cycles: the %v budget is spent", mode, ran, cycles, budget)
			break
		}
		if cycle > 0 {
			p = startProc(t, dir, args...)
			s = killCycleSession(t, p.addr, "killcycle")
			checkAcked(t, s, acked, fmt.Sprintf("%s cycle %d", mode, cycle), p)
		}

		var killed atomic.Bool
		var mu sync.Mutex
		var wg sync.WaitGroup
		for w := range writers {
			wg.Go(func() {
				for i := 0; ; i++ {
					k := fmt.Sprintf("c%d-w%d-%d", cycle, w, i)
					v := cycle*1_000_000 + w*10_000 + i
					if err := s.Query(`INSERT INTO killcycle.kv (k, v) VALUES (?, ?)`, k, v).Exec(); err != nil {
						if !killed.Load() {
							t.Errorf("%s cycle %d: write %s failed before the kill: %v", mode, cycle, k, err)
						}
						return
					}
					mu.Lock()
					acked[k] = v
					mu.Unlock()
				}
			})
		}
		time.Sleep(50*time.Millisecond + rand.N(250*time.Millisecond))
		killed.Store(true)
		if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		p.wait(t)
		wg.Wait()
		s.Close()
		ran++
		if t.Failed() {
			return
		}
	}

	// The last kill is checked like the others, then the node stops cleanly.
	p = startProc(t, dir, args...)
	s = killCycleSession(t, p.addr, "killcycle")
	checkAcked(t, s, acked, fmt.Sprintf("%s after the last cycle", mode), p)
	s.Close()
	p.cmd.Process.Signal(syscall.SIGTERM)
	if code := p.wait(t); code != 0 {
		t.Errorf("exit code %d after SIGTERM\n%s", code, p.stderr)
	}
	t.Logf("%s: %d kill cycles, %d acknowledged writes, all read back, in %v",
		mode, ran, len(acked), time.Since(start).Round(time.Millisecond))
}

// killCycleSession opens a gocql session that does not log: after each kill
// the driver reports its failing reconnects until the session is closed.
func killCycleSession(t *testing.T, addr, keyspace string) *gocql.Session {
	t.Helper()
	c := gocqlCluster(addr)
	c.Keyspace = keyspace
	c.Logger = log.New(io.Discard, "", 0)
	s, err := c.CreateSession()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// checkAcked reads the whole table and checks that every acknowledged key
// is there with its value. Keys written but not acknowledged may or may not
// be there.
func checkAcked(t *testing.T, s *gocql.Session, acked map[string]int, when string, p *proc) {
	t.Helper()
	got := make(map[string]int, len(acked))
	iter := s.Query(`SELECT k, v FROM killcycle.kv`).PageSize(5000).Iter()
	var k string
	var v int
	for iter.Scan(&k, &v) {
		got[k] = v
	}
	if err := iter.Close(); err != nil {
		t.Fatalf("%s: scan: %v", when, err)
	}
	missing := 0
	for k, v := range acked {
		gv, ok := got[k]
		switch {
		case !ok:
			if missing++; missing <= 10 {
				t.Errorf("%s: acknowledged key %s is missing", when, k)
			}
		case gv != v:
			t.Errorf("%s: key %s = %d, acknowledged %d", when, k, gv, v)
		}
	}
	if missing > 0 || t.Failed() {
		t.Fatalf("%s: %d of %d acknowledged keys missing (%d rows read)\n%s", when, missing, len(acked), len(got), p.stderr)
	}
}
