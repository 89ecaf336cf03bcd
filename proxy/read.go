package proxy

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

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
	start := p.started()
	defer func() { p.measured("read", cl, start, err) }()
	if isSerial(cl) {
		return p.readPartitionSerial(ctx, cl, t, pk, o, fn)
	}
	rp, err := p.planRead(cl, t, storage.Token(pk))
	if err != nil {
		return err
	}
	if h, ok := p.alone(t, rp); ok {
		rep, err := p.replica(h)
		if err != nil {
			return err
		}
		return rep.ReadPartition(ctx, t, pk, o, fn)
	}
	part, err := p.readReconciled(ctx, t, rp, pk, o.Slice)
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
// EACH_QUORUM asks a quorum in every data center; too few replicas up is
// *cqlerr.Unavailable; the deadline of ctx passing is *cqlerr.ReadTimeout,
// a replica failing *cqlerr.ReadFailure. A replica slower than the
// table's speculative retry delay (Options.SpeculativeRetry) has another
// replica asked in its place.
func (p *Proxy) Read(ctx context.Context, cl primitive.ConsistencyLevel, t *storage.Table, pk []byte, slice storage.Slice) (_ *storage.Partition, err error) {
	start := p.started()
	defer func() { p.measured("read", cl, start, err) }()
	if isSerial(cl) {
		return p.readSerial(ctx, cl, t, pk, slice)
	}
	rp, err := p.planRead(cl, t, storage.Token(pk))
	if err != nil {
		return nil, err
	}
	if h, ok := p.alone(t, rp); ok {
		rep, err := p.replica(h)
		if err != nil {
			return nil, err
		}
		return rep.Read(ctx, t, pk, slice)
	}
	return p.readReconciled(ctx, t, rp, pk, slice)
}

// readPlan is the replicas a read asks: contacts first, as many as the
// level blocks for, and the extras it may ask in their place.
type readPlan struct {
	n        need
	contacts []ring.HostID
	extras   []ring.HostID
}

// alone reports whether rp is one replica's read with no speculation:
// this node's, or one with no other to ask.
func (p *Proxy) alone(t *storage.Table, rp readPlan) (ring.HostID, bool) {
	if len(rp.contacts) != 1 {
		return ring.HostID{}, false
	}
	h := rp.contacts[0]
	return h, h == p.local() || len(rp.extras) == 0 || p.speculateAfter(t) <= 0
}

func (p *Proxy) speculateAfter(t *storage.Table) time.Duration {
	if p.opts.SpeculativeRetry == nil {
		return 0
	}
	return p.opts.SpeculativeRetry(t)
}

// planRead picks the replicas a read of token tok at level cl asks: as
// many as the level blocks for, this node first, then its data center's,
// then the others, each group in placement order.
func (p *Proxy) planRead(cl primitive.ConsistencyLevel, t *storage.Table, tok int64) (readPlan, error) {
	if err := checkRead(cl); err != nil {
		return readPlan{}, err
	}
	ks, err := p.keyspace(t)
	if err != nil {
		return readPlan{}, err
	}
	natural, _, err := p.opts.Topology.Replicas(ks, tok)
	if err != nil {
		return readPlan{}, err
	}
	st, err := p.strategy(ks)
	if err != nil {
		return readPlan{}, err
	}
	n := p.needFor(cl, st, nil, false)
	if len(natural) == 1 && natural[0] == p.local() {
		// A cluster of one: no choice to make.
		return readPlan{n: n, contacts: natural}, p.available(&n, natural)
	}
	return p.contacts(n, natural)
}

// contacts chooses the replicas of natural a read with need n asks.
func (p *Proxy) contacts(n need, natural []ring.HostID) (readPlan, error) {
	live := p.byProximity(natural, n.dc)
	if err := p.available(&n, live); err != nil {
		return readPlan{n: n}, err
	}
	if n.perDC == nil {
		return readPlan{n: n, contacts: live[:n.blockFor:n.blockFor], extras: live[n.blockFor:]}, nil
	}
	// EACH_QUORUM: the nearest quorum of every data center
	// (ReplicaPlans.contactForEachQuorumRead), with no speculation.
	left := maps.Clone(n.perDC)
	var out []ring.HostID
	for _, h := range live {
		if dc := p.opts.Topology.DC(h); left[dc] > 0 {
			left[dc]--
			out = append(out, h)
		}
	}
	return readPlan{n: n, contacts: out}, nil
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

// readReconciled reads pk from the level's replicas, and when their
// answers differ, reconciles them and repairs the stale ones.
func (p *Proxy) readReconciled(ctx context.Context, t *storage.Table, rp readPlan, pk []byte, slice storage.Slice) (*storage.Partition, error) {
	hosts, parts, err := p.readAll(ctx, t, rp, pk, slice)
	if err != nil {
		return nil, err
	}
	merged, err := storage.ReconcilePartitions(parts...)
	if err != nil {
		return nil, fmt.Errorf("proxy: read of %s.%s: %w", t.Def.Keyspace, t.Def.Name, err)
	}
	if err := p.repair(ctx, &rp.n, hosts, t, merged, parts); err != nil {
		return nil, err
	}
	return merged, nil
}

// readAll is the answers of as many replicas as rp's level needs, with
// the replicas that gave them: the contacts', or when one is late (past
// the speculative retry delay) or unreachable, an extra's in its place.
// rp.contacts[0] is the one Cassandra would ask for data.
func (p *Proxy) readAll(ctx context.Context, t *storage.Table, rp readPlan, pk []byte, slice storage.Slice) ([]ring.HostID, []*storage.Partition, error) {
	n, extras := &rp.n, rp.extras
	asked := slices.Clone(rp.contacts)
	results := make(chan readResult, len(rp.contacts)+len(extras))
	ask := func(i int) {
		rep, err := p.replica(asked[i])
		if err != nil {
			results <- readResult{i: i, err: err}
			return
		}
		p.goBackground(func() {
			part, err := rep.Read(ctx, t, pk, slice)
			results <- readResult{i: i, part: part, err: err}
		})
	}
	// speculate asks the next extra replica, reporting whether there was
	// one.
	speculate := func() bool {
		if len(extras) == 0 {
			return false
		}
		asked = append(asked, extras[0])
		extras = extras[1:]
		if m := p.opts.Metrics; m != nil {
			m.SpeculativeRetries.Inc()
		}
		ask(len(asked) - 1)
		return true
	}
	for i := range asked {
		ask(i)
	}
	var late <-chan time.Time
	if d := p.speculateAfter(t); d > 0 && len(extras) > 0 {
		late = p.opts.After(d)
	}
	needed := len(rp.contacts)
	parts := make([]*storage.Partition, 0, needed)
	var hosts []ring.HostID
	dataPresent := false
	for len(parts) < needed {
		select {
		case r := <-results:
			switch {
			case r.err == nil:
				parts = append(parts, r.part)
				hosts = append(hosts, asked[r.i])
				dataPresent = dataPresent || r.i == 0
			case hintable(r.err) && speculate():
			case hintable(r.err):
				return nil, nil, &cqlerr.ReadTimeout{Consistency: n.cl, Received: int32(len(parts)), BlockFor: int32(n.total()), DataPresent: dataPresent}
			default:
				return nil, nil, &cqlerr.ReadFailure{Consistency: n.cl, Received: int32(len(parts)), BlockFor: int32(n.total()),
					DataPresent: dataPresent, Reasons: p.failureReasons([]ring.HostID{asked[r.i]}),
					Err: fmt.Errorf("proxy: read from %s: %w", asked[r.i], r.err)}
			}
		case <-late:
			late = nil // one speculation, as Cassandra makes
			speculate()
		case <-ctx.Done():
			return nil, nil, &cqlerr.ReadTimeout{Consistency: n.cl, Received: int32(len(parts)), BlockFor: int32(n.total()), DataPresent: dataPresent}
		}
	}
	return hosts, parts, nil
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
		m := &mutation.Mutation{}
		if err := m.Repair(t, merged, part); err != nil {
			return fmt.Errorf("proxy: read repair of %s: %w", contacts[i], err)
		}
		if len(m.Updates) == 0 {
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
			results <- readResult{i: i, err: rep.Apply(ctx, m, nil)}
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

// samePartition reports whether two answers hold the same keys and cells.
func samePartition(a, b *storage.Partition) bool {
	if len(a.KVs) != len(b.KVs) {
		return false
	}
	for i := range a.KVs {
		if !bytes.Equal(a.KVs[i].Key, b.KVs[i].Key) || !bytes.Equal(a.KVs[i].Value, b.KVs[i].Value) {
			return false
		}
	}
	return true
}
