package ring

import (
	"fmt"
	"slices"
	"sort"
)

// Pending is what a topology change in progress adds to writes: for each
// token, the nodes that will hold a replica of it once the change is done
// but do not hold one now (Cassandra's PendingRangeMaps). A write goes to
// the token's natural replicas and to these, so that a joining node, or a
// node taking over a leaving node's ranges, misses no write made while it
// streams; reads and consistency levels keep counting the natural replicas
// only. A Pending is immutable and safe for concurrent use.
type Pending struct {
	// The ring cut at every pending range's ends: segment i is
	// (bounds[i-1], bounds[i]], segment 0 wrapping from the last bound.
	bounds []int64
	hosts  [][]HostID // pending endpoints of each segment, sorted
}

// PendingRanges computes the pending ranges of keyspace strategy s while
// the nodes joining (with their tokens) join current and the nodes leaving
// leave it, as TokenMetadata.calculatePendingRanges does:
//
//   - Leaving: every range a leaving node replicates now is replicated, once
//     all the leaving nodes are gone, by some nodes that do not replicate it
//     now; each such node is pending for that range.
//   - Joining: each joining node, added alone to the ring without the
//     leaving nodes, is pending for every range it would replicate there.
//
// Moves (one node changing its tokens) and replacements are not computed:
// cqld has vnodes and no token moves. It keeps none of the slices it is
// given.
func PendingRanges(s Strategy, current *Ring, joining []Node, leaving []HostID) (*Pending, error) {
	for _, n := range joining {
		if _, ok := current.index[n.HostID]; ok {
			return nil, fmt.Errorf("%w: joining node %s is already a member", ErrInvalid, n.HostID)
		}
	}
	allLeft, err := current.Without(leaving...)
	if err != nil {
		return nil, err
	}
	if allLeft.Len() == 0 && len(leaving) > 0 {
		return nil, fmt.Errorf("%w: every node cannot leave", ErrInvalid)
	}
	// Checks the joining nodes together: no shared token, host id or address.
	if _, err := current.With(joining...); err != nil {
		return nil, err
	}

	var b pendingBuilder
	if len(leaving) > 0 {
		now := NewPlacement(current, s)
		gone := make(map[HostID]bool, len(leaving))
		for _, id := range leaving {
			gone[id] = true
		}
		var idx []int
		for i := range current.tokens {
			natural := now.at(i)
			if !slices.ContainsFunc(natural, func(h HostID) bool { return gone[h] }) {
				continue
			}
			idx = s.place(allLeft, allLeft.search(current.tokens[i]), idx[:0], nil)
			for _, n := range idx {
				if h := allLeft.nodes[n].HostID; !slices.Contains(natural, h) {
					b.add(current.rangeAt(i), h)
				}
			}
		}
	}
	for _, n := range joining {
		after, err := allLeft.With(n)
		if err != nil {
			return nil, err
		}
		for _, rg := range NewPlacement(after, s).Ranges(n.HostID) {
			b.add(rg, n.HostID)
		}
	}
	return b.build(), nil
}

type pendingRange struct {
	rg Range
	h  HostID
}

type pendingBuilder struct{ ranges []pendingRange }

func (b *pendingBuilder) add(rg Range, h HostID) {
	b.ranges = append(b.ranges, pendingRange{rg, h})
}

func (b *pendingBuilder) build() *Pending {
	p := &Pending{}
	for _, pr := range b.ranges {
		p.bounds = append(p.bounds, pr.rg.Start, pr.rg.End)
	}
	slices.Sort(p.bounds)
	p.bounds = slices.Compact(p.bounds)
	n := len(p.bounds)
	p.hosts = make([][]HostID, n)
	mark := func(seg int, h HostID) {
		if !slices.Contains(p.hosts[seg], h) {
			p.hosts[seg] = append(p.hosts[seg], h)
		}
	}
	for _, pr := range b.ranges {
		if pr.rg.Start == pr.rg.End {
			for seg := range n {
				mark(seg, pr.h)
			}
			continue
		}
		from, _ := slices.BinarySearch(p.bounds, pr.rg.Start)
		to, _ := slices.BinarySearch(p.bounds, pr.rg.End)
		for seg := (from + 1) % n; ; seg = (seg + 1) % n {
			mark(seg, pr.h)
			if seg == to {
				break
			}
		}
	}
	for _, hs := range p.hosts {
		sort.Slice(hs, func(i, j int) bool { return hs[i].less(hs[j]) })
	}
	return p
}

// Empty reports whether no write needs a pending endpoint.
func (p *Pending) Empty() bool { return len(p.bounds) == 0 }

// Endpoints returns the pending endpoints of token t, sorted by host id,
// nil when there are none. The slice is shared: the caller must not modify
// it.
func (p *Pending) Endpoints(t int64) []HostID {
	if len(p.bounds) == 0 {
		return nil
	}
	i, _ := slices.BinarySearch(p.bounds, t)
	if i == len(p.bounds) {
		i = 0
	}
	hs := p.hosts[i]
	return hs[:len(hs):len(hs)]
}

// Ranges returns the ranges node id will gain, those it must receive by
// streaming, in token order with adjacent ranges merged; nil when it gains
// nothing.
func (p *Pending) Ranges(id HostID) []Range {
	n := len(p.bounds)
	in := func(seg int) bool { return slices.Contains(p.hosts[seg], id) }
	all := true
	for seg := range n {
		all = all && in(seg)
	}
	if n > 0 && all {
		return []Range{{Start: p.bounds[0], End: p.bounds[0]}}
	}
	var out []Range
	for seg := range n {
		if !in(seg) {
			continue
		}
		start := p.bounds[(seg+n-1)%n]
		if len(out) > 0 && out[len(out)-1].End == start {
			out[len(out)-1].End = p.bounds[seg]
			continue
		}
		out = append(out, Range{Start: start, End: p.bounds[seg]})
	}
	// A run through segment 0 began at the last bound: join it to the run
	// that ends there.
	if len(out) > 1 && out[len(out)-1].End == out[0].Start {
		out[0].Start = out[len(out)-1].Start
		out = out[:len(out)-1]
	}
	return out
}
