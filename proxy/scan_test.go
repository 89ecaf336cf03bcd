package proxy

import (
	"bytes"
	"context"
	"encoding/binary"
	"math"
	"testing"

	"github.com/datastax/go-cassandra-native-protocol/primitive"

	"github.com/cqld/cqld/mutation"
	"github.com/cqld/cqld/storage"
)

// scanKeys scans from the partition from (nil: the start) and returns the
// partition keys met, in order, stopping after limit partitions.
func scanKeys(t *testing.T, p *Proxy, cl primitive.ConsistencyLevel, tbl *storage.Table, from []byte, limit int) [][]byte {
	t.Helper()
	var keys [][]byte
	err := p.Scan(context.Background(), cl, tbl, storage.ScanOptions{FromPartition: from, Now: 1}, func(pk []byte, _ *storage.Row) bool {
		if n := len(keys); n > 0 && bytes.Equal(keys[n-1], pk) {
			return true
		}
		if len(keys) == limit {
			return false
		}
		keys = append(keys, bytes.Clone(pk))
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	return keys
}

// A scan walks the whole ring in token order, the range that wraps past
// its end included, each partition once, at RF 1 (data spread over the
// nodes) and at RF 3 QUORUM (reconciled, with more partitions than a
// page); a page resumes where the last one stopped; a deletion on one
// replica hides a partition the others hold.
func TestScanOverTheRing(t *testing.T) {
	const partitions = 300
	for _, tc := range []struct {
		rf string
		cl primitive.ConsistencyLevel
	}{{"1", primitive.ConsistencyLevelOne}, {"3", primitive.ConsistencyLevelQuorum}, {"3", primitive.ConsistencyLevelAll}} {
		t.Run("rf"+tc.rf+"/"+tc.cl.String(), func(t *testing.T) {
			c := newCluster(t, []string{"dc1", "dc1", "dc1"}, rf(tc.rf))
			p := c.proxies[0]
			for k := range partitions {
				if err := p.Apply(context.Background(), primitive.ConsistencyLevelAll, c.write(k, 0, "x", 10), primitive.WriteTypeSimple, nil); err != nil {
					t.Fatal(err)
				}
			}
			first, last := c.ring.Tokens()[0], c.ring.Tokens()[len(c.ring.Tokens())-1]
			wrapped := 0
			keys := scanKeys(t, p, tc.cl, c.tbl, nil, math.MaxInt)
			seen := map[int]bool{}
			for i, pk := range keys {
				tok := storage.Token(pk)
				if i > 0 && storage.Token(keys[i-1]) > tok {
					t.Fatalf("partition %d out of token order", i)
				}
				if tok <= first || tok > last {
					wrapped++
				}
				seen[int(binary.BigEndian.Uint32(pk))] = true
			}
			if len(keys) != partitions || len(seen) != partitions {
				t.Fatalf("scanned %d partitions (%d distinct), want %d", len(keys), len(seen), partitions)
			}
			if wrapped == 0 {
				t.Fatal("no partition in the range that wraps: the test proves nothing")
			}
			page := scanKeys(t, p, tc.cl, c.tbl, nil, 100)
			rest := scanKeys(t, p, tc.cl, c.tbl, keys[100], math.MaxInt)
			if len(page) != 100 || len(rest) != partitions-100 || !bytes.Equal(rest[0], keys[100]) {
				t.Fatalf("pages of %d and %d", len(page), len(rest))
			}
			if tc.rf == "1" {
				return
			}
			// Partition 5 deleted on the replica the coordinator asks with
			// itself; the others still hold it.
			del := &mutation.Mutation{}
			del.DeletePartition(c.tbl, i32(5), storage.Cell{Timestamp: 20, Tombstone: true, LocalDeletionTime: 1})
			c.applyOn(0, del)
			for _, pk := range scanKeys(t, p, tc.cl, c.tbl, nil, math.MaxInt) {
				if binary.BigEndian.Uint32(pk) == 5 {
					t.Fatal("a deleted partition scanned")
				}
			}
			// Each replica the scan asked got the deletion: two at
			// QUORUM, all three at ALL.
			holding := 0
			for i := range c.nodes {
				if len(c.rowsOf(i, 5)) != 0 {
					holding++
				}
			}
			if want := map[primitive.ConsistencyLevel]int{primitive.ConsistencyLevelQuorum: 1, primitive.ConsistencyLevelAll: 0}[tc.cl]; holding != want {
				t.Fatalf("%d replicas still hold the deleted partition, want %d", holding, want)
			}
		})
	}
}
