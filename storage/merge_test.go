package storage

import (
	"bytes"
	"context"
	"fmt"
	"math/rand"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/cqld/cqld/internal/israce"
)

func openMergeDB(t *testing.T) *pebble.DB {
	t.Helper()
	db, err := pebble.Open("", &pebble.Options{FS: vfs.NewMem(), Merger: CellMerger, DisableWAL: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func getCell(t *testing.T, db *pebble.DB, key []byte) Cell {
	t.Helper()
	v, closer, err := db.Get(key)
	if err != nil {
		t.Fatalf("Get(%q): %v", key, err)
	}
	defer closer.Close()
	c, err := DecodeCell(v)
	if err != nil {
		t.Fatalf("DecodeCell of merged value %x: %v", v, err)
	}
	c.Value = append([]byte(nil), c.Value...)
	if c.Tombstone {
		c.Value = nil
	}
	return c
}

func reconcileAll(cells []Cell) Cell {
	w := cells[0]
	for _, c := range cells[1:] {
		w = Reconcile(w, c)
	}
	return w
}

func mergeCell(t *testing.T, db *pebble.DB, key []byte, c Cell) {
	t.Helper()
	if err := db.Merge(key, c.Append(nil), pebble.NoSync); err != nil {
		t.Fatal(err)
	}
}

// TestCellMergerAnyOrder merges the versions of many keys in shuffled
// orders, with flushes and compactions in between, and checks each key
// reads back as the Reconcile of all its versions.
func TestCellMergerAnyOrder(t *testing.T) {
	rng := rand.New(rand.NewSource(11))
	for round := 0; round < 5; round++ {
		db := openMergeDB(t)
		want := map[string]Cell{}
		type op struct {
			key string
			c   Cell
		}
		var ops []op
		for k := 0; k < 50; k++ {
			key := fmt.Sprintf("k%03d", k)
			n := 1 + rng.Intn(8)
			var cells []Cell
			for i := 0; i < n; i++ {
				c := randCell(rng)
				cells = append(cells, c)
				ops = append(ops, op{key, c})
			}
			want[key] = reconcileAll(cells)
		}
		rng.Shuffle(len(ops), func(i, j int) { ops[i], ops[j] = ops[j], ops[i] })
		third := len(ops) / 3
		for i, o := range ops {
			mergeCell(t, db, []byte(o.key), o.c)
			switch i {
			case third:
				if err := db.Flush(); err != nil {
					t.Fatal(err)
				}
			case 2 * third:
				if err := db.Flush(); err != nil {
					t.Fatal(err)
				}
				if err := db.Compact(context.Background(), []byte("k"), []byte("l"), false); err != nil {
					t.Fatal(err)
				}
			}
		}
		check := func(stage string) {
			for key, w := range want {
				if got := getCell(t, db, []byte(key)); !cellsEqual(got, w) {
					t.Fatalf("round %d %s: key %s = %+v, want %+v", round, stage, key, got, w)
				}
			}
		}
		check("memtable+sstables")
		if err := db.Flush(); err != nil {
			t.Fatal(err)
		}
		check("after flush")
		if err := db.Compact(context.Background(), []byte("k"), []byte("l"), false); err != nil {
			t.Fatal(err)
		}
		check("after compaction")
	}
}

// TestCellMergerSetThenMerge: a Set value is the merge base, and merges on
// top of it reconcile with it.
func TestCellMergerSetThenMerge(t *testing.T) {
	db := openMergeDB(t)
	key := []byte("row")
	base := Cell{Timestamp: 10, Value: []byte("base")}
	if err := db.Set(key, base.Append(nil), pebble.NoSync); err != nil {
		t.Fatal(err)
	}
	mergeCell(t, db, key, Cell{Timestamp: 5, Value: []byte("older")})
	if got := getCell(t, db, key); !cellsEqual(got, base) {
		t.Fatalf("got %+v, want the base", got)
	}
	newer := Cell{Timestamp: 11, Value: []byte("newer")}
	mergeCell(t, db, key, newer)
	if err := db.Flush(); err != nil {
		t.Fatal(err)
	}
	if got := getCell(t, db, key); !cellsEqual(got, newer) {
		t.Fatalf("got %+v, want %+v", got, newer)
	}
}

// TestCellMergerTombstoneTie: on equal timestamps a tombstone wins whichever
// is written first, and whether or not they meet in the same sstable.
func TestCellMergerTombstoneTie(t *testing.T) {
	live := Cell{Timestamp: 42, Value: []byte("zzzz")}
	tomb := Cell{Timestamp: 42, LocalDeletionTime: 1700000000, Tombstone: true}
	for _, order := range [][]Cell{{live, tomb}, {tomb, live}} {
		for _, flushBetween := range []bool{false, true} {
			db := openMergeDB(t)
			mergeCell(t, db, []byte("k"), order[0])
			if flushBetween {
				if err := db.Flush(); err != nil {
					t.Fatal(err)
				}
			}
			mergeCell(t, db, []byte("k"), order[1])
			if got := getCell(t, db, []byte("k")); !cellsEqual(got, tomb) {
				t.Fatalf("order %v flush %v: got %+v, want the tombstone", order, flushBetween, got)
			}
			if err := db.Compact(context.Background(), []byte("a"), []byte("z"), false); err != nil {
				t.Fatal(err)
			}
			if got := getCell(t, db, []byte("k")); !cellsEqual(got, tomb) {
				t.Fatalf("after compaction: got %+v, want the tombstone", got)
			}
		}
	}
}

// TestCellMergerInvalidOperand: garbage fails the read instead of panicking.
func TestCellMergerInvalidOperand(t *testing.T) {
	db := openMergeDB(t)
	mergeCell(t, db, []byte("k"), Cell{Timestamp: 1, Value: []byte("ok")})
	if err := db.Merge([]byte("k"), []byte{0x09, 0x09}, pebble.NoSync); err != nil {
		t.Fatal(err)
	}
	if _, closer, err := db.Get([]byte("k")); err == nil {
		closer.Close()
		t.Fatal("Get succeeded over a garbage merge operand")
	}

	if _, err := CellMerger.Merge([]byte("k"), []byte("junk")); err == nil {
		t.Fatal("Merge accepted a garbage first operand")
	}
	m, err := CellMerger.Merge([]byte("k"), Cell{Timestamp: 1}.Append(nil))
	if err != nil {
		t.Fatal(err)
	}
	if err := m.MergeNewer([]byte{cellFormatV1}); err == nil {
		t.Fatal("MergeNewer accepted a truncated cell")
	}
	m, _ = CellMerger.Merge([]byte("k"), Cell{Timestamp: 1}.Append(nil))
	if err := m.MergeOlder([]byte{0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0}); err == nil {
		t.Fatal("MergeOlder accepted an unknown format version")
	}
}

// TestCellValueMergerDirect exercises the ValueMerger contract without a
// DB: Merge(A).MergeOlder(B).MergeOlder(C) == Merge(C).MergeNewer(B).MergeNewer(A),
// the result does not depend on includesBase, and it does not alias the
// operands (pebble keeps ownership of them).
func TestCellValueMergerDirect(t *testing.T) {
	a := Cell{Timestamp: 3, Value: []byte("a")}.Append(nil)
	b := Cell{Timestamp: 3, TTL: 5, LocalDeletionTime: 99, Value: []byte("b")}.Append(nil)
	c := Cell{Timestamp: 2, LocalDeletionTime: 50, Tombstone: true}.Append(nil)

	m1, err := CellMerger.Merge(nil, a)
	if err != nil {
		t.Fatal(err)
	}
	if err := m1.MergeOlder(b); err != nil {
		t.Fatal(err)
	}
	if err := m1.MergeOlder(c); err != nil {
		t.Fatal(err)
	}
	r1, _, err := m1.Finish(true)
	if err != nil {
		t.Fatal(err)
	}

	m2, _ := CellMerger.Merge(nil, c)
	_ = m2.MergeNewer(b)
	_ = m2.MergeNewer(a)
	r2, _, err := m2.Finish(false)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(r1, r2) || !bytes.Equal(r1, b) {
		t.Fatalf("results %x and %x, want the expiring cell %x", r1, r2, b)
	}
	for i := range b {
		b[i] = 0
	}
	if !bytes.Equal(r1, Cell{Timestamp: 3, TTL: 5, LocalDeletionTime: 99, Value: []byte("b")}.Append(nil)) {
		t.Fatal("merge result aliases an operand")
	}
	if CellMerger.Name != "cqld.cell.v1" {
		t.Fatalf("merger name %q", CellMerger.Name)
	}
}

// TestCellMergerRecycled: a merger goes back to its pool only when pebble
// is done with its result. Two iterators over keys of one and of two
// operands advance in turn, each value checked after the other iterator
// moved (and so took and closed mergers of its own); a merge of a lone
// 1 KiB operand then allocates nothing.
func TestCellMergerRecycled(t *testing.T) {
	db := openMergeDB(t)
	const keys = 500
	want := func(k int) []byte { return bytes.Repeat([]byte{byte(k)}, 100+k) }
	for k := 0; k < keys; k++ {
		key := []byte(fmt.Sprintf("k%04d", k))
		mergeCell(t, db, key, Cell{Timestamp: 2, Value: want(k)})
		if k%2 == 0 {
			mergeCell(t, db, key, Cell{Timestamp: 1, Value: []byte("older")})
		}
	}
	if err := db.Flush(); err != nil {
		t.Fatal(err)
	}
	for k := 0; k < keys; k += 3 {
		mergeCell(t, db, []byte(fmt.Sprintf("k%04d", k)), Cell{Timestamp: 1, Value: []byte("memtable")})
	}
	its := [2]*pebble.Iterator{}
	for i := range its {
		it, err := db.NewIter(nil)
		if err != nil {
			t.Fatal(err)
		}
		defer it.Close()
		it.First()
		its[i] = it
	}
	for k := 0; k < keys; k++ {
		var vals [2][]byte
		for i, it := range its {
			if !it.Valid() {
				t.Fatalf("iterator %d ended at key %d: %v", i, k, it.Error())
			}
			vals[i] = it.Value()
		}
		for i, v := range vals {
			c, err := DecodeCell(v)
			if err != nil || !bytes.Equal(c.Value, want(k)) {
				t.Fatalf("iterator %d, key %d: %x (%v), want the newest cell", i, k, v, err)
			}
			its[i].Next()
		}
	}

	if israce.Enabled {
		return
	}
	lone := Cell{Timestamp: 7, Value: bytes.Repeat([]byte{1}, 1024)}.Append(nil)
	if n := testing.AllocsPerRun(100, func() {
		m, err := CellMerger.Merge(nil, lone)
		if err != nil {
			t.Fatal(err)
		}
		v, closer, _ := m.Finish(true)
		if len(v) != len(lone) {
			t.Fatal("merge of one operand changed it")
		}
		closer.Close()
	}); n != 0 {
		t.Errorf("a merge of a lone operand allocates %v times, want 0", n)
	}
}
