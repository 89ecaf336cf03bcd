package storage

import (
	"strings"
	"sync"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// Pebble retries a failed flush at once, and again as soon as that fails:
// on a full disk it would write, fail and delete a memtable's worth of
// sstable in a loop, burning a core and logging every attempt. backoffFS
// is the file system the LSM runs on: after a write of one of its tables
// fails it holds the next table's creation back, doubling the wait from
// minRetryWait to maxRetryWait while the failures go on; a table written
// and synced without an error ends the backoff. The wait happens in pebble's flush or
// compaction goroutine, outside pebble's locks, so reads and the
// memtables carry on meanwhile.
const (
	minRetryWait = 50 * time.Millisecond
	maxRetryWait = 5 * time.Second
)

type backoffFS struct {
	vfs.FS
	after func(time.Duration) <-chan time.Time
	stop  <-chan struct{} // closed when the engine closes: waits end at once

	mu       sync.Mutex
	failures int // table writes failed in a row
}

var (
	_ vfs.FS   = (*backoffFS)(nil)
	_ vfs.File = (*backoffFile)(nil)
)

func newBackoffFS(fs vfs.FS, after func(time.Duration) <-chan time.Time, stop <-chan struct{}) *backoffFS {
	if after == nil {
		after = time.After
	}
	return &backoffFS{FS: fs, after: after, stop: stop}
}

// isTable reports whether pebble's file name is an sstable or a blob file,
// the files a flush or compaction writes.
func isTable(name string) bool {
	return strings.HasSuffix(name, ".sst") || strings.HasSuffix(name, ".blob")
}

// retryWait is how long the next table waits after n failures in a row.
func retryWait(n int) time.Duration {
	if n <= 0 {
		return 0
	}
	return min(minRetryWait<<min(n-1, 16), maxRetryWait)
}

func (fs *backoffFS) Create(name string, category vfs.DiskWriteCategory) (vfs.File, error) {
	if !isTable(name) {
		return fs.FS.Create(name, category)
	}
	fs.mu.Lock()
	wait := retryWait(fs.failures)
	fs.mu.Unlock()
	if wait > 0 {
		select {
		case <-fs.after(wait):
		case <-fs.stop:
		}
	}
	f, err := fs.FS.Create(name, category)
	if err != nil {
		fs.outcome(err)
		return nil, err
	}
	return &backoffFile{File: f, fs: fs}, nil
}

// Unwrap is the wrapped FS (vfs's convention for wrapping filesystems).
func (fs *backoffFS) Unwrap() vfs.FS { return fs.FS }

// outcome counts a failed table write, or ends the backoff after a table
// was synced (err nil).
func (fs *backoffFS) outcome(err error) {
	fs.mu.Lock()
	if err != nil {
		fs.failures++
	} else {
		fs.failures = 0
	}
	fs.mu.Unlock()
}

// backoffFile is a table being written: its errors feed the backoff. Only
// the flusher or compaction writing it uses it.
type backoffFile struct {
	vfs.File
	fs  *backoffFS
	bad bool // a write or sync failed: its later syncs prove nothing
}

func (f *backoffFile) failed(err error) error {
	if err != nil {
		f.bad = true
		f.fs.outcome(err)
	}
	return err
}

// synced feeds a sync's result to the backoff: a table written and synced
// without any error ends it (pebble syncs a table it abandons too).
func (f *backoffFile) synced(err error) error {
	if err != nil || !f.bad {
		f.bad = f.bad || err != nil
		f.fs.outcome(err)
	}
	return err
}

func (f *backoffFile) Write(p []byte) (int, error) {
	n, err := f.File.Write(p)
	return n, f.failed(err)
}

func (f *backoffFile) WriteAt(p []byte, off int64) (int, error) {
	n, err := f.File.WriteAt(p, off)
	return n, f.failed(err)
}

func (f *backoffFile) Preallocate(off, length int64) error {
	return f.failed(f.File.Preallocate(off, length))
}

func (f *backoffFile) Sync() error { return f.synced(f.File.Sync()) }

func (f *backoffFile) SyncData() error { return f.synced(f.File.SyncData()) }

func (f *backoffFile) SyncTo(length int64) (bool, error) {
	full, err := f.File.SyncTo(length)
	return full, f.failed(err)
}
