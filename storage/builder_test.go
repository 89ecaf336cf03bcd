package storage

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/datastax/go-cassandra-native-protocol/datatype"
)

// TestBuiltPartitionsReadAsStored: partitions made by PartitionBuilder
// hold the keys and cells the same writes make in the store, and
// ScanPartitions over them answers what Scan answers over the store, for
// every token bound, resume point and early stop.
func TestBuiltPartitionsReadAsStored(t *testing.T) {
	for _, desc := range []bool{false, true} {
		t.Run(fmt.Sprintf("desc=%v", desc), func(t *testing.T) {
			for seed := range uint64(10) {
				checkBuilt(t, desc, seed)
			}
		})
	}
}

func checkBuilt(t *testing.T, desc bool, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 11))
	tbl := testTable(t, desc)
	e := openTestEngine(t, vfs.NewMem(), "periodic")
	defer e.Close()
	builders := map[int]*PartitionBuilder{}
	m := e.NewMutation()
	for i := range 40 {
		k := rng.IntN(8)
		b := builders[k]
		if b == nil {
			var err error
			if b, err = tbl.NewPartition(i32(k)); err != nil {
				t.Fatal(err)
			}
			builders[k] = b
		}
		// Timestamps grow with each write, so that the later of two
		// writes of one cell, which the builder keeps, is the one the
		// store keeps.
		c := live(int64(i+1), string(rune('a'+rng.IntN(26))))
		ck := [][]byte{i32(rng.IntN(5))}
		var err1, err2 error
		switch rng.IntN(4) {
		case 0:
			err1, err2 = m.WriteRowMarker(tbl, i32(k), ck, Cell{Timestamp: c.Timestamp}), b.WriteRowMarker(ck, Cell{Timestamp: c.Timestamp})
		case 1:
			tg := CellTarget{Static: true, Column: "s"}
			err1, err2 = m.WriteCell(tbl, i32(k), tg, c), b.WriteCell(tg, c)
		case 2:
			tg := CellTarget{Clustering: ck, Column: "m", PathType: datatype.Int, Path: i32(rng.IntN(3))}
			err1, err2 = m.WriteCell(tbl, i32(k), tg, c), b.WriteCell(tg, c)
		default:
			tg := CellTarget{Clustering: ck, Column: "v"}
			err1, err2 = m.WriteCell(tbl, i32(k), tg, c), b.WriteCell(tg, c)
		}
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
	}
	if err := e.Apply(m); err != nil {
		t.Fatal(err)
	}
	var ps []*Partition
	for k, b := range builders {
		p := b.Partition()
		stored, err := e.ReadRaw(tbl, i32(k), Slice{})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(p, stored) {
			t.Fatalf("seed %d partition %d: built\n%s\nstored\n%s", seed, k, kvs(p), kvs(stored))
		}
		ps = append(ps, p)
	}
	tok := func(k int) *int64 { v := Token(i32(k)); return &v }
	for _, o := range []ScanOptions{
		{}, {MinToken: tok(3)}, {MaxToken: tok(5)}, {MinToken: tok(1), MaxToken: tok(6)},
		{FromPartition: i32(2)}, {FromPartition: i32(7), MaxToken: tok(4)},
	} {
		for _, stopAfter := range []int{-1, 3} {
			want := scanned(t, stopAfter, func(fn func([]byte, *Row) bool) error { return e.Scan(tbl, o, fn) })
			got := scanned(t, stopAfter, func(fn func([]byte, *Row) bool) error { return tbl.ScanPartitions(ps, o, fn) })
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("seed %d %+v stop %d:\nbuilt  %q\nstored %q", seed, o, stopAfter, got, want)
			}
		}
	}
}

func kvs(p *Partition) string {
	var s string
	for _, kv := range p.KVs {
		s += fmt.Sprintf("%x = %x\n", kv.Key, kv.Value)
	}
	return s
}

// scanned renders what scan passes its callback, stopping after n rows
// when n >= 0.
func scanned(t *testing.T, n int, scan func(func([]byte, *Row) bool) error) []string {
	t.Helper()
	var out []string
	err := scan(func(pk []byte, r *Row) bool {
		out = append(out, fmt.Sprintf("%x %x %v %v", pk, r.Clustering, r.Static, r.Cells))
		return n < 0 || len(out) < n
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestBuilderKeepsTheLaterWrite(t *testing.T) {
	tbl := testTable(t, false)
	b, err := tbl.NewPartition(i32(1))
	if err != nil {
		t.Fatal(err)
	}
	tg := CellTarget{Clustering: [][]byte{i32(1)}, Column: "v"}
	for _, v := range []string{"a", "b"} {
		if err := b.WriteCell(tg, live(5, v)); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	if err := tbl.Resolve(b.Partition(), ReadOptions{}, func(r *Row) bool {
		got = append(got, string(r.Cells[0].Cell.Value))
		return true
	}); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, []string{"b"}) {
		t.Fatalf("got %q, want [b]", got)
	}
}
