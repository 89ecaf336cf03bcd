package replica

import (
	"bytes"
	"context"
	"math/rand/v2"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/cqld/cqld/mutation"
	"github.com/cqld/cqld/storage"
)

// samplePartitions are real partitions of testTable, of every kind of key.
func samplePartitions(t testing.TB) (*storage.Table, []*storage.Partition) {
	l := openLocalOn(t, vfs.NewMem(), "data", "periodic")
	tbl := testTable(t, [16]byte{9})
	rng := rand.New(rand.NewPCG(1, 1))
	m := mutation.New()
	defer m.Release()
	for k := range 3 {
		for range 20 {
			randomOp(rng, m, tbl, i32(k))
		}
	}
	if err := l.Apply(context.Background(), m, nil); err != nil {
		t.Fatal(err)
	}
	ps, _, err := l.ReadRange(context.Background(), tbl, RangeCommand{Range: storage.TokenRange{Start: 0, End: 0}})
	if err != nil {
		t.Fatal(err)
	}
	return tbl, ps
}

func FuzzDecodeReadCommand(f *testing.F) {
	f.Add(AppendReadCommand(nil, &ReadCommand{Table: [16]byte{9}, Key: i32(1)}))
	f.Add(AppendReadCommand(nil, &ReadCommand{Table: [16]byte{9}, Key: i32(1), Digest: true, Slice: storage.Slice{
		Start: &storage.Bound{Prefix: [][]byte{i32(1), {}}, Inclusive: true}, End: &storage.Bound{Prefix: [][]byte{i32(2)}},
	}}))
	f.Add([]byte{codecV1})
	f.Fuzz(func(t *testing.T, in []byte) {
		c, err := DecodeReadCommand(in)
		if err != nil {
			return
		}
		if out := AppendReadCommand(nil, c); !bytes.Equal(out, in) {
			t.Fatalf("decoded %x, encodes as %x", in, out)
		}
	})
}

func FuzzDecodeRangeRequest(f *testing.F) {
	f.Add(appendRangeRequest(nil, &rangeRequest{Table: [16]byte{9}, RangeCommand: RangeCommand{Range: storage.TokenRange{Start: -5, End: 7}}}))
	f.Add(appendRangeRequest(nil, &rangeRequest{Table: [16]byte{9}, RangeCommand: RangeCommand{
		Range: storage.TokenRange{Start: 7, End: -5}, After: i32(3), MaxPartitions: 100, MaxBytes: 1 << 20,
		Index: &storage.IndexQuery{Name: "v_idx", Value: []byte("hit")},
		Slice: storage.Slice{End: &storage.Bound{Prefix: [][]byte{i32(2)}, Inclusive: true}},
	}}))
	f.Fuzz(func(t *testing.T, in []byte) {
		c, err := decodeRangeRequest(in)
		if err != nil {
			return
		}
		if out := appendRangeRequest(nil, c); !bytes.Equal(out, in) {
			t.Fatalf("decoded %x, encodes as %x", in, out)
		}
	})
}

func FuzzDecodePartitions(f *testing.F) {
	tbl, ps := samplePartitions(f)
	f.Add(AppendPartitions(nil, ps, true))
	f.Add(AppendPartitions(nil, nil, false))
	for _, p := range ps {
		f.Add(AppendPartition(nil, p))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		// One input, both decoders: a page, and a single partition.
		if ps, more, err := DecodePartitions(in, tbl); err == nil {
			if out := AppendPartitions(nil, ps, more); !bytes.Equal(out, in) {
				t.Fatalf("page %x encodes as %x", in, out)
			}
			for _, p := range ps {
				resolve(t, tbl, p)
			}
		}
		if p, err := DecodePartition(in, tbl); err == nil {
			if out := AppendPartition(nil, p); !bytes.Equal(out, in) {
				t.Fatalf("partition %x encodes as %x", in, out)
			}
			resolve(t, tbl, p)
		}
	})
}

// resolve runs what a coordinator does with a decoded partition: it must
// not panic, and its keys must make writes again.
func resolve(t *testing.T, tbl *storage.Table, p *storage.Partition) {
	_ = tbl.Resolve(p, storage.ReadOptions{Now: 1}, func(*storage.Row) bool { return true })
	_, _ = storage.ReconcilePartitions(p, p)
	m := mutation.New()
	defer m.Release()
	if err := m.Repair(tbl, p, nil); err != nil {
		t.Fatalf("a checked partition makes no repair: %v", err)
	}
}

func FuzzDecodeMutation(f *testing.F) {
	tbl := testTable(f, [16]byte{9})
	m := mutation.New()
	rng := rand.New(rand.NewPCG(2, 2))
	for range 30 {
		randomOp(rng, m, tbl, i32(rng.IntN(3)))
	}
	m.AddCounter(tbl, i32(1), storage.CellTarget{Clustering: [][]byte{i32(0)}, Column: "n"}, 3, 1)
	b, err := appendMutation(nil, m)
	if err != nil {
		f.Fatal(err)
	}
	m.Release()
	f.Add(b)
	f.Add(b[:len(b)/2])
	lookup := func(id [16]byte) (*storage.Table, bool) { return tbl, id == tbl.Def.ID }
	f.Fuzz(func(t *testing.T, in []byte) {
		m, err := decodeMutation(in, lookup)
		if err != nil {
			return
		}
		defer m.Release()
		if _, err := appendMutation(nil, m); err != nil {
			t.Fatalf("re-encoding a decoded mutation: %v", err)
		}
	})
}
