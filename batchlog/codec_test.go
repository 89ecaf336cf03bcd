package batchlog

import (
	"bytes"
	"testing"
	"time"

	"github.com/cqld/cqld/storage"
)

// A batch decodes to the Updates encoded, less those of tables the
// decoder does not know (dropped since), which it counts.
func TestBatchRoundTrip(t *testing.T) {
	t1, t2 := testTable(t, 1), testTable(t, 2)
	b, err := Encode(batchOf("x", []*storage.Table{t1, t2}, 1, 2))
	if err != nil {
		t.Fatal(err)
	}
	both := func(id [16]byte) (*storage.Table, bool) {
		switch id {
		case t1.Def.ID:
			return t1, true
		case t2.Def.ID:
			return t2, true
		}
		return nil, false
	}
	m, skipped, err := Decode(b, both)
	if err != nil || skipped != 0 || len(m.Updates) != 4 {
		t.Fatalf("%d updates, %d skipped, %v", len(m.Updates), skipped, err)
	}
	again, err := Encode(m)
	if err != nil || !bytes.Equal(again, b) {
		t.Fatalf("re-encoded differently: %v", err)
	}
	m, skipped, err = Decode(b, func(id [16]byte) (*storage.Table, bool) {
		if id == t1.Def.ID {
			return t1, true
		}
		return nil, false
	})
	if err != nil || skipped != 2 || len(m.Updates) != 2 || m.Updates[0].Table != t1 {
		t.Fatalf("with t2 dropped: %d updates, %d skipped, %v", len(m.Updates), skipped, err)
	}
	if _, _, err := Decode(b[:len(b)-1], both); err == nil {
		t.Fatal("a truncated batch decodes")
	}
	id := NewID(time.UnixMicro(1234567), func() uint64 { return 42 })
	if !id.Time().Equal(time.UnixMicro(1234567)) {
		t.Fatalf("id time %v", id.Time())
	}
}

func FuzzDecodeBatch(f *testing.F) {
	t1 := testTable(f, 1)
	b, err := Encode(batchOf("seed", []*storage.Table{t1}, 1, 2, 3))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add([]byte{codecV1, 0})
	f.Add([]byte{codecV1, 200, 200, 200, 1})
	tables := func(id [16]byte) (*storage.Table, bool) { return t1, id == t1.Def.ID }
	f.Fuzz(func(t *testing.T, in []byte) {
		m, _, err := Decode(in, tables)
		if err != nil {
			return
		}
		if _, err := Encode(m); err != nil {
			t.Fatalf("decoded batch does not encode: %v", err)
		}
	})
}

func FuzzDecodeStore(f *testing.F) {
	id := NewID(time.UnixMicro(99), func() uint64 { return 7 })
	f.Add(appendStore(nil, id, []byte{codecV1, 0}))
	f.Add(appendRemove(nil, id))
	f.Add([]byte{codecV1})
	f.Fuzz(func(t *testing.T, in []byte) {
		if id, batch, err := decodeStore(in); err == nil {
			if out := appendStore(nil, id, batch); !bytes.Equal(out, in) {
				t.Fatalf("store %x re-encodes as %x", in, out)
			}
		}
		if id, err := decodeRemove(in); err == nil {
			if out := appendRemove(nil, id); !bytes.Equal(out, in) {
				t.Fatalf("remove %x re-encodes as %x", in, out)
			}
		}
	})
}
