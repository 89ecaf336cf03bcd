package storage

import "github.com/cockroachdb/pebble/v2/vfs"

// WriteFileAtomic replaces the file at path with data so that a crash
// leaves either the old file or the new one, never a mix: the data goes to
// a temporary file that is synced, then renamed over path, and the
// directory is synced.
func WriteFileAtomic(fs vfs.FS, path string, data []byte) error {
	return writeFileAtomic(fs, path, data)
}

// ReadFile reads the file at path; ok is false when it does not exist.
func ReadFile(fs vfs.FS, path string) (data []byte, ok bool, err error) {
	return readFile(fs, path)
}

// MkdirAllSynced creates dir and its parents, syncing each new directory's
// parent so the directory survives a crash.
func MkdirAllSynced(fs vfs.FS, dir string) error { return mkdirAllSynced(fs, dir) }
