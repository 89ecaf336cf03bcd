package commitlog

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// TestCrashDurability runs concurrent appenders on a crashable file system,
// takes a crash clone (keeping only synced data, plus, in some runs, random
// unsynced pages) after some acknowledgements, and replays the clone: every
// record acknowledged before the crash is there, in order per writer, and
// nothing else is but records the writers made.
func TestCrashDurability(t *testing.T) {
	seeds := crashSeeds()
	for _, mode := range []string{SyncBatch, SyncGroup, SyncAdaptive} {
		for _, unsynced := range []int{0, 50} {
			for _, latency := range []time.Duration{0, 300 * time.Microsecond} {
				for seed := range seeds {
					name := fmt.Sprintf("%s/unsynced=%d/latency=%v/seed=%d", mode, unsynced, latency, seed)
					t.Run(name, func(t *testing.T) { crashOnce(t, mode, unsynced, latency, seed, false) })
				}
			}
		}
	}
}

// TestCrashDurabilityWithRecycling adds MarkFlushed calls while writers run,
// so segments are recycled: a reused file's stale records must never come
// back, and nothing after the flushed position may be lost.
func TestCrashDurabilityWithRecycling(t *testing.T) {
	for _, unsynced := range []int{0, 50} {
		for seed := range crashSeeds() {
			t.Run(fmt.Sprintf("unsynced=%d/seed=%d", unsynced, seed), func(t *testing.T) {
				crashOnce(t, SyncAdaptive, unsynced, 100*time.Microsecond, seed, true)
			})
		}
	}
}

func crashSeeds() uint64 {
	if testing.Short() {
		return 1
	}
	return 3
}

func crashOnce(t *testing.T, mode string, unsynced int, latency time.Duration, seed uint64, flush bool) {
	const writers = 6
	mem := vfs.NewCrashableMem()
	slow := newFaultFS(mem)
	slow.syncDelay.Store(int64(latency))
	opts := testOptions(slow)
	opts.Sync = mode
	opts.SegmentSize = 8 << 10
	opts.GroupWindow = 100 * time.Microsecond
	l := mustOpen(t, opts)

	type ack struct {
		seq int
		pos Position
	}
	var (
		acked    [writers]atomic.Int64 // highest acknowledged seq + 1
		ackLog   [writers][]ack        // owned by each writer until wg.Wait
		total    atomic.Int64
		stop     = make(chan struct{})
		wg       sync.WaitGroup
		flushMu  sync.Mutex
		flushedP Position
	)
	rng := rand.New(rand.NewPCG(seed, 7))
	for w := range writers {
		size := 10 + rng.IntN(300)
		wg.Go(func() {
			for seq := 0; ; seq++ {
				select {
				case <-stop:
					return
				default:
				}
				p := fmt.Sprintf("w%d-%d-%s", w, seq, strings.Repeat("z", (seq*size)%400))
				pos, err := l.Append([]byte(p))
				if err != nil {
					t.Errorf("writer %d: %v", w, err)
					return
				}
				ackLog[w] = append(ackLog[w], ack{seq, pos})
				acked[w].Store(int64(seq + 1))
				total.Add(1)
			}
		})
	}
	if flush {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				case <-time.After(200 * time.Microsecond):
				}
				// Pretend the engine flushed all but the last two segments.
				var upTo Position
				l.mu.Lock()
				if l.cur != nil {
					upTo = Position{Segment: l.cur.id - 1}
				}
				l.mu.Unlock()
				if upTo.Segment == 0 {
					continue
				}
				flushMu.Lock()
				if err := l.MarkFlushed(upTo); err != nil {
					t.Errorf("MarkFlushed: %v", err)
				}
				if flushedP.Less(upTo) {
					flushedP = upTo
				}
				flushMu.Unlock()
			}
		})
	}

	waitFor(func() bool { return total.Load() >= 400 })
	var before [writers]int64
	for w := range writers {
		before[w] = acked[w].Load()
	}
	flushMu.Lock() // no MarkFlushed runs across the crash
	crashed := mem.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: unsynced, RNG: rand.New(rand.NewPCG(seed, 11))})
	flushed := flushedP
	flushMu.Unlock()
	close(stop)
	wg.Wait()
	mustf(t, l.Close(), "Close")

	opts.FS = crashed
	got, st, err := replayAll(t, opts)
	mustf(t, err, "Replay of the crash clone")
	for _, r := range got {
		if r.pos.Segment < flushed.Segment {
			t.Fatalf("replayed %q at %v from a segment flushed before %v", r.payload, r.pos, flushed)
		}
	}
	// Every ack before the crash at or after the flushed position is there.
	firstKept := make([]int, writers)
	for w := range writers {
		firstKept[w] = int(before[w])
		for _, a := range ackLog[w] {
			if a.seq < int(before[w]) && !a.pos.Less(Position{Segment: flushed.Segment}) {
				firstKept[w] = a.seq
				break
			}
		}
	}
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
		for seq := firstKept[w]; seq < int(before[w]); seq++ {
			if !slices.Contains(seen[w], seq) {
				t.Fatalf("writer %d: acknowledged record %d lost in the crash (acked %d, flushed before %v, %+v)",
					w, seq, before[w], flushed, st)
			}
		}
	}

	t.Logf("replayed %d records, flushed before %v, acked %v, %+v", len(got), flushed, before, st)

	// Replay is idempotent: the repaired clone replays the same records.
	again, st2, err := replayAll(t, opts)
	mustf(t, err, "second Replay")
	if !slices.Equal(again, got) || st2.TruncatedBytes != 0 {
		t.Fatalf("second replay differs: %d records vs %d, %+v", len(again), len(got), st2)
	}
}
