package storage

import (
	"fmt"
	"sync"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/cqld/cqld/commitlog"
)

// rawKeys counts the pebble keys of tbl, whatever their values.
func rawKeys(t *testing.T, e *Engine, tbl *Table) int {
	t.Helper()
	p := tablePrefix(tbl.Def.ID)
	it, err := e.db.NewIter(&pebble.IterOptions{LowerBound: p, UpperBound: prefixEnd(p)})
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	n := 0
	for valid := it.First(); valid; valid = it.Next() {
		n++
	}
	return n
}

func readEverything(t *testing.T, e *Engine, tbl *Table, now int32) string {
	t.Helper()
	var out []string
	for k := 1; k <= 3; k++ {
		out = append(out, fmt.Sprint(readAll(t, e, tbl, k, ReadOptions{Now: now})))
	}
	return fmt.Sprint(out)
}

// TestPurge checks what a purge drops at each stage of gc_grace_seconds
// (100 s here), and that reads never change.
func TestPurge(t *testing.T) {
	for _, desc := range []bool{false, true} {
		e := openTestEngine(t, vfs.NewMem(), commitlog.SyncBatch)
		tbl := testTable(t, desc)
		tbl.Def.Options.GCGraceSeconds = 100
		tomb := Cell{Timestamp: 15, Tombstone: true, LocalDeletionTime: 1000}
		m := e.NewMutation()
		for k := 1; k <= 3; k++ {
			for c := 1; c <= 5; c++ {
				ck := [][]byte{i32(c)}
				m.WriteRowMarker(tbl, i32(k), ck, Cell{Timestamp: 10})
				m.WriteCell(tbl, i32(k), CellTarget{Clustering: ck, Column: "v"}, live(10, fmt.Sprint("v", c)))
			}
			m.WriteCell(tbl, i32(k), CellTarget{Static: true, Column: "s"}, live(10, "st"))
		}
		m.DeleteRow(tbl, i32(1), [][]byte{i32(4)}, tomb)
		rng := Slice{Start: &Bound{Prefix: [][]byte{i32(5)}, Inclusive: true}}
		if desc {
			rng = Slice{End: &Bound{Prefix: [][]byte{i32(5)}, Inclusive: true}}
		}
		m.DeleteRange(tbl, i32(1), rng, tomb)
		m.WriteCell(tbl, i32(1), CellTarget{Clustering: [][]byte{i32(1)}, Column: "v"}, Cell{Timestamp: 20, Tombstone: true, LocalDeletionTime: 1000})
		m.WriteCell(tbl, i32(1), CellTarget{Clustering: [][]byte{i32(2)}, Column: "v"}, Cell{Timestamp: 30, Value: []byte("ttl"), TTL: 100, LocalDeletionTime: 1100})
		m.DeletePartition(tbl, i32(3), Cell{Timestamp: 100, Tombstone: true, LocalDeletionTime: 1000})
		if err := e.Apply(m); err != nil {
			t.Fatal(err)
		}
		// 3 partitions x (5 markers + 5 cells + 1 static) + row deletion,
		// range tombstone, partition deletion.
		if n := rawKeys(t, e, tbl); n != 36 {
			t.Fatalf("%d keys written, want 36", n)
		}
		for _, step := range []struct {
			now        int32
			keys       int // left after the purge
			partitions int // purged
		}{
			// Tombstones are young: only what they shadow goes (rows 4 and
			// 5 of partition 1, all of partition 3).
			{now: 1050, keys: 36 - 4 - 11, partitions: 2},
			// Past gc_grace: the tombstones go too (row deletion, range
			// tombstone, cell tombstone, partition deletion); the TTL cell
			// expired at 1100 is not yet 100 s old.
			{now: 1150, keys: 21 - 4, partitions: 2},
			{now: 1250, keys: 17 - 1, partitions: 1},
			{now: 1300, keys: 16, partitions: 0},
		} {
			before := readEverything(t, e, tbl, step.now)
			st, err := e.Purge(tbl, step.now)
			if err != nil {
				t.Fatal(err)
			}
			if n := rawKeys(t, e, tbl); n != step.keys || st.Partitions != step.partitions {
				t.Errorf("desc=%v now=%d: %d keys left, %d partitions purged (%+v); want %d keys, %d partitions", desc, step.now, n, st.Partitions, st, step.keys, step.partitions)
			}
			if after := readEverything(t, e, tbl, step.now); after != before {
				t.Errorf("desc=%v now=%d: reads changed:\n before %s\n after  %s", desc, step.now, before, after)
			}
		}
		e.Close()
	}
}

// TestPurgeRacesWrites overwrites one cell with values and purgeable
// tombstones in turn while purges run, and checks the last write always
// reads back: a purge never deletes a write that landed after it looked.
func TestPurgeRacesWrites(t *testing.T) {
	e := openTestEngine(t, vfs.NewMem(), commitlog.SyncPeriodic)
	defer e.Close()
	tbl := testTable(t, false)
	tg := CellTarget{Clustering: [][]byte{i32(1)}, Column: "v"}
	var stop sync.WaitGroup
	done := make(chan struct{})
	defer func() { close(done); stop.Wait() }() // before e.Close
	stop.Add(1)
	go func() {
		defer stop.Done()
		for {
			select {
			case <-done:
				return
			default:
			}
			if _, err := e.Purge(tbl, 2000); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	for i := 1; i <= 2000; i++ {
		m := e.NewMutation()
		c := live(int64(i), fmt.Sprint(i))
		if i%2 == 0 {
			c = Cell{Timestamp: int64(i), Tombstone: true, LocalDeletionTime: 1}
		}
		if err := m.WriteCell(tbl, i32(1), tg, c); err != nil {
			t.Fatal(err)
		}
		if err := e.Apply(m); err != nil {
			t.Fatal(err)
		}
		got := readAll(t, e, tbl, 1, ReadOptions{Now: 2000})
		want := "[]"
		if i%2 == 1 {
			want = fmt.Sprintf("[1=%d]", i)
		}
		if fmt.Sprint(got) != want {
			t.Fatalf("after write %d: %v, want %s", i, got, want)
		}
	}
}
