package commitlog

import (
	"fmt"
	"runtime/pprof"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"
)

// goroutinesOf returns the stacks of the goroutines running a method of l
// (a traceback prints each method's receiver as its first argument).
func goroutinesOf(l *Log) []string {
	var buf strings.Builder
	_ = pprof.Lookup("goroutine").WriteTo(&buf, 2)
	recv := fmt.Sprintf("commitlog.(*Log).%%s(%p", l)
	var out []string
	for _, g := range strings.Split(buf.String(), "\n\n") {
		for _, fn := range []string{"flushLoop", "prepareLoop", "fullLoop", "completeLoop", "runFailureHooks"} {
			if strings.Contains(g, fmt.Sprintf(recv, fn)) {
				out = append(out, g)
				break
			}
		}
	}
	return out
}

// checkNoGoroutines fails unless every goroutine of l is gone. A goroutine
// that Close waited for may still be returning from its deferred Done, so
// it is given a moment; one that nobody waits for is blocked or running.
func checkNoGoroutines(t *testing.T, l *Log) {
	t.Helper()
	var left []string
	for range 500 {
		if left = goroutinesOf(l); len(left) == 0 {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("%d goroutines of the log outlived Close:\n%s", len(left), strings.Join(left, "\n\n"))
}

// waitGoroutines waits until n goroutines of l have started (a goroutine
// that has not yet run shows no receiver in its traceback).
func waitGoroutines(t *testing.T, l *Log, n int) {
	t.Helper()
	for range 500 {
		if len(goroutinesOf(l)) >= n {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("the log runs %d goroutines, want %d", len(goroutinesOf(l)), n)
}

func TestCloseLeavesNoGoroutine(t *testing.T) {
	for _, mode := range []string{SyncPeriodic, SyncBatch, SyncGroup, SyncAdaptive} {
		t.Run(mode, func(t *testing.T) {
			opts := smallSegments(vfs.NewMem())
			opts.Sync = mode
			opts.TotalSpace = 2 * opts.SegmentSize
			opts.OnFull = func(Position) {}
			l := mustOpen(t, opts)
			waitGoroutines(t, l, 4)
			for i := range 30 {
				if _, err := l.Append([]byte(strings.Repeat("g", 100))); err != nil {
					t.Fatalf("Append %d: %v", i, err)
				}
			}
			mustf(t, l.Close(), "Close")
			checkNoGoroutines(t, l)
		})
	}
}

// TestCloseWaitsForOnFull: a call of OnFull in progress when Close starts
// has returned when Close returns.
func TestCloseWaitsForOnFull(t *testing.T) {
	opts := smallSegments(vfs.NewMem())
	opts.TotalSpace = 2 * opts.SegmentSize
	entered := make(chan struct{}, 1)
	release := make(chan struct{})
	var returned atomic.Bool
	opts.OnFull = func(Position) {
		select {
		case entered <- struct{}{}:
		default:
		}
		<-release
		returned.Store(true)
	}
	l := mustOpen(t, opts)
	for range 30 {
		if _, err := l.Append([]byte(strings.Repeat("f", 100))); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case <-entered:
	case <-time.After(10 * time.Second):
		t.Fatal("OnFull never called")
	}
	// Released a moment after Close starts: a Close that does not wait
	// for OnFull returns before it.
	time.AfterFunc(50*time.Millisecond, func() { close(release) })
	mustf(t, l.Close(), "Close")
	if !returned.Load() {
		t.Fatal("Close returned while OnFull was still running")
	}
	checkNoGoroutines(t, l)
}

// TestCloseWaitsForOnFailure: the failure hooks run on a goroutine of the
// log, which Close waits for.
func TestCloseWaitsForOnFailure(t *testing.T) {
	var on atomic.Bool
	opts := testOptions(failing(vfs.NewMem(), errorfs.OpFileSyncData, &on))
	release := make(chan struct{})
	entered := make(chan struct{})
	var returned atomic.Bool
	opts.OnFailure = func(error) {
		close(entered)
		<-release
		returned.Store(true)
	}
	l := mustOpen(t, opts)
	_, err := l.Append([]byte("a"))
	mustf(t, err, "Append")
	waitReady(l)
	on.Store(true)
	if _, err := l.Append([]byte("b")); err == nil {
		t.Fatal("Append acknowledged a record whose fsync failed")
	}
	<-entered
	time.AfterFunc(50*time.Millisecond, func() { close(release) })
	_ = l.Close() // the error that stopped the log
	if !returned.Load() {
		t.Fatal("Close returned while OnFailure was still running")
	}
	checkNoGoroutines(t, l)
}
