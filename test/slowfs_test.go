package test

import (
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// slowFS simulates a disk whose every fsync takes lat: each file it hands
// out sleeps lat in Sync, SyncData and SyncTo before delegating. Everything
// else, reads and writes included, goes straight to the wrapped FS.
type slowFS struct {
	vfs.FS
	lat time.Duration
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
	return &slowFile{File: f, lat: s.lat}, nil
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

// slowFile is a vfs.File whose syncs take lat longer; the embedded File
// supplies every other method.
type slowFile struct {
	vfs.File
	lat time.Duration
}

func (f *slowFile) Sync() error {
	time.Sleep(f.lat)
	return f.File.Sync()
}

func (f *slowFile) SyncData() error {
	time.Sleep(f.lat)
	return f.File.SyncData()
}

func (f *slowFile) SyncTo(length int64) (bool, error) {
	time.Sleep(f.lat)
	return f.File.SyncTo(length)
}

var (
	_ vfs.FS   = (*slowFS)(nil)
	_ vfs.File = (*slowFile)(nil)
)
