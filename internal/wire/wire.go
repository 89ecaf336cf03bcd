package wire

import (
	"encoding/binary"
	"fmt"

	"github.com/cqld/cqld/storage"
)

// MaxClustering caps the values of a decoded clustering prefix.
const MaxClustering = 64

// AppendBytes appends b as a uvarint length and its bytes.
func AppendBytes(dst, b []byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(b)))
	return append(dst, b...)
}

// AppendValues appends vs as a uvarint count and each as AppendBytes.
func AppendValues(dst []byte, vs [][]byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(vs)))
	for _, v := range vs {
		dst = AppendBytes(dst, v)
	}
	return dst
}

// AppendBound appends a slice bound: 0 when open, else 1, its prefix
// (AppendValues) and 1 when inclusive, 0 when not.
func AppendBound(dst []byte, b *storage.Bound) []byte {
	if b == nil {
		return append(dst, 0)
	}
	dst = append(dst, 1)
	dst = AppendValues(dst, b.Prefix)
	return AppendBool(dst, b.Inclusive)
}

// AppendSlice appends s's start and end bounds.
func AppendSlice(dst []byte, s storage.Slice) []byte {
	return AppendBound(AppendBound(dst, s.Start), s.End)
}

// AppendBool appends 1 for true, 0 for false.
func AppendBool(dst []byte, v bool) []byte {
	if v {
		return append(dst, 1)
	}
	return append(dst, 0)
}

// Reader consumes B. Its errors wrap Base, the decoder's sentinel.
type Reader struct {
	B    []byte
	Base error
	err  error
}

// Err is the first failure, or nil.
func (r *Reader) Err() error { return r.err }

// Fail records a failure unless one is recorded already.
func (r *Reader) Fail(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: "+format, append([]any{r.Base}, args...)...)
	}
}

// SetErr records err as the failure unless one is recorded already.
func (r *Reader) SetErr(err error) {
	if r.err == nil {
		r.err = err
	}
}

// End is the decoder's result: its failure, or bytes left over.
func (r *Reader) End() error {
	if r.err == nil && len(r.B) != 0 {
		r.Fail("%d bytes after the message", len(r.B))
	}
	return r.err
}

// Next consumes n bytes; they alias B.
func (r *Reader) Next(n int) []byte {
	if r.err != nil {
		return nil
	}
	if n > len(r.B) {
		r.Fail("%d bytes wanted, %d left", n, len(r.B))
		return nil
	}
	v := r.B[:n:n]
	r.B = r.B[n:]
	return v
}

// Byte consumes one byte.
func (r *Reader) Byte() byte {
	if b := r.Next(1); b != nil {
		return b[0]
	}
	return 0
}

// Bool consumes a byte that must be 0 or 1.
func (r *Reader) Bool() bool {
	switch r.Byte() {
	case 0:
		return false
	case 1:
		return true
	}
	r.Fail("bad flag")
	return false
}

// Uint64 consumes 8 bytes, big-endian.
func (r *Reader) Uint64() uint64 {
	if b := r.Next(8); b != nil {
		return binary.BigEndian.Uint64(b)
	}
	return 0
}

// Uvarint consumes a minimal uvarint of at most max.
func (r *Reader) Uvarint(max int) int {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.B)
	if n <= 0 || n > 1 && r.B[n-1] == 0 {
		r.Fail("bad varint")
		return 0
	}
	if v > uint64(max) {
		r.Fail("count %d over %d", v, max)
		return 0
	}
	r.B = r.B[n:]
	return int(v)
}

// Bytes consumes a byte string, nil when empty; it aliases B.
func (r *Reader) Bytes() []byte {
	n := r.Uvarint(len(r.B))
	if n == 0 {
		return nil
	}
	return r.Next(n)
}

// Values consumes a clustering prefix: nil when it has no values, each
// value non-nil.
func (r *Reader) Values() [][]byte {
	// A value takes at least one byte.
	n := r.Uvarint(min(MaxClustering, len(r.B)))
	if n == 0 || r.err != nil {
		return nil
	}
	vs := make([][]byte, 0, n)
	for i := 0; i < n && r.err == nil; i++ {
		v := r.Bytes()
		if v == nil {
			v = []byte{}
		}
		vs = append(vs, v)
	}
	return vs
}

// Bound consumes a slice bound, nil when open.
func (r *Reader) Bound() *storage.Bound {
	switch r.Byte() {
	case 0:
		return nil
	case 1:
		b := &storage.Bound{Prefix: r.Values()}
		b.Inclusive = r.Bool()
		return b
	}
	r.Fail("bad bound flag")
	return nil
}

// Slice consumes a slice's start and end bounds.
func (r *Reader) Slice() storage.Slice {
	return storage.Slice{Start: r.Bound(), End: r.Bound()}
}
