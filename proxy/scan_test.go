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

// A reconciled scan merges pages of unresolved partitions from every
// replica it asks, pages smaller than a range here: each partition is
// passed once, in ring order, whichever replicas hold it, resumes at a
// partition mid-range, and leaves every replica asked holding every
// partition (read repair of what one lacked).
func TestScanMergesReplicaPages(t *testing.T) {
	c := newCluster(t, []string{"dc1", "dc1", "dc1"}, rf("3"))
	p := c.proxies[0]
	p.rangePage = 3
	const partitions = 120
	for k := range partitions {
		// Partition k on replica k%3 alone, and on every replica when
		// k%4 == 0.
		if k%4 == 0 {
			for i := range c.nodes {
				c.applyOn(i, c.write(k, 0, "all", 10))
			}
			continue
		}
		c.applyOn(k%3, c.write(k, 0, "one", 10))
	}
	before := c.nodes[1].calls.Load()
	keys := scanKeys(t, p, primitive.ConsistencyLevelAll, c.tbl, nil, math.MaxInt)
	if len(keys) != partitions {
		t.Fatalf("scanned %d partitions, want %d", len(keys), partitions)
	}
	for i := 1; i < len(keys); i++ {
		if keyCompare(scanKey{storage.Token(keys[i-1]), keys[i-1]}, scanKey{storage.Token(keys[i]), keys[i]}) >= 0 {
			t.Fatalf("partitions %d and %d out of ring order", i-1, i)
		}
	}
	if pages := c.nodes[1].calls.Load() - before; pages <= 12 {
		t.Fatalf("node 1 answered %d calls: the scan did not page within ranges", pages)
	}
	for i := range c.nodes {
		for k := range partitions {
			if len(c.rowsOf(i, k)) != 1 {
				t.Fatalf("node %d lacks partition %d after the scan", i, k)
			}
		}
	}
	rest := scanKeys(t, p, primitive.ConsistencyLevelAll, c.tbl, keys[50], math.MaxInt)
	if len(rest) != partitions-50 || !bytes.Equal(rest[0], keys[50]) {
		t.Fatalf("resumed at partition 50: %d partitions", len(rest))
	}
}

// Through an index, a replica that does not list a partition another
// lists is read for it: its newer value, which the index entry no longer
// names, is what the caller filters on.
func TestScanIndexReadsUnlistedReplicas(t *testing.T) {
	c := newCluster(t, []string{"dc1", "dc1", "dc1"}, rf("3"))
	k := 7
	reps := c.replicasOf(k)
	c.applyOn(reps[0], c.write(k, 0, "old", 10))
	c.applyOn(reps[1], c.write(k, 0, "new", 20))
	c.applyOn(reps[2], c.write(k, 0, "new", 20))
	got := map[int]string{}
	err := c.proxies[0].ScanIndex(context.Background(), primitive.ConsistencyLevelAll, c.tbl, "v_idx", []byte("old"), storage.ScanOptions{Now: 1}, func(pk []byte, r *storage.Row) bool {
		collect(got, r)
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	if got[0] != "new" {
		t.Fatalf("the row passed holds %q: the replicas not listing it were not read", got[0])
	}
	if r := c.rowsOf(reps[0], k); r[0] != "new" {
		t.Fatalf("the stale replica holds %q after the scan", r[0])
	}
}
