package ring

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// The first nodes of an allocation ring (fewer than it has replicas, when
// every node holds everything) get their tokens by splitting the largest
// range at a ratio drawn from this interval, as Cassandra's
// TokenAllocatorBase.generateSplits does: a slightly uneven start, from
// which the greedy allocation of the later nodes balances better than from
// perfectly even ranges.
var (
	minInitialSplit = 1 - 1/math.Sqrt(5)
	maxInitialSplit = minInitialSplit + 0.075
)

// candidateSplits are where, as a fraction of each range, AllocateTokens
// tries a new token.
var candidateSplits = []float64{1.0 / 8, 2.0 / 8, 3.0 / 8, 4.0 / 8, 5.0 / 8, 6.0 / 8, 7.0 / 8}

// refineRounds is how many times AllocateTokens moves each new token, in
// turn, to where it best evens ownership given the others: the greedy
// first pass placed the early tokens without knowing where the later ones
// would go.
const refineRounds = 2

// AllocateTokens chooses numTokens tokens for node n (its Tokens unset) to
// join r with, so that the replicated ownership of the nodes of n's data
// center is balanced for a keyspace with rf replicas there: Cassandra's
// allocate_tokens_for_local_replication_factor. Random tokens leave some
// nodes owning far more than others; these keep each node near its share.
//
// The nodes that share the allocation are Cassandra's
// (TokenAllocation.getStrategy): with rf <= 1, every node of the data
// center holding one replica; with one rack, those nodes holding rf; with
// exactly rf racks, only the nodes of n's rack, each rack holding one
// replica of everything; with more racks than rf, the data center's nodes
// placed by NetworkTopologyStrategy. Between one and rf racks Cassandra
// refuses, and so does AllocateTokens. The first node of a rack counts its
// data center as one rack, as in Cassandra (whose topology does not know a
// joining node's rack yet), so that a cluster can grow rack by rack.
//
// While the allocation ring has too few nodes for the search below
// (evaluated: fewer than the replicas, or than one replica fewer with one
// rack), n's tokens split its largest ranges (generateSplits). After that
// each token is placed in turn where it best evens ownership: every range
// is tried at the candidateSplits points, and the winner minimises the sum
// over the nodes of ownership² / tokens, which is least when every node
// owns in proportion to its token count (with one rack, summed with the
// same for one replica fewer, each scaled to its replicas); then each
// token is taken out and placed again the same way, refineRounds times.
// This is a simpler greedy search than Cassandra's
// ReplicationAwareTokenAllocator, with the same kind of objective.
//
// rnd draws the first token of an empty allocation ring and the initial
// split ratios, so a seed gives the same tokens every time. The tokens
// come back sorted and distinct from every token of r.
func AllocateTokens(r *Ring, n Node, numTokens, rf int, rnd *rand.Rand) ([]int64, error) {
	if err := checkNode(n); err != nil {
		return nil, err
	}
	switch {
	case len(n.Tokens) > 0:
		return nil, fmt.Errorf("%w: node %s already has tokens", ErrInvalid, n.HostID)
	case numTokens < 1:
		return nil, fmt.Errorf("%w: num_tokens %d is not positive", ErrInvalid, numTokens)
	case rf < 0:
		return nil, fmt.Errorf("%w: replication factor %d is negative", ErrInvalid, rf)
	}
	if _, ok := r.index[n.HostID]; ok {
		return nil, fmt.Errorf("%w: node %s is already a member", ErrInvalid, n.HostID)
	}
	members, eval, replicas, err := allocationGroup(r, n, rf)
	if err != nil {
		return nil, err
	}
	evals, searchFrom := evaluated(eval, replicas)
	a, err := newAllocation(r, members, n, evals)
	if err != nil {
		return nil, err
	}
	for range numTokens {
		var t int64
		var ok bool
		if len(members) < searchFrom {
			t, ok = a.split(rnd)
		} else {
			t, ok = a.best()
		}
		if !ok {
			return nil, fmt.Errorf("%w: no free token left for node %s", ErrInvalid, n.HostID)
		}
		a.insert(t)
	}
	if len(members) >= searchFrom {
		for range refineRounds {
			for _, t := range slices.Clone(a.ring.nodes[a.self].Tokens) {
				a.remove(t)
				b, ok := a.best()
				if !ok {
					b = t
				}
				a.insert(b)
			}
		}
	}
	return slices.Sorted(slices.Values(a.ring.nodes[a.self].Tokens)), nil
}

// allocationGroup returns the nodes that share ownership with n, the
// strategy their ownership is measured with (on a ring of them alone), and
// the number of replicas it places.
func allocationGroup(r *Ring, n Node, rf int) ([]Node, Strategy, int, error) {
	var dc, rack []Node
	racks := map[string]bool{}
	for _, m := range r.nodes {
		if m.DC != n.DC {
			continue
		}
		dc = append(dc, m)
		racks[m.Rack] = true
		if m.Rack == n.Rack {
			rack = append(rack, m)
		}
	}
	if !racks[n.Rack] {
		// The first node of a rack, as in Cassandra, is a unit of its own
		// in a one-rack data center: a cluster grows a rack at a time.
		clear(racks)
		racks[n.Rack] = true
	}
	switch {
	case rf <= 1:
		return dc, SimpleStrategy{RF: 1}, 1, nil
	case len(racks) > rf:
		return dc, NetworkTopologyStrategy{RF: map[string]int{n.DC: rf}}, rf, nil
	case len(racks) == rf:
		return rack, SimpleStrategy{RF: 1}, 1, nil
	case len(racks) == 1:
		return dc, SimpleStrategy{RF: rf}, rf, nil
	}
	return nil, nil, 0, fmt.Errorf("%w: Token allocation failed: the number of racks %d in datacenter %s is lower than its replication factor %d.",
		ErrInvalid, len(racks), n.DC, rf)
}

// evaluated are the strategies an allocation balances, and how many
// members the allocation ring needs before their greedy search applies
// (below that, the new node splits the largest ranges). Replicas placed
// by SimpleStrategy (one rack) are balanced for the keyspace with one
// replica fewer too, from the moment the new node makes as many members as
// that has replicas: a three-node cluster allocated for three replicas
// then also shares a keyspace of two evenly, where splits alone leave the
// third node with 78% of the ring instead of 67%. With racks
// (NetworkTopologyStrategy), the second objective costs the first its
// bound, and is left out.
func evaluated(eval Strategy, replicas int) (evals []Strategy, searchFrom int) {
	if s, ok := eval.(SimpleStrategy); ok && s.RF >= 2 {
		return []Strategy{SimpleStrategy{RF: s.RF - 1}, s}, s.RF - 1
	}
	return []Strategy{eval}, replicas
}

// allocation is the ring of the nodes sharing an allocation, with the new
// node among them, growing one token at a time.
type allocation struct {
	ring  *Ring // the members and the new node, which owns the tokens placed so far
	self  int   // the new node's index in ring.nodes
	evals []*evaluator
	taken map[int64]bool // every token of the whole ring and of the new node

	try Ring // the ring with a candidate token, reused by every evaluation
}

// evaluator measures the ownership the allocation ring gives under one
// strategy.
type evaluator struct {
	s Strategy
	// weight brings the imbalances of different replication factors to
	// one scale: with rf replicas, perfectly even ownership scores
	// rf²/(the ring's tokens).
	weight float64

	// What measure found on the ring: each node's ownership, and each
	// range's replicas and how many ring tokens placing them looked at.
	own      []float64
	replicas [][]int
	walked   []int

	// Reused by every evaluation.
	tryOwn  []float64
	idx     []int
	scratch scratch
}

func newAllocation(r *Ring, members []Node, n Node, evals []Strategy) (*allocation, error) {
	ring, err := build(append(slices.Clone(members), n))
	if err != nil {
		return nil, err
	}
	a := &allocation{ring: ring, self: ring.index[n.HostID], taken: make(map[int64]bool, len(r.tokens))}
	for _, t := range r.tokens {
		a.taken[t] = true
	}
	a.taken[math.MinInt64] = true // the ring's minimum, never a node's token
	for _, s := range evals {
		rf := float64(s.ReplicationFactor(n.DC))
		a.evals = append(a.evals, &evaluator{s: s, weight: 1 / (rf * rf),
			own: make([]float64, len(ring.nodes)), tryOwn: make([]float64, len(ring.nodes))})
	}
	return a, nil
}

// insert gives token t to the new node.
func (a *allocation) insert(t int64) {
	i, _ := slices.BinarySearch(a.ring.tokens, t)
	a.ring.tokens = slices.Insert(a.ring.tokens, i, t)
	a.ring.owner = slices.Insert(a.ring.owner, i, a.self)
	a.ring.nodes[a.self].Tokens = append(a.ring.nodes[a.self].Tokens, t)
	a.taken[t] = true
}

// remove takes token t back from the new node.
func (a *allocation) remove(t int64) {
	i, _ := slices.BinarySearch(a.ring.tokens, t)
	a.ring.tokens = slices.Delete(a.ring.tokens, i, i+1)
	a.ring.owner = slices.Delete(a.ring.owner, i, i+1)
	own := a.ring.nodes[a.self].Tokens
	j := slices.Index(own, t)
	a.ring.nodes[a.self].Tokens = slices.Delete(own, j, j+1)
	delete(a.taken, t)
}

// free returns the first token from t on, inside rg, that no node has.
func (a *allocation) free(rg Range, t int64) (int64, bool) {
	for a.taken[t] {
		t++
		if !rg.Contains(t) || t == rg.End {
			return 0, false
		}
	}
	return t, true
}

// split is generateSplits' step: the largest range of the allocation ring,
// split at a ratio drawn from rnd; on an empty ring, a random token.
func (a *allocation) split(rnd *rand.Rand) (int64, bool) {
	if len(a.ring.tokens) == 0 {
		for {
			if t := int64(rnd.Uint64()); !a.taken[t] {
				return t, true
			}
		}
	}
	var widest Range
	var most uint64
	for i := range a.ring.tokens {
		rg := a.ring.rangeAt(i)
		w, whole := rg.Width()
		if whole {
			widest = rg
			break
		}
		if w > most {
			widest, most = rg, w
		}
	}
	if most == 1 {
		return 0, false
	}
	ratio := minInitialSplit + (maxInitialSplit-minInitialSplit)*rnd.Float64()
	return a.free(widest, widest.split(ratio))
}

// best returns the candidate token that minimises the imbalance.
// REQUIRES: the allocation ring has a token.
func (a *allocation) best() (int64, bool) {
	a.measure()
	var bestT int64
	bestScore := math.Inf(1)
	for i := range a.ring.tokens {
		rg := a.ring.rangeAt(i)
		if w, whole := rg.Width(); !whole && w < 2 {
			continue
		}
		for _, f := range candidateSplits {
			t, ok := a.free(rg, rg.split(f))
			if !ok {
				continue
			}
			if s := a.score(t); s < bestScore {
				bestT, bestScore = t, s
			}
		}
	}
	return bestT, !math.IsInf(bestScore, 1)
}

// measure places the replicas of every range of the allocation ring.
func (a *allocation) measure() {
	for _, e := range a.evals {
		e.measure(a.ring)
	}
}

func (e *evaluator) measure(r *Ring) {
	n := len(r.tokens)
	clear(e.own)
	e.replicas = resize(&e.replicas, n)
	e.walked = resize(&e.walked, n)
	for j := range n {
		e.replicas[j] = e.s.place(r, j, e.replicas[j][:0], &e.scratch)
		e.walked[j] = e.scratch.walked
		credit(e.own, r.rangeAt(j).Fraction(), e.replicas[j])
	}
}

func credit(own []float64, f float64, replicas []int) {
	for _, n := range replicas {
		own[n] += f
	}
}

// score is the imbalance of the allocation ring with t given to the new
// node: for each evaluator, the sum over the nodes of ownership² /
// tokens, weighted, summed. REQUIRES: measure is current, t is free.
func (a *allocation) score(t int64) float64 {
	n := len(a.ring.tokens)
	p, _ := slices.BinarySearch(a.ring.tokens, t) // t's index in try
	tokens := append(append(append(a.try.tokens[:0], a.ring.tokens[:p]...), t), a.ring.tokens[p:]...)
	owner := append(append(append(a.try.owner[:0], a.ring.owner[:p]...), a.self), a.ring.owner[p:]...)
	a.try = *a.ring
	a.try.tokens, a.try.owner = tokens, owner
	var s float64
	for _, e := range a.evals {
		e.score(a.ring, &a.try, t, p, n)
		for i, o := range e.tryOwn {
			w := len(a.ring.nodes[i].Tokens)
			if i == a.self {
				w++
			}
			s += e.weight * o * o / float64(w)
		}
	}
	return s
}

// score sets tryOwn to the ownership of try, which is r with t inserted at
// index p (r has n tokens), owned by the new node. It starts from measure's
// ownership and places again only the ranges t changes: the one it
// splits, the new one it ends, and those whose placement walked over
// where t goes.
func (e *evaluator) score(r, try *Ring, t int64, p, n int) {
	next := p % n // the old token after t, whose range t splits
	copy(e.tryOwn, e.own)
	for j := range n {
		// The walk from j passes from the token before t to the one
		// after, so meets t, when it went on past the token before t
		// (d-1 tokens in) or looked at every token and found too few.
		d := (next - j + n) % n
		crosses := e.walked[j] == n || (d >= 1 && d < e.walked[j])
		if !crosses && j != next {
			continue
		}
		rg := r.rangeAt(j)
		credit(e.tryOwn, -rg.Fraction(), e.replicas[j])
		if j == next {
			rg.Start = t
		}
		reps := e.replicas[j]
		if crosses {
			at := j
			if j >= p {
				at++
			}
			e.idx = e.s.place(try, at, e.idx[:0], &e.scratch)
			reps = e.idx
		}
		credit(e.tryOwn, rg.Fraction(), reps)
	}
	e.idx = e.s.place(try, p, e.idx[:0], &e.scratch)
	credit(e.tryOwn, Range{Start: r.tokens[(next-1+n)%n], End: t}.Fraction(), e.idx)
}
