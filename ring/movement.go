package ring

import (
	"slices"
)

// Movement is a token range whose replicas gain nodes in a topology
// change: the nodes that replicate it before the change (Sources, in
// placement order) and the nodes that replicate it only after (Targets).
// Each target must receive the range's data from a source by streaming
// before it serves reads of it.
type Movement struct {
	Range   Range
	Sources []HostID
	Targets []HostID
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
		var gained []HostID
		for _, h := range to {
			if !slices.Contains(from, h) {
				gained = append(gained, h)
			}
		}
		if len(gained) == 0 {
			continue
		}
		if n := len(out); n > 0 && out[n-1].Range.End == rg.Start &&
			slices.Equal(out[n-1].Sources, from) && slices.Equal(out[n-1].Targets, gained) {
			out[n-1].Range.End = rg.End
			continue
		}
		out = append(out, Movement{Range: rg, Sources: slices.Clone(from), Targets: gained})
	}
	// A run through the ring's start began at the last token: join it to
	// the run that ends there.
	if n := len(out); n > 1 && out[n-1].Range.End == out[0].Range.Start &&
		slices.Equal(out[n-1].Sources, out[0].Sources) && slices.Equal(out[n-1].Targets, out[0].Targets) {
		out[0].Range.Start = out[n-1].Range.Start
		out = out[:n-1]
	}
	return out
}
