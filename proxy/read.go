package proxy

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/datastax/go-cassandra-native-protocol/primitive"

	"github.com/cqld/cqld/cqlerr"
	"github.com/cqld/cqld/mutation"
	"github.com/cqld/cqld/ring"
	"github.com/cqld/cqld/storage"
)

// ReadPartition calls fn for each live row of partition pk of t within o,
// read at level cl, until fn returns false. One replica's answer is that
// replica's read; several replicas' answers are reconciled (Read) and
// resolved here. Errors are Read's.
func (p *Proxy) ReadPartition(ctx context.Context, cl primitive.ConsistencyLevel, t *storage.Table, pk []byte, o storage.ReadOptions, fn func(*storage.Row) bool) (err error) {
	defer p.measure("read", cl)(&err)
	contacts, n, err := p.planRead(cl, t, storage.Token(pk))
	if err != nil {
		return err
	}
	if len(contacts) == 1 {
		rep, err := p.replica(contacts[0])
		if err != nil {
			return err
		}
		return rep.ReadPartition(ctx, t, pk, o, fn)
	}
	part, err := p.readReconciled(ctx, &n, contacts, t, pk, o.Slice)
	if err != nil {
		return err
	}
	return t.Resolve(part, o, fn)
}

// Read returns partition pk of t within slice, unresolved, as blockFor
// replicas of level cl hold it together (StorageProxy.read): each
// replica's answer, and when they differ, their reconciliation, once
// every replica that lacked part of it has been repaired (blocking read
// repair, Cassandra 4.0's default). ANY is refused with Cassandra's words;
// EACH_QUORUM asks a quorum in every data center; too few replicas up is *cqlerr.Unavailable; the
// deadline of ctx passing is *cqlerr.ReadTimeout, a replica failing
// *cqlerr.ReadFailure.
func (p *Proxy) Read(ctx context.Context, cl primitive.ConsistencyLevel, t *storage.Table, pk []byte, slice storage.Slice) (_ *storage.Partition, err error) {
	defer p.measure("read", cl)(&err)
	contacts, n, err := p.planRead(cl, t, storage.Token(pk))
	if err != nil {
		return nil, err
	}
	if len(contacts) == 1 {
		rep, err := p.replica(contacts[0])
		if err != nil {
			return nil, err
		}
		return rep.Read(ctx, t, pk, slice)
	}
	return p.readReconciled(ctx, &n, contacts, t, pk, slice)
}

// planRead picks the replicas a read of token tok at level cl asks: as
// many as the level blocks for, this node first, then its data center's,
// then the others, each group in placement order.
func (p *Proxy) planRead(cl primitive.ConsistencyLevel, t *storage.Table, tok int64) ([]ring.HostID, need, error) {
	if err := checkRead(cl); err != nil {
		return nil, need{}, err
	}
	ks, err := p.keyspace(t)
	if err != nil {
		return nil, need{}, err
	}
	natural, _, err := p.opts.Topology.Replicas(ks, tok)
	if err != nil {
		return nil, need{}, err
	}
	if isSerial(cl) {
		h, err := p.primaryHere(t, natural)
		return []ring.HostID{h}, need{cl: cl, blockFor: 1}, err
	}
	st, err := p.strategy(ks)
	if err != nil {
		return nil, need{}, err
	}
	n := p.needFor(cl, st, nil, false)
	if len(natural) == 1 && natural[0] == p.local() {
		// A cluster of one: no choice to make.
		return natural, n, p.available(&n, natural)
	}
	return p.contacts(&n, natural)
}

// contacts chooses the replicas of natural a read with need n asks.
func (p *Proxy) contacts(n *need, natural []ring.HostID) ([]ring.HostID, need, error) {
	live := p.byProximity(natural, n.dc)
	if err := p.available(n, live); err != nil {
		return nil, *n, err
	}
	if n.perDC == nil {
		return live[:n.blockFor], *n, nil
	}
	// EACH_QUORUM: the nearest quorum of every data center
	// (ReplicaPlans.contactForEachQuorumRead).
	left := maps.Clone(n.perDC)
	var out []ring.HostID
	for _, h := range live {
		if dc := p.opts.Topology.DC(h); left[dc] > 0 {
			left[dc]--
			out = append(out, h)
		}
	}
	return out, *n, nil
}

// byProximity returns the replicas up among hosts (of data center dc
// alone when dc is set): this node, its data center's, then the others.
func (p *Proxy) byProximity(hosts []ring.HostID, dc string) []ring.HostID {
	local, localDC := p.opts.Topology.Local()
	rank := func(h ring.HostID) int {
		switch {
		case h == local:
			return 0
		case p.opts.Topology.DC(h) == localDC:
			return 1
		}
		return 2
	}
	out := make([]ring.HostID, 0, len(hosts))
	for _, h := range hosts {
		if p.alive(h) && (dc == "" || p.opts.Topology.DC(h) == dc) {
			out = append(out, h)
		}
	}
	slices.SortStableFunc(out, func(a, b ring.HostID) int { return rank(a) - rank(b) })
	return out
}

type readResult struct {
	i    int
	part *storage.Partition
	err  error
}

// readReconciled reads pk from every contact (all of them needed), and
// when their answers differ, reconciles them and repairs the stale ones.
// contacts[0] is the one Cassandra would ask for data.
func (p *Proxy) readReconciled(ctx context.Context, n *need, contacts []ring.HostID, t *storage.Table, pk []byte, slice storage.Slice) (*storage.Partition, error) {
	parts, err := p.readAll(ctx, n, contacts, t, pk, slice)
	if err != nil {
		return nil, err
	}
	merged, err := storage.ReconcilePartitions(parts...)
	if err != nil {
		return nil, fmt.Errorf("proxy: read of %s.%s: %w", t.Def.Keyspace, t.Def.Name, err)
	}
	if err := p.repair(ctx, n, contacts, t, merged, parts); err != nil {
		return nil, err
	}
	return merged, nil
}

// readAll is every contact's answer, in contacts' order.
func (p *Proxy) readAll(ctx context.Context, n *need, contacts []ring.HostID, t *storage.Table, pk []byte, slice storage.Slice) ([]*storage.Partition, error) {
	results := make(chan readResult, len(contacts))
	for i, h := range contacts {
		rep, err := p.replica(h)
		if err != nil {
			results <- readResult{i: i, err: err}
			continue
		}
		p.goBackground(func() {
			part, err := rep.Read(ctx, t, pk, slice)
			results <- readResult{i: i, part: part, err: err}
		})
	}
	parts := make([]*storage.Partition, len(contacts))
	received := 0
	for received < len(contacts) {
		select {
		case r := <-results:
			switch {
			case r.err == nil:
				parts[r.i] = r.part
				received++
			case hintable(r.err):
				// Every contact is needed: one late or unreachable is the
				// read's timeout.
				return nil, &cqlerr.ReadTimeout{Consistency: n.cl, Received: int32(received), BlockFor: int32(n.total()), DataPresent: parts[0] != nil}
			default:
				return nil, &cqlerr.ReadFailure{Consistency: n.cl, Received: int32(received), BlockFor: int32(n.total()),
					DataPresent: parts[0] != nil, Reasons: p.failureReasons([]ring.HostID{contacts[r.i]}),
					Err: fmt.Errorf("proxy: read from %s: %w", contacts[r.i], r.err)}
			}
		case <-ctx.Done():
			return nil, &cqlerr.ReadTimeout{Consistency: n.cl, Received: int32(received), BlockFor: int32(n.total()), DataPresent: parts[0] != nil}
		}
	}
	return parts, nil
}

// repair sends each contact whose answer lacks part of merged the Update
// that makes it current, and waits for every one to be acknowledged.
func (p *Proxy) repair(ctx context.Context, n *need, contacts []ring.HostID, t *storage.Table, merged *storage.Partition, parts []*storage.Partition) error {
	results := make(chan readResult, len(contacts))
	sent := 0
	for i, part := range parts {
		if samePartition(merged, part) {
			continue
		}
		u, skipped, err := repairUpdate(t, merged, part)
		if err != nil {
			return err
		}
		if skipped > 0 {
			p.log.Warn("proxy: read repair left collection elements it cannot type", "table", t.Def.Keyspace+"."+t.Def.Name, "replica", contacts[i].String(), "cells", skipped)
		}
		if len(u.Ops) == 0 {
			continue
		}
		rep, err := p.replica(contacts[i])
		if err != nil {
			return err
		}
		sent++
		if m := p.opts.Metrics; m != nil {
			m.ReadRepairs.Inc()
		}
		p.goBackground(func() {
			results <- readResult{i: i, err: rep.Apply(ctx, &mutation.Mutation{Updates: []*mutation.Update{u}}, nil)}
		})
	}
	blockFor := n.total()
	for done := 0; done < sent; done++ {
		select {
		case r := <-results:
			if r.err != nil && !hintable(r.err) {
				return &cqlerr.ReadFailure{Consistency: n.cl, Received: int32(blockFor - sent + done), BlockFor: int32(blockFor),
					DataPresent: true, Reasons: p.failureReasons([]ring.HostID{contacts[r.i]}),
					Err: fmt.Errorf("proxy: read repair of %s: %w", contacts[r.i], r.err)}
			}
			if r.err != nil {
				return &cqlerr.ReadTimeout{Consistency: n.cl, Received: int32(blockFor - sent + done), BlockFor: int32(blockFor), DataPresent: true}
			}
		case <-ctx.Done():
			return &cqlerr.ReadTimeout{Consistency: n.cl, Received: int32(blockFor - sent + done), BlockFor: int32(blockFor), DataPresent: true}
		}
	}
	return nil
}
