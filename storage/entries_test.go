package storage

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/datastax/go-cassandra-native-protocol/datatype"
)

// writeEntry writes en to partition pk of t, as read repair does.
func writeEntry(m *Mutation, t *Table, pk []byte, en Entry) error {
	switch en.Kind {
	case EntryPartitionDeletion:
		return m.DeletePartition(t, pk, en.Cell)
	case EntryRangeDeletion:
		return m.DeleteRange(t, pk, en.Range, en.Cell)
	case EntryCell:
		return m.WriteCell(t, pk, en.Target, en.Cell)
	case EntryCollectionDeletion:
		return m.DeleteCollection(t, pk, en.Target, en.Cell)
	case EntryRowMarker:
		return m.WriteRowMarker(t, pk, en.Target.Clustering, en.Cell)
	case EntryRowDeletion:
		return m.DeleteRow(t, pk, en.Target.Clustering, en.Cell)
	}
	return fmt.Errorf("entry of kind %d", en.Kind)
}

// Every key of a partition decodes to the write that makes it again: the
// entries of random partitions written to an empty store read back as the
// same keys and cells.
func TestEntriesWriteTheSamePartition(t *testing.T) {
	for _, desc := range []bool{false, true} {
		tbl := testTable(t, desc)
		for seed := range uint64(20) {
			rng := rand.New(rand.NewPCG(seed, 3))
			src := openTestEngine(t, vfs.NewMem(), "periodic")
			dst := openTestEngine(t, vfs.NewMem(), "periodic")
			m := src.NewMutation()
			for range 40 {
				if err := randomWrite(rng, tbl, i32(1))(m); err != nil {
					t.Fatal(err)
				}
			}
			if err := src.Apply(m); err != nil {
				t.Fatal(err)
			}
			p, err := src.ReadRaw(tbl, i32(1), Slice{})
			if err != nil {
				t.Fatal(err)
			}
			m = dst.NewMutation()
			if err := tbl.Entries(p, func(en Entry) error { return writeEntry(m, tbl, p.Key, en) }); err != nil {
				t.Fatal(err)
			}
			if err := dst.Apply(m); err != nil {
				t.Fatal(err)
			}
			got, err := dst.ReadRaw(tbl, i32(1), Slice{})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got.KVs, p.KVs) {
				t.Fatalf("desc %v seed %d: written again from its entries, partition has\n%x\nwant\n%x", desc, seed, got.KVs, p.KVs)
			}
			src.Close()
			dst.Close()
		}
	}
}

// randomWrite is one random write of every kind to partition pk of
// testTable, expiring cells and tombstones included.
func randomWrite(rng *rand.Rand, tbl *Table, pk []byte) func(m *Mutation) error {
	ck := func() [][]byte { return [][]byte{i32(rng.IntN(6))} }
	cell := func() Cell {
		c := Cell{Timestamp: int64(rng.IntN(12))}
		switch rng.IntN(4) {
		case 0:
			c.Tombstone, c.LocalDeletionTime = true, 999
		case 1:
			c.TTL, c.LocalDeletionTime = 10, int32(995+rng.IntN(10))
			c.Value = []byte{'e', byte('a' + rng.IntN(26))}
		default:
			c.Value = []byte{byte('a' + rng.IntN(26))}
		}
		return c
	}
	dead := Cell{Timestamp: int64(rng.IntN(12)), Tombstone: true, LocalDeletionTime: 999}
	switch rng.IntN(8) {
	case 0, 1:
		tg, c := CellTarget{Clustering: ck(), Column: "v"}, cell()
		return func(m *Mutation) error { return m.WriteCell(tbl, pk, tg, c) }
	case 2:
		tg, c := CellTarget{Static: true, Column: "s", PathType: datatype.Varchar, Path: []byte{byte('a' + rng.IntN(3))}}, cell()
		if rng.IntN(2) == 0 {
			tg.Path, tg.PathType = nil, nil
		}
		return func(m *Mutation) error { return m.WriteCell(tbl, pk, tg, c) }
	case 3:
		tg := CellTarget{Clustering: ck(), Column: "m", PathType: datatype.Int, Path: i32(rng.IntN(3))}
		if rng.IntN(3) == 0 {
			tg.Path, tg.PathType = nil, nil
			return func(m *Mutation) error { return m.DeleteCollection(tbl, pk, tg, dead) }
		}
		c := cell()
		return func(m *Mutation) error { return m.WriteCell(tbl, pk, tg, c) }
	case 4:
		row, c := ck(), cell()
		return func(m *Mutation) error { return m.WriteRowMarker(tbl, pk, row, c) }
	case 5:
		row := ck()
		return func(m *Mutation) error { return m.DeleteRow(tbl, pk, row, dead) }
	case 6:
		s := randomSlice(rng)
		return func(m *Mutation) error { return m.DeleteRange(tbl, pk, s, dead) }
	}
	return func(m *Mutation) error { return m.DeletePartition(tbl, pk, dead) }
}

// A partition that is not its table's is refused: a key of another
// partition, keys out of order, a torn key, a value that is not a cell.
func TestCheckPartitionRefuses(t *testing.T) {
	tbl := testTable(t, false)
	e := openTestEngine(t, vfs.NewMem(), "periodic")
	defer e.Close()
	m := e.NewMutation()
	for k := range 2 {
		for _, w := range []func() error{
			func() error {
				return m.DeletePartition(tbl, i32(k), Cell{Timestamp: 1, Tombstone: true, LocalDeletionTime: 9})
			},
			func() error {
				return m.WriteCell(tbl, i32(k), CellTarget{Clustering: [][]byte{i32(3)}, Column: "v"}, Cell{Timestamp: 2, Value: []byte("x")})
			},
			func() error {
				return m.WriteCell(tbl, i32(k), CellTarget{Clustering: [][]byte{i32(4)}, Column: "v"}, Cell{Timestamp: 2, Value: []byte("y")})
			},
		} {
			if err := w(); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := e.Apply(m); err != nil {
		t.Fatal(err)
	}
	read := func(k int) *Partition {
		p, err := e.ReadRaw(tbl, i32(k), Slice{})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	if err := tbl.CheckPartition(read(0)); err != nil {
		t.Fatal(err)
	}
	other := read(1)
	for name, bad := range map[string]func(p *Partition){
		"another partition's key": func(p *Partition) { p.KVs[1] = other.KVs[1] },
		"keys out of order":       func(p *Partition) { p.KVs[1], p.KVs[2] = p.KVs[2], p.KVs[1] },
		"a key twice":             func(p *Partition) { p.KVs[2] = p.KVs[1] },
		"a torn key":              func(p *Partition) { p.KVs[2].Key = p.KVs[2].Key[:len(p.KVs[2].Key)-1] },
		"a key with a tail":       func(p *Partition) { p.KVs[0].Key = append(p.KVs[0].Key, 0) },
		"a bad cell":              func(p *Partition) { p.KVs[1].Value = []byte{9} },
		"the prefix alone":        func(p *Partition) { p.KVs[0].Key = p.KVs[0].Key[:len(p.KVs[0].Key)-1] },
	} {
		p := read(0)
		bad(p)
		if err := tbl.CheckPartition(p); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// FuzzEntries: a partition that passes CheckPartition is exactly what
// writing its entries makes, key for key and cell for cell, so nothing
// that trusts a checked partition's keys (Reconcile, Resolve, read
// repair) meets a key a write could not have made.
func FuzzEntries(f *testing.F) {
	tbl := testTable(f, false)
	e := openTestEngine(f, vfs.NewMem(), "periodic")
	f.Cleanup(func() { _ = e.Close() })
	rng := rand.New(rand.NewPCG(5, 5))
	m := e.NewMutation()
	for range 40 {
		if err := randomWrite(rng, tbl, i32(1))(m); err != nil {
			f.Fatal(err)
		}
	}
	if err := e.Apply(m); err != nil {
		f.Fatal(err)
	}
	p, err := e.ReadRaw(tbl, i32(1), Slice{})
	if err != nil {
		f.Fatal(err)
	}
	if err := e.Truncate(tbl); err != nil {
		f.Fatal(err)
	}
	encode := func(p *Partition) []byte {
		var b []byte
		for _, kv := range p.KVs {
			b = binary.AppendUvarint(b, uint64(len(kv.Key)))
			b = append(b, kv.Key...)
			b = binary.AppendUvarint(b, uint64(len(kv.Value)))
			b = append(b, kv.Value...)
		}
		return b
	}
	f.Add(encode(p))
	f.Add(encode(&Partition{KVs: p.KVs[:1]}))
	f.Fuzz(func(t *testing.T, in []byte) {
		p := &Partition{Key: i32(1)}
		for len(in) > 0 {
			var kv [2][]byte
			for i := range kv {
				n, w := binary.Uvarint(in)
				if w <= 0 || n > uint64(len(in)-w) {
					return
				}
				kv[i], in = in[w:w+int(n)], in[w+int(n):]
			}
			p.KVs = append(p.KVs, PartitionKV{Key: kv[0], Value: kv[1]})
		}
		if tbl.CheckPartition(p) != nil {
			return
		}
		// The batch the entries' writes make holds the same keys and
		// cells, in the same order.
		m := e.NewMutation()
		defer func() { _ = m.discard() }()
		if err := tbl.Entries(p, func(en Entry) error { return writeEntry(m, tbl, p.Key, en) }); err != nil {
			t.Fatal(err)
		}
		r := m.b.Reader()
		for i, kv := range p.KVs {
			_, key, value, ok, err := r.Next()
			if !ok || err != nil {
				t.Fatalf("key %d not written again: %v", i, err)
			}
			if !bytes.Equal(key, kv.Key) || !bytes.Equal(value, kv.Value) {
				t.Fatalf("key %d: %x=%x written again as %x=%x", i, kv.Key, kv.Value, key, value)
			}
		}
		if _, key, _, ok, _ := r.Next(); ok {
			t.Fatalf("an extra key %x written", key)
		}
	})
}
