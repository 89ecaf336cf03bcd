package replica

import (
	"context"
	"errors"
	"testing"

	"github.com/cqld/cqld/mutation"
	"github.com/cqld/cqld/storage"
)

// readAll pages through c on r, checking each page's bounds, and returns
// the partitions' keys in the order read.
func readAll(t *testing.T, r Replica, tbl *storage.Table, c RangeCommand) []string {
	t.Helper()
	var keys []string
	for pages := 0; ; pages++ {
		if pages > 10000 {
			t.Fatal("range read does not end")
		}
		ps, more, err := r.ReadRange(context.Background(), tbl, c)
		if err != nil {
			t.Fatal(err)
		}
		size := 0
		for i, p := range ps {
			keys = append(keys, string(p.Key))
			if size += p.Size(); i < len(ps)-1 && c.MaxBytes > 0 && size >= c.MaxBytes {
				t.Fatalf("page goes on past %d bytes", c.MaxBytes)
			}
		}
		if c.MaxPartitions > 0 && len(ps) > c.MaxPartitions {
			t.Fatalf("page of %d partitions, limit %d", len(ps), c.MaxPartitions)
		}
		if !more {
			return keys
		}
		if len(ps) == 0 {
			t.Fatal("an empty page says more follow")
		}
		c.After = ps[len(ps)-1].Key
	}
}

func writePartitions(t *testing.T, r Replica, tbl *storage.Table, n int) {
	t.Helper()
	m := mutation.New()
	defer m.Release()
	for k := range n {
		m.WriteCell(tbl, i32(k), storage.CellTarget{Clustering: [][]byte{i32(0)}, Column: "v"}, storage.Cell{Timestamp: 1, Value: []byte("value")})
	}
	if err := r.Apply(context.Background(), m, nil); err != nil {
		t.Fatal(err)
	}
}

func TestLocalReadRange(t *testing.T) {
	l, tbl := openLocal(t, "periodic")
	const n = 100
	writePartitions(t, l, tbl, n)
	whole := storage.TokenRange{Start: storage.MinToken, End: storage.MinToken}
	all := readAll(t, l, tbl, RangeCommand{Range: whole})
	if len(all) != n {
		t.Fatalf("%d partitions in one page, want %d", len(all), n)
	}
	for _, c := range []RangeCommand{{Range: whole, MaxPartitions: 7}, {Range: whole, MaxBytes: 200}, {Range: whole, MaxBytes: 1}} {
		got := readAll(t, l, tbl, c)
		if len(got) != n {
			t.Fatalf("%+v: %d partitions, want %d", c, len(got), n)
		}
		for i := range got {
			if got[i] != all[i] {
				t.Fatalf("%+v: partition %d is %x, want %x", c, i, got[i], all[i])
			}
		}
	}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := l.ReadRange(cancelled, tbl, RangeCommand{Range: whole}); !errors.Is(err, context.Canceled) {
		t.Fatalf("range read on a cancelled context: %v", err)
	}
	if err := l.Truncate(context.Background(), tbl); err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, l, tbl, RangeCommand{Range: whole}); len(got) != 0 {
		t.Fatalf("%d partitions after truncate", len(got))
	}
}
