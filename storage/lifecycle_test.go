package storage

import (
	"io"
	"log/slog"
	"runtime/pprof"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/cqld/cqld/commitlog"
)

// openEngineWith opens an engine with o, its log lines discarded.
func openEngineWith(t testing.TB, o EngineOptions) *Engine {
	t.Helper()
	o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	e, err := OpenEngine(o)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// openTinyLogEngine opens an engine whose commit log is over its total
// space after a few writes, so that it keeps asking for flushes.
func openTinyLogEngine(t testing.TB, fs vfs.FS, sync string) *Engine {
	return openEngineWith(t, EngineOptions{FS: fs, Dir: "data",
		Log: commitlog.Options{Dir: "commitlog", Sync: sync, SegmentSize: 4 << 10, TotalSpace: 8 << 10}})
}

// storageGoroutines returns the stacks of goroutines created by this
// package's code (commit log and pebble goroutines are not).
func storageGoroutines() []string {
	var buf strings.Builder
	_ = pprof.Lookup("goroutine").WriteTo(&buf, 2)
	var out []string
	for _, g := range strings.Split(buf.String(), "\n\n") {
		if strings.Contains(g, "created by github.com/cqld/cqld/storage.") {
			out = append(out, g)
		}
	}
	return out
}

// TestCloseWaitsForFlushes closes engines right after writes that made
// their commit log ask for flushes, and after writers that went through
// ApplyAsync: no flush may run against a closed LSM or log (pebble panics
// on a closed DB; -race sees the rest), and no goroutine of the engine
// outlives Close.
func TestCloseWaitsForFlushes(t *testing.T) {
	tbl := testTable(t, false)
	for round := range 20 {
		e := openTinyLogEngine(t, vfs.NewMem(), commitlog.SyncBatch)
		var wg sync.WaitGroup
		for w := range 4 {
			wg.Go(func() {
				for i := range 20 + round {
					m := e.NewMutation()
					m.WriteCell(tbl, i32(w), CellTarget{Clustering: [][]byte{i32(i)}, Column: "v"},
						live(int64(i), strings.Repeat("x", 200)))
					done := make(chan error, 1)
					pending, err := e.ApplyAsync(m, nil, func(err error) { done <- err })
					if err == nil && pending {
						err = <-done
					}
					if err != nil {
						t.Errorf("round %d: write %d: %v", round, i, err)
						return
					}
				}
			})
		}
		wg.Wait()
		if err := e.Close(); err != nil {
			t.Fatalf("round %d: Close: %v", round, err)
		}
	}
	var left []string
	for range 500 {
		if left = storageGoroutines(); len(left) == 0 {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("%d goroutines of the engine outlived Close:\n%s", len(left), strings.Join(left, "\n\n"))
}

// TestLSMStats: the stats the metrics read follow what the engine did.
func TestLSMStats(t *testing.T) {
	e := openTestEngine(t, vfs.NewMem(), commitlog.SyncBatch)
	defer e.Close()
	tbl := testTable(t, false)
	for c := range 100 {
		m := e.NewMutation()
		m.WriteCell(tbl, i32(1), CellTarget{Clustering: [][]byte{i32(c)}, Column: "v"}, live(1, "v"))
		if err := e.Apply(m); err != nil {
			t.Fatal(err)
		}
	}
	before := e.LSMStats()
	if err := e.Flush(); err != nil {
		t.Fatal(err)
	}
	st := e.LSMStats()
	var files int64
	for _, n := range st.LevelFiles {
		files += n
	}
	if st.Flushes <= before.Flushes || st.FlushBytes <= before.FlushBytes || files == 0 || st.FlushFailing {
		t.Fatalf("after a flush: %+v (before %+v)", st, before)
	}
}

func TestStallsCount(t *testing.T) {
	now := time.Unix(100, 0)
	s := stalls{now: func() time.Time { return now }}
	var l pebble.EventListener
	s.listen(&l)
	l.WriteStallBegin(pebble.WriteStallBeginInfo{Reason: "memtable count limit reached"})
	now = now.Add(2 * time.Second)
	if n, d := s.read(); n != 1 || d != 2*time.Second {
		t.Fatalf("during a stall: %d stalls, %v", n, d)
	}
	now = now.Add(time.Second)
	l.WriteStallEnd()
	now = now.Add(time.Hour)
	if n, d := s.read(); n != 1 || d != 3*time.Second {
		t.Fatalf("after a stall: %d stalls, %v", n, d)
	}
}
