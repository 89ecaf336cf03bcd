package test

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cqld/cqld/cqlclient"
)

// benchStatements are ten distinct statements an application prepares
// when it connects.
var benchStatements = []cqlclient.Statement{
	{Query: "SELECT v FROM bench.kv WHERE k = ?"},
	{Query: "SELECT k, v FROM bench.kv WHERE k = ?"},
	{Query: "INSERT INTO bench.kv (k, v) VALUES (?, ?)"},
	{Query: "UPDATE bench.kv SET v = ? WHERE k = ?"},
	{Query: "DELETE FROM bench.kv WHERE k = ?"},
	{Query: "DELETE v FROM bench.kv WHERE k = ?"},
	{Query: "SELECT v FROM bench.kv WHERE k IN (?, ?)"},
	{Query: "INSERT INTO bench.kv (k, v) VALUES (?, ?) USING TTL ?"},
	{Query: "SELECT count(*) FROM bench.kv WHERE k = ?"},
	{Query: "SELECT writetime(v) FROM bench.kv WHERE k = ?"},
}

// prepareModes are the three ways of preparing benchStatements on a
// connection that has not prepared them: (a) one PREPARE after another,
// (b) ten PREPAREs in flight at once, (c) one PREPARE_BATCH.
var prepareModes = []struct {
	name     string
	batchExt bool
	prepare  func(ctx context.Context, c *cqlclient.Conn) error
}{
	{"a_sequential", false, func(ctx context.Context, c *cqlclient.Conn) error {
		for _, s := range benchStatements {
			if _, err := c.Prepare(ctx, s); err != nil {
				return err
			}
		}
		return nil
	}},
	{"b_concurrent", false, prepareAll},
	{"c_batch", true, prepareAll},
}

// prepareAll is PrepareBatch: one PREPARE_BATCH when the connection has the
// extension on, concurrent PREPAREs otherwise.
func prepareAll(ctx context.Context, c *cqlclient.Conn) error {
	res, err := c.PrepareBatch(ctx, benchStatements)
	if err != nil {
		return err
	}
	for i, r := range res {
		if r.Err != nil {
			return fmt.Errorf("statement %d: %w", i+1, r.Err)
		}
	}
	return nil
}

// prepareBenchNode creates the statements' table on the node at addr and
// prepares them once, so the server's cache is warm as in the seed's table.
func prepareBenchNode(tb testing.TB, addr string) {
	tb.Helper()
	ctx := context.Background()
	c, err := cqlclient.Dial(ctx, addr, cqlclient.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	defer c.Close()
	s, err := gocqlCluster(addr).CreateSession()
	if err != nil {
		tb.Fatal(err)
	}
	defer s.Close()
	for _, q := range []string{
		`CREATE KEYSPACE IF NOT EXISTS bench WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}`,
		`CREATE TABLE IF NOT EXISTS bench.kv (k int PRIMARY KEY, v text)`,
	} {
		if err := s.Query(q).Exec(); err != nil {
			tb.Fatal(err)
		}
	}
	if err := prepareAll(ctx, c); err != nil {
		tb.Fatal(err)
	}
}

// BenchmarkPrepareTen reproduces CASSANDRA-9230's table. Each iteration
// runs the three modes, in a rotating order, each on a fresh connection
// (dialled outside the timed section) that prepares the ten statements, whose plans the
// server already caches. Interleaving keeps the ratios fair on a shared,
// noisy machine. It reports, per mode, ops/ms (one op = all ten prepared)
// and allocations per op, the in-process server's included, and the ratio
// of (c) to (a).
//
//	flock /tmp/cqld-bench.lock go test -run '^$' -bench BenchmarkPrepareTen -benchtime 2000x -count 3 ./test/
func BenchmarkPrepareTen(b *testing.B) {
	node, _ := newNode(b)
	prepareBenchNode(b, node.Addr())
	ctx := context.Background()
	// run prepares on a fresh connection in each mode, in a rotating order,
	// n times; measure(m, true) brackets mode m's preparing.
	run := func(n int, measure func(m int, start bool)) {
		for i := 0; i < n; i++ {
			for k := range prepareModes {
				m := (i + k) % len(prepareModes)
				c, err := cqlclient.Dial(ctx, node.Addr(), cqlclient.Options{DisablePrepareBatch: !prepareModes[m].batchExt})
				if err != nil {
					b.Fatal(err)
				}
				measure(m, true)
				err = prepareModes[m].prepare(ctx, c)
				measure(m, false)
				c.Close()
				if err != nil {
					b.Fatal(err)
				}
			}
		}
	}
	// NB: the clock is read directly, not through StartTimer/StopTimer,
	// which read memory statistics and so stop the world around every
	// timed section. ns/op is a whole iteration: three dials included.
	elapsed := make([]time.Duration, len(prepareModes))
	var t0 time.Time
	run(b.N, func(m int, start bool) {
		if start {
			t0 = time.Now()
			return
		}
		elapsed[m] += time.Since(t0)
	})
	b.StopTimer()
	// Allocations in a second pass: ReadMemStats stops the world, which
	// would disturb the timing.
	const allocRuns = 200
	allocs := make([]uint64, len(prepareModes))
	var ms runtime.MemStats
	var before uint64
	run(allocRuns, func(m int, start bool) {
		runtime.ReadMemStats(&ms)
		if start {
			before = ms.Mallocs
			return
		}
		allocs[m] += ms.Mallocs - before
	})
	opsPerMs := func(m int) float64 { return float64(b.N) / (float64(elapsed[m]) / float64(time.Millisecond)) }
	for m, mode := range prepareModes {
		b.ReportMetric(opsPerMs(m), mode.name[:1]+"-ops/ms")
		b.ReportMetric(float64(allocs[m])/allocRuns, mode.name[:1]+"-allocs/op")
	}
	b.ReportMetric(opsPerMs(2)/opsPerMs(0), "c/a")
}

// BenchmarkPrepareThousandConns opens 1,000 connections to a cqld
// subprocess and has every one prepare the ten statements at once, (a) one
// PREPARE after another or (c) in one PREPARE_BATCH. Connections are opened
// with the timer stopped; the timed phase is the preparing. Server CPU is
// the subprocess's user+system time over the phase, from /proc/PID/stat.
//
//	flock /tmp/cqld-bench.lock go test -run '^$' -bench BenchmarkPrepareThousandConns -benchtime 3x ./test/
func BenchmarkPrepareThousandConns(b *testing.B) {
	const conns = 1000
	p := startProc(b, b.TempDir())
	prepareBenchNode(b, p.addr)
	ctx := context.Background()
	for _, mode := range []int{0, 2} {
		mode := prepareModes[mode]
		b.Run(mode.name, func(b *testing.B) {
			b.StopTimer()
			var cpu time.Duration
			for i := 0; i < b.N; i++ {
				cs := dialMany(b, p.addr, conns, cqlclient.Options{DisablePrepareBatch: !mode.batchExt})
				before := procCPU(b, p.cmd.Process.Pid)
				b.StartTimer()
				var wg sync.WaitGroup
				errs := make(chan error, conns)
				for _, c := range cs {
					wg.Add(1)
					go func(c *cqlclient.Conn) {
						defer wg.Done()
						if err := mode.prepare(ctx, c); err != nil {
							errs <- err
						}
					}(c)
				}
				wg.Wait()
				b.StopTimer()
				cpu += procCPU(b, p.cmd.Process.Pid) - before
				for _, c := range cs {
					c.Close()
				}
				close(errs)
				if err := <-errs; err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed())/float64(b.N)/float64(time.Millisecond), "ms/phase")
			b.ReportMetric(float64(cpu)/float64(b.N)/float64(time.Millisecond), "server-cpu-ms/phase")
		})
	}
}

// dialMany opens n connections, 50 at a time.
func dialMany(tb testing.TB, addr string, n int, o cqlclient.Options) []*cqlclient.Conn {
	tb.Helper()
	cs := make([]*cqlclient.Conn, n)
	errs := make([]error, n)
	sem := make(chan struct{}, 50)
	var wg sync.WaitGroup
	for i := range cs {
		wg.Add(1)
		sem <- struct{}{}
		go func(i int) {
			defer func() { <-sem; wg.Done() }()
			cs[i], errs[i] = cqlclient.Dial(context.Background(), addr, o)
		}(i)
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			tb.Fatal(err)
		}
	}
	return cs
}

// procCPU is a process's user plus system CPU time from /proc/PID/stat
// (fields 14 and 15, in clock ticks of 1/100 s).
func procCPU(tb testing.TB, pid int) time.Duration {
	tb.Helper()
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		tb.Fatal(err)
	}
	// The command name (field 2) may hold spaces; count from after it.
	fields := strings.Fields(string(raw[strings.LastIndexByte(string(raw), ')')+1:]))
	utime, err1 := strconv.ParseInt(fields[11], 10, 64)
	stime, err2 := strconv.ParseInt(fields[12], 10, 64)
	if err1 != nil || err2 != nil {
		tb.Fatalf("/proc/%d/stat: %q", pid, raw)
	}
	return time.Duration(utime+stime) * 10 * time.Millisecond
}
