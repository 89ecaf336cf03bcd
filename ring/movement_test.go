package ring

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// The ring of TestPendingByHand: nodes at 100, 200, 300, SimpleStrategy RF 2.
func TestMovementsByHand(t *testing.T) {
	r := mustRing(t, node(1, "dc1", "r1", 100), node(2, "dc1", "r1", 200), node(3, "dc1", "r1", 300))
	s := SimpleStrategy{RF: 2}

	// Node 4 joins at 150: (300,100] was on {1,2} and gains 4; (100,150]
	// was part of (100,200] on {2,3} and gains 4.
	joined, err := r.With(node(4, "dc1", "r1", 150))
	if err != nil {
		t.Fatal(err)
	}
	want := []Movement{
		{Range: Range{300, 100}, Sources: hosts(1, 2), Targets: hosts(4), Losing: hosts(2)},
		{Range: Range{100, 150}, Sources: hosts(2, 3), Targets: hosts(4), Losing: hosts(3)},
	}
	checkMovements(t, "join", Movements(s, r, joined), want)

	// Node 2 leaves: (300,100] goes from {1,2} to {1,3}, (100,200] from
	// {2,3} to {3,1}.
	left, err := r.Without(host(2))
	if err != nil {
		t.Fatal(err)
	}
	want = []Movement{
		{Range: Range{300, 100}, Sources: hosts(1, 2), Targets: hosts(3), Losing: hosts(2)},
		{Range: Range{100, 200}, Sources: hosts(2, 3), Targets: hosts(1), Losing: hosts(2)},
	}
	checkMovements(t, "leave", Movements(s, r, left), want)

	// A second node joining a one-node ring at RF 2 takes the whole ring.
	one := mustRing(t, node(1, "dc1", "r1", 100))
	two, err := one.With(node(2, "dc1", "r1", 200))
	if err != nil {
		t.Fatal(err)
	}
	checkMovements(t, "second node", Movements(s, one, two), []Movement{{Range: Range{200, 200}, Sources: hosts(1), Targets: hosts(2)}})

	empty := mustRing(t)
	if m := Movements(s, empty, one); m != nil {
		t.Errorf("the first node of a cluster moves %v", m)
	}
	if m := Movements(s, r, r); m != nil {
		t.Errorf("no change moves %v", m)
	}
}

func hosts(ks ...int) []HostID {
	out := make([]HostID, len(ks))
	for i, k := range ks {
		out[i] = host(k)
	}
	return out
}

func checkMovements(t *testing.T, what string, got, want []Movement) {
	t.Helper()
	if !slices.EqualFunc(got, want, func(a, b Movement) bool {
		return a.Range == b.Range && sameMove(a, b)
	}) {
		t.Errorf("%s: Movements =\n%v\nwant\n%v", what, got, want)
	}
}

// On random multi-dc rings, the targets of a join or a leave at every
// token are exactly the pending endpoints PendingRanges computes, the
// sources are the token's replicas before, and the ranges never overlap.
func TestMovementsMatchPending(t *testing.T) {
	rnd := rand.New(rand.NewPCG(13, 13))
	for iter := range 200 {
		r := randomRing(t, rnd, 1+rnd.IntN(2), 4, 3, 4)
		var s Strategy = SimpleStrategy{RF: 1 + rnd.IntN(3)}
		if rnd.IntN(2) == 0 {
			rf := map[string]int{}
			for _, dc := range r.Datacenters() {
				rf[dc] = 1 + rnd.IntN(3)
			}
			s = NetworkTopologyStrategy{RF: rf}
		}
		var (
			after   *Ring
			pending *Pending
			err     error
		)
		if nodes := r.Nodes(); rnd.IntN(2) == 0 && len(nodes) > 1 {
			gone := nodes[rnd.IntN(len(nodes))].HostID
			after, err = r.Without(gone)
			if err == nil {
				pending, err = PendingRanges(s, r, nil, []HostID{gone})
			}
		} else {
			n := node(900, r.Datacenters()[rnd.IntN(len(r.Datacenters()))], "rack1", int64(rnd.Uint64()), int64(rnd.Uint64()))
			after, err = r.With(n)
			if err == nil {
				pending, err = PendingRanges(s, r, []Node{n}, nil)
			}
		}
		if err != nil {
			t.Fatal(err)
		}
		ms := Movements(s, r, after)
		before, afterP := NewPlacement(r, s), NewPlacement(after, s)
		probes := append(after.Tokens(), r.Tokens()...)
		for range 50 {
			probes = append(probes, int64(rnd.Uint64()))
		}
		for _, tok := range probes {
			var got []HostID
			var sources, losing []HostID
			n := 0
			for _, m := range ms {
				if m.Range.Contains(tok) {
					n++
					got, sources, losing = m.Targets, m.Sources, m.Losing
				}
			}
			if n > 1 {
				t.Fatalf("iter %d: token %d in %d movements: %v", iter, tok, n, ms)
			}
			got = slices.Clone(got)
			slices.SortFunc(got, func(a, b HostID) int { return slices.Compare(a[:], b[:]) })
			if want := pending.Endpoints(tok); !slices.Equal(got, want) {
				t.Fatalf("iter %d: token %d: targets %v, pending %v", iter, tok, hostNames(got), hostNames(want))
			}
			if n == 1 && !slices.Equal(sources, before.Replicas(tok)) {
				t.Fatalf("iter %d: token %d: sources %v, replicas before %v", iter, tok, hostNames(sources), hostNames(before.Replicas(tok)))
			}
			if n == 1 && !slices.Equal(losing, lost(before.Replicas(tok), afterP.Replicas(tok))) {
				t.Fatalf("iter %d: token %d: losing %v, replicas before %v and after %v", iter, tok, hostNames(losing), hostNames(before.Replicas(tok)), hostNames(afterP.Replicas(tok)))
			}
		}
	}
}

func lost(before, after []HostID) []HostID {
	var out []HostID
	for _, h := range before {
		if !slices.Contains(after, h) {
			out = append(out, h)
		}
	}
	return out
}
