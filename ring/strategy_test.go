package ring

import (
	"errors"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
)

// Expected replicas worked by hand from Cassandra 4's
// SimpleStrategy/NetworkTopologyStrategy.calculateNaturalReplicas.
func TestReplicasByHand(t *testing.T) {
	nts := func(kv ...any) Strategy {
		s := NetworkTopologyStrategy{RF: map[string]int{}}
		for i := 0; i < len(kv); i += 2 {
			s.RF[kv[i].(string)] = kv[i+1].(int)
		}
		return s
	}
	simple := mustRing(t, node(1, "dc1", "r1", 10, 30), node(2, "dc1", "r1", 20), node(3, "dc1", "r1", 40))
	// dc1 has racks a and b: RF 4 allows two rack repeats, the first two
	// met. (The DataStax Python driver 3.25 gets this one wrong: it sets
	// node 2 aside twice, once per token, and takes it twice.)
	repeats := mustRing(t, node(1, "dc1", "a", 10), node(2, "dc1", "a", 20, 30), node(3, "dc1", "b", 40),
		node(4, "dc1", "a", 50), node(5, "dc1", "b", 60))
	threeRacks := mustRing(t, node(1, "dc1", "a", 10), node(2, "dc1", "a", 20), node(3, "dc1", "a", 30),
		node(4, "dc1", "b", 40), node(5, "dc1", "c", 50))
	twoDCs := mustRing(t, node(1, "dc1", "r1", 10), node(2, "dc1", "r1", 30), node(3, "dc2", "r1", 20), node(4, "dc2", "r1", 40))
	for _, tc := range []struct {
		name string
		r    *Ring
		s    Strategy
		t    int64
		want []int
	}{
		{"simple rf1", simple, SimpleStrategy{RF: 1}, 15, []int{2}},
		{"simple skips a node met twice", simple, SimpleStrategy{RF: 3}, 15, []int{2, 1, 3}},
		{"simple wraps", simple, SimpleStrategy{RF: 2}, 35, []int{3, 1}},
		{"simple past the last token", simple, SimpleStrategy{RF: 2}, 41, []int{1, 2}},
		{"simple rf above nodes", simple, SimpleStrategy{RF: 5}, 15, []int{2, 1, 3}},
		{"simple rf0", simple, SimpleStrategy{RF: 0}, 15, []int{}},
		{"nts one rack is simple", simple, nts("dc1", 3), 15, []int{2, 1, 3}},
		{"nts rack repeats are the first met", repeats, nts("dc1", 4), 5, []int{1, 2, 3, 4}},
		{"nts rack repeats rf3", repeats, nts("dc1", 3), 5, []int{1, 2, 3}},
		{"nts distinct racks first", repeats, nts("dc1", 2), 5, []int{1, 3}},
		{"nts racks == rf", threeRacks, nts("dc1", 3), 5, []int{1, 4, 5}},
		{"nts racks > rf", threeRacks, nts("dc1", 2), 35, []int{4, 5}},
		{"nts racks > rf wraps", threeRacks, nts("dc1", 2), 45, []int{5, 1}},
		{"nts two dcs interleave", twoDCs, nts("dc1", 1, "dc2", 2), 25, []int{2, 4, 3}},
		{"nts fewer nodes than rf", twoDCs, nts("dc1", 3), 5, []int{1, 2}},
		{"nts rf0 dc", twoDCs, nts("dc1", 0, "dc2", 1), 5, []int{3}},
		{"nts unknown dc", twoDCs, nts("dc1", 1, "dc9", 3), 5, []int{1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := hostNames(tc.s.Replicas(tc.r, tc.t))
			if !slices.Equal(got, tc.want) {
				t.Fatalf("Replicas(%d) = %v, want %v", tc.t, got, tc.want)
			}
			if p := hostNames(NewPlacement(tc.r, tc.s).Replicas(tc.t)); !slices.Equal(p, tc.want) {
				t.Fatalf("Placement.Replicas(%d) = %v, want %v", tc.t, p, tc.want)
			}
		})
	}
}

func TestParseStrategy(t *testing.T) {
	for _, tc := range []struct {
		opts map[string]string
		want Strategy
		err  string
	}{
		{opts: map[string]string{"class": "SimpleStrategy", "replication_factor": "3"}, want: SimpleStrategy{RF: 3}},
		{opts: map[string]string{"class": "org.apache.cassandra.locator.SimpleStrategy", "replication_factor": "0"}, want: SimpleStrategy{RF: 0}},
		{opts: map[string]string{"class": "SimpleStrategy", "replication_factor": "3/0"}, want: SimpleStrategy{RF: 3}},
		{opts: map[string]string{"class": "SimpleStrategy", "replication_factor": "+2"}, want: SimpleStrategy{RF: 2}},
		{opts: map[string]string{"class": "SimpleStrategy"}, err: "SimpleStrategy requires a replication_factor strategy option."},
		{opts: map[string]string{"class": "SimpleStrategy", "replication_factor": "3/1"}, err: "Transient replication is not enabled on this node"},
		{opts: map[string]string{"class": "SimpleStrategy", "replication_factor": "-1/1"}, err: "Transient replication is not enabled on this node"},
		{opts: map[string]string{"class": "SimpleStrategy", "replication_factor": "3/1/1"}, err: "Replication factor format is <replicas> or <replicas>/<transient>"},
		{opts: map[string]string{"class": "SimpleStrategy", "replication_factor": "3/"}, err: "Replication factor format is <replicas> or <replicas>/<transient>"},
		{opts: map[string]string{"class": "SimpleStrategy", "replication_factor": "/1"}, err: `For input string: ""`},
		{opts: map[string]string{"class": "SimpleStrategy", "replication_factor": "3/x"}, err: `For input string: "x"`},
		{opts: map[string]string{"class": "SimpleStrategy", "replication_factor": "abc"}, err: `For input string: "abc"`},
		{opts: map[string]string{"class": "SimpleStrategy", "replication_factor": " 3"}, err: `For input string: " 3"`},
		{opts: map[string]string{"class": "SimpleStrategy", "replication_factor": "3000000000"}, err: `For input string: "3000000000"`},
		{opts: map[string]string{"class": "SimpleStrategy", "replication_factor": "-1"}, err: "Replication factor must be non-negative, found -1"},
		{opts: map[string]string{"class": "SimpleStrategy", "replication_factor": "1", "dc1": "1"}, err: "Unrecognized strategy option {dc1} passed to SimpleStrategy for keyspace ks"},
		{opts: map[string]string{"class": "NetworkTopologyStrategy", "dc1": "3", "dc2": "0"}, want: NetworkTopologyStrategy{RF: map[string]int{"dc1": 3, "dc2": 0}}},
		{opts: map[string]string{"class": "NetworkTopologyStrategy", "dc1": "3", "dc2": "2/1"}, err: "Transient replication is not enabled on this node"},
		{opts: map[string]string{"class": "NetworkTopologyStrategy"}, err: "Configuration for at least one datacenter must be present"},
		{opts: map[string]string{"class": "NetworkTopologyStrategy", "replication_factor": "3"}, err: "replication_factor should not appear as an option at construction time for NetworkTopologyStrategy"},
		{opts: map[string]string{"replication_factor": "3"}, err: "Missing replication strategy class"},
		{opts: map[string]string{"class": "Foo"}, err: "Unable to find replication strategy class 'org.apache.cassandra.locator.Foo'"},
		{opts: map[string]string{"class": "LocalStrategy"}, err: "Unable to use given strategy class: LocalStrategy is reserved for internal use."},
	} {
		got, err := ParseStrategy("ks", tc.opts)
		if tc.err != "" {
			var ce *ConfigError
			if !errors.As(err, &ce) || ce.Message != tc.err {
				t.Errorf("ParseStrategy(%v) = %v, %v; want ConfigError %q", tc.opts, got, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseStrategy(%v): %v", tc.opts, err)
			continue
		}
		if !sameStrategy(got, tc.want) {
			t.Errorf("ParseStrategy(%v) = %#v, want %#v", tc.opts, got, tc.want)
		}
		back, err := ParseStrategy("ks", got.Options())
		if err != nil || !sameStrategy(back, got) {
			t.Errorf("ParseStrategy(%v.Options()) = %#v, %v", got, back, err)
		}
	}
}

func sameStrategy(a, b Strategy) bool {
	switch a := a.(type) {
	case SimpleStrategy:
		b, ok := b.(SimpleStrategy)
		return ok && a == b
	case NetworkTopologyStrategy:
		b, ok := b.(NetworkTopologyStrategy)
		return ok && maps.Equal(a.RF, b.RF)
	}
	return false
}

// randomStrategy is SimpleStrategy or NetworkTopologyStrategy with random
// factors for r's data centers and, sometimes, one it lacks.
func randomStrategy(rnd *rand.Rand, r *Ring) Strategy {
	if rnd.IntN(3) == 0 {
		return SimpleStrategy{RF: 1 + rnd.IntN(4)}
	}
	s := NetworkTopologyStrategy{RF: map[string]int{}}
	for _, dc := range r.Datacenters() {
		s.RF[dc] = rnd.IntN(5)
	}
	if rnd.IntN(4) == 0 {
		s.RF["dc9"] = 2
	}
	return s
}

// TestReplicaProperties checks, on random rings and tokens, what any
// correct placement satisfies: as many distinct replicas per data center
// as its factor and its nodes allow, spread over as many racks as it has,
// the primary owner first, and the precomputed Placement equal to the
// direct computation.
func TestReplicaProperties(t *testing.T) {
	for seed := range uint64(300) {
		rnd := rand.New(rand.NewPCG(seed, 1))
		r := randomRing(t, rnd, 1+rnd.IntN(3), 6, 4, 8)
		s := randomStrategy(rnd, r)
		p := NewPlacement(r, s)
		dcNodes, dcRacks := map[string]int{}, map[string]map[string]bool{}
		for _, n := range r.Nodes() {
			dcNodes[n.DC]++
			if dcRacks[n.DC] == nil {
				dcRacks[n.DC] = map[string]bool{}
			}
			dcRacks[n.DC][n.Rack] = true
		}
		for range 50 {
			tok := int64(rnd.Uint64())
			if rnd.IntN(4) == 0 {
				tok = r.tokens[rnd.IntN(len(r.tokens))]
			}
			reps := s.Replicas(r, tok)
			if !slices.Equal(reps, p.Replicas(tok)) {
				t.Fatalf("seed %d: Placement and Strategy differ at %d", seed, tok)
			}
			seen := map[HostID]bool{}
			perDC, racks := map[string]int{}, map[string]map[string]bool{}
			for _, h := range reps {
				if seen[h] {
					t.Fatalf("seed %d: %v repeats a node", seed, hostNames(reps))
				}
				seen[h] = true
				n, _ := r.Node(h)
				perDC[n.DC]++
				if racks[n.DC] == nil {
					racks[n.DC] = map[string]bool{}
				}
				racks[n.DC][n.Rack] = true
			}
			total := 0
			for dc, nodes := range dcNodes {
				want := min(s.ReplicationFactor(dc), nodes)
				if _, simple := s.(SimpleStrategy); simple {
					want = min(s.ReplicationFactor(dc), r.Len())
					total = want
					break
				}
				total += want
				if perDC[dc] != want {
					t.Fatalf("seed %d: %s %d replicas in %s, want %d", seed, s.Options(), perDC[dc], dc, want)
				}
				if got, want := len(racks[dc]), min(want, len(dcRacks[dc])); got != want {
					t.Fatalf("seed %d: replicas on %d racks of %s, want %d", seed, got, dc, want)
				}
			}
			if len(reps) != total {
				t.Fatalf("seed %d: %d replicas, want %d", seed, len(reps), total)
			}
			if len(reps) > 0 {
				// The primary is the first node met whose dc gets replicas.
				i := r.search(tok)
				for s.ReplicationFactor(r.nodes[r.owner[i]].DC) == 0 {
					i = (i + 1) % len(r.tokens)
				}
				if reps[0] != r.nodes[r.owner[i]].HostID {
					t.Fatalf("seed %d: primary %v is not the first owner met", seed, hostNames(reps[:1]))
				}
			}
		}
	}
}

// FuzzParseReplicationFactor feeds client-written factors to the parser:
// it never panics, refuses with a ConfigError, and what it accepts is a
// non-negative factor that reads back the same.
func FuzzParseReplicationFactor(f *testing.F) {
	for _, s := range []string{"3", "0", "3/1", "3/0", "-1", "+2", "", "/", "3/", "/1", "3//1", "abc", "2147483648", " 3", "٣"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseReplicationFactor(s)
		if err != nil {
			var ce *ConfigError
			if !errors.As(err, &ce) || ce.Message == "" {
				t.Fatalf("%q: %v is not a ConfigError", s, err)
			}
			return
		}
		if n < 0 {
			t.Fatalf("%q accepted as %d", s, n)
		}
		if back, err := ParseReplicationFactor(strconv.Itoa(n)); err != nil || back != n {
			t.Fatalf("%q gave %d, which reads back as %d, %v", s, n, back, err)
		}
		if _, err := ParseStrategy("ks", map[string]string{"class": "SimpleStrategy", "replication_factor": s}); err != nil {
			t.Fatalf("%q: accepted as a factor, refused by ParseStrategy: %v", s, err)
		}
	})
}
