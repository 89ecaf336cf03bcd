package storage

import (
	"bytes"
	"errors"
	"io"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"
)

type noHealth struct{}

func (noHealth) stall(error) {}
func (noHealth) unstall()    {}

// A table file holds pebble's small writes and hands them to the disk in
// large ones, yet whatever looks at the file (a stat, a sync, a read, the
// close) sees every byte written before it, in order.
func TestTableWritesGathered(t *testing.T) {
	dir := t.TempDir()
	fs := newBackoffFS(vfs.Default, time.After, nil, noHealth{})
	name := filepath.Join(dir, "000001.sst")
	f, err := fs.Create(name, vfs.WriteCategoryUnspecified)
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	write := func(n int) {
		t.Helper()
		p := bytes.Repeat([]byte{byte(want.Len())}, n)
		want.Write(p)
		if m, err := f.Write(p); err != nil || m != n {
			t.Fatalf("write %d: %d, %v", n, m, err)
		}
	}
	onDisk := func() int64 {
		t.Helper()
		st, err := vfs.Default.Stat(name)
		if err != nil {
			t.Fatal(err)
		}
		return st.Size()
	}
	for range 10 {
		write(4 << 10)
	}
	if n := onDisk(); n != 0 {
		t.Fatalf("%d bytes on disk after ten 4 KiB writes, want them held", n)
	}
	if st, err := f.Stat(); err != nil || st.Size() != int64(want.Len()) {
		t.Fatalf("Stat: %v, %v; want %d bytes", st, err, want.Len())
	}
	write(100)
	if _, err := f.SyncTo(int64(want.Len())); err != nil {
		t.Fatal(err)
	}
	if n := onDisk(); n != int64(want.Len()) {
		t.Fatalf("%d bytes on disk after SyncTo, want %d", n, want.Len())
	}
	write(3 * tableBufSize) // larger than the buffer: straight through
	write(7)
	got := make([]byte, want.Len())
	if _, err := f.ReadAt(got, 0); err != nil && err != io.EOF {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want.Bytes()) {
		t.Fatal("ReadAt does not see what was written")
	}
	write(1000)
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte{1}); err == nil {
		t.Fatal("a write after Close succeeded")
	}
	disk, err := vfs.Default.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer disk.Close()
	all, err := io.ReadAll(disk)
	if err != nil || !bytes.Equal(all, want.Bytes()) {
		t.Fatalf("file after Close: %d bytes, %v; want the %d written", len(all), err, want.Len())
	}
}

// A table whose write failed stays broken: every later call, a write that
// would only be held included, gets the error.
func TestTableWriteFailureSticks(t *testing.T) {
	var fail atomic.Bool
	disk := errorfs.Wrap(vfs.NewMem(), errorfs.InjectorFunc(func(op errorfs.Op) error {
		if fail.Load() && op.Kind == errorfs.OpFileWrite {
			return syscall.ENOSPC
		}
		return nil
	}))
	fs := newBackoffFS(disk, time.After, nil, noHealth{})
	f, err := fs.Create("000001.sst", vfs.WriteCategoryUnspecified)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fail.Store(true)
	if _, err := f.Write(make([]byte, 2*tableBufSize)); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("a write past the buffer: %v, want ENOSPC", err)
	}
	fail.Store(false)
	if _, err := f.Write([]byte("held")); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("a small write after the failure: %v, want ENOSPC", err)
	}
	if err := f.Sync(); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("Sync after the failure: %v, want ENOSPC", err)
	}
}
