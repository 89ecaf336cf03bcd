package ring

// Ownership returns each member's share of the ring as primary owner, in
// [0, 1], summing to 1: the ranges ending at its tokens
// (Murmur3Partitioner.describeOwnership summed per node). nodetool status
// prints it as "Owns" when the keyspaces' replication differ, since no one
// replicated figure is meaningful then.
func (r *Ring) Ownership() map[HostID]float64 {
	out := make(map[HostID]float64, len(r.nodes))
	for _, n := range r.nodes {
		out[n.HostID] = 0
	}
	for i, o := range r.owner {
		out[r.nodes[o].HostID] += r.rangeAt(i).Fraction()
	}
	return out
}

// Ownership returns each member's effective ownership, in [0, 1]: the
// share of the ring it holds a replica of (StorageService.effectiveOwnership),
// which nodetool status prints as "Owns (effective)" for a keyspace. The
// shares of a data center's nodes sum to the replicas placed there, so
// RF 3 over four nodes is 75% each when balanced. A node that holds no
// replica (one in a data center the strategy does not replicate to) has 0.
func (p *Placement) Ownership() map[HostID]float64 {
	out := make(map[HostID]float64, len(p.ring.nodes))
	for _, n := range p.ring.nodes {
		out[n.HostID] = 0
	}
	for rg, reps := range p.All() {
		f := rg.Fraction()
		for _, h := range reps {
			out[h] += f
		}
	}
	return out
}
