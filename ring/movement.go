package ring

import (
	"slices"
)

// Movement is a token range whose replicas gain nodes in a topology
// change: the nodes that replicate it before the change (Sources, in
// placement order) and the nodes that replicate it only after (Targets).
// Each target must receive the range's data from a source by streaming
// before it serves reads of it. Losing are the sources that do not
// replicate it after: the replica a new one takes the place of, which
// holds every write the range's level promised (Cassandra streams a
// bootstrap from it, its "strict" source).
type Movement struct {
	Range   Range
	Sources []HostID
	Targets []HostID
	Losing  []HostID
}

// Movements returns the ranges of strategy s that gain replicas when ring
// before becomes ring after: a node joining (after = before.With), leaving
// or removed (after = before.Without). It is what Cassandra's
// RangeStreamer computes for a bootstrap and StorageService.getChangedReplicas
// for a decommission or a removenode: for each range of the two rings'
// tokens together, the replicas after that were not replicas before.
// Ranges come in token order, neighbours with the same sources and targets
// merged into one. Either ring empty moves nothing (a new cluster has no
// data to stream; an empty one no replica to stream to).
func Movements(s Strategy, before, after *Ring) []Movement {
	if before.Len() == 0 || after.Len() == 0 {
		return nil
	}
	tokens := append(before.Tokens(), after.tokens...)
	slices.Sort(tokens)
	tokens = slices.Compact(tokens)
	pb, pa := NewPlacement(before, s), NewPlacement(after, s)
	var out []Movement
	for i, t := range tokens {
		rg := Range{Start: tokens[(i+len(tokens)-1)%len(tokens)], End: t}
		from, to := pb.Replicas(t), pa.Replicas(t)
		var gained, losing []HostID
		for _, h := range to {
			if !slices.Contains(from, h) {
				gained = append(gained, h)
			}
		}
		if len(gained) == 0 {
			continue
		}
		for _, h := range from {
			if !slices.Contains(to, h) {
				losing = append(losing, h)
			}
		}
		mv := Movement{Range: rg, Sources: slices.Clone(from), Targets: gained, Losing: losing}
		if n := len(out); n > 0 && out[n-1].Range.End == rg.Start && sameMove(out[n-1], mv) {
			out[n-1].Range.End = rg.End
			continue
		}
		out = append(out, mv)
	}
	// A run through the ring's start began at the last token: join it to
	// the run that ends there.
	if n := len(out); n > 1 && out[n-1].Range.End == out[0].Range.Start && sameMove(out[n-1], out[0]) {
		out[0].Range.Start = out[n-1].Range.Start
		out = out[:n-1]
	}
	return out
}

func sameMove(a, b Movement) bool {
	return slices.Equal(a.Sources, b.Sources) && slices.Equal(a.Targets, b.Targets) && slices.Equal(a.Losing, b.Losing)
}
