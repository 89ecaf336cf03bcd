package storage

import (
	"errors"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"

	"github.com/cqld/cqld/commitlog"
)

// manifestDisk wraps fs so that, while broken is set, operations of the
// given kind on the LSM's MANIFEST files fail with errno; it counts the
// tables created meanwhile.
type manifestDisk struct {
	vfs.FS
	broken  atomic.Bool
	creates atomic.Int64 // tables created while broken
}

func newManifestDisk(fs vfs.FS, errno syscall.Errno, kind errorfs.OpKind) *manifestDisk {
	d := &manifestDisk{}
	d.FS = errorfs.Wrap(fs, errorfs.InjectorFunc(func(op errorfs.Op) error {
		if !d.broken.Load() {
			return nil
		}
		if isTable(op.Path) && op.Kind == errorfs.OpCreate {
			d.creates.Add(1)
		}
		if strings.Contains(op.Path, "MANIFEST") && op.Kind == kind {
			return &os.PathError{Op: "write", Path: op.Path, Err: errno}
		}
		return nil
	}))
	return d
}

// manifestEngine is an engine on disk with 50 rows written, and its
// table and write function.
func manifestEngine(t *testing.T, fs vfs.FS, o EngineOptions) (*Engine, *Table, func(e *Engine, c int) error) {
	t.Helper()
	o.FS, o.Dir = fs, "data"
	o.Log = commitlog.Options{Dir: "commitlog", Sync: commitlog.SyncBatch, SegmentSize: 1 << 20}
	e := openEngineWith(t, o)
	tbl := testTable(t, false)
	write := func(e *Engine, c int) error {
		m := e.NewMutation()
		if err := m.WriteCell(tbl, i32(1), CellTarget{Clustering: [][]byte{i32(c)}, Column: "v"}, live(1, "v")); err != nil {
			t.Fatal(err)
		}
		return e.Apply(m)
	}
	for c := range 50 {
		if err := write(e, c); err != nil {
			t.Fatal(err)
		}
	}
	return e, tbl, write
}

// TestManifestDiskFullWaitsAndResumes fills the disk under the LSM's
// MANIFEST: the flush that must record its table waits instead of failing
// the LSM (pebble would end the process), writes are refused with
// ErrWriteFailed meanwhile and reads go on, each retry waits longer, and
// once the disk has room the flush completes and writes are accepted by
// themselves. Nothing acknowledged is lost.
func TestManifestDiskFullWaitsAndResumes(t *testing.T) {
	mem := vfs.NewMem()
	disk := newManifestDisk(mem, syscall.ENOSPC, errorfs.OpFileWrite)
	after, waits := fakeAfter()
	e, tbl, write := manifestEngine(t, disk, EngineOptions{After: after,
		OnDiskFailure: func(err error) { t.Errorf("OnDiskFailure(%v) for a full disk", err) }})

	disk.broken.Store(true)
	if err := e.Flush(); !errors.Is(err, ErrWriteFailed) || !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("Flush with the MANIFEST's disk full = %v, want ErrWriteFailed wrapping ENOSPC", err)
	}
	if err := write(e, 1000); !errors.Is(err, ErrWriteFailed) {
		t.Fatalf("Apply while the MANIFEST waits = %v, want ErrWriteFailed", err)
	}
	if got := readAll(t, e, tbl, 1, ReadOptions{}); len(got) != 50 {
		t.Fatalf("read while the MANIFEST waits: %d rows, want 50", len(got))
	}
	for k := 1; k <= 4; k++ {
		w := nextWait(t, waits)
		if want := retryWait(k); w.d != want {
			t.Fatalf("retry %d waits %v, want %v", k, w.d, want)
		}
		if k == 4 {
			disk.broken.Store(false)
		}
		w.fire <- time.Time{}
	}
	deadline := time.Now().Add(10 * time.Second)
	for write(e, 50) != nil {
		if time.Now().After(deadline) {
			t.Fatal("writes were not accepted again once the disk had room")
		}
		time.Sleep(time.Millisecond)
	}
	if err := e.Flush(); err != nil {
		t.Fatalf("Flush once the disk has room: %v", err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	e = openEngineWith(t, EngineOptions{FS: mem, Dir: "data", Log: commitlog.Options{Dir: "commitlog", Sync: commitlog.SyncBatch}})
	defer e.Close()
	if got := readAll(t, e, tbl, 1, ReadOptions{}); len(got) != 51 {
		t.Fatalf("%d rows after a restart, want the 51 acknowledged", len(got))
	}
}

// TestManifestFailureIsDiskFailure breaks the MANIFEST's sync, which
// cannot be retried: pebble's fatal error does not end the process.
// OnDiskFailure hears of it once, writes are refused with ErrWriteFailed,
// reads go on, pebble's flush retries create no table and back off, and a
// restart on a healthy disk has every acknowledged row.
func TestManifestFailureIsDiskFailure(t *testing.T) {
	mem := vfs.NewMem()
	disk := newManifestDisk(mem, syscall.EIO, errorfs.OpFileSync)
	after, waits := fakeAfter()
	failures := make(chan error, 4)
	e, tbl, write := manifestEngine(t, disk, EngineOptions{After: after,
		OnDiskFailure: func(err error) { failures <- err }})

	disk.broken.Store(true)
	if err := e.Flush(); !errors.Is(err, ErrWriteFailed) {
		t.Fatalf("Flush with the MANIFEST's sync failing = %v, want ErrWriteFailed", err)
	}
	select {
	case err := <-failures:
		if !strings.Contains(err.Error(), "MANIFEST sync failed") {
			t.Errorf("OnDiskFailure(%v), want the MANIFEST's sync failure", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("OnDiskFailure was not called")
	}
	disk.broken.Store(false) // the disk works again, the LSM stays failed
	if err := write(e, 1000); !errors.Is(err, ErrWriteFailed) || !strings.Contains(err.Error(), "until the node restarts") {
		t.Fatalf("Apply after the MANIFEST failed = %v, want ErrWriteFailed until the restart", err)
	}
	if got := readAll(t, e, tbl, 1, ReadOptions{}); len(got) != 50 {
		t.Fatalf("read after the MANIFEST failed: %d rows, want 50", len(got))
	}
	// Pebble retries the flush: each retry waits first, longer each time,
	// and creates no table.
	var last time.Duration
	for k := 1; k <= 3; k++ {
		w := nextWait(t, waits)
		if w.d < last {
			t.Fatalf("retry %d waits %v, less than the one before (%v)", k, w.d, last)
		}
		last = w.d
		w.fire <- time.Time{}
	}
	if n := disk.creates.Load(); n > 1 {
		t.Errorf("%d tables created after the MANIFEST failed", n)
	}
	// The fourth retry waits and is never let go: a Flush must not wait
	// for a flush to fail (or succeed) once the MANIFEST failed for good.
	nextWait(t, waits)
	flushed := make(chan error, 1)
	go func() { flushed <- e.Flush() }()
	select {
	case err := <-flushed:
		if !errors.Is(err, ErrWriteFailed) {
			t.Fatalf("Flush after the MANIFEST failed = %v, want ErrWriteFailed", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Flush after the MANIFEST failed waits for a flush that cannot succeed")
	}
	e.Close()
	select {
	case err := <-failures:
		t.Errorf("OnDiskFailure called again: %v", err)
	default:
	}

	e = openEngineWith(t, EngineOptions{FS: mem, Dir: "data", Log: commitlog.Options{Dir: "commitlog", Sync: commitlog.SyncBatch}})
	defer e.Close()
	if got := readAll(t, e, tbl, 1, ReadOptions{}); len(got) != 50 {
		t.Fatalf("%d rows after a restart, want the 50 acknowledged", len(got))
	}
	if err := write(e, 1001); err != nil {
		t.Fatalf("a write after the restart: %v", err)
	}
}
