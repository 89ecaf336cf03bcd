package storage

import (
	"errors"
	"os"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"

	"github.com/cqld/cqld/commitlog"
)

// fullDisk wraps fs so that, while full is set, writes to the LSM's tables
// fail with ENOSPC, as they do on a full disk; it counts the tables
// created.
type fullDisk struct {
	vfs.FS
	full    atomic.Bool
	creates atomic.Int64
}

func newFullDisk(fs vfs.FS) *fullDisk {
	d := &fullDisk{}
	d.FS = errorfs.Wrap(fs, errorfs.InjectorFunc(func(op errorfs.Op) error {
		if !isTable(op.Path) {
			return nil
		}
		if op.Kind == errorfs.OpCreate {
			d.creates.Add(1)
		}
		if d.full.Load() && (op.Kind == errorfs.OpFileWrite || op.Kind == errorfs.OpFileWriteAt) {
			return &os.PathError{Op: "write", Path: op.Path, Err: syscall.ENOSPC}
		}
		return nil
	}))
	return d
}

// fakeWait is one wait asked of a fake clock, fired by the test.
type fakeWait struct {
	d    time.Duration
	fire chan time.Time
}

// fakeAfter is a time.After whose waits the test receives on the channel
// it returns and fires when it likes.
func fakeAfter() (func(time.Duration) <-chan time.Time, <-chan fakeWait) {
	waits := make(chan fakeWait, 16)
	return func(d time.Duration) <-chan time.Time {
		w := fakeWait{d: d, fire: make(chan time.Time, 1)}
		waits <- w
		return w.fire
	}, waits
}

func nextWait(t *testing.T, waits <-chan fakeWait) fakeWait {
	t.Helper()
	select {
	case w := <-waits:
		return w
	case <-time.After(10 * time.Second):
		t.Fatal("pebble never retried the failed flush")
		return fakeWait{}
	}
}

// TestDiskFullRefusesWritesAndRecovers fills the data disk: the flush
// fails with ErrWriteFailed, writes are refused with ErrWriteFailed while
// pebble retries the flush, each retry waits twice as long as the one
// before (up to maxRetryWait) instead of following at once, and once the
// disk has room the retry succeeds and writes are accepted again by
// themselves. No acknowledged write is lost, nor any refused one applied.
func TestDiskFullRefusesWritesAndRecovers(t *testing.T) {
	mem := vfs.NewMem()
	disk := newFullDisk(mem)
	after, waits := fakeAfter()
	open := func(fs vfs.FS) *Engine {
		return openEngineWith(t, EngineOptions{FS: fs, Dir: "data", After: after,
			Log: commitlog.Options{Dir: "commitlog", Sync: commitlog.SyncBatch, SegmentSize: 1 << 20}})
	}
	e := open(disk)
	tbl := testTable(t, false)
	write := func(c int) error {
		m := e.NewMutation()
		if err := m.WriteCell(tbl, i32(1), CellTarget{Clustering: [][]byte{i32(c)}, Column: "v"}, live(1, "v")); err != nil {
			t.Fatal(err)
		}
		return e.Apply(m)
	}
	for c := range 50 {
		if err := write(c); err != nil {
			t.Fatal(err)
		}
	}

	disk.full.Store(true)
	creates := disk.creates.Load()
	if err := e.Flush(); !errors.Is(err, ErrWriteFailed) || !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("Flush on a full disk = %v, want ErrWriteFailed wrapping ENOSPC", err)
	}
	if err := write(1000); !errors.Is(err, ErrWriteFailed) {
		t.Fatalf("Apply while flushes fail = %v, want ErrWriteFailed", err)
	}
	m := e.NewMutation()
	m.WriteRowMarker(tbl, i32(1), [][]byte{i32(1001)}, Cell{Timestamp: 1})
	if _, err := e.ApplyAsync(m, nil, func(error) { t.Error("then called for a refused write") }); !errors.Is(err, ErrWriteFailed) {
		t.Fatalf("ApplyAsync while flushes fail = %v, want ErrWriteFailed", err)
	}

	// Every retry asks the clock first: at the k-th wait, k tables were
	// tried, so nothing retried behind the clock's back.
	for k := 1; k <= 9; k++ {
		w := nextWait(t, waits)
		if want := retryWait(k); w.d != want {
			t.Fatalf("retry %d waits %v, want %v", k, w.d, want)
		}
		if got := disk.creates.Load() - creates; got != int64(k) {
			t.Fatalf("at retry %d, %d tables were tried", k, got)
		}
		if k == 9 {
			disk.full.Store(false) // the disk has room for this retry
		}
		w.fire <- time.Time{}
	}
	if retryWait(9) != maxRetryWait {
		t.Fatalf("retryWait(9) = %v, the test expects the cap %v", retryWait(9), maxRetryWait)
	}
	// This flush waits for the retried one to succeed, then flushes on.
	if err := e.Flush(); err != nil {
		t.Fatalf("Flush once the disk has room: %v", err)
	}
	if err := write(50); err != nil {
		t.Fatalf("Apply once the disk has room: %v", err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	e = open(mem)
	defer e.Close()
	if got := readAll(t, e, tbl, 1, ReadOptions{}); len(got) != 51 {
		t.Fatalf("%d rows after a restart, want the 51 acknowledged: %v", len(got), got)
	}
}
