package ring

import (
	"errors"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// grow adds nodes 1..n to an empty ring one at a time, each with the
// tokens AllocateTokens gives it (rf for its data center, numTokens),
// placing node k in dcOf(k) and rackOf(k). It returns the ring after each
// join.
func grow(t testing.TB, rnd *rand.Rand, n, numTokens, rf int, dcOf, rackOf func(k int) string) []*Ring {
	t.Helper()
	r := mustRing(t)
	var rings []*Ring
	for k := 1; k <= n; k++ {
		nd := node(k, dcOf(k), rackOf(k))
		toks, err := AllocateTokens(r, nd, numTokens, rf, rnd)
		if err != nil {
			t.Fatalf("node %d: %v", k, err)
		}
		if len(toks) != numTokens || !slices.IsSorted(toks) {
			t.Fatalf("node %d: tokens %v", k, toks)
		}
		nd.Tokens = toks
		if r, err = r.With(nd); err != nil {
			t.Fatalf("node %d: %v", k, err)
		}
		rings = append(rings, r)
	}
	return rings
}

func oneDC(int) string { return "dc1" }

func oneRack(int) string { return "rack1" }

func racks(n int) func(k int) string {
	return func(k int) string { return fmt.Sprintf("rack%d", (k-1)%n+1) }
}

// spread is the lowest and highest ratio of a node's effective ownership
// to the mean of the nodes it shares with: the nodes of its data center,
// or, when the data center has exactly as many racks as replicas (each
// rack then holds one replica of everything), of its rack.
func spread(r *Ring, s Strategy) (lo, hi float64) {
	own := NewPlacement(r, s).Ownership()
	type group struct{ dc, rack string }
	sum, count := map[group]float64{}, map[group]int{}
	groupOf := func(n Node) group {
		d := slices.Index(r.dcs, n.DC)
		if r.dcRacks[d] == s.ReplicationFactor(n.DC) {
			return group{n.DC, n.Rack}
		}
		return group{n.DC, ""}
	}
	for _, n := range r.nodes {
		g := groupOf(n)
		sum[g] += own[n.HostID]
		count[g]++
	}
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, n := range r.nodes {
		g := groupOf(n)
		ratio := own[n.HostID] / (sum[g] / float64(count[g]))
		lo, hi = min(lo, ratio), max(hi, ratio)
	}
	return lo, hi
}

// balanceBound is issue 13's: every node's effective ownership within 10%
// of its share, from 3 to 8 nodes at RF 3 with 16 tokens each.
const balanceBound = 0.10

// With more racks than replicas, a rack holds at most one replica of a
// token, so nodes can share evenly only when the racks are the same size
// (five nodes on four racks: the two of one rack own at most 1/2 each of
// the ring, the mean is 3/5); those cases are checked at such sizes only.
func TestAllocateBalance(t *testing.T) {
	for _, tc := range []struct {
		name   string
		rackOf func(int) string
		s      Strategy
		sizes  []int
	}{
		{"one rack", oneRack, SimpleStrategy{RF: 3}, []int{3, 4, 5, 6, 7, 8}},
		// Allocated for three replicas, balanced for two as well.
		{"one rack RF 2", oneRack, SimpleStrategy{RF: 2}, []int{3, 4, 5, 6, 7, 8}},
		{"three racks", racks(3), NetworkTopologyStrategy{RF: map[string]int{"dc1": 3}}, []int{3, 4, 5, 6, 7, 8}},
		{"four racks", racks(4), NetworkTopologyStrategy{RF: map[string]int{"dc1": 3}}, []int{4, 8}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for seed := range uint64(8) {
				rings := grow(t, rand.New(rand.NewPCG(seed, 0)), 8, 16, 3, oneDC, tc.rackOf)
				for _, n := range tc.sizes {
					if lo, hi := spread(rings[n-1], tc.s); lo < 1-balanceBound || hi > 1+balanceBound {
						t.Errorf("seed %d, %d nodes: ownership from %.3f to %.3f of the mean share", seed, n, lo, hi)
					}
				}
			}
		})
	}
}

// TestAllocateTwoDCs allocates two data centers' nodes interleaved: each
// balances its own data center, whatever the other's tokens.
func TestAllocateTwoDCs(t *testing.T) {
	s := NetworkTopologyStrategy{RF: map[string]int{"dc1": 3, "dc2": 2}}
	dcOf := func(k int) string { return fmt.Sprintf("dc%d", (k-1)%2+1) }
	rnd := rand.New(rand.NewPCG(42, 0))
	r := mustRing(t)
	for k := 1; k <= 14; k++ {
		nd := node(k, dcOf(k), "rack1")
		toks, err := AllocateTokens(r, nd, 16, s.ReplicationFactor(nd.DC), rnd)
		if err != nil {
			t.Fatal(err)
		}
		nd.Tokens = toks
		if r, err = r.With(nd); err != nil {
			t.Fatal(err)
		}
	}
	if lo, hi := spread(r, s); lo < 1-balanceBound || hi > 1+balanceBound {
		t.Errorf("7+7 nodes: ownership from %.3f to %.3f of the mean share", lo, hi)
	}
}

func TestAllocateDeterministic(t *testing.T) {
	a := grow(t, rand.New(rand.NewPCG(9, 9)), 5, 16, 3, oneDC, oneRack)
	b := grow(t, rand.New(rand.NewPCG(9, 9)), 5, 16, 3, oneDC, oneRack)
	c := grow(t, rand.New(rand.NewPCG(10, 9)), 5, 16, 3, oneDC, oneRack)
	if !slices.Equal(a[4].Tokens(), b[4].Tokens()) {
		t.Fatal("the same seed gave different tokens")
	}
	if slices.Equal(a[4].Tokens(), c[4].Tokens()) {
		t.Fatal("different seeds gave the same tokens")
	}
}

// TestAllocateAvoidsTakenTokens fills a tiny gap: every token is free and
// distinct, and a range with no room left is passed over.
func TestAllocateAvoidsTakenTokens(t *testing.T) {
	r := mustRing(t, node(1, "dc1", "r1", 0, 2, 4), node(2, "dc2", "r1", 1, 3))
	toks, err := AllocateTokens(r, node(3, "dc1", "r1"), 3, 1, rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		t.Fatal(err)
	}
	for _, tok := range toks {
		if slices.Contains(r.tokens, tok) {
			t.Fatalf("token %d is taken", tok)
		}
	}
	if _, err := r.With(node(3, "dc1", "r1", toks...)); err != nil {
		t.Fatal(err)
	}
}

func TestAllocateRefuses(t *testing.T) {
	r := mustRing(t, node(1, "dc1", "a", 10), node(2, "dc1", "b", 20))
	rnd := rand.New(rand.NewPCG(1, 1))
	for _, tc := range []struct {
		name      string
		n         Node
		numTokens int
		rf        int
		want      string
	}{
		{"two racks for rf 3", node(3, "dc1", "a"), 16, 3, "Token allocation failed: the number of racks 2 in datacenter dc1 is lower than its replication factor 3."},
		{"member", node(1, "dc1", "a"), 16, 1, "already a member"},
		{"tokens given", node(3, "dc1", "a", 5), 16, 1, "already has tokens"},
		{"no tokens asked", node(3, "dc1", "a"), 0, 1, "num_tokens 0"},
		{"negative rf", node(3, "dc1", "a"), 4, -1, "replication factor -1"},
		{"no rack", node(3, "dc1", ""), 4, 1, "has no rack"},
	} {
		_, err := AllocateTokens(r, tc.n, tc.numTokens, tc.rf, rnd)
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
	// Two racks suit rf 2 (one replica per rack) and rf 1.
	for _, rf := range []int{1, 2} {
		if _, err := AllocateTokens(r, node(3, "dc1", "a"), 4, rf, rnd); err != nil {
			t.Errorf("rf %d: %v", rf, err)
		}
	}
}

// randomTokens gives nodes 1..n numTokens random tokens each, as
// storage.LoadOrCreateNode does without allocation.
func randomTokens(t testing.TB, rnd *rand.Rand, n, numTokens int) *Ring {
	var nodes []Node
	for k := 1; k <= n; k++ {
		nd := node(k, "dc1", "rack1")
		for range numTokens {
			nd.Tokens = append(nd.Tokens, int64(rnd.Uint64()))
		}
		nodes = append(nodes, nd)
	}
	return mustRing(t, nodes...)
}

var spreadFlag = flag.Bool("ring.spread", false, "run TestOwnershipSpread, a measurement (docs/benchmarks/ring-ownership.txt)")

// TestOwnershipSpread prints (with -v) the effective ownership of the
// lowest and highest node, in % of the ring and as a ratio to the mean
// share, at RF 2 and RF 3 (SimpleStrategy), for tokens allocated with
// allocate_tokens_for_local_replication_factor 3 (16 and 8 a node) and
// for 16 random tokens a node, at 3, 4, 6 and 8 nodes, over 20 seeds:
// docs/benchmarks/ring-ownership.txt. It decides nothing (the bound is
// TestAllocateBalance's), so it runs only with -ring.spread.
func TestOwnershipSpread(t *testing.T) {
	if !*spreadFlag {
		t.Skip("a measurement: run with -ring.spread -v")
	}
	const seeds = 20
	t.Logf("%-12s %2s %5s %8s %8s %9s %9s", "tokens", "rf", "nodes", "min %", "max %", "min/mean", "max/mean")
	for _, kind := range []string{"allocated16", "allocated8", "random16"} {
		var rings [seeds][]*Ring
		for seed := range uint64(seeds) {
			rnd := rand.New(rand.NewPCG(seed, 0))
			switch kind {
			case "allocated16":
				rings[seed] = grow(t, rnd, 8, 16, 3, oneDC, oneRack)
			case "allocated8":
				rings[seed] = grow(t, rnd, 8, 8, 3, oneDC, oneRack)
			default:
				for n := 1; n <= 8; n++ {
					rings[seed] = append(rings[seed], randomTokens(t, rnd, n, 16))
				}
			}
		}
		for _, rf := range []int{2, 3} {
			s := SimpleStrategy{RF: rf}
			for _, n := range []int{3, 4, 6, 8} {
				lo, hi := math.Inf(1), math.Inf(-1)
				for seed := range seeds {
					for _, o := range NewPlacement(rings[seed][n-1], s).Ownership() {
						lo, hi = min(lo, o), max(hi, o)
					}
				}
				mean := float64(rf) / float64(n)
				t.Logf("%-12s %2d %5d %8.1f %8.1f %9.3f %9.3f", kind, rf, n, 100*lo, 100*hi, lo/mean, hi/mean)
			}
		}
	}
}

// fullScore is score computed from scratch, placing every range.
func fullScore(a *allocation, t int64) float64 {
	nodes := slices.Clone(a.ring.nodes)
	nodes[a.self].Tokens = append(slices.Clone(nodes[a.self].Tokens), t)
	r, err := build(nodes)
	if err != nil {
		panic(err)
	}
	var s float64
	for _, e := range a.evals {
		own := make([]float64, len(r.nodes))
		for j := range r.tokens {
			for _, n := range e.s.place(r, j, nil, nil) {
				own[n] += r.rangeAt(j).Fraction()
			}
		}
		for i, o := range own {
			s += e.weight * o * o / float64(len(r.nodes[i].Tokens))
		}
	}
	return s
}

// TestScoreIsFullScore checks the incremental score against placing every
// range again, on random allocation rings and candidates.
func TestScoreIsFullScore(t *testing.T) {
	for seed := range uint64(200) {
		rnd := rand.New(rand.NewPCG(seed, 11))
		r := randomRing(t, rnd, 1, 6, 1+rnd.IntN(4), 6)
		var eval Strategy = SimpleStrategy{RF: 1 + rnd.IntN(4)}
		if rnd.IntN(2) == 0 {
			eval = NetworkTopologyStrategy{RF: map[string]int{"dc1": 1 + rnd.IntN(4)}}
		}
		n := node(999, "dc1", fmt.Sprintf("rack%d", 1+rnd.IntN(4)))
		evals, _ := evaluated(eval, eval.ReplicationFactor("dc1"))
		a, err := newAllocation(r, r.Nodes(), n, evals)
		if err != nil {
			t.Fatal(err)
		}
		for range rnd.IntN(4) {
			a.insert(int64(rnd.Uint64()))
		}
		a.measure()
		for range 30 {
			tok := int64(rnd.Uint64())
			if a.taken[tok] {
				continue
			}
			if got, want := a.score(tok), fullScore(a, tok); math.Abs(got-want) > 1e-9*want {
				t.Fatalf("seed %d %v: score(%d) = %v, placing everything gives %v", seed, eval.Options(), tok, got, want)
			}
		}
	}
}

// BenchmarkAllocateTokens is one node's allocation (16 tokens, RF 3, one
// rack) joining rings of 8 and 32 allocated nodes.
func BenchmarkAllocateTokens(b *testing.B) {
	for _, n := range []int{8, 32} {
		r := grow(b, rand.New(rand.NewPCG(1, 0)), n, 16, 3, oneDC, oneRack)[n-1]
		b.Run(fmt.Sprintf("nodes=%d", n), func(b *testing.B) {
			rnd := rand.New(rand.NewPCG(2, 0))
			for b.Loop() {
				if _, err := AllocateTokens(r, node(n+1, "dc1", "rack1"), 16, 3, rnd); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
