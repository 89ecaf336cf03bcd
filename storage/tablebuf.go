package storage

import (
	"errors"
	"sync"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// A table file gathers pebble's writes into tableBufSize before it hands
// them to the file: pebble writes a table a block at a time through a
// 4 KiB bufio.Writer, one system call per block, and under a sustained
// ingest flushes and compactions spent much of the node's CPU in those
// calls (docs/benchmarks/pebble-options.md). Every call that observes the
// file (a sync, a stat, a read, a close) first gives it what is held.
const tableBufSize = 256 << 10

var errTableClosed = errors.New("storage: write to a closed table file")

var tableBufs = sync.Pool{New: func() any {
	b := make([]byte, 0, tableBufSize)
	return &b
}}

func (f *backoffFile) Write(p []byte) (int, error) {
	b := f.buf
	if b == nil {
		return 0, errTableClosed
	}
	if f.werr != nil {
		return 0, f.werr
	}
	if len(*b)+len(p) > cap(*b) {
		if err := f.flush(); err != nil {
			return 0, err
		}
	}
	if len(p) >= cap(*b) {
		n, err := f.File.Write(p)
		if err != nil {
			f.werr = f.failed(err)
		}
		return n, err
	}
	*b = append(*b, p...)
	return len(p), nil
}

// flush gives the file what the buffer holds. A failed write breaks the
// table: what is held is dropped, and every later call gets the error,
// counted once.
func (f *backoffFile) flush() error {
	if f.werr != nil {
		return f.werr
	}
	b := f.buf
	if b == nil || len(*b) == 0 {
		return nil
	}
	_, err := f.File.Write(*b)
	*b = (*b)[:0]
	if err != nil {
		f.werr = f.failed(err)
	}
	return err
}

func (f *backoffFile) ReadAt(p []byte, off int64) (int, error) {
	if err := f.flush(); err != nil {
		return 0, err
	}
	return f.File.ReadAt(p, off)
}

func (f *backoffFile) Stat() (vfs.FileInfo, error) {
	if err := f.flush(); err != nil {
		return nil, err
	}
	return f.File.Stat()
}

func (f *backoffFile) Close() error {
	err := f.flush()
	if b := f.buf; b != nil {
		f.buf = nil
		*b = (*b)[:0]
		tableBufs.Put(b)
	}
	if cerr := f.File.Close(); err == nil {
		err = cerr
	}
	return err
}
