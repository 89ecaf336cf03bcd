package storage

import (
	"bytes"
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
)

func TestTokenRangeSegments(t *testing.T) {
	const max = math.MaxInt64
	for _, tc := range []struct {
		r    TokenRange
		in   []int64
		out  []int64
		segs int
	}{
		{TokenRange{-10, 10}, []int64{-9, 0, 10}, []int64{-10, 11, MinToken, max}, 1},
		{TokenRange{10, -10}, []int64{11, max, MinToken + 1, -10}, []int64{10, 0, -9}, 2},
		{TokenRange{5, 5}, []int64{6, max, MinToken + 1, 5, -3}, nil, 2},
		{TokenRange{MinToken, MinToken}, []int64{MinToken + 1, 0, max}, nil, 2},
		{TokenRange{3, MinToken}, []int64{4, max}, []int64{3, 0, MinToken + 1}, 1},
		{TokenRange{max, 7}, []int64{MinToken + 1, 7}, []int64{8, max}, 1},
		{TokenRange{MinToken, 0}, []int64{MinToken + 1, 0}, []int64{1, max}, 1},
	} {
		if n := len(tc.r.segments()); n != tc.segs {
			t.Errorf("%+v: %d segments, want %d", tc.r, n, tc.segs)
		}
		for _, tok := range tc.in {
			if !tc.r.Contains(tok) {
				t.Errorf("%+v does not contain %d", tc.r, tok)
			}
		}
		for _, tok := range tc.out {
			if tc.r.Contains(tok) {
				t.Errorf("%+v contains %d", tc.r, tok)
			}
		}
	}
}

// ringAfter orders tokens as a scan of a range starting after start meets
// them.
func ringAfter(start int64) func(a, b int64) int {
	pos := func(t int64) uint64 { return uint64(t) - uint64(start) - 1 }
	return func(a, b int64) int {
		switch pa, pb := pos(a), pos(b); {
		case pa < pb:
			return -1
		case pa > pb:
			return 1
		}
		return 0
	}
}

// A scan of a range, in pages resumed after the last partition, passes
// every partition of the range once, in ring order, across the wrap, and
// says whether more follow.
func TestScanRawPages(t *testing.T) {
	e := openTestEngine(t, vfs.NewMem(), "periodic")
	defer e.Close()
	tbl := testTable(t, false)
	const n = 300
	m := e.NewMutation()
	var tokens []int64
	for k := range n {
		if err := m.WriteCell(tbl, i32(k), CellTarget{Clustering: [][]byte{i32(k % 3)}, Column: "v"}, Cell{Timestamp: 1, Value: []byte("x")}); err != nil {
			t.Fatal(err)
		}
		if k%7 == 0 {
			// Only a partition deletion: no key within any slice but kept.
			if err := m.DeletePartition(tbl, i32(k), Cell{Timestamp: 0, Tombstone: true, LocalDeletionTime: 1}); err != nil {
				t.Fatal(err)
			}
		}
		tokens = append(tokens, Token(i32(k)))
	}
	if err := e.Apply(m); err != nil {
		t.Fatal(err)
	}
	if err := e.Flush(); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	ranges := []TokenRange{{MinToken, MinToken}, {0, 0}, {MinToken, 0}, {0, MinToken}}
	for range 20 {
		ranges = append(ranges, TokenRange{tokens[rng.IntN(n)], tokens[rng.IntN(n)]}, TokenRange{rng.Int64(), rng.Int64()})
	}
	for _, r := range ranges {
		var want []int64
		for _, tok := range tokens {
			if r.Contains(tok) {
				want = append(want, tok)
			}
		}
		slices.SortFunc(want, ringAfter(r.Start))
		checkPages(t, e, tbl, RawScanOptions{Range: r}, want, func(p *Partition) {
			if !bytes.HasPrefix(p.KVs[0].Key, tbl.Def.ID[:]) {
				t.Fatalf("partition %x: key %x outside the table", p.Key, p.KVs[0].Key)
			}
		})
	}

	// A slice keeps the partitions holding a key within it: rows in it, or
	// deletions, which every slice holds.
	slice := Slice{Start: &Bound{Prefix: [][]byte{i32(1)}, Inclusive: true}, End: &Bound{Prefix: [][]byte{i32(1)}, Inclusive: true}}
	got := 0
	if _, err := e.ScanRaw(tbl, RawScanOptions{Range: TokenRange{MinToken, MinToken}, Slice: slice}, func(p *Partition) bool {
		got++
		return true
	}); err != nil {
		t.Fatal(err)
	}
	want := 0
	for k := range n {
		if k%3 == 1 || k%7 == 0 {
			want++
		}
	}
	if got != want {
		t.Fatalf("sliced scan: %d partitions, want %d", got, want)
	}
	outside := TokenRange{Start: tokens[0], End: tokens[0] + 1}
	if _, err := e.ScanRaw(tbl, RawScanOptions{Range: outside, After: i32(0)}, func(*Partition) bool { return true }); err == nil {
		t.Fatal("a resume partition outside the range was accepted")
	}
}

// checkPages scans o in pages of each size, resuming after the last
// partition, and checks the tokens met are want, in order, and that each
// page says whether more follow; check sees every partition.
func checkPages(t *testing.T, e *Engine, tbl *Table, o RawScanOptions, want []int64, check func(*Partition)) {
	t.Helper()
	for _, page := range []int{1, 7, len(want) + 1} {
		var got []int64
		o.After = nil
		for pages := 0; ; pages++ {
			if pages > len(want)+1 {
				t.Fatalf("%+v: scan in pages of %d does not end", o.Range, page)
			}
			count := 0
			more, err := e.ScanRaw(tbl, o, func(p *Partition) bool {
				got, o.After = append(got, Token(p.Key)), p.Key
				check(p)
				count++
				return count < page
			})
			if err != nil {
				t.Fatal(err)
			}
			if more != (len(got) < len(want)) {
				t.Fatalf("%+v page %d: more %v after %d of %d partitions", o.Range, page, more, len(got), len(want))
			}
			if !more {
				break
			}
		}
		if !slices.Equal(got, want) {
			t.Fatalf("%+v in pages of %d: %d partitions %v\nwant %d %v", o.Range, page, len(got), got, len(want), want)
		}
	}
}

// Two replicas holding the same cells digest the same whatever their
// flush and compaction history; a different cell changes the digest.
func TestPartitionDigestIgnoresHistory(t *testing.T) {
	tbl := testTable(t, false)
	a := openTestEngine(t, vfs.NewMem(), "periodic")
	defer a.Close()
	b := openTestEngine(t, vfs.NewMem(), "periodic")
	defer b.Close()
	write := func(e *Engine, ts int64, v string, k int) {
		t.Helper()
		m := e.NewMutation()
		tg := CellTarget{Clustering: [][]byte{i32(k)}, Column: "v"}
		if err := m.WriteCell(tbl, i32(1), tg, Cell{Timestamp: ts, Value: []byte(v)}); err != nil {
			t.Fatal(err)
		}
		if err := m.WriteRowMarker(tbl, i32(1), [][]byte{i32(k)}, Cell{Timestamp: ts}); err != nil {
			t.Fatal(err)
		}
		if err := e.Apply(m); err != nil {
			t.Fatal(err)
		}
	}
	// a: old versions flushed, newer ones over them, compacted together.
	for k := range 5 {
		write(a, 1, "old", k)
	}
	if err := a.Flush(); err != nil {
		t.Fatal(err)
	}
	for k := range 5 {
		write(a, 2, "new", k)
	}
	if err := a.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := a.db.Compact(context.Background(), []byte{0}, []byte{0xff}, false); err != nil {
		t.Fatal(err)
	}
	// b: the newer versions only, in the memtable, written backwards.
	for k := 4; k >= 0; k-- {
		write(b, 2, "new", k)
	}
	digest := func(e *Engine) Digest {
		p, err := e.ReadRaw(tbl, i32(1), Slice{})
		if err != nil {
			t.Fatal(err)
		}
		return PartitionDigest(p)
	}
	if da, db := digest(a), digest(b); da != db {
		t.Fatalf("same cells, digests %x and %x", da, db)
	}
	write(b, 3, "newer", 2)
	if da, db := digest(a), digest(b); da == db {
		t.Fatal("different cells, same digest")
	}
	if PartitionDigest(&Partition{}) == digest(a) {
		t.Fatal("an empty partition digests as a full one")
	}
}

// A scan through an index passes, page after page, the partitions whose
// entries name the value, in ring order, over ranges that wrap.
func TestScanRawIndex(t *testing.T) {
	e := openTestEngine(t, vfs.NewMem(), "periodic")
	defer e.Close()
	tbl := indexedTable(t)
	const n = 200
	m := e.NewMutation()
	var tokens []int64
	for k := range n {
		v := "other"
		if k%3 == 0 {
			v = "hit"
			tokens = append(tokens, Token(i32(k)))
		}
		for c := range 2 {
			if err := m.WriteCell(tbl, i32(k), CellTarget{Clustering: [][]byte{i32(c)}, Column: "v"}, Cell{Timestamp: 1, Value: []byte(v)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := e.Apply(m); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for _, r := range []TokenRange{{MinToken, MinToken}, {0, 0}, {tokens[3], tokens[9]}, {tokens[9], tokens[3]}, {rng.Int64(), rng.Int64()}} {
		var want []int64
		for _, tok := range tokens {
			if r.Contains(tok) {
				want = append(want, tok)
			}
		}
		slices.SortFunc(want, ringAfter(r.Start))
		checkPages(t, e, tbl, RawScanOptions{Range: r, Index: &IndexQuery{Name: "v_idx", Value: []byte("hit")}}, want, func(p *Partition) {
			if len(p.KVs) != 2 {
				t.Fatalf("partition %x through the index has %d keys, want it whole", p.Key, len(p.KVs))
			}
		})
	}
	if _, err := e.ScanRaw(tbl, RawScanOptions{Range: TokenRange{0, 0}, Index: &IndexQuery{Name: "nope", Value: []byte("x")}}, func(*Partition) bool { return true }); err == nil {
		t.Fatal("a scan through an unknown index succeeded")
	}
}
