package ring

import (
	"iter"

	"github.com/cqld/cqld/storage"
)

// Placement is a strategy's replicas for every range of one ring,
// computed once (Cassandra caches the same per ring version), so a look-up
// is a binary search. It is immutable and safe for concurrent use; build a
// new one with the new Ring after a topology change.
type Placement struct {
	ring     *Ring
	strategy Strategy
	// The replicas of the range ending at ring token i are
	// replicas[offset[i]:offset[i+1]].
	replicas []HostID
	offset   []int
}

// NewPlacement computes s's replicas for every range of r.
func NewPlacement(r *Ring, s Strategy) *Placement {
	p := &Placement{ring: r, strategy: s, offset: make([]int, len(r.tokens)+1)}
	var idx []int
	var sc scratch
	for i := range r.tokens {
		idx = s.place(r, i, idx[:0], &sc)
		for _, n := range idx {
			p.replicas = append(p.replicas, r.nodes[n].HostID)
		}
		p.offset[i+1] = len(p.replicas)
	}
	return p
}

// Ring is the ring the placement was computed for.
func (p *Placement) Ring() *Ring { return p.ring }

// Strategy is the strategy the placement was computed with.
func (p *Placement) Strategy() Strategy { return p.strategy }

func (p *Placement) at(i int) []HostID {
	return p.replicas[p.offset[i]:p.offset[i+1]:p.offset[i+1]]
}

// Replicas returns the replicas of token t, in the strategy's order (see
// Strategy.Replicas), nil on the empty ring. The slice is shared: the
// caller must not modify it (appending to it copies).
func (p *Placement) Replicas(t int64) []HostID {
	if len(p.ring.tokens) == 0 {
		return nil
	}
	return p.at(p.ring.search(t))
}

// ReplicasForKey returns the replicas of a serialized partition key (for a
// composite key, storage.CompositeKey's bytes), whose Murmur3 token is
// storage.Token's. The slice is shared, as with Replicas.
func (p *Placement) ReplicasForKey(partitionKey []byte) []HostID {
	return p.Replicas(storage.Token(partitionKey))
}

// All yields every range of the ring, in token order, with its replicas
// (shared, as with Replicas).
func (p *Placement) All() iter.Seq2[Range, []HostID] {
	return func(yield func(Range, []HostID) bool) {
		for i := range p.ring.tokens {
			if !yield(p.ring.rangeAt(i), p.at(i)) {
				return
			}
		}
	}
}

// Ranges returns the ranges node id holds a replica of, in token order
// (Cassandra's getAddressReplicas for one endpoint), nil when it holds
// none.
func (p *Placement) Ranges(id HostID) []Range {
	var out []Range
	for rg, reps := range p.All() {
		for _, h := range reps {
			if h == id {
				out = append(out, rg)
				break
			}
		}
	}
	return out
}
