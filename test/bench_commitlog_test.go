package test

import (
	"bytes"
	"cmp"
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/gocql/gocql"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/cqld/cqld/server"
)

// clTable, or CQLD_BENCH_CLTABLE set to anything but "", makes
// BenchmarkCommitLogModes print one summary table per disk at its end.
var (
	clTable = flag.Bool("cl.table", false, "BenchmarkCommitLogModes: print a summary table (threads x modes) per disk")
	// gocql's write coalescing (WriteCoalesceWaitTime, 200us by default)
	// holds each request for a timer that this machine's runtime rounds up
	// to about a millisecond when a client is idle: it alone made a lone
	// client's round trip 1.2 ms instead of 0.1 ms, and capped what
	// gathering syncs can gain. cassandra-stress's Java driver waits for
	// no timer, so the benchmark turns it off unless told otherwise.
	clRounds   = flag.Int("cl.rounds", 1, "BenchmarkCommitLogModes: rounds of every row, each starting at another mode; the table shows each cell's median")
	clCoalesce = flag.Duration("cl.coalesce", 0, "BenchmarkCommitLogModes: gocql's WriteCoalesceWaitTime (0 sends each request at once; gocql's default is 200us)")
)

// BenchmarkCommitLogModes measures prepared single-row UPDATEs through gocql
// against one in-process node per disk and commit log sync mode, at 1 to
// 256 client goroutines:
//
//	disk=local       this machine's disk (vfs.Default)
//	disk=slow5ms     the same with every fsync 5 ms longer (slowFS)
//	disk=nosync      the same with no fsync at all (a diagnosis)
//	disk=sleep150us  every fsync a 150 us sleep instead (a diagnosis)
//	threads=         1 to 256 client goroutines
//	mode=            batch, group (10 ms window), adaptive, and periodic,
//	                 the non-durable ceiling
//
// The cells of one thread count run one after the other, so the modes of a
// row are measured close together in time on this shared machine; with
// -cl.rounds N the row runs N times, each round starting at the next mode,
// and the table shows each cell's median round and the spread of its
// rounds. Each cell has a node of its own, started (and warmed up) before
// the cell and stopped after it, so that no other node's flushes and
// compactions share the disk with it. The statement is
// UPDATE bench.cl SET v = ? WHERE k = ? with a random k among benchKeys and
// a 100-byte v. The goroutines share one gocql session (clNumConns
// connections, write coalescing off unless -cl.coalesce); each reuses one
// *gocql.Query and records every op's latency in its own preallocated
// slice. Every cell reports ops/s, p50-us and p99-us.
//
// With -cl.table (go test ... -args -cl.table) or CQLD_BENCH_CLTABLE=1 the
// run ends with one table per disk: a row per thread count, a column per
// mode, each cell "ops/s p50/p99" (latencies in microseconds), then the
// ratios of adaptive's ops/s to each other mode's.
//
// The clients run in the node's process and share its Go processors:
// the process has one processor more than the CPUs (TestMain), as nodes
// themselves once took, the conditions its tables in docs/commitlog.md
// were recorded in. A node serving clients from other processes runs at
// Go's default (docs/commitlog.md, "Go processors").
func BenchmarkCommitLogModes(b *testing.B) {
	disks := []struct {
		name string
		fs   vfs.FS
	}{
		{"local", vfs.Default},
		{"slow5ms", newSlowFS(vfs.Default, 5*time.Millisecond)},
		// Two disks that are not disks, to tell the commit log's own cost
		// from the fsync's: nosync skips every sync (a durable mode then
		// costs only its bookkeeping and hand-offs); sleep150us replaces
		// it with a 150 us sleep, about as long as this disk's fdatasync
		// under load but holding neither a CPU nor a Go processor. (An
		// idle Go runtime rounds a sleep up to a millisecond, so
		// sleep150us means something only from a few threads up.)
		{"nosync", &slowFS{FS: vfs.Default, skip: true}},
		{"sleep150us", &slowFS{FS: vfs.Default, skip: true, lat: 150 * time.Microsecond}},
	}
	modes := []string{"batch", "group", "adaptive", "periodic"}
	threads := []int{1, 2, 4, 8, 16, 32, 64, 128, 256}

	var mu sync.Mutex
	results := map[string][]clResult{} // "disk/mode/threads" -> one per round
	for _, disk := range disks {
		b.Run("disk="+disk.name, func(diskB *testing.B) {
			// A node per cell, kept through the cell's rounds and stopped
			// at its end, so no other node flushes or compacts on the
			// disk while a cell runs.
			// (testing.B runs a sub-benchmark's cleanups after each round,
			// so the node's lifetime is kept here.)
			var cur *clNode
			var curCell *testing.B
			for _, t := range threads {
				diskB.Run(fmt.Sprintf("threads=%d", t), func(b *testing.B) {
					// Round r starts the row at its r-th mode, so that no
					// mode always runs first or right after another.
					for r := range *clRounds {
						for i := range modes {
							mode := modes[(i+r)%len(modes)]
							b.Run("mode="+mode, func(sub *testing.B) {
								if curCell != sub {
									if cur != nil {
										cur.stop()
									}
									cur, curCell = newCLNode(parentTB{diskB, sub}, disk.fs, mode), sub
								}
								res := cur.run(sub, t)
								key := fmt.Sprintf("%s/%s/%d", disk.name, mode, t)
								mu.Lock()
								if len(results[key]) == r {
									results[key] = append(results[key], res)
								} else {
									results[key][r] = res // testing.B's later, longer run
								}
								mu.Unlock()
							})
						}
					}
				})
			}
		})
	}
	if !*clTable && os.Getenv("CQLD_BENCH_CLTABLE") == "" {
		return
	}
	var out strings.Builder
	for _, disk := range disks {
		cell := func(m string, t int) (clResult, bool) {
			return clMedian(results[fmt.Sprintf("%s/%s/%d", disk.name, m, t)])
		}
		// The rows that ran (a -test.bench pattern may pick some).
		rows := slices.DeleteFunc(slices.Clone(threads), func(t int) bool {
			return !slices.ContainsFunc(modes, func(m string) bool { _, ok := cell(m, t); return ok })
		})
		if len(rows) == 0 {
			continue
		}
		fmt.Fprintf(&out, "\ndisk=%s: UPDATE ops/s p50/p99 (us)", disk.name)
		if *clRounds > 1 {
			fmt.Fprintf(&out, ", the median of %d rounds and the spread of its rounds' ops/s", *clRounds)
		}
		fmt.Fprintf(&out, "\n%-8s", "threads")
		for _, m := range modes {
			fmt.Fprintf(&out, " %30s", m)
		}
		for _, m := range modes {
			if m != "adaptive" {
				fmt.Fprintf(&out, " %12s", "adaptive/"+m)
			}
		}
		out.WriteByte('\n')
		for _, t := range rows {
			fmt.Fprintf(&out, "%-8d", t)
			for _, m := range modes {
				text := "-"
				if r, ok := cell(m, t); ok {
					text = fmt.Sprintf("%.0f %.0f/%.0f", r.rate, r.p50, r.p99)
					if r.spread > 0 {
						text += fmt.Sprintf(" ±%.0f%%", 100*r.spread)
					}
				}
				fmt.Fprintf(&out, " %30s", text)
			}
			a, aok := cell("adaptive", t)
			for _, m := range modes {
				if m == "adaptive" {
					continue
				}
				text := "-"
				if r, ok := cell(m, t); ok && aok && r.rate > 0 {
					text = fmt.Sprintf("%.2f", a.rate/r.rate)
				}
				fmt.Fprintf(&out, " %12s", text)
			}
			out.WriteByte('\n')
		}
	}
	fmt.Print(out.String())
}

// clMedian is the round with the median ops/s (the lower of the middle two
// for an even count), its spread set to half the range of the rounds'
// ops/s over that median.
func clMedian(rounds []clResult) (clResult, bool) {
	if len(rounds) == 0 {
		return clResult{}, false
	}
	sorted := slices.Clone(rounds)
	slices.SortFunc(sorted, func(a, b clResult) int { return cmp.Compare(a.rate, b.rate) })
	m := sorted[(len(sorted)-1)/2]
	if m.rate > 0 && len(sorted) > 1 {
		m.spread = (sorted[len(sorted)-1].rate - sorted[0].rate) / 2 / m.rate
	}
	return m, true
}

const (
	clUpdate   = `UPDATE bench.cl SET v = ? WHERE k = ?`
	clNumConns = 4
	// Each node's warm-up: clWarmWrites UPDATEs from clWarmWriters
	// goroutines.
	clWarmWrites  = 4000
	clWarmWriters = 16
)

// clResult is one cell: ops/s and latency percentiles in microseconds.
// spread is set only by clMedian.
type clResult struct{ rate, p50, p99, spread float64 }

// clNode is a node under test and the session its clients share.
type clNode struct {
	s     *gocql.Session
	reg   prometheus.Gatherer
	value []byte
	stop  func() // closes the session and stops the node, once
}

// newCLNode starts a node on fs with commitlog_sync mode (group with a
// 10 ms window), stopped by its stop or when tb ends, and creates bench.cl.
func newCLNode(tb testing.TB, fs vfs.FS, mode string) *clNode {
	cfg := testConfig(tb, tb.TempDir())
	cfg.CommitlogSync = mode
	if mode == "group" {
		cfg.CommitlogSyncGroupWindow.Duration = 10 * time.Millisecond
	}
	if err := cfg.Validate(); err != nil {
		tb.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	node, err := server.StartWith(cfg, log, server.Options{FS: fs})
	if err != nil {
		tb.Fatal(err)
	}
	var once sync.Once
	var s *gocql.Session
	stop := func() {
		once.Do(func() {
			if s != nil {
				s.Close()
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if err := node.Shutdown(ctx); err != nil {
				tb.Errorf("shutdown: %v", err)
			}
		})
	}
	tb.Cleanup(stop)

	c := gocqlCluster(node.Addr())
	c.NumConns = clNumConns
	if v, err := strconv.Atoi(os.Getenv("CQLD_BENCH_NUMCONNS")); err == nil && v > 0 {
		c.NumConns = v
	}
	c.WriteCoalesceWaitTime = *clCoalesce
	c.Timeout = 30 * time.Second // 256 clients on a 5 ms fsync queue up
	s, err = c.CreateSession()
	if err != nil {
		tb.Fatal(err)
	}
	for _, q := range []string{
		`CREATE KEYSPACE bench WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}`,
		`CREATE TABLE bench.cl (k int PRIMARY KEY, v blob)`,
	} {
		if err := s.Query(q).Exec(); err != nil {
			tb.Fatalf("%s: %v", q, err)
		}
	}
	v := bytes.Repeat([]byte{'v'}, benchValueLen)
	// Warm up before the first cell: a new node prepares its commit log
	// segments (zeros ahead, fsyncs) and its first memtable in the
	// background, which a measured cell must not share its disk with.
	if err := benchFill(s, clUpdate, clWarmWriters, clWarmWrites, func(k int) []any { return []any{v, k} }); err != nil {
		tb.Fatalf("warm-up: %v", err)
	}
	return &clNode{s: s, reg: node.Registry, value: v, stop: stop}
}

// run splits b.N UPDATEs over threads goroutines and reports ops/s, p50-us
// and p99-us.
func (n *clNode) run(b *testing.B, threads int) clResult {
	qs := make([]*gocql.Query, threads)
	for i := range qs {
		qs[i] = n.s.Query(clUpdate)
	}
	// Prepared (and the statement cache warm) before the clock starts.
	if err := qs[0].Bind(n.value, 0).Exec(); err != nil {
		b.Fatalf("%s: %v", clUpdate, err)
	}
	rngs := make([]*rand.Rand, threads)
	for i := range rngs {
		rngs[i] = rand.New(rand.NewPCG(uint64(i), 0xc1))
	}
	before := clSyncStats(b, n.reg)
	lats := benchClients(b, threads, func(i, _ int) error {
		k := rngs[i].IntN(benchKeys)
		if err := qs[i].Bind(n.value, k).Exec(); err != nil {
			return fmt.Errorf("%s with k=%d: %w", clUpdate, k, err)
		}
		return nil
	})
	r := clResult{rate: benchReport(b, lats)}
	clSyncStats(b, n.reg).report(b, before)
	all := slices.Concat(lats...)
	if len(all) > 0 {
		slices.Sort(all)
		r.p50 = float64(benchPercentile(all, 0.50)) / 1e3
		r.p99 = float64(benchPercentile(all, 0.99)) / 1e3
	}
	return r
}

// clSyncs is a snapshot of the commit log's sync metrics.
type clSyncs struct{ appends, syncs, syncSum, waits, waitSum, execs, execSum float64 }

func clSyncStats(b *testing.B, g prometheus.Gatherer) clSyncs {
	mfs, err := g.Gather()
	if err != nil {
		b.Fatal(err)
	}
	var s clSyncs
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			switch mf.GetName() {
			case "cqld_commitlog_appends_total":
				s.appends = m.GetCounter().GetValue()
			case "cqld_commitlog_syncs_total":
				s.syncs = m.GetCounter().GetValue()
			case "cqld_commitlog_sync_duration_seconds":
				s.syncSum = m.GetHistogram().GetSampleSum()
			case "cqld_commitlog_wait_duration_seconds":
				s.waits = float64(m.GetHistogram().GetSampleCount())
				s.waitSum = m.GetHistogram().GetSampleSum()
			case "cqld_native_request_duration_seconds":
				for _, l := range m.GetLabel() {
					if l.GetName() == "opcode" && l.GetValue() == "EXECUTE" {
						s.execs = float64(m.GetHistogram().GetSampleCount())
						s.execSum = m.GetHistogram().GetSampleSum()
					}
				}
			}
		}
	}
	return s
}

// report adds appends/sync, mean sync-us, mean wait-us and node-us (the
// mean time the node held an EXECUTE, from its frame read to its answer
// queued) since before.
func (s clSyncs) report(b *testing.B, before clSyncs) {
	if n := s.execs - before.execs; n > 0 {
		b.ReportMetric((s.execSum-before.execSum)/n*1e6, "node-us")
	}
	syncs := s.syncs - before.syncs
	if syncs == 0 {
		return
	}
	b.ReportMetric((s.appends-before.appends)/syncs, "appends/sync")
	b.ReportMetric((s.syncSum-before.syncSum)/syncs*1e6, "sync-us")
	if w := s.waits - before.waits; w > 0 {
		b.ReportMetric((s.waitSum-before.waitSum)/w*1e6, "wait-us")
	}
}
