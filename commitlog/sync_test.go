package commitlog

import (
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/cqld/cqld/metrics"
)

func (l *Log) queueLen() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.queue)
}

// waitFor polls cond; the test's own timeout bounds it.
func waitFor(cond func() bool) {
	for !cond() {
		runtime.Gosched()
		time.Sleep(100 * time.Microsecond)
	}
}

// warmLog opens a log on a fault FS, appends once so a segment is current,
// waits for the next one to be prepared, and points the fault FS's sync
// counter and gate at the current segment only.
func warmLog(t *testing.T, opts Options) (*Log, *faultFS) {
	t.Helper()
	ffs := newFaultFS(vfs.NewMem())
	opts.FS = ffs
	l := mustOpen(t, opts)
	at, err := l.Append([]byte("warm-up"))
	mustf(t, err, "Append")
	waitReady(l)
	path := ffs.PathJoin(testDir, segmentName(at.Segment))
	ffs.gatePath.Store(&path)
	ffs.syncs.Store(0)
	return l, ffs
}

// TestOneSyncCompletesEveryWaiter holds one fsync while eight appends
// arrive: they buffer without waiting for it, queue, and the next cycle
// writes them with one WriteAt and acknowledges all of them with one fsync.
func TestOneSyncCompletesEveryWaiter(t *testing.T) {
	for _, mode := range []string{SyncBatch, SyncGroup, SyncAdaptive} {
		t.Run(mode, func(t *testing.T) {
			opts := testOptions(nil)
			opts.Sync = mode
			opts.GroupWindow = 200 * time.Microsecond
			l, ffs := warmLog(t, opts)
			defer l.Close()
			writes := ffs.writes.Load()

			open := ffs.closeGate()
			errs := make(chan error, 9)
			go func() { _, err := l.Append([]byte("first")); errs <- err }()
			<-ffs.gateHit // the fsync for "first" is in progress
			for i := range 8 {
				go func() { _, err := l.Append([]byte(fmt.Sprint("next-", i))); errs <- err }()
			}
			waitFor(func() bool { return l.queueLen() == 9 })
			open()
			for range 9 {
				mustf(t, <-errs, "Append")
			}
			if n := ffs.syncs.Load(); n != 2 {
				t.Fatalf("%d fsyncs for two groups of appends, want 2", n)
			}
			// The flusher writes each group's buffered records at once.
			if n := ffs.writes.Load() - writes; n != 2 {
				t.Fatalf("%d segment writes for two groups of appends, want 2", n)
			}
		})
	}
}

// TestPeriodicAppendDoesNotWaitForSync: in periodic mode an append is
// acknowledged once written, even while an fsync is stuck.
func TestPeriodicAppendDoesNotWaitForSync(t *testing.T) {
	opts := testOptions(nil)
	opts.Sync = SyncPeriodic
	opts.SyncPeriod = time.Hour
	l, ffs := warmLog(t, opts)
	defer l.Close()
	open := ffs.closeGate()
	synced := make(chan error, 1)
	go func() { synced <- l.Sync() }()
	<-ffs.gateHit
	for i := range 10 {
		_, err := l.Append([]byte(strconv.Itoa(i)))
		mustf(t, err, "Append while an fsync is in progress")
	}
	open()
	mustf(t, <-synced, "Sync")
}

// TestPeriodicBufferBounded: in periodic mode, while the flusher's write
// to the OS is held, appends are acknowledged at once up to maxUnwritten
// bytes, and past it wait for their sync, so that what a client may send
// meanwhile is bounded by its requests in flight; once the write returns,
// every one of them is acknowledged, and appends no longer wait.
func TestPeriodicBufferBounded(t *testing.T) {
	opts := testOptions(nil)
	opts.Sync = SyncPeriodic
	opts.SyncPeriod = time.Hour
	opts.SegmentSize = 4 * maxUnwritten
	opts.Metrics = metrics.NewCommitLog(prometheus.NewRegistry())
	l, ffs := warmLog(t, opts)
	defer l.Close()
	release := ffs.holdWrites()
	rec := make([]byte, 64<<10)
	const n = 2 * maxUnwritten / (64 << 10)
	done := make(chan error, n)
	pending := 0
	for i := range n {
		_, p, err := l.AppendAsync(rec, func(_ Position, err error) { done <- err })
		mustf(t, err, "append %d", i)
		if i == 0 {
			<-ffs.writeHit // the flusher's write of the first is held
		}
		if p {
			pending++
		}
	}
	if pending < n/2-2 || pending > n/2+2 {
		t.Errorf("%d of %d appends of %d bytes wait for their sync, want the ones past %d bytes", pending, n, len(rec), maxUnwritten)
	}
	if n := testutil.ToFloat64(opts.Metrics.PeriodicWaits); int(n) != pending {
		t.Errorf("periodic waits counted %v, %d appends waited", n, pending)
	}
	release()
	for range pending {
		mustf(t, <-done, "a waiting append")
	}
	if _, p, err := l.AppendAsync(rec, func(Position, error) { t.Error("called back") }); p || err != nil {
		t.Fatalf("an append once the writes are done: pending %v, %v", p, err)
	}
}

// expectWriters makes the adaptive flusher of l expect n writers per sync
// and wait up to an hour for them: an fsync "takes" two hours.
func expectWriters(l *Log, n int) {
	l.syncEWMA.Store(int64(2 * time.Hour))
	l.mu.Lock()
	l.active = n
	l.mu.Unlock()
}

// TestPeriodicWritesBehind: in periodic mode the flusher hands buffered
// records to the OS soon after they are acknowledged, without a sync, so a
// killed process does not lose them.
func TestPeriodicWritesBehind(t *testing.T) {
	opts := testOptions(nil)
	opts.Sync = SyncPeriodic
	opts.SyncPeriod = time.Hour
	l, ffs := warmLog(t, opts)
	defer l.Close()
	pos, err := l.Append([]byte("behind"))
	mustf(t, err, "Append")
	path := ffs.PathJoin(testDir, segmentName(pos.Segment))
	waitFor(func() bool { return strings.Contains(string(readFile(t, ffs, path)), "behind") })
	if n := ffs.syncs.Load(); n != 0 {
		t.Fatalf("%d fsyncs before the period ends, want 0", n)
	}
}

// TestAdaptiveLoneWriterSyncsAtOnce: a writer alone is synced at once, even
// when waiting for others could last an hour.
func TestAdaptiveLoneWriterSyncsAtOnce(t *testing.T) {
	opts := testOptions(vfs.NewMem())
	opts.Sync = SyncAdaptive
	opts.GroupWindow = time.Hour
	l := mustOpen(t, opts)
	defer l.Close()
	expectWriters(l, 1)
	for i := range 20 {
		_, err := l.Append([]byte(strconv.Itoa(i)))
		mustf(t, err, "Append")
	}
	if a := l.activeWriters(); a != 1 {
		t.Fatalf("expects %d writers after a lone writer's appends, want 1", a)
	}
}

// gatherWaits reports whether a gather waits for writers to queue.
func (l *Log) gatherWaits() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.gathering
}

func (l *Log) activeWriters() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.active
}

// TestAdaptiveGathersInFlightAppends: while another append is in flight,
// adaptive mode holds the sync for it, so both share one fsync.
func TestAdaptiveGathersInFlightAppends(t *testing.T) {
	opts := testOptions(nil)
	opts.Sync = SyncAdaptive
	opts.GroupWindow = time.Hour
	l, ffs := warmLog(t, opts)
	defer l.Close()
	expectWriters(l, 1)

	l.entered.Add(1) // an append that has entered but not yet written
	errs := make(chan error, 2)
	go func() { _, err := l.Append([]byte("a")); errs <- err }()
	waitFor(func() bool { return l.queueLen() == 1 })
	left := l.left.Load()
	go func() { _, err := l.Append([]byte("b")); errs <- err }()
	waitFor(func() bool { return l.left.Load() == left+1 })
	// The flusher either took "b" as a stand-in for the append it waited
	// for, or still waits for that one; either way one sync covers both.
	l.left.Add(1)
	l.poke(l.flushC)
	mustf(t, <-errs, "Append")
	mustf(t, <-errs, "Append")
	if n := ffs.syncs.Load(); n != 1 {
		t.Fatalf("%d fsyncs for two gathered appends, want 1", n)
	}
}

// TestAdaptiveWaitsForExpectedWriters: when the last sync saw three
// writers, an adaptive sync waits until three have queued (here its
// deadline is an hour away), so one fsync covers all of them; and the log
// then expects the writers that sync completed. The first two to queue do
// not wake the waiting flusher; the third, which completes the group,
// does, once.
func TestAdaptiveWaitsForExpectedWriters(t *testing.T) {
	opts := testOptions(nil)
	opts.Sync = SyncAdaptive
	opts.GroupWindow = time.Hour
	l, ffs := warmLog(t, opts)
	defer l.Close()
	expectWriters(l, 3)

	errs := make(chan error, 3)
	for i := range 3 {
		go func() { _, err := l.Append([]byte(fmt.Sprint("w", i))); errs <- err }()
		if i == 2 {
			break // the third completes the group: it syncs at once
		}
		// NB: the gather must be waiting before the next append, or that
		// append's wake-up is the first append's.
		waitFor(func() bool { return l.queueLen() == i+1 && l.gatherWaits() })
		if ffs.syncs.Load() != 0 {
			t.Fatalf("synced with %d of the 3 expected writers queued", i+1)
		}
	}
	for range 3 {
		mustf(t, <-errs, "Append")
	}
	if n := ffs.syncs.Load(); n != 1 {
		t.Fatalf("%d fsyncs for three expected writers, want 1", n)
	}
	if a := l.activeWriters(); a != 3 {
		t.Fatalf("expects %d writers after a sync of three, want 3", a)
	}
	if n := l.gatherWakes.Load(); n != 1 {
		t.Fatalf("the gather was woken %d times for three writers, want once", n)
	}
}

// TestAdaptiveForgetsWritersThatLeft: when fewer writers come than the
// last sync saw, the sync starts at its deadline and the log expects only
// the writers it completed.
func TestAdaptiveForgetsWritersThatLeft(t *testing.T) {
	opts := testOptions(vfs.NewMem())
	opts.Sync = SyncAdaptive
	opts.GroupWindow = time.Millisecond
	l := mustOpen(t, opts)
	defer l.Close()
	expectWriters(l, 8)
	for i := range 3 {
		_, err := l.Append([]byte(strconv.Itoa(i)))
		mustf(t, err, "Append")
	}
	if a := l.activeWriters(); a != 1 {
		t.Fatalf("expects %d writers after a lone writer's appends, want 1", a)
	}
}

// TestAdaptiveWritersShareSyncs: on a disk whose fsync takes 2 ms, eight
// writers that each pause between appends (a client's round trip) share
// syncs: the metrics count at most one fsync per two appends.
func TestAdaptiveWritersShareSyncs(t *testing.T) {
	opts := testOptions(nil)
	opts.Sync = SyncAdaptive
	opts.SegmentSize = 1 << 20
	reg := prometheus.NewRegistry()
	m := metrics.NewCommitLog(reg)
	opts.Metrics = m
	l, ffs := warmLog(t, opts)
	defer l.Close()
	ffs.syncDelay.Store(int64(2 * time.Millisecond))

	const writers, each = 8, 40
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				if _, err := l.Append([]byte(fmt.Sprintf("w%d-%d", w, i))); err != nil {
					t.Errorf("Append: %v", err)
					return
				}
				time.Sleep(100 * time.Microsecond)
			}
		})
	}
	wg.Wait()
	appends := testutil.ToFloat64(m.Appends) - 1 // the warm-up
	syncs := testutil.ToFloat64(m.Syncs) - 1
	if appends != writers*each || syncs < 1 || syncs > appends/2 {
		t.Fatalf("%v syncs for %v appends by %d writers, want at most one per two appends", syncs, appends, writers)
	}
}

// TestConcurrentAppends runs many writers in every mode across segment
// rotations; after Close every record is replayed, in order per writer.
func TestConcurrentAppends(t *testing.T) {
	for _, mode := range []string{SyncPeriodic, SyncBatch, SyncGroup, SyncAdaptive} {
		t.Run(mode, func(t *testing.T) {
			fs := vfs.NewMem()
			opts := testOptions(fs)
			opts.Sync = mode
			opts.SegmentSize = 4096
			opts.SyncPeriod = time.Millisecond
			opts.GroupWindow = 100 * time.Microsecond
			l := mustOpen(t, opts)
			const writers, each = 8, 150
			var wg sync.WaitGroup
			for w := range writers {
				wg.Go(func() {
					for i := range each {
						if _, err := l.Append([]byte(fmt.Sprintf("w%d-%d-%s", w, i, strings.Repeat("p", i%50)))); err != nil {
							t.Errorf("Append: %v", err)
							return
						}
					}
				})
			}
			wg.Wait()
			mustf(t, l.Close(), "Close")
			got, st, err := replayAll(t, opts)
			mustf(t, err, "Replay")
			if st.Segments < 5 || st.TruncatedBytes != 0 {
				t.Fatalf("stats %+v", st)
			}
			checkPerWriter(t, got, func(int) int { return each - 1 }, writers)
		})
	}
}

// checkPerWriter checks that each writer's records appear in order with no
// gaps up to acked(w), and that every record is one a writer made.
func checkPerWriter(t *testing.T, got []replayed, acked func(w int) int, writers int) {
	t.Helper()
	seen := make([][]int, writers)
	for i, r := range got {
		var w, seq int
		if _, err := fmt.Sscanf(r.payload, "w%d-%d-", &w, &seq); err != nil || w < 0 || w >= writers {
			t.Fatalf("replayed a record no writer made: %q", r.payload)
		}
		if i > 0 && !got[i-1].pos.Less(r.pos) {
			t.Fatalf("positions out of order: %v then %v", got[i-1].pos, r.pos)
		}
		if n := len(seen[w]); n > 0 && seen[w][n-1] >= seq {
			t.Fatalf("writer %d: record %d replayed after %d", w, seq, seen[w][n-1])
		}
		seen[w] = append(seen[w], seq)
	}
	for w := range writers {
		for i := 0; i <= acked(w); i++ {
			if i >= len(seen[w]) || seen[w][i] != i {
				t.Fatalf("writer %d: acknowledged record %d missing (replayed %v)", w, i, seen[w][:min(len(seen[w]), i+1)])
			}
		}
	}
}

// TestGatherPlan walks adaptive mode's gather plan through misses, a give-up,
// failed probes and a met gather.
func TestGatherPlan(t *testing.T) {
	const fsync, window = 800 * time.Microsecond, time.Hour
	var g gatherPlan
	type want struct {
		deadline time.Duration
		probe    bool
	}
	step := func(what string, w want) {
		t.Helper()
		d, p := g.start(fsync, window)
		if d != w.deadline || p != w.probe {
			t.Fatalf("%s (gather %d): deadline %v probe %v, want %v %v", what, g.n, d, p, w.deadline, w.probe)
		}
	}

	step("first gather", want{400 * time.Microsecond, true})
	g.missed(true) // a failed probe: the next one 32 gathers on
	step("after one miss", want{200 * time.Microsecond, false})
	g.missed(false)
	step("after two misses", want{100 * time.Microsecond, false})
	g.missed(false)
	for g.n < 32 {
		step("given up", want{0, false})
	}
	step("probe at gather 33", want{400 * time.Microsecond, true})
	g.missed(true) // the next one 64 gathers on
	step("halving after the probe", want{200 * time.Microsecond, false})
	g.missed(false)
	step("halving after the probe", want{100 * time.Microsecond, false})
	g.missed(false)
	for g.n < 96 {
		step("given up until gather 97", want{0, false})
	}
	step("probe at gather 97", want{400 * time.Microsecond, true})
	g.missed(true) // the interval stays at its maximum, 64
	if g.probeEvery != gatherProbeMax || g.nextProbe != 97+gatherProbeMax {
		t.Fatalf("probe interval %d, next probe %d after failed probes, want %d, %d",
			g.probeEvery, g.nextProbe, gatherProbeMax, 97+gatherProbeMax)
	}
	step("after the probe", want{200 * time.Microsecond, false})
	g.met()
	step("after a met gather", want{400 * time.Microsecond, false})
	if g.probeEvery != gatherProbeMin || g.nextProbe != 98+gatherProbeMin {
		t.Fatalf("probe interval %d, next probe %d after a met gather at 98, want %d, %d",
			g.probeEvery, g.nextProbe, gatherProbeMin, 98+gatherProbeMin)
	}
	if _, p := (&gatherPlan{n: 10, nextProbe: 11}).start(fsync, 50*time.Microsecond); !p {
		t.Fatal("gather 11 does not probe when its turn comes")
	}
	if d, _ := (&gatherPlan{}).start(fsync, 50*time.Microsecond); d != 50*time.Microsecond {
		t.Fatalf("deadline %v, want the 50µs window", d)
	}
}
