package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"

	"github.com/cqld/cqld/storage"
)

var errTest = errors.New("test: bad")

func TestSliceRoundTrip(t *testing.T) {
	s := storage.Slice{Start: &storage.Bound{Prefix: [][]byte{{1}, {}}, Inclusive: true}, End: &storage.Bound{}}
	b := AppendSlice([]byte("x"), s)[1:]
	r := Reader{B: b, Base: errTest}
	got := r.Slice()
	if err := r.End(); err != nil {
		t.Fatal(err)
	}
	if out := AppendSlice(nil, got); !bytes.Equal(out, b) || !got.Start.Inclusive || len(got.Start.Prefix) != 2 || got.End.Inclusive {
		t.Fatalf("slice decoded as %+v", got)
	}
	for n := range len(b) {
		r := Reader{B: b[:n], Base: errTest}
		r.Slice()
		if err := r.End(); !errors.Is(err, errTest) {
			t.Fatalf("truncated to %d bytes: %v", n, err)
		}
	}
	// Non-minimal varints and flags other than 0 and 1 are refused.
	for _, in := range [][]byte{{1, 0x80, 0x00, 0, 0}, {2, 0}, {1, 0, 2, 0}} {
		r := Reader{B: in, Base: errTest}
		r.Slice()
		if err := r.End(); !errors.Is(err, errTest) {
			t.Fatalf("%x decoded: %v", in, err)
		}
	}
}

func FuzzReader(f *testing.F) {
	f.Add(AppendSlice(AppendBytes(nil, []byte("key")), storage.Slice{Start: &storage.Bound{Prefix: [][]byte{{1}}}}))
	f.Add([]byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01})
	f.Fuzz(func(t *testing.T, in []byte) {
		r := Reader{B: in, Base: errTest}
		k := r.Bytes()
		s := r.Slice()
		n := r.Uvarint(1 << 20)
		if r.Err() != nil {
			return
		}
		out := binary.AppendUvarint(AppendSlice(AppendBytes(nil, k), s), uint64(n))
		if !bytes.Equal(out, in[:len(in)-len(r.B)]) {
			t.Fatalf("%x encodes again as %x", in, out)
		}
	})
}
