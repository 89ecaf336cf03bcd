package ring

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestOwnershipByHand(t *testing.T) {
	// Four tokens a quarter of the ring apart, data centers alternating.
	q := int64(1) << 62
	base := int64(math.MinInt64) + 1
	r := mustRing(t, node(1, "dc1", "r1", base), node(2, "dc2", "r1", base+q),
		node(3, "dc1", "r1", base+2*q), node(4, "dc2", "r1", base+3*q))
	for id, o := range r.Ownership() {
		if o != 0.25 {
			t.Errorf("primary ownership of %v = %v, want 0.25", hostNames([]HostID{id}), o)
		}
	}
	for _, tc := range []struct {
		s    Strategy
		want map[int]float64
	}{
		{SimpleStrategy{RF: 1}, map[int]float64{1: 0.25, 2: 0.25, 3: 0.25, 4: 0.25}},
		{SimpleStrategy{RF: 3}, map[int]float64{1: 0.75, 2: 0.75, 3: 0.75, 4: 0.75}},
		{SimpleStrategy{RF: 5}, map[int]float64{1: 1, 2: 1, 3: 1, 4: 1}},
		{NetworkTopologyStrategy{RF: map[string]int{"dc1": 1, "dc2": 2}}, map[int]float64{1: 0.5, 2: 1, 3: 0.5, 4: 1}},
		{NetworkTopologyStrategy{RF: map[string]int{"dc2": 1}}, map[int]float64{1: 0, 2: 0.5, 3: 0, 4: 0.5}},
	} {
		own := NewPlacement(r, tc.s).Ownership()
		for k, want := range tc.want {
			if got := own[host(k)]; math.Abs(got-want) > 1e-15 {
				t.Errorf("%v: ownership of %d = %v, want %v", tc.s.Options(), k, got, want)
			}
		}
	}
}

// TestOwnershipSums checks on random rings that a data center's effective
// ownership adds up to the replicas placed there, and that a node's
// effective ownership is the size of the ranges Placement.Ranges gives it.
func TestOwnershipSums(t *testing.T) {
	for seed := range uint64(100) {
		rnd := rand.New(rand.NewPCG(seed, 3))
		r := randomRing(t, rnd, 1+rnd.IntN(3), 6, 3, 16)
		s := randomStrategy(rnd, r)
		p := NewPlacement(r, s)
		own := p.Ownership()
		sums := map[string]float64{}
		nodes := map[string]int{}
		for _, n := range r.Nodes() {
			sums[n.DC] += own[n.HostID]
			nodes[n.DC]++
			var fromRanges float64
			for _, rg := range p.Ranges(n.HostID) {
				fromRanges += rg.Fraction()
			}
			if math.Abs(fromRanges-own[n.HostID]) > 1e-9 {
				t.Fatalf("seed %d: node ranges sum to %v, ownership %v", seed, fromRanges, own[n.HostID])
			}
		}
		if ss, ok := s.(SimpleStrategy); ok {
			var total float64
			for _, v := range sums {
				total += v
			}
			if want := float64(min(ss.RF, r.Len())); math.Abs(total-want) > 1e-9 {
				t.Fatalf("seed %d: %v ownership sums to %v, want %v", seed, s.Options(), total, want)
			}
			continue
		}
		for dc, sum := range sums {
			if want := float64(min(s.ReplicationFactor(dc), nodes[dc])); math.Abs(sum-want) > 1e-9 {
				t.Fatalf("seed %d: %v ownership in %s sums to %v, want %v", seed, s.Options(), dc, sum, want)
			}
		}
	}
}
