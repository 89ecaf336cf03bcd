package commitlog

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"
)

type asyncResult struct {
	pos Position
	err error
}

// appendAsync appends p and returns where its one result arrives; it fails
// the test if a second one does.
func appendAsync(t *testing.T, l *Log, p string) (Position, bool, <-chan asyncResult) {
	t.Helper()
	done := make(chan asyncResult, 2)
	var calls atomic.Int32
	pos, pending, err := l.AppendAsync([]byte(p), func(pos Position, err error) {
		if calls.Add(1) > 1 {
			t.Errorf("then called twice for %q", p)
		}
		done <- asyncResult{pos, err}
	})
	mustf(t, err, "AppendAsync")
	return pos, pending, done
}

// TestAppendAsyncCompletesAfterItsSync: in the durable modes AppendAsync
// returns at once, while an fsync is stuck, and its result comes only once
// a sync covers the record, with the record's position.
func TestAppendAsyncCompletesAfterItsSync(t *testing.T) {
	for _, mode := range []string{SyncBatch, SyncGroup, SyncAdaptive} {
		t.Run(mode, func(t *testing.T) {
			opts := testOptions(nil)
			opts.Sync = mode
			opts.GroupWindow = 200 * time.Microsecond
			l, ffs := warmLog(t, opts)
			defer l.Close()

			open := ffs.closeGate()
			pos1, pending, first := appendAsync(t, l, "first")
			if !pending {
				t.Fatal("AppendAsync in a durable mode did not wait for a sync")
			}
			<-ffs.gateHit // the fsync for "first" is in progress
			pos2, _, second := appendAsync(t, l, "second")
			select {
			case r := <-first:
				t.Fatalf("result %v before the fsync returned", r)
			case <-time.After(20 * time.Millisecond):
			}
			open()
			if r := <-first; r.err != nil || r.pos != pos1 {
				t.Fatalf("first: %+v, want position %v", r, pos1)
			}
			if r := <-second; r.err != nil || r.pos != pos2 {
				t.Fatalf("second: %+v, want position %v", r, pos2)
			}
			if n := ffs.syncs.Load(); n != 2 {
				t.Fatalf("%d fsyncs, want 2", n)
			}
		})
	}
}

// TestAppendAsyncPeriodic: in periodic mode the record is acknowledged at
// once and then is never called.
func TestAppendAsyncPeriodic(t *testing.T) {
	opts := testOptions(nil)
	opts.Sync = SyncPeriodic
	opts.SyncPeriod = time.Hour
	l, _ := warmLog(t, opts)
	_, pending, done := appendAsync(t, l, "a")
	if pending {
		t.Fatal("AppendAsync waits in periodic mode")
	}
	mustf(t, l.Close(), "Close")
	select {
	case r := <-done:
		t.Fatalf("then called in periodic mode: %+v", r)
	default:
	}
}

// TestAppendAsyncSyncError: a failed fsync reaches then as an error, never
// as an acknowledgement; so does Close for a record it could not sync.
func TestAppendAsyncSyncError(t *testing.T) {
	mem := vfs.NewMem()
	var on atomic.Bool
	opts := testOptions(failing(mem, errorfs.OpFileSyncData, &on))
	probePolicy(&opts, PolicyStop)
	l := mustOpen(t, opts)
	_, err := l.Append([]byte("a"))
	mustf(t, err, "Append")
	waitReady(l)
	on.Store(true)
	_, _, done := appendAsync(t, l, "b")
	if r := <-done; !errors.Is(r.err, errorfs.ErrInjected) || r.pos != (Position{}) {
		t.Fatalf("result of a record whose fsync failed: %+v", r)
	}
	if _, _, err := l.AppendAsync([]byte("c"), func(Position, error) { t.Error("then called for a refused append") }); !errors.Is(err, ErrStopped) {
		t.Fatalf("AppendAsync on a stopped log: %v", err)
	}
	_ = l.Close()
}

// TestAppendAsyncCallbacksInOrder: AppendAsync callbacks run one at a time
// and in position order, each once, over syncs that complete one writer
// and syncs that complete many.
func TestAppendAsyncCallbacksInOrder(t *testing.T) {
	opts := testOptions(nil)
	opts.Sync = SyncBatch
	l, ffs := warmLog(t, opts)
	defer l.Close()

	const writers, each = 8, 150
	var running atomic.Int32
	var mu sync.Mutex
	var last Position
	var delivered int
	done := make(chan struct{}, writers*each)
	then := func(pos Position, err error) {
		if running.Add(1) > 1 {
			t.Error("two callbacks ran at once")
		}
		defer running.Add(-1)
		if err != nil {
			t.Errorf("then: %v", err)
		}
		mu.Lock()
		if pos.Less(last) {
			t.Errorf("callback for %v after one for %v", pos, last)
		}
		last = pos
		delivered++
		mu.Unlock()
		done <- struct{}{}
	}
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				if i%50 == 0 {
					// Now and then a slow sync, so that many queue behind it.
					ffs.syncDelay.Store(int64(2 * time.Millisecond))
				} else if i%50 == 5 {
					ffs.syncDelay.Store(0)
				}
				_, pending, err := l.AppendAsync([]byte(fmt.Sprint(w, "/", i)), then)
				mustf(t, err, "AppendAsync")
				if !pending {
					t.Error("AppendAsync in batch mode did not wait for a sync")
					return
				}
				if i%3 == 0 {
					<-done // a closed-loop writer now and then
				}
			}
		})
	}
	wg.Wait()
	for range writers*each - writers*((each+2)/3) {
		<-done
	}
	mu.Lock()
	defer mu.Unlock()
	if delivered != writers*each {
		t.Fatalf("%d callbacks, want %d", delivered, writers*each)
	}
}

// TestAppendAsyncLoneWriterWaitsItsTurn: in adaptive mode the flusher
// answers a lone writer itself only when no callback is being run; otherwise the lone writer's
// callback queues behind the others, so callbacks keep position order.
// The completion goroutine is held inside a callback (A1's) of a batch it
// has taken whole, so nothing is queued for it when the lone writer B's
// sync completes.
func TestAppendAsyncLoneWriterWaitsItsTurn(t *testing.T) {
	opts := testOptions(nil)
	opts.Sync = SyncAdaptive
	l, ffs := warmLog(t, opts)
	defer l.Close()

	calls := newCallOrder(8)
	record := func(name string) func(Position, error) { return calls.record(t, name) }
	appendAsync := func(name string, then func(Position, error)) {
		t.Helper()
		_, pending, err := l.AppendAsync([]byte(name), then)
		mustf(t, err, "AppendAsync %s", name)
		if !pending {
			t.Fatalf("%s: AppendAsync in adaptive mode did not wait for a sync", name)
		}
	}

	// X's sync is held while A1..A3 queue, so one sync completes all three.
	open := ffs.closeGate()
	appendAsync("X", record("X"))
	<-ffs.gateHit
	inA1, releaseA1 := make(chan struct{}), make(chan struct{})
	appendAsync("A1", func(pos Position, err error) {
		close(inA1)
		<-releaseA1
		record("A1")(pos, err)
	})
	appendAsync("A2", record("A2"))
	appendAsync("A3", record("A3"))
	open()
	<-inA1 // the completion goroutine holds A2 and A3 and runs A1
	// A blocking append, synced alone, so that the log has seen one
	// writer at a time when B comes.
	_, err := l.Append([]byte("P"))
	mustf(t, err, "Append P")

	// B alone: its sync completes it with nobody else waiting (C comes
	// once B has left the queue). C's sync, held at the gate, shows that
	// the flusher has finished B's cycle.
	open = ffs.closeGate()
	appendAsync("B", record("B"))
	<-ffs.gateHit
	open()
	for queued := 1; queued > 0; {
		time.Sleep(100 * time.Microsecond)
		l.mu.Lock()
		queued = len(l.queue)
		l.mu.Unlock()
	}
	open = ffs.closeGate()
	appendAsync("C", record("C"))
	<-ffs.gateHit
	open()

	close(releaseA1)
	for range 6 {
		<-calls.done
	}
	calls.check(t, "X A1 A2 A3 B C")
}

// callOrder records the order AppendAsync callbacks ran in.
type callOrder struct {
	mu    sync.Mutex
	order []string
	done  chan string // each callback's name, as it runs
}

func newCallOrder(n int) *callOrder { return &callOrder{done: make(chan string, n)} }

// record is a callback that records name.
func (c *callOrder) record(t *testing.T, name string) func(Position, error) {
	return func(_ Position, err error) {
		mustf(t, err, "%s", name)
		c.mu.Lock()
		c.order = append(c.order, name)
		c.mu.Unlock()
		c.done <- name
	}
}

// check fails t unless the callbacks ran in the order want (names
// separated by spaces).
func (c *callOrder) check(t *testing.T, want string) {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	if got := strings.Join(c.order, " "); got != want {
		t.Errorf("callbacks ran in the order %s, want %s", got, want)
	}
}

// TestGatherAnswersLastSyncsWriters: when the adaptive flusher gathers
// writers for its next sync, it calls the callbacks the last sync
// completed itself, while the completion goroutine has not begun them;
// here that goroutine is held, so only the gather can answer X.
func TestGatherAnswersLastSyncsWriters(t *testing.T) {
	opts := testOptions(nil)
	opts.Sync = SyncAdaptive
	opts.GroupWindow = time.Hour
	l, ffs := warmLog(t, opts)
	defer l.Close()
	hold := make(chan struct{})
	l.holdCompletions = hold
	defer close(hold)
	l.syncEWMA.Store(int64(2 * time.Hour)) // a gather may wait an hour

	calls := newCallOrder(3)
	appendAsync := func(name string) {
		t.Helper()
		if _, pending, err := l.AppendAsync([]byte(name), calls.record(t, name)); err != nil || !pending {
			t.Fatalf("AppendAsync %s: pending %v, err %v", name, pending, err)
		}
	}

	// A queues during X's sync, so the next sync expects two writers
	// (X and A) and its gather waits for a second one.
	open := ffs.closeGate()
	appendAsync("X")
	<-ffs.gateHit
	appendAsync("A")
	open()
	select {
	case name := <-calls.done:
		if name != "X" {
			t.Fatalf("%s answered first, want X", name)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("X not answered while its sync's successor gathered writers")
	}
	if n := ffs.syncs.Load(); n != 1 {
		t.Fatalf("%d syncs before B came, want 1 (the gather waits for it)", n)
	}
	appendAsync("B") // the second writer: the gather ends and A and B sync
	waitFor(func() bool { return l.queueLen() == 0 })
	hold <- struct{}{} // the completion goroutine answers A and B
	for range 2 {
		<-calls.done
	}
	calls.check(t, "X A B")
}
