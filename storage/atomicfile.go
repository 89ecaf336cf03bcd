package storage

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// writeFileAtomic replaces path with data so that after a crash the file
// holds either its old contents or data.
func writeFileAtomic(fs vfs.FS, path string, data []byte) error {
	tmp := path + ".tmp"
	f, err := fs.Create(tmp, vfs.WriteCategoryUnspecified)
	if err != nil {
		return fmt.Errorf("storage: create %s: %w", tmp, err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("storage: write %s: %w", tmp, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("storage: sync %s: %w", tmp, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("storage: close %s: %w", tmp, err)
	}
	if err := fs.Rename(tmp, path); err != nil {
		return fmt.Errorf("storage: rename %s: %w", tmp, err)
	}
	d, err := fs.OpenDir(filepath.Dir(path))
	if err != nil {
		return fmt.Errorf("storage: open dir of %s: %w", path, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("storage: sync dir of %s: %w", path, err)
	}
	return nil
}

// readFile returns the contents of path, or ok=false when it does not exist.
func readFile(fs vfs.FS, path string) (data []byte, ok bool, err error) {
	if _, err := fs.Stat(path); err != nil {
		if isNotExist(err) {
			return nil, false, nil
		}
		return nil, false, fmt.Errorf("storage: stat %s: %w", path, err)
	}
	f, err := fs.Open(path)
	if err != nil {
		return nil, false, fmt.Errorf("storage: open %s: %w", path, err)
	}
	defer f.Close()
	data, err = io.ReadAll(f)
	if err != nil {
		return nil, false, fmt.Errorf("storage: read %s: %w", path, err)
	}
	return data, true, nil
}

// mkdirAllSynced creates dir and its parents and syncs each parent, so the
// new directories survive a crash.
func mkdirAllSynced(fs vfs.FS, dir string) error {
	dir = filepath.Clean(dir)
	if _, err := fs.Stat(dir); err == nil {
		return nil
	}
	parent := filepath.Dir(dir)
	if parent != dir {
		if err := mkdirAllSynced(fs, parent); err != nil {
			return err
		}
	}
	if err := fs.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("storage: create %s: %w", dir, err)
	}
	d, err := fs.OpenDir(parent)
	if err != nil {
		return fmt.Errorf("storage: open %s: %w", parent, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("storage: sync %s: %w", parent, err)
	}
	return nil
}

// WriteFileAtomic is writeFileAtomic for the small state files of other
// packages (auth's roles).
func WriteFileAtomic(fs vfs.FS, path string, data []byte) error {
	return writeFileAtomic(fs, path, data)
}

// ReadFileIfExists is readFile for other packages.
func ReadFileIfExists(fs vfs.FS, path string) (data []byte, ok bool, err error) {
	return readFile(fs, path)
}

// MkdirAllSynced is mkdirAllSynced for other packages.
func MkdirAllSynced(fs vfs.FS, dir string) error { return mkdirAllSynced(fs, dir) }
