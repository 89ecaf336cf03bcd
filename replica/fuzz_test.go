package replica

import (
	"bytes"
	"context"
	"errors"
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

// samplePromises are promises of every shape, of samplePartitions' table.
func samplePromises(t testing.TB) (*storage.Table, []*Promise) {
	tbl, ps := samplePartitions(t)
	pk := ps[0].Key
	u := func(v string) *mutation.Update {
		m := &mutation.Mutation{}
		m.WriteCell(tbl, pk, storage.CellTarget{Clustering: [][]byte{i32(0)}, Column: "v"}, storage.Cell{Timestamp: 5, Value: []byte(v)})
		m.DeleteRow(tbl, pk, [][]byte{i32(1)}, storage.Cell{Timestamp: 4, Tombstone: true, LocalDeletionTime: 9})
		return m.Updates[0]
	}
	return tbl, []*Promise{
		{Ballot: ballotAt(7, 1)},
		{OK: true, Ballot: ballotAt(8, 1)},
		{OK: true, Ballot: ballotAt(9, 1), Accepted: Proposal{Ballot: ballotAt(6, 2), Update: u("a")},
			Committed: Proposal{Ballot: ballotAt(5, 2), Update: u("c")}, Data: ps[0]},
	}
}

func FuzzDecodePromise(f *testing.F) {
	tbl, prs := samplePromises(f)
	pk := prs[2].Data.Key
	for _, pr := range prs {
		b, err := appendPromise(nil, pr)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		pr, err := decodePromise(in, tbl, pk)
		if err != nil {
			return
		}
		out, err := appendPromise(nil, pr)
		if err != nil {
			t.Fatalf("re-encoding a decoded promise: %v", err)
		}
		if _, err := decodePromise(out, tbl, pk); err != nil {
			t.Fatalf("a re-encoded promise does not decode: %v", err)
		}
		if pr.Data != nil {
			resolve(t, tbl, pr.Data)
		}
	})
}

func FuzzDecodePaxosRequests(f *testing.F) {
	tbl, prs := samplePromises(f)
	lookup := func(id [16]byte) (*storage.Table, bool) { return tbl, id == tbl.Def.ID }
	acc := prs[2].Accepted
	f.Add(appendPrepare(nil, &prepareRequest{Table: tbl.Def.ID, Key: i32(1), Ballot: ballotAt(3, 1)}))
	f.Add(appendPrepare(nil, &prepareRequest{Table: tbl.Def.ID, Key: i32(1), Ballot: ballotAt(3, 1), Read: &storage.Slice{
		Start: &storage.Bound{Prefix: [][]byte{i32(1)}, Inclusive: true}}}))
	for _, o := range []ProposeOptions{{}, {Commit: true}, {CatchUp: prs[2].Committed},
		{CatchUp: prs[2].Committed, Fast: true, View: storage.Digest{1, 2}, Next: ballotAt(10, 1), Read: &storage.Slice{End: &storage.Bound{}}}} {
		b, err := appendPropose(nil, &proposeRequest{Proposal: acc, ProposeOptions: o})
		if err != nil {
			f.Fatal(err)
		}
		if c, err := decodePropose(b, lookup); err != nil || c.Fast != o.Fast || c.View != o.View || c.Next != o.Next {
			f.Fatalf("propose %+v decodes as %+v, %v", o, c, err)
		}
		f.Add(b)
	}
	b, err := appendCommit(nil, acc)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add(appendAcceptance(nil, &Acceptance{OK: true, Promise: ballotAt(3, 1)}))
	f.Add(appendAcceptance(nil, &Acceptance{OK: true, Promise: ballotAt(3, 1), Next: true, Data: prs[2].Data}))
	f.Fuzz(func(t *testing.T, in []byte) {
		// One input, every request decoder.
		if c, err := decodePrepare(in); err == nil {
			if out := appendPrepare(nil, c); !bytes.Equal(out, in) {
				t.Fatalf("prepare %x encodes as %x", in, out)
			}
		}
		if c, err := decodePropose(in, lookup); err == nil {
			if _, err := appendPropose(nil, c); err != nil {
				t.Fatalf("re-encoding a decoded proposal: %v", err)
			}
			if err := checkProposal(c.Proposal, c.CatchUp); err != nil && !errors.Is(err, ErrBadMessage) {
				t.Logf("checked: %v", err)
			}
		}
		if p, err := decodeCommit(in, lookup); err == nil {
			if _, err := appendCommit(nil, p); err != nil {
				t.Fatalf("re-encoding a decoded commit: %v", err)
			}
		}
		if a, err := decodeAcceptance(in, tbl, prs[2].Data.Key); err == nil {
			if out := appendAcceptance(nil, a); !bytes.Equal(out, in) {
				t.Fatalf("acceptance %x encodes as %x", in, out)
			}
		}
	})
}
