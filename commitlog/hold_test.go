package commitlog

import (
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// TestHoldSyncsLoneWriterOnCaller: in adaptive mode a lone writer's
// append made under Hold is synced by Release, on the caller's goroutine:
// its callback has run, after its fsync, when Release returns.
func TestHoldSyncsLoneWriterOnCaller(t *testing.T) {
	opts := testOptions(nil)
	opts.Sync = SyncAdaptive
	l, ffs := warmLog(t, opts)
	defer l.Close()
	// The first write names its writer; from the second on the writer is
	// the one the write before came from.
	l.Hold()
	_, _, first := appendAsync(t, l, "first")
	l.Release(7)
	if r := <-first; r.err != nil {
		t.Fatal(r.err)
	}
	l.cycle.Lock() // the flusher's cycle that answered it has ended
	l.cycle.Unlock()
	for i := range 10 {
		syncs := ffs.syncs.Load()
		l.Hold()
		_, pending, done := appendAsync(t, l, fmt.Sprint("lone", i))
		if !pending {
			t.Fatal("AppendAsync in adaptive mode did not wait for a sync")
		}
		l.Release(7)
		select {
		case r := <-done:
			if r.err != nil {
				t.Fatalf("append %d: %v", i, r.err)
			}
		default:
			t.Fatalf("append %d: Release returned before the callback ran", i)
		}
		if ffs.syncs.Load() == syncs {
			t.Fatalf("append %d answered without an fsync", i)
		}
	}
}

// TestHoldDefersPoke: an AppendAsync under Hold (here from another
// goroutine) does not wake the flusher until the hold ends, and is synced
// then; an Append, which waits, wakes it at once, even on the goroutine
// that holds.
func TestHoldDefersPoke(t *testing.T) {
	opts := testOptions(vfs.NewMem())
	opts.Sync = SyncAdaptive
	l := mustOpen(t, opts)
	defer l.Close()
	l.Hold()
	var done <-chan asyncResult
	appended := make(chan struct{})
	go func() {
		_, _, done = appendAsync(t, l, "held")
		close(appended)
	}()
	<-appended
	select {
	case r := <-done:
		t.Fatalf("AppendAsync completed under a hold: %+v", r)
	case <-time.After(50 * time.Millisecond):
	}
	blocking := make(chan error, 1)
	go func() {
		_, err := l.Append([]byte("waits"))
		blocking <- err
	}()
	select {
	case err := <-blocking:
		mustf(t, err, "Append")
	case <-time.After(10 * time.Second):
		t.Fatal("Append under a hold still waits after 10 s")
	}
	l.Release(1)
	select {
	case r := <-done:
		mustf(t, r.err, "AppendAsync")
	case <-time.After(10 * time.Second):
		t.Fatal("AppendAsync still waits 10 s after the hold ended")
	}
}

// TestHoldNeverLosesAPoke: holders coming and going while writers append
// and wait: every append completes.
func TestHoldNeverLosesAPoke(t *testing.T) {
	opts := testOptions(vfs.NewMem())
	opts.Sync = SyncAdaptive
	opts.SegmentSize = 1 << 20
	l := mustOpen(t, opts)
	defer l.Close()
	const writers, appends = 8, 300
	var wg sync.WaitGroup
	stop := make(chan struct{})
	var holders sync.WaitGroup
	for range 3 {
		holders.Add(1)
		go func() {
			defer holders.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				l.Hold()
				runtime.Gosched()
				l.Release(0)
			}
		}()
	}
	errs := make(chan error, writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range appends {
				hold := i%2 == 0
				if hold {
					l.Hold()
				}
				res := make(chan error, 1)
				_, pending, err := l.AppendAsync([]byte(fmt.Sprint(w, "/", i)), func(_ Position, err error) { res <- err })
				if hold {
					l.Release(uint64(w % 2))
				}
				if err == nil && pending {
					select {
					case err = <-res:
					case <-time.After(10 * time.Second):
						err = fmt.Errorf("writer %d: append %d not completed after 10 s", w, i)
					}
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	holders.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestHoldLeavesOthersToFlusher: Release syncs on its caller only for the
// writer whose write came before, on a disk that syncs fast; otherwise it
// returns at once and the flusher syncs (here held at its fdatasync).
func TestHoldLeavesOthersToFlusher(t *testing.T) {
	for _, tc := range []struct {
		name string
		ewma time.Duration
		prev uint64
	}{
		{name: "another writer before", prev: 1},
		{name: "slow disk", ewma: 2 * loneSyncMax, prev: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := testOptions(nil)
			opts.Sync = SyncAdaptive
			l, ffs := warmLog(t, opts)
			defer l.Close()
			l.lastWriter.Store(tc.prev)
			l.syncEWMA.Store(int64(tc.ewma))
			open := ffs.closeGate()
			l.Hold()
			_, _, done := appendAsync(t, l, "w")
			released := make(chan struct{})
			go func() {
				l.Release(2)
				close(released)
			}()
			select {
			case <-released:
			case <-time.After(10 * time.Second):
				open()
				t.Fatal("Release waited for the fsync")
			}
			<-ffs.gateHit // the flusher's
			open()
			if r := <-done; r.err != nil {
				t.Fatal(r.err)
			}
		})
	}
}
