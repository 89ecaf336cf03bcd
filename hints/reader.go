package hints

import (
	"errors"
	"fmt"
	"io"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// badRecordError is a record (or a file header, at offset 0) that does not
// decode. Whether it is a torn tail or damage is for vouched to tell.
type badRecordError struct {
	offset int64
	reason error
}

func (e *badRecordError) Error() string {
	return fmt.Sprintf("bad record at offset %d: %v", e.offset, e.reason)
}

func (e *badRecordError) Unwrap() error { return e.reason }

// fileReader reads the records of one hints file in order. It holds one
// record's payload at a time.
type fileReader struct {
	f    vfs.File
	path string
	size int64
	hdr  [recordHeaderSize]byte
}

func openReader(fs vfs.FS, path string) (*fileReader, error) {
	f, err := fs.Open(path)
	if err != nil {
		return nil, fmt.Errorf("hints: opening %s: %w", path, err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("hints: stat %s: %w", path, err)
	}
	return &fileReader{f: f, path: path, size: st.Size()}, nil
}

func (r *fileReader) close() { r.f.Close() }

// readAt fills b from off; the bytes are known to be in the file.
func (r *fileReader) readAt(b []byte, off int64) error {
	if _, err := r.f.ReadAt(b, off); err != nil && !(errors.Is(err, io.EOF) && off+int64(len(b)) <= r.size) {
		return fmt.Errorf("hints: reading %s at offset %d: %w", r.path, off, err)
	}
	return nil
}

// header decodes the file header.
func (r *fileReader) header() (fileHeader, error) {
	b := make([]byte, min(fileHeaderSize, r.size))
	if err := r.readAt(b, 0); err != nil {
		return fileHeader{}, err
	}
	h, err := decodeFileHeader(b)
	if err != nil {
		return h, &badRecordError{offset: 0, reason: err}
	}
	return h, nil
}

// read returns the record at off and its payload (a new slice). A record
// that does not decode is a *badRecordError; any other error is I/O.
func (r *fileReader) read(off int64) (recordHeader, []byte, error) {
	remaining := r.size - off
	b := r.hdr[:min(recordHeaderSize, remaining)]
	if err := r.readAt(b, off); err != nil {
		return recordHeader{}, nil, err
	}
	h, err := decodeRecordHeader(b, off, remaining)
	if err != nil {
		return h, nil, &badRecordError{offset: off, reason: err}
	}
	payload := make([]byte, h.length)
	if err := r.readAt(payload, off+recordHeaderSize); err != nil {
		return h, nil, err
	}
	if err := checkPayload(h, payload); err != nil {
		return h, nil, &badRecordError{offset: off, reason: err}
	}
	return h, payload, nil
}

// vouched reports whether a valid record after off claims (its synced
// field) that the file had been synced past off: then the bytes at off were
// durable and are damaged. Otherwise they are a tail a crash tore.
func (r *fileReader) vouched(off int64) (bool, error) {
	buf := make([]byte, 64<<10)
	for base := alignUp(off + 1); base+recordHeaderSize <= r.size; {
		n := min(int64(len(buf)), r.size-base)
		if err := r.readAt(buf[:n], base); err != nil {
			return false, err
		}
		var i int64
		for ; i+recordHeaderSize <= n; i += recordAlign {
			h, err := decodeRecordHeader(buf[i:n], base+i, r.size-base-i)
			if err != nil || int64(h.synced) <= off {
				continue
			}
			if _, _, err := r.read(base + i); err == nil {
				return true, nil
			} else if !isBadRecord(err) {
				return false, err
			}
		}
		base += i
	}
	return false, nil
}

func isBadRecord(err error) bool {
	var bad *badRecordError
	return errors.As(err, &bad)
}
