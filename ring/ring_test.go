package ring

import (
	"errors"
	"math"
	"math/rand/v2"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"testing"
)

func TestRangeContains(t *testing.T) {
	for _, tc := range []struct {
		rg   Range
		t    int64
		want bool
	}{
		{Range{10, 20}, 10, false},
		{Range{10, 20}, 11, true},
		{Range{10, 20}, 20, true},
		{Range{10, 20}, 21, false},
		{Range{20, 10}, 25, true}, // wraps
		{Range{20, 10}, math.MaxInt64, true},
		{Range{20, 10}, math.MinInt64, true},
		{Range{20, 10}, 10, true},
		{Range{20, 10}, 15, false},
		{Range{20, 10}, 20, false},
		{Range{5, 5}, 5, true}, // the whole ring
		{Range{5, 5}, math.MinInt64, true},
		{Range{0, math.MinInt64}, math.MaxInt64, true}, // (x, min] is (x, max] and min
		{Range{0, math.MinInt64}, -1, false},
	} {
		if got := tc.rg.Contains(tc.t); got != tc.want {
			t.Errorf("%v.Contains(%d) = %v, want %v", tc.rg, tc.t, got, tc.want)
		}
	}
}

func TestRangeFraction(t *testing.T) {
	for _, tc := range []struct {
		rg   Range
		want float64
	}{
		{Range{0, 0}, 1},
		{Range{math.MinInt64, 0}, 0.5},
		{Range{0, math.MinInt64}, 0.5},
		{Range{math.MaxInt64, math.MinInt64 + 1<<62 - 1}, 0.25},
		{Range{-1 << 62, 1 << 62}, 0.5},
		{Range{1 << 62, -1 << 62}, 0.5},
	} {
		if got := tc.rg.Fraction(); got != tc.want {
			t.Errorf("%v.Fraction() = %v, want %v", tc.rg, got, tc.want)
		}
	}
}

func TestRangeSplitStaysInside(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	for range 10000 {
		rg := Range{int64(rnd.Uint64()), int64(rnd.Uint64())}
		if w, whole := rg.Width(); !whole && w < 2 {
			continue
		}
		for _, f := range []float64{0, 1e-30, 0.25, 0.5, 0.999999999, 1} {
			s := rg.split(f)
			if !rg.Contains(s) || s == rg.End || s == rg.Start {
				t.Fatalf("%v.split(%v) = %d, not strictly inside", rg, f, s)
			}
		}
	}
}

func TestHostIDString(t *testing.T) {
	const s = "0f8a2b3c-4d5e-4f60-8a7b-9c0d1e2f3a4b"
	h, err := ParseHostID(s)
	if err != nil {
		t.Fatal(err)
	}
	if h.String() != s {
		t.Fatalf("round trip: %s", h)
	}
	for _, bad := range []string{"", "0f8a2b3c4d5e4f608a7b9c0d1e2f3a4b", "0f8a2b3c-4d5e-4f60-8a7b-9c0d1e2f3a4g", "0f8a2b3c+4d5e-4f60-8a7b-9c0d1e2f3a4b"} {
		if _, err := ParseHostID(bad); err == nil {
			t.Errorf("ParseHostID(%q) accepted", bad)
		}
	}
}

func TestNewRefuses(t *testing.T) {
	ok := node(1, "dc1", "r1", 10)
	for _, tc := range []struct {
		name  string
		nodes []Node
		want  string
	}{
		{"no host id", []Node{{Addr: ok.Addr, DC: "dc1", Rack: "r1", Tokens: []int64{1}}}, "has no host id"},
		{"no address", []Node{{HostID: host(1), DC: "dc1", Rack: "r1", Tokens: []int64{1}}}, "has no address"},
		{"no dc", []Node{node(1, "", "r1", 1)}, "has no data center"},
		{"no rack", []Node{node(1, "dc1", "", 1)}, "has no rack"},
		{"no tokens", []Node{node(1, "dc1", "r1")}, "has no tokens"},
		{"minimum token", []Node{node(1, "dc1", "r1", math.MinInt64)}, "the ring's minimum"},
		{"host twice", []Node{ok, node(1, "dc1", "r1", 20)}, "appears twice"},
		{"address twice", []Node{ok, {HostID: host(2), Addr: ok.Addr, DC: "dc1", Rack: "r1", Tokens: []int64{20}}}, "share the address 127.0.0.1"},
		{"token twice", []Node{ok, node(2, "dc1", "r1", 20, 10)}, "token 10 belongs to both"},
		{"token twice in a node", []Node{node(1, "dc1", "r1", 10, 10)}, "token 10 belongs to both"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(tc.nodes)
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("New: %v, want ErrInvalid with %q", err, tc.want)
			}
		})
	}
}

func TestOwnerAndRanges(t *testing.T) {
	r := mustRing(t, node(1, "dc1", "r1", 100, -50), node(2, "dc1", "r1", 200), node(3, "dc1", "r1", 300))
	if got := r.Tokens(); !slices.Equal(got, []int64{-50, 100, 200, 300}) {
		t.Fatalf("Tokens = %v", got)
	}
	for _, tc := range []struct {
		t     int64
		owner int
		rg    Range
	}{
		{math.MinInt64, 1, Range{300, -50}},
		{-50, 1, Range{300, -50}},
		{-49, 1, Range{-50, 100}},
		{100, 1, Range{-50, 100}},
		{101, 2, Range{100, 200}},
		{300, 3, Range{200, 300}},
		{301, 1, Range{300, -50}}, // wraps to the first token
		{math.MaxInt64, 1, Range{300, -50}},
	} {
		id, ok := r.Owner(tc.t)
		if !ok || id != host(tc.owner) {
			t.Errorf("Owner(%d) = %v, want node %d", tc.t, hostNames([]HostID{id}), tc.owner)
		}
		if rg, _ := r.PrimaryRange(tc.t); rg != tc.rg {
			t.Errorf("PrimaryRange(%d) = %v, want %v", tc.t, rg, tc.rg)
		}
	}
	if got, want := r.PrimaryRanges(host(1)), []Range{{300, -50}, {-50, 100}}; !slices.Equal(got, want) {
		t.Errorf("PrimaryRanges(1) = %v, want %v", got, want)
	}
	if got := r.PrimaryRanges(host(9)); got != nil {
		t.Errorf("PrimaryRanges(unknown) = %v", got)
	}
	own := r.Ownership()
	var sum float64
	for _, o := range own {
		sum += o
	}
	if math.Abs(sum-1) > 1e-12 || own[host(2)] != (Range{100, 200}).Fraction() {
		t.Errorf("Ownership = %v (sum %v)", own, sum)
	}

	empty := mustRing(t)
	if _, ok := empty.Owner(1); ok {
		t.Error("the empty ring has an owner")
	}
	if (SimpleStrategy{RF: 3}).Replicas(empty, 1) != nil || NewPlacement(empty, SimpleStrategy{RF: 3}).Replicas(1) != nil {
		t.Error("the empty ring has replicas")
	}
}

func TestOneTokenOwnsEverything(t *testing.T) {
	r := mustRing(t, node(1, "dc1", "r1", 42))
	rg, _ := r.PrimaryRange(-7)
	if rg != (Range{42, 42}) || rg.Fraction() != 1 || r.Ownership()[host(1)] != 1 {
		t.Fatalf("one token: range %v ownership %v", rg, r.Ownership())
	}
}

func TestWithWithout(t *testing.T) {
	r := mustRing(t, node(1, "dc1", "r1", 100), node(2, "dc1", "r1", 200))
	in := node(3, "dc1", "r2", 150)
	r2, err := r.With(in)
	if err != nil {
		t.Fatal(err)
	}
	in.Tokens[0] = 999 // With keeps no slice it is given
	if id, _ := r2.Owner(120); id != host(3) || r.Len() != 2 || r2.Len() != 3 {
		t.Fatalf("With: owner of 120 %v, lens %d %d", hostNames([]HostID{id}), r.Len(), r2.Len())
	}
	if _, err := r2.With(node(4, "dc1", "r1", 150)); !errors.Is(err, ErrInvalid) {
		t.Fatalf("With a taken token: %v", err)
	}
	r3, err := r2.Without(host(1))
	if err != nil {
		t.Fatal(err)
	}
	if id, _ := r3.Owner(50); id != host(3) || r3.Len() != 2 {
		t.Fatalf("Without: owner of 50 %v", hostNames([]HostID{id}))
	}
	if _, err := r3.Without(host(1)); !errors.Is(err, ErrUnknownNode) {
		t.Fatalf("Without a non-member: %v", err)
	}
	n, ok := r2.Node(host(3))
	if !ok || n.Rack != "r2" || !slices.Equal(n.Tokens, []int64{150}) {
		t.Fatalf("Node(3) = %+v, %v", n, ok)
	}
	n.Tokens[0] = 1 // a copy
	nodes := r2.Nodes()
	nodes[2].Tokens[0] = 1
	if id, _ := r2.Owner(150); id != host(3) {
		t.Fatal("modifying returned nodes changed the ring")
	}
	if got := mustRing(t, node(1, "b", "r", 1), node(2, "a", "r", 2)).Datacenters(); !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("Datacenters = %v", got)
	}
}

// TestConcurrentReads reads one ring and placement from many goroutines;
// under -race it proves the reads share nothing mutable.
func TestConcurrentReads(t *testing.T) {
	r := randomRing(t, rand.New(rand.NewPCG(7, 7)), 2, 5, 3, 16)
	s := NetworkTopologyStrategy{RF: map[string]int{"dc1": 3, "dc2": 2}}
	p := NewPlacement(r, s)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rnd := rand.New(rand.NewPCG(uint64(g), 0))
			for range 2000 {
				tok := int64(rnd.Uint64())
				if _, ok := r.Owner(tok); !ok {
					t.Error("no owner")
					return
				}
				if !slices.Equal(p.Replicas(tok), s.Replicas(r, tok)) {
					t.Error("placement and strategy differ")
					return
				}
			}
			_ = p.Ownership()
			_ = r.Ownership()
		}()
	}
	wg.Wait()
}

func TestAddrKept(t *testing.T) {
	r := mustRing(t, node(1, "dc1", "r1", 1))
	n, _ := r.Node(host(1))
	if n.Addr != netip.MustParseAddr("127.0.0.1") {
		t.Fatalf("Addr = %v", n.Addr)
	}
}
