package storage

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// Pebble retries a failed flush at once, and again as soon as that fails:
// on a full disk it would write, fail and delete a memtable's worth of
// sstable in a loop, burning a core and logging every attempt. backoffFS
// is the file system the LSM runs on: after a write of one of its tables
// fails it holds the next table's creation back, doubling the wait from
// minRetryWait to maxRetryWait while the failures go on; a table written
// and synced without an error ends the backoff. The wait happens in
// pebble's flush or compaction goroutine, outside pebble's locks, so reads
// and the memtables carry on meanwhile.
//
// It also keeps a full disk from failing the LSM's MANIFEST, which pebble
// cannot survive (lsmfailure.go): once the LSM is open (metaRetry), a write
// or creation of a file other than a table that fails because the disk is
// full waits and tries again, backing off the same way, until it goes
// through or the engine closes. Pebble holds its MANIFEST lock meanwhile:
// no flush or compaction completes, reads go on, and writes are refused
// (flushState.stall) so they do not fill the memtables. A failed sync is
// not retried: after one, the kernel may have dropped the data it did not
// write, and a second sync would report success.
//
// Once the MANIFEST failed for good (failed), no table is created (each
// attempt fails after the backoff, so pebble's retries neither spin nor
// write) and none is removed: the failed MANIFEST record may or may not
// have reached the disk, and a restart must find the tables it names.
const (
	minRetryWait = 50 * time.Millisecond
	maxRetryWait = 5 * time.Second
)

type backoffFS struct {
	vfs.FS
	after  func(time.Duration) <-chan time.Time
	stop   <-chan struct{} // closed when the engine closes: waits end at once
	health lsmHealth

	metaRetry atomic.Bool
	failed    atomic.Bool

	mu       sync.Mutex
	failures int // table writes failed in a row
}

// lsmHealth hears of MANIFEST writes waiting for room (flushState).
type lsmHealth interface {
	stall(err error)
	unstall()
}

var (
	_ vfs.FS    = (*backoffFS)(nil)
	_ vfs.File  = (*backoffFile)(nil)
	_ vfs.File  = (*metaFile)(nil)
	_ lsmHealth = (*flushState)(nil)
)

// errLSMFailed is what creating a table answers once the MANIFEST failed.
var errLSMFailed = errors.New("storage: the LSM's MANIFEST failed; no table is written until the node restarts")

func newBackoffFS(fs vfs.FS, after func(time.Duration) <-chan time.Time, stop <-chan struct{}, health lsmHealth) *backoffFS {
	if after == nil {
		after = time.After
	}
	return &backoffFS{FS: fs, after: after, stop: stop, health: health}
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
		var f vfs.File
		err := fs.retry("create "+name, func() (err error) {
			f, err = fs.FS.Create(name, category)
			return err
		})
		if err != nil {
			return nil, err
		}
		return &metaFile{File: f, fs: fs, name: name}, nil
	}
	fs.mu.Lock()
	wait := retryWait(fs.failures)
	fs.mu.Unlock()
	if wait > 0 {
		fs.sleep(wait)
	}
	if fs.failed.Load() {
		fs.outcome(errLSMFailed)
		return nil, errLSMFailed
	}
	f, err := fs.FS.Create(name, category)
	if err != nil {
		fs.outcome(err)
		return nil, err
	}
	return &backoffFile{File: f, fs: fs, buf: tableBufs.Get().(*[]byte)}, nil
}

// Remove removes name, except a table once the MANIFEST failed.
func (fs *backoffFS) Remove(name string) error {
	if fs.failed.Load() && isTable(name) {
		return nil
	}
	return fs.FS.Remove(name)
}

// isDiskFull reports whether err says the disk (or the user's quota) is
// full: what waiting may cure.
func isDiskFull(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT)
}

// retry runs op until it does not fail for want of space, waiting between
// attempts as flush retries do; the engine's close ends the waits, op's
// error standing.
func (fs *backoffFS) retry(what string, op func() error) error {
	err := op()
	for n := 1; isDiskFull(err) && fs.metaRetry.Load(); n++ {
		if n == 1 {
			fs.health.stall(fmt.Errorf("%s: %w", what, err))
			defer fs.health.unstall()
		}
		if !fs.sleep(retryWait(n)) {
			return err
		}
		err = op()
	}
	return err
}

// sleep waits for d, or less once the engine closes; it reports whether it
// waited the whole time. A closing engine asks the clock nothing.
func (fs *backoffFS) sleep(d time.Duration) bool {
	select {
	case <-fs.stop:
		return false
	default:
	}
	select {
	case <-fs.after(d):
		return true
	case <-fs.stop:
		return false
	}
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
	// buf holds what pebble wrote and the file has not been given yet,
	// werr the write that broke the table (tablebuf.go).
	buf  *[]byte
	werr error
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

func (f *backoffFile) WriteAt(p []byte, off int64) (int, error) {
	if err := f.flush(); err != nil {
		return 0, err
	}
	n, err := f.File.WriteAt(p, off)
	return n, f.failed(err)
}

func (f *backoffFile) Preallocate(off, length int64) error {
	return f.failed(f.File.Preallocate(off, length))
}

func (f *backoffFile) Sync() error {
	if err := f.flush(); err != nil {
		return err
	}
	return f.synced(f.File.Sync())
}

func (f *backoffFile) SyncData() error {
	if err := f.flush(); err != nil {
		return err
	}
	return f.synced(f.File.SyncData())
}

func (f *backoffFile) SyncTo(length int64) (bool, error) {
	if err := f.flush(); err != nil {
		return false, err
	}
	full, err := f.File.SyncTo(length)
	return full, f.failed(err)
}

// metaFile is one of the LSM's files other than a table (its MANIFEST): a
// write that finds the disk full waits and goes on with what was not
// written. Only the goroutine holding pebble's MANIFEST lock writes it.
type metaFile struct {
	vfs.File
	fs   *backoffFS
	name string
}

func (f *metaFile) Write(p []byte) (int, error) {
	n := 0
	err := f.fs.retry("write "+f.name, func() error {
		m, err := f.File.Write(p[n:])
		n += m
		return err
	})
	return n, err
}
