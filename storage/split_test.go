package storage

import (
	"bytes"
	"math/rand"
	"testing"
)

// TestPartitionSplit checks the comparer's Split on keys of the layout:
// it returns the partition prefix, whatever the partition key's bytes
// (00 bytes included) and whatever follows, and it orders prefixes as the
// keys (pebble's requirement for prefix bloom filters).
func TestPartitionSplit(t *testing.T) {
	tbl := testTable(t, false)
	rng := rand.New(rand.NewSource(1))
	var keys [][]byte
	var prefixes []int
	for i := 0; i < 2000; i++ {
		pk := make([]byte, rng.Intn(6))
		for j := range pk {
			pk[j] = []byte{0, 1, 0xff, byte(rng.Intn(256))}[rng.Intn(4)]
		}
		p, err := tbl.partitionPrefix(nil, pk)
		if err != nil {
			t.Fatal(err)
		}
		key := append(append([]byte(nil), p...), []byte{regionRow, 0, 1, 0, 0xff, 2}[:rng.Intn(7)]...)
		if got := partitionSplit(key); got != len(p) {
			t.Fatalf("Split(%x) = %d, want %d (pk %x)", key, got, len(p), pk)
		}
		keys, prefixes = append(keys, key), append(prefixes, len(p))
	}
	for i := 0; i < 5000; i++ {
		a, b := rng.Intn(len(keys)), rng.Intn(len(keys))
		ka, kb := keys[a], keys[b]
		pa, pb := ka[:prefixes[a]], kb[:prefixes[b]]
		if bytes.Compare(ka, kb) <= 0 && bytes.Compare(pa, pb) > 0 {
			t.Fatalf("keys %x <= %x but prefixes %x > %x", ka, kb, pa, pb)
		}
		if bytes.Compare(pa, pb) < 0 && bytes.Compare(ka, kb) >= 0 {
			t.Fatalf("prefixes %x < %x but keys %x >= %x", pa, pb, ka, kb)
		}
	}
	for _, k := range [][]byte{nil, []byte("cqld.flushed"), bytes.Repeat([]byte{7}, 30)} {
		if got := partitionSplit(k); got != len(k) {
			t.Errorf("Split(%x) = %d, want the whole key", k, got)
		}
	}
}
