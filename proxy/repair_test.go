package proxy

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/datastax/go-cassandra-native-protocol/datatype"

	"github.com/cqld/cqld/mutation"
	"github.com/cqld/cqld/storage"
)

// For random partitions, the repair of an empty replica from a full one
// gives it exactly the same keys and cells; the repair of a replica that
// holds part of them sends only the rest.
func TestReadRepairRebuildsPartitions(t *testing.T) {
	c := newCluster(t, []string{"dc1", "dc1"}, rf("1"))
	ctx := context.Background()
	rnd := rand.New(rand.NewPCG(1, 2))
	for k := range 50 {
		pk := i32(k)
		m := &mutation.Mutation{}
		half := &mutation.Mutation{}
		for op := range 1 + rnd.IntN(12) {
			ts := int64(10 + rnd.IntN(50))
			ck := [][]byte{i32(rnd.IntN(5))}
			tomb := storage.Cell{Timestamp: ts, Tombstone: true, LocalDeletionTime: 1}
			target := m
			if op%2 == 0 {
				target = half
			}
			switch rnd.IntN(8) {
			case 0:
				target.DeletePartition(c.tbl, pk, tomb)
			case 1:
				lo, hi := rnd.IntN(5), rnd.IntN(5)
				target.DeleteRange(c.tbl, pk, storage.Slice{Start: &storage.Bound{Prefix: [][]byte{i32(min(lo, hi))}, Inclusive: rnd.IntN(2) == 0}, End: &storage.Bound{Prefix: [][]byte{i32(max(lo, hi))}, Inclusive: true}}, tomb)
			case 2:
				target.DeleteRow(c.tbl, pk, ck, tomb)
			case 3:
				target.WriteRowMarker(c.tbl, pk, ck, storage.Cell{Timestamp: ts, TTL: int32(rnd.IntN(2) * 100), LocalDeletionTime: int32(rnd.IntN(2) * 1000)})
			case 4:
				target.WriteCell(c.tbl, pk, storage.CellTarget{Clustering: ck, Column: "s", PathType: datatype.Int, Path: i32(rnd.IntN(100))}, storage.Cell{Timestamp: ts, Value: []byte{}})
			case 5:
				target.DeleteCollection(c.tbl, pk, storage.CellTarget{Clustering: ck, Column: "s"}, tomb)
			case 6:
				target.WriteCell(c.tbl, pk, storage.CellTarget{Static: true, Column: "st"}, storage.Cell{Timestamp: ts, Value: []byte("static")})
			default:
				target.WriteCell(c.tbl, pk, storage.CellTarget{Clustering: ck, Column: "v"}, storage.Cell{Timestamp: ts, Value: []byte{byte(op)}})
			}
		}
		c.applyOn(0, m)
		c.applyOn(0, half)
		c.applyOn(1, half)
		want, err := c.nodes[0].Local.Read(ctx, c.tbl, pk, storage.Slice{})
		if err != nil {
			t.Fatal(err)
		}
		have, err := c.nodes[1].Local.Read(ctx, c.tbl, pk, storage.Slice{})
		if err != nil {
			t.Fatal(err)
		}
		rm := &mutation.Mutation{}
		if err := rm.Repair(c.tbl, want, have); err != nil {
			t.Fatalf("partition %d: %v", k, err)
		}
		var ops int
		for _, u := range rm.Updates {
			ops += len(u.Ops)
		}
		held := map[string]string{}
		for _, kv := range have.KVs {
			held[string(kv.Key)] = string(kv.Value)
		}
		missing := 0
		for _, kv := range want.KVs {
			if v, ok := held[string(kv.Key)]; !ok || v != string(kv.Value) {
				missing++
			}
		}
		if ops != missing {
			t.Fatalf("partition %d: %d repair ops for %d keys missing", k, ops, missing)
		}
		c.applyOn(1, rm)
		got, err := c.nodes[1].Local.Read(ctx, c.tbl, pk, storage.Slice{})
		if err != nil {
			t.Fatal(err)
		}
		if !samePartition(got, want) {
			t.Fatalf("partition %d: repaired replica holds %d keys, the source %d", k, len(got.KVs), len(want.KVs))
		}
	}
}
