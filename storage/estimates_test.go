package storage

import (
	"math"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
)

func TestEstimateRange(t *testing.T) {
	e := openTestEngine(t, vfs.NewMem(), "periodic")
	defer e.Close()
	tbl := testTable(t, false)
	write := func(from, to int) {
		m := e.NewMutation()
		for k := from; k < to; k++ {
			for c := 0; c < 4; c++ {
				if err := m.WriteCell(tbl, i32(k), CellTarget{Clustering: [][]byte{i32(c)}, Column: "v"}, Cell{Timestamp: 1, Value: []byte(strings.Repeat("x", 100))}); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := e.Apply(m); err != nil {
			t.Fatal(err)
		}
	}
	write(0, 100)
	// In the memtable: counted, with no size yet.
	if n, size, err := e.EstimateRange(tbl, math.MinInt64, math.MaxInt64); err != nil || n != 100 || size != 0 {
		t.Fatalf("memtable: %d partitions of %d bytes, %v", n, size, err)
	}
	if err := e.Flush(); err != nil {
		t.Fatal(err)
	}
	n, size, err := e.EstimateRange(tbl, math.MinInt64, math.MaxInt64)
	if err != nil || n != 100 || size <= 0 || size > 4000 {
		t.Fatalf("flushed: %d partitions of %d bytes, %v", n, size, err)
	}
	// The two halves of the ring hold them all, split by token.
	a, _, _ := e.EstimateRange(tbl, math.MinInt64, 0)
	b, _, _ := e.EstimateRange(tbl, 0, math.MaxInt64)
	if a+b != 100 || a == 0 || b == 0 {
		t.Errorf("halves: %d + %d", a, b)
	}
	// Past the sample, extrapolated from the bytes on disk.
	for k := 100; k < 3000; k += 100 {
		write(k, k+100)
	}
	if err := e.Flush(); err != nil {
		t.Fatal(err)
	}
	if n, _, err := e.EstimateRange(tbl, math.MinInt64, math.MaxInt64); err != nil || n < 2000 || n > 4500 {
		t.Errorf("3000 partitions estimated as %d, %v", n, err)
	}
}
