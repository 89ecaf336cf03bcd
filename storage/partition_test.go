package storage

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/datastax/go-cassandra-native-protocol/datatype"
)

// TestReconcileResolveMatchesOneStore is the property replication rests
// on: writes spread over replicas, each replica's unresolved answer
// reconciled with the others' and then resolved, read the same as all the
// writes applied to one store. Tombstones on one replica must shadow data
// on another, expired cells stay dead, ties go to the tombstone.
func TestReconcileResolveMatchesOneStore(t *testing.T) {
	for _, desc := range []bool{false, true} {
		t.Run(fmt.Sprintf("desc=%v", desc), func(t *testing.T) {
			for seed := range uint64(30) {
				checkReplicas(t, desc, seed)
			}
		})
	}
}

func checkReplicas(t *testing.T, desc bool, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 7))
	tbl := testTable(t, desc)
	all := openTestEngine(t, vfs.NewMem(), "periodic")
	defer all.Close()
	reps := []*Engine{openTestEngine(t, vfs.NewMem(), "periodic"), openTestEngine(t, vfs.NewMem(), "periodic")}
	defer reps[0].Close()
	defer reps[1].Close()
	const now = 1000
	ck := func() [][]byte { return [][]byte{i32(rng.IntN(6))} }
	cell := func() Cell {
		c := Cell{Timestamp: int64(rng.IntN(12))}
		switch rng.IntN(5) {
		case 0:
			c.Tombstone, c.LocalDeletionTime = true, now-1
		case 1:
			c.TTL, c.LocalDeletionTime = 10, int32(now-5+rng.IntN(10)) // expired or not
			c.Value = []byte{'e', byte('a' + rng.IntN(26))}
		default:
			c.Value = []byte{byte('a' + rng.IntN(26))}
		}
		return c
	}
	dead := func() Cell { return Cell{Timestamp: int64(rng.IntN(12)), Tombstone: true, LocalDeletionTime: now - 1} }
	for range 60 {
		k := i32(rng.IntN(3))
		var write func(m *Mutation) error
		switch rng.IntN(8) {
		case 0, 1, 2:
			tg, c := CellTarget{Clustering: ck(), Column: "v"}, cell()
			write = func(m *Mutation) error { return m.WriteCell(tbl, k, tg, c) }
		case 3:
			tg, c := CellTarget{Static: true, Column: "s"}, cell()
			write = func(m *Mutation) error { return m.WriteCell(tbl, k, tg, c) }
		case 4:
			tg := CellTarget{Clustering: ck(), Column: "m", PathType: datatype.Int, Path: i32(rng.IntN(3))}
			c := cell()
			if rng.IntN(3) == 0 {
				tg.Path, tg.PathType, c = nil, nil, dead()
				write = func(m *Mutation) error { return m.DeleteCollection(tbl, k, tg, c) }
			} else {
				write = func(m *Mutation) error { return m.WriteCell(tbl, k, tg, c) }
			}
		case 5:
			row, c := ck(), cell()
			if rng.IntN(2) == 0 {
				write = func(m *Mutation) error { return m.WriteRowMarker(tbl, k, row, c) }
			} else {
				c = dead()
				write = func(m *Mutation) error { return m.DeleteRow(tbl, k, row, c) }
			}
		case 6:
			s, c := randomSlice(rng), dead()
			write = func(m *Mutation) error { return m.DeleteRange(tbl, k, s, c) }
		case 7:
			if rng.IntN(4) != 0 {
				continue
			}
			c := dead()
			write = func(m *Mutation) error { return m.DeletePartition(tbl, k, c) }
		}
		targets := []*Engine{all}
		switch rng.IntN(3) {
		case 0:
			targets = append(targets, reps[0])
		case 1:
			targets = append(targets, reps[1])
		default:
			targets = append(targets, reps...)
		}
		for _, e := range targets {
			m := e.NewMutation()
			if err := write(m); err != nil {
				t.Fatal(err)
			}
			if err := e.Apply(m); err != nil {
				t.Fatal(err)
			}
		}
	}
	for k := range 3 {
		for range 8 {
			o := ReadOptions{Slice: randomSlice(rng), Reverse: rng.IntN(2) == 0, Now: now}
			want := collect(t, func(fn func(*Row) bool) error { return all.ReadPartition(tbl, i32(k), o, fn) })
			raw, err := all.ReadRaw(tbl, i32(k), o.Slice)
			if err != nil {
				t.Fatal(err)
			}
			if got := collect(t, func(fn func(*Row) bool) error { return tbl.Resolve(raw, o, fn) }); !reflect.DeepEqual(got, want) {
				t.Fatalf("seed %d partition %d %+v: one store resolved\n%v\nread\n%v", seed, k, o, got, want)
			}
			var parts []*Partition
			for _, e := range reps {
				p, err := e.ReadRaw(tbl, i32(k), o.Slice)
				if err != nil {
					t.Fatal(err)
				}
				parts = append(parts, p)
			}
			merged, err := ReconcilePartitions(parts...)
			if err != nil {
				t.Fatal(err)
			}
			if got := collect(t, func(fn func(*Row) bool) error { return tbl.Resolve(merged, o, fn) }); !reflect.DeepEqual(got, want) {
				t.Fatalf("seed %d partition %d %+v: replicas reconciled\n%v\none store\n%v", seed, k, o, got, want)
			}
		}
	}
}

func randomSlice(rng *rand.Rand) Slice {
	var s Slice
	if rng.IntN(2) == 0 {
		s.Start = &Bound{Prefix: [][]byte{i32(rng.IntN(6))}, Inclusive: rng.IntN(2) == 0}
	}
	if rng.IntN(2) == 0 {
		s.End = &Bound{Prefix: [][]byte{i32(rng.IntN(6))}, Inclusive: rng.IntN(2) == 0}
	}
	return s
}

// collect renders the rows a read passes its callback.
func collect(t *testing.T, read func(fn func(*Row) bool) error) []string {
	t.Helper()
	var out []string
	err := read(func(r *Row) bool {
		s := fmt.Sprintf("static=%v ck=%x", r.Static, r.Clustering)
		if r.Marker != nil {
			s += fmt.Sprintf(" marker@%d", r.Marker.Timestamp)
		}
		for _, c := range r.Cells {
			s += fmt.Sprintf(" %s%x=%q@%d", c.Column, c.Path, c.Cell.Value, c.Cell.Timestamp)
		}
		out = append(out, s)
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
