package ring

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// Three nodes at 100, 200, 300 with SimpleStrategy RF 2, worked by hand.
func TestPendingByHand(t *testing.T) {
	r := mustRing(t, node(1, "dc1", "r1", 100), node(2, "dc1", "r1", 200), node(3, "dc1", "r1", 300))
	s := SimpleStrategy{RF: 2}

	// Node 4 joins at 150: it will replicate (300,100] (with 1) and
	// (100,150] (with 2), so writes there also go to it.
	p, err := PendingRanges(s, r, []Node{node(4, "dc1", "r1", 150)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		t    int64
		want []int
	}{{50, []int{4}}, {100, []int{4}}, {120, []int{4}}, {150, []int{4}}, {151, nil}, {250, nil}, {301, []int{4}}, {math.MinInt64, []int{4}}} {
		if got := hostNames(p.Endpoints(tc.t)); !slices.Equal(got, tc.want) {
			t.Errorf("join: Endpoints(%d) = %v, want %v", tc.t, got, tc.want)
		}
	}
	if got, want := p.Ranges(host(4)), []Range{{300, 150}}; !slices.Equal(got, want) {
		t.Errorf("join: Ranges(4) = %v, want %v", got, want)
	}

	// Node 2 leaves: (300,100] goes from {1,2} to {1,3} and (100,200]
	// from {2,3} to {3,1}; (200,300] keeps {3,1}.
	p, err = PendingRanges(s, r, nil, []HostID{host(2)})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		t    int64
		want []int
	}{{50, []int{3}}, {100, []int{3}}, {150, []int{1}}, {200, []int{1}}, {250, nil}} {
		if got := hostNames(p.Endpoints(tc.t)); !slices.Equal(got, tc.want) {
			t.Errorf("leave: Endpoints(%d) = %v, want %v", tc.t, got, tc.want)
		}
	}
	if got, want := p.Ranges(host(3)), []Range{{300, 100}}; !slices.Equal(got, want) {
		t.Errorf("leave: Ranges(3) = %v, want %v", got, want)
	}
	if got, want := p.Ranges(host(1)), []Range{{100, 200}}; !slices.Equal(got, want) {
		t.Errorf("leave: Ranges(1) = %v, want %v", got, want)
	}
	if p.Ranges(host(2)) != nil || p.Empty() {
		t.Error("leave: the leaving node gains ranges, or nothing is pending")
	}

	// Node 2 of a one-node ring joined by another: everything is pending.
	one := mustRing(t, node(1, "dc1", "r1", 100))
	p, err = PendingRanges(s, one, []Node{node(2, "dc1", "r1", 200)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Ranges(host(2)); len(got) != 1 || got[0].Start != got[0].End {
		t.Errorf("join of a second node with RF 2: Ranges = %v, want the whole ring", got)
	}

	if p, _ := PendingRanges(s, r, nil, nil); !p.Empty() || p.Endpoints(5) != nil {
		t.Error("no change, yet something is pending")
	}
}

func TestPendingRefuses(t *testing.T) {
	r := mustRing(t, node(1, "dc1", "r1", 100), node(2, "dc1", "r1", 200))
	s := SimpleStrategy{RF: 2}
	for _, tc := range []struct {
		name    string
		joining []Node
		leaving []HostID
		want    error
	}{
		{"member joins", []Node{node(1, "dc1", "r1", 5)}, nil, ErrInvalid},
		{"taken token", []Node{node(3, "dc1", "r1", 100)}, nil, ErrInvalid},
		{"two joiners share a token", []Node{node(3, "dc1", "r1", 7), node(4, "dc1", "r1", 7)}, nil, ErrInvalid},
		{"unknown leaves", nil, []HostID{host(9)}, ErrUnknownNode},
		{"everyone leaves", nil, []HostID{host(1), host(2)}, ErrInvalid},
	} {
		if _, err := PendingRanges(s, r, tc.joining, tc.leaving); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
}

// TestPendingProperties checks, on random rings with joins and leaves,
// Cassandra's definition point by point, that Ranges agrees with
// Endpoints, and (SimpleStrategy) that a write reaching the natural and
// pending replicas reaches every replica of the finished ring.
func TestPendingProperties(t *testing.T) {
	k := 1000
	for seed := range uint64(200) {
		rnd := rand.New(rand.NewPCG(seed, 5))
		r := randomRing(t, rnd, 1+rnd.IntN(2), 5, 3, 8)
		s := randomStrategy(rnd, r)
		var joining []Node
		for range rnd.IntN(3) {
			k++
			n := node(k, r.dcs[rnd.IntN(len(r.dcs))], "rack1")
			for range 1 + rnd.IntN(8) {
				n.Tokens = append(n.Tokens, int64(rnd.Uint64()))
			}
			joining = append(joining, n)
		}
		var leaving []HostID
		for _, n := range r.nodes {
			if rnd.IntN(5) == 0 && len(leaving) < r.Len()-1 {
				leaving = append(leaving, n.HostID)
			}
		}
		p, err := PendingRanges(s, r, joining, leaving)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		allLeft, err := r.Without(leaving...)
		if err != nil {
			t.Fatal(err)
		}
		final, err := allLeft.With(joining...)
		if err != nil {
			t.Fatal(err)
		}
		var withOne []*Ring
		for _, n := range joining {
			w, err := allLeft.With(n)
			if err != nil {
				t.Fatal(err)
			}
			withOne = append(withOne, w)
		}
		gone := func(hs []HostID) bool {
			return slices.ContainsFunc(hs, func(h HostID) bool { return slices.Contains(leaving, h) })
		}
		for range 200 {
			tok := int64(rnd.Uint64())
			if rnd.IntN(3) == 0 {
				tok = final.tokens[rnd.IntN(len(final.tokens))] + int64(rnd.IntN(3)) - 1
			}
			now := s.Replicas(r, tok)
			var want []HostID
			if gone(now) {
				for _, h := range s.Replicas(allLeft, tok) {
					if !slices.Contains(now, h) {
						want = append(want, h)
					}
				}
			}
			for i, n := range joining {
				if slices.Contains(s.Replicas(withOne[i], tok), n.HostID) {
					want = append(want, n.HostID)
				}
			}
			slices.SortFunc(want, func(a, b HostID) int { return compareHostID(a, b) })
			want = slices.Compact(want)
			got := p.Endpoints(tok)
			if !slices.Equal(got, want) {
				t.Fatalf("seed %d: Endpoints(%d) = %v, want %v", seed, tok, hostNames(got), hostNames(want))
			}
			for _, n := range append(r.Nodes(), joining...) {
				inRanges := slices.ContainsFunc(p.Ranges(n.HostID), func(rg Range) bool { return rg.Contains(tok) })
				if inRanges != slices.Contains(got, n.HostID) {
					t.Fatalf("seed %d: token %d: Ranges(%v) says %v, Endpoints %v", seed, tok, hostNames([]HostID{n.HostID}), inRanges, hostNames(got))
				}
			}
			if _, simple := s.(SimpleStrategy); simple {
				for _, h := range s.Replicas(final, tok) {
					if !slices.Contains(now, h) && !slices.Contains(got, h) {
						t.Fatalf("seed %d: token %d: final replica %v gets no write", seed, tok, hostNames([]HostID{h}))
					}
				}
			}
		}
	}
}

func compareHostID(a, b HostID) int {
	switch {
	case a.less(b):
		return -1
	case b.less(a):
		return 1
	}
	return 0
}

func TestPendingRangesMerge(t *testing.T) {
	var b pendingBuilder
	b.add(Range{200, 300}, host(1))
	b.add(Range{300, 100}, host(1))
	b.add(Range{100, 150}, host(2))
	p := b.build()
	if got, want := p.Ranges(host(1)), []Range{{200, 100}}; !slices.Equal(got, want) {
		t.Errorf("Ranges(1) = %v, want %v", got, want)
	}
	if got, want := p.Ranges(host(2)), []Range{{100, 150}}; !slices.Equal(got, want) {
		t.Errorf("Ranges(2) = %v, want %v", got, want)
	}
	if got := hostNames(p.Endpoints(160)); len(got) != 0 {
		t.Errorf("Endpoints(160) = %v, want none", got)
	}
}
