package hints

import (
	"bytes"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
)

func seedRecords() [][]byte {
	created := time.UnixMicro(1_700_000_000_000_000)
	return [][]byte{
		appendRecord(nil, kindHint, 0, created, []byte("a mutation")),
		appendRecord(nil, kindHint, 48, created, nil),
		appendRecord(nil, kindEnd, 48, time.Time{}, nil),
		appendRecord(appendRecord(nil, kindHint, 0, created, []byte("x")), kindHint, 0, created, []byte("yz")),
		make([]byte, recordHeaderSize),
	}
}

// FuzzDecodeRecord: the record decoder never panics, never reads past what
// it is given, and what it accepts is exactly what appendRecord writes.
func FuzzDecodeRecord(f *testing.F) {
	for _, r := range seedRecords() {
		f.Add(r, int64(48))
	}
	f.Fuzz(func(t *testing.T, b []byte, off int64) {
		if off < 0 {
			off = -off
		}
		h, payload, err := decodeRecord(b, off)
		if err != nil {
			return
		}
		var created time.Time
		if h.kind == kindHint {
			created = time.UnixMicro(h.created)
		}
		again := appendRecord(nil, h.kind, int64(h.synced), created, payload)
		if !bytes.Equal(again[:recordHeaderSize+len(payload)], b[:recordHeaderSize+len(payload)]) {
			t.Fatalf("decoded %+v from %x, which encodes as %x", h, b, again)
		}
	})
}

// FuzzDispatchFile: any bytes as a hints file are delivered, cut or
// quarantined, never a panic or an unbounded allocation.
func FuzzDispatchFile(f *testing.F) {
	id := host(1)
	header := appendFileHeader(nil, fileHeader{target: id, created: 5})
	for _, r := range seedRecords() {
		f.Add(append(append([]byte(nil), header...), r...))
	}
	f.Add(header[:20])
	f.Fuzz(func(t *testing.T, b []byte) {
		e := newEnv(t)
		name := fileName(id, 5)
		if err := e.fs.MkdirAll(e.dir, 0o755); err != nil {
			t.Fatal(err)
		}
		file, err := e.fs.Create(e.fs.PathJoin(e.dir, name), vfs.WriteCategoryUnspecified)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := file.Write(b); err != nil {
			t.Fatal(err)
		}
		file.Close()
		s := e.open()
		defer closeStore(t, s)
		s.dispatchRound(s.ctx)
		if p := s.Pending(id); p != (Pending{}) {
			t.Fatalf("file still pending after dispatch: %+v", p)
		}
	})
}
