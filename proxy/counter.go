package proxy

import (
	"context"
	"errors"
	"fmt"

	"github.com/datastax/go-cassandra-native-protocol/primitive"

	"github.com/cqld/cqld/cqlerr"
	"github.com/cqld/cqld/mutation"
	"github.com/cqld/cqld/ring"
	"github.com/cqld/cqld/storage"
)

// applyCounters writes a mutation that adds to counters. A replica's
// counter is a total it reads and rewrites (replica.Local.Apply), so each
// partition's deltas go to one leader replica, which adds them under its
// partition lock; the totals it wrote then go to the other replicas as
// plain cells, and the level counts the leader's acknowledgement with
// theirs, as for any write.
//
// The leader is the first replica up in placement order, the same for
// every coordinator: totals carry no per-node shards as Cassandra's
// counter contexts do, so two leaders adding to one counter at once would
// each write their own total and one increment would be lost.
func (p *Proxy) applyCounters(ctx context.Context, cl primitive.ConsistencyLevel, m *mutation.Mutation, wt primitive.WriteType, check func() error) error {
	if cl == primitive.ConsistencyLevelAny {
		return cqlerr.Invalidf("Consistency level ANY is not yet supported for counter table %s", m.Updates[0].Table.Def.Name)
	}
	leaders := make(map[int]ring.HostID, len(m.Updates))
	for i, u := range m.Updates {
		h, err := p.counterLeader(cl, u.Table, u.Key)
		if err != nil {
			return err
		}
		leaders[i] = h
	}
	w, err := p.planWrite(cl, wt, m.Updates, leaders)
	if err != nil {
		return err
	}
	if len(w.hosts) == 0 && len(m.Updates) > 0 && leaders[0] == p.local() && sameLeader(leaders) {
		// This node holds every replica: the local write alone.
		rep, err := p.replica(leaders[0])
		if err != nil {
			return err
		}
		return rep.Apply(ctx, m, check)
	}
	// Each leader adds its partitions' deltas, leaders in the order first
	// met.
	var order []ring.HostID
	byLeader := map[ring.HostID]*mutation.Mutation{}
	for i, u := range m.Updates {
		h := leaders[i]
		lm, ok := byLeader[h]
		if !ok {
			lm = &mutation.Mutation{}
			byLeader[h] = lm
			order = append(order, h)
		}
		lm.Updates = append(lm.Updates, u)
	}
	for _, h := range order {
		if err := p.lead(ctx, w, h, byLeader[h], check); err != nil {
			return err
		}
	}
	return p.write(ctx, w, check, leaders)
}

func sameLeader(leaders map[int]ring.HostID) bool {
	for _, h := range leaders {
		if h != leaders[0] {
			return false
		}
	}
	return true
}

// lead has leader h add lm's deltas; lm's Updates, which m shares, then
// hold the totals written.
func (p *Proxy) lead(ctx context.Context, w *writePlan, h ring.HostID, lm *mutation.Mutation, check func() error) error {
	rep, err := p.replica(h)
	if err != nil {
		return err
	}
	blockFor := int32(w.needs[0].total())
	if err := rep.Apply(ctx, lm, check); err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return &cqlerr.WriteTimeout{Consistency: w.cl, Received: 0, BlockFor: blockFor, WriteType: w.wt}
		}
		if hintable(err) {
			return &cqlerr.WriteFailure{Consistency: w.cl, BlockFor: blockFor, WriteType: w.wt,
				Reasons: p.failureReasons([]ring.HostID{h}), Err: fmt.Errorf("proxy: counter leader %s: %w", h, err)}
		}
		return err
	}
	if lm.HasCounters() {
		return fmt.Errorf("proxy: counter leader %s did not report the totals it wrote", h)
	}
	return nil
}

// counterLeader is the replica that adds to partition pk's counters: the
// first natural replica up.
func (p *Proxy) counterLeader(cl primitive.ConsistencyLevel, t *storage.Table, pk []byte) (ring.HostID, error) {
	ks, err := p.keyspace(t)
	if err != nil {
		return ring.HostID{}, err
	}
	natural, _, err := p.opts.Topology.Replicas(ks, storage.Token(pk))
	if err != nil {
		return ring.HostID{}, err
	}
	for _, h := range natural {
		if p.alive(h) {
			return h, nil
		}
	}
	st, err := p.strategy(ks)
	if err != nil {
		return ring.HostID{}, err
	}
	n := p.needFor(cl, st, nil, true)
	return ring.HostID{}, unavailable(cl, n.total(), 0)
}
