package test

import (
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// slowFS simulates a disk whose every fsync takes lat: each file it hands
// out sleeps lat in Sync, SyncData and SyncTo before delegating, or, with
// skip, instead of delegating (the sync then costs only the sleep).
// Everything else, reads and writes included, goes straight to the wrapped
// FS. stall, in nanoseconds, is more latency, changeable while it runs.
type slowFS struct {
	vfs.FS
	lat   time.Duration
	skip  bool
	stall atomic.Int64
}

// newSlowFS wraps fs (vfs.Default when nil) so every fsync takes lat more.
func newSlowFS(fs vfs.FS, lat time.Duration) *slowFS {
	if fs == nil {
		fs = vfs.Default
	}
	return &slowFS{FS: fs, lat: lat}
}

func (s *slowFS) wrap(f vfs.File, err error) (vfs.File, error) {
	if err != nil {
		return f, err
	}
	return &slowFile{File: f, lat: s.lat, skip: s.skip, stall: &s.stall}, nil
}

func (s *slowFS) Create(name string, category vfs.DiskWriteCategory) (vfs.File, error) {
	return s.wrap(s.FS.Create(name, category))
}

func (s *slowFS) Open(name string, opts ...vfs.OpenOption) (vfs.File, error) {
	return s.wrap(s.FS.Open(name, opts...))
}

func (s *slowFS) OpenReadWrite(name string, category vfs.DiskWriteCategory, opts ...vfs.OpenOption) (vfs.File, error) {
	return s.wrap(s.FS.OpenReadWrite(name, category, opts...))
}

func (s *slowFS) OpenDir(name string) (vfs.File, error) {
	return s.wrap(s.FS.OpenDir(name))
}

func (s *slowFS) ReuseForWrite(oldname, newname string, category vfs.DiskWriteCategory) (vfs.File, error) {
	return s.wrap(s.FS.ReuseForWrite(oldname, newname, category))
}

// Unwrap is the wrapped FS (vfs's convention for wrapping filesystems).
func (s *slowFS) Unwrap() vfs.FS { return s.FS }

// slowFile is a vfs.File whose syncs take lat longer, or only lat with
// skip; the embedded File supplies every other method.
type slowFile struct {
	vfs.File
	lat   time.Duration
	skip  bool
	stall *atomic.Int64
}

func (f *slowFile) Sync() error {
	if f.wait() {
		return nil
	}
	return f.File.Sync()
}

func (f *slowFile) SyncData() error {
	if f.wait() {
		return nil
	}
	return f.File.SyncData()
}

func (f *slowFile) SyncTo(length int64) (bool, error) {
	if f.wait() {
		return true, nil
	}
	return f.File.SyncTo(length)
}

// wait sleeps the added latency and says whether the sync itself is
// skipped.
func (f *slowFile) wait() (skip bool) {
	if lat := f.lat + time.Duration(f.stall.Load()); lat > 0 {
		time.Sleep(lat)
	}
	return f.skip
}

var (
	_ vfs.FS   = (*slowFS)(nil)
	_ vfs.File = (*slowFile)(nil)
)
