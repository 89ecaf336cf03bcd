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
	"github.com/cqld/cqld/replica"
	"github.com/cqld/cqld/ring"
	"github.com/cqld/cqld/speculate"
	"github.com/cqld/cqld/storage"
)

// ReadPartition calls fn for each live row of partition pk of t within o,
// read at level cl, until fn returns false. One replica's answer is that
// replica's read; several replicas' answers are reconciled (Read) and
// resolved here. Errors are Read's.
func (p *Proxy) ReadPartition(ctx context.Context, cl primitive.ConsistencyLevel, t *storage.Table, pk []byte, o storage.ReadOptions, fn func(*storage.Row) bool) (err error) {
	if p.opts.Metrics != nil {
		start := p.opts.Now()
		defer func() { p.observe("read", cl, start, err) }()
	}
	if isSerial(cl) {
		return p.readPartitionSerial(ctx, cl, t, pk, o, fn)
	}
	if rep, err := p.localRead(cl, t); err != nil || rep != nil {
		if err != nil {
			return err
		}
		return rep.ReadPartition(ctx, t, pk, o, fn)
	}
	return p.readPartitionPlanned(ctx, cl, t, pk, o, fn)
}

// ReadLocal is ReadPartition on this node's replica alone, for a read
// AllLocal found needs no other replica at cl (the coordinator's inline
// path): it places nothing and asks no level again; it is measured as
// ReadPartition is.
func (p *Proxy) ReadLocal(ctx context.Context, cl primitive.ConsistencyLevel, t *storage.Table, pk []byte, o storage.ReadOptions, fn func(*storage.Row) bool) error {
	if p.opts.Metrics != nil {
		return p.readLocalMeasured(ctx, cl, t, pk, o, fn)
	}
	rep, err := p.localReplica()
	if err != nil {
		return err
	}
	return rep.ReadPartition(ctx, t, pk, o, fn)
}

// readLocalMeasured is ReadLocal with metrics. The measuring defer is in
// a function of its own: in ReadLocal, even untaken, it would keep the
// arguments on the stack of every read (ReadLocal's three lines are not
// a function of their own either: a call more on every inline read).
func (p *Proxy) readLocalMeasured(ctx context.Context, cl primitive.ConsistencyLevel, t *storage.Table, pk []byte, o storage.ReadOptions, fn func(*storage.Row) bool) (err error) {
	start := p.opts.Now()
	defer func() { p.observe("read", cl, start, err) }()
	rep, err := p.localReplica()
	if err != nil {
		return err
	}
	return rep.ReadPartition(ctx, t, pk, o, fn)
}

// readPartitionPlanned is ReadPartition of a partition whose replicas
// planRead chooses. It is a function of its own so that each of the two
// has one defer, which the compiler open-codes (several defers and many
// returns in one function go through the runtime's defer records).
func (p *Proxy) readPartitionPlanned(ctx context.Context, cl primitive.ConsistencyLevel, t *storage.Table, pk []byte, o storage.ReadOptions, fn func(*storage.Row) bool) error {
	rp, err := p.planRead(cl, t, storage.Token(pk))
	if err != nil {
		return err
	}
	if !rp.oneLocal {
		defer p.readDone(t, p.opts.Now())
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
// table's speculative retry threshold has another
// replica asked in its place.
func (p *Proxy) Read(ctx context.Context, cl primitive.ConsistencyLevel, t *storage.Table, pk []byte, slice storage.Slice) (_ *storage.Partition, err error) {
	start := p.started()
	defer func() { p.measured("read", cl, start, err) }()
	if isSerial(cl) {
		return p.readSerial(ctx, cl, t, pk, slice)
	}
	if rep, err := p.localRead(cl, t); err != nil || rep != nil {
		if err != nil {
			return nil, err
		}
		return rep.Read(ctx, t, pk, slice)
	}
	return p.readPlanned(ctx, cl, t, pk, slice)
}

// readPlanned is Read of a partition whose replicas planRead chooses, a
// function of its own as readPartitionPlanned is.
func (p *Proxy) readPlanned(ctx context.Context, cl primitive.ConsistencyLevel, t *storage.Table, pk []byte, slice storage.Slice) (*storage.Partition, error) {
	rp, err := p.planRead(cl, t, storage.Token(pk))
	if err != nil {
		return nil, err
	}
	if !rp.oneLocal {
		defer p.readDone(t, p.opts.Now())
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
// level blocks for, and the extras it may ask in their place. oneLocal
// marks this node as the partition's only replica, where reads have no
// choice and no latencies are kept.
type readPlan struct {
	n        need
	contacts []ring.HostID
	extras   []ring.HostID
	oneLocal bool
}

// alone reports whether rp is one replica's read with no speculation:
// this node's, or one with no other to ask.
func (p *Proxy) alone(t *storage.Table, rp readPlan) (ring.HostID, bool) {
	if len(rp.contacts) != 1 {
		return ring.HostID{}, false
	}
	h := rp.contacts[0]
	return h, h == p.local() || len(rp.extras) == 0 || !p.speculates(t)
}

// localRead is this node's replica when it is the sole replica of t's
// keyspace (SoleReplicaTopology) and level cl can be met by it alone: a
// read then goes to it without placing its token, with no choice of
// replicas and no latencies kept, as planRead's cluster of one. It is nil
// when the read needs a plan; the error is the level's (checkRead,
// available).
func (p *Proxy) localRead(cl primitive.ConsistencyLevel, t *storage.Table) (replica.Replica, error) {
	if err := checkRead(cl); err != nil {
		return nil, err
	}
	if here, err := p.soleHere(cl, t, false); err != nil || !here {
		return nil, err
	}
	return p.localReplica()
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
		return readPlan{n: n, contacts: natural, oneLocal: true}, p.available(&n, natural)
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

// readReconciled reads pk as Cassandra's read executors do: data from
// the first contact and digests from the others. When every digest
// matches the data, the data is the answer; on a mismatch the replicas
// that answered are read in full, their answers reconciled and the stale
// ones repaired before the merged partition is returned.
func (p *Proxy) readReconciled(ctx context.Context, t *storage.Table, rp readPlan, pk []byte, slice storage.Slice) (*storage.Partition, error) {
	first, err := p.readRound(ctx, t, rp, pk, slice, true)
	if err != nil {
		return nil, err
	}
	if first.agree() {
		return first.data, nil
	}
	if m := p.opts.Metrics; m != nil {
		m.DigestMismatches.Inc()
	}
	full, err := p.readRound(ctx, t, readPlan{n: rp.n, contacts: first.hosts, extras: first.extras}, pk, slice, false)
	if err != nil {
		return nil, err
	}
	merged, err := storage.ReconcilePartitions(full.parts...)
	if err != nil {
		return nil, fmt.Errorf("proxy: read of %s.%s: %w", t.Def.Keyspace, t.Def.Name, err)
	}
	if err := p.repair(ctx, &rp.n, full.hosts, t, merged, full.parts); err != nil {
		return nil, err
	}
	return merged, nil
}

// round is the answers of one round of a read: a reply from each of hosts,
// a partition (parts[i], data) or only its digest (digests[i]).
type round struct {
	hosts   []ring.HostID
	parts   []*storage.Partition
	digests []storage.Digest
	// data is the first data reply; extras are the replicas not asked.
	data   *storage.Partition
	extras []ring.HostID
}

// agree reports whether every reply of a round of digests digests as the
// data does: alike, since the data's own digest is among them.
func (r *round) agree() bool {
	for _, x := range r.digests[1:] {
		if x != r.digests[0] {
			return false
		}
	}
	return true
}

// asyncReader is a replica that answers reads on a goroutine of its
// transport (replica.Remote): done must not block.
type asyncReader interface {
	ReadAsync(ctx context.Context, t *storage.Table, pk []byte, slice storage.Slice, done func(*storage.Partition, error))
	DigestAsync(ctx context.Context, t *storage.Table, pk []byte, slice storage.Slice, done func(storage.Digest, error))
}

var _ asyncReader = (*replica.Remote)(nil)

type readReply struct {
	i      int
	part   *storage.Partition
	digest storage.Digest
	err    error
}

// readRound asks rp's contacts for pk and waits for as many replies as
// the level needs. With digests, the first contact is asked for data and
// the others for digests only, and the round also waits for the data.
// A contact that is late (past the table's speculative retry threshold)
// or unreachable has an extra replica asked in its place, for data when
// no data has come yet, else for a digest; under speculative_retry
// ALWAYS, an extra replica is asked for data from the start.
func (p *Proxy) readRound(ctx context.Context, t *storage.Table, rp readPlan, pk []byte, slice storage.Slice, digests bool) (*round, error) {
	n, extras := &rp.n, rp.extras
	asked := slices.Clone(rp.contacts)
	replies := make(chan readReply, len(rp.contacts)+len(extras))
	ask := func(i int, data bool) {
		rep, err := p.replica(asked[i])
		if err != nil {
			replies <- readReply{i: i, err: err}
			return
		}
		if ar, ok := rep.(asyncReader); ok {
			// A remote replica answers on its transport's goroutine;
			// Close waits for it.
			p.wg.Add(1)
			if data {
				ar.ReadAsync(ctx, t, pk, slice, func(part *storage.Partition, err error) {
					defer p.wg.Done()
					replies <- readReply{i: i, part: part, err: err}
				})
			} else {
				ar.DigestAsync(ctx, t, pk, slice, func(d storage.Digest, err error) {
					defer p.wg.Done()
					replies <- readReply{i: i, digest: d, err: err}
				})
			}
			return
		}
		p.goBackground(func() {
			if data {
				part, err := rep.Read(ctx, t, pk, slice)
				replies <- readReply{i: i, part: part, err: err}
				return
			}
			d, err := rep.Digest(ctx, t, pk, slice)
			replies <- readReply{i: i, digest: d, err: err}
		})
	}
	r := &round{}
	// askExtra asks the next extra replica, reporting whether there was
	// one.
	askExtra := func() bool {
		if len(extras) == 0 {
			return false
		}
		asked = append(asked, extras[0])
		extras = extras[1:]
		if m := p.opts.Metrics; m != nil {
			m.SpeculativeRetries.Inc()
		}
		ask(len(asked)-1, !digests || r.data == nil)
		return true
	}
	for i := range asked {
		ask(i, !digests || i == 0)
	}
	var late <-chan time.Time
	if len(extras) > 0 {
		switch pol, wait := p.speculation(t); {
		case pol.Kind == speculate.Always && digests:
			askExtra()
		case pol.Kind != speculate.Always && wait < p.opts.ReadTimeout:
			late = p.opts.After(wait)
		}
	}
	needed := len(rp.contacts)
	for len(r.hosts) < needed || r.data == nil {
		select {
		case x := <-replies:
			switch {
			case x.err == nil:
				r.hosts = append(r.hosts, asked[x.i])
				if x.part != nil {
					if r.data == nil {
						r.data = x.part
					}
					r.parts = append(r.parts, x.part)
					if digests {
						x.digest = storage.PartitionDigest(x.part)
					}
				}
				r.digests = append(r.digests, x.digest)
			case hintable(x.err) && askExtra():
			case hintable(x.err):
				return nil, &cqlerr.ReadTimeout{Consistency: n.cl, Received: int32(len(r.hosts)), BlockFor: int32(n.total()), DataPresent: r.data != nil}
			default:
				return nil, &cqlerr.ReadFailure{Consistency: n.cl, Received: int32(len(r.hosts)), BlockFor: int32(n.total()),
					DataPresent: r.data != nil, Reasons: p.failureReasons([]ring.HostID{asked[x.i]}),
					Err: fmt.Errorf("proxy: read from %s: %w", asked[x.i], x.err)}
			}
		case <-late:
			late = nil // one speculation, as Cassandra makes
			askExtra()
		case <-ctx.Done():
			return nil, &cqlerr.ReadTimeout{Consistency: n.cl, Received: int32(len(r.hosts)), BlockFor: int32(n.total()), DataPresent: r.data != nil}
		}
	}
	r.extras = extras
	return r, nil
}

// repair sends each contact whose answer lacks part of merged the Update
// that makes it current, and waits for every one to be acknowledged.
func (p *Proxy) repair(ctx context.Context, n *need, contacts []ring.HostID, t *storage.Table, merged *storage.Partition, parts []*storage.Partition) error {
	results := make(chan readReply, len(contacts))
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
			results <- readReply{i: i, err: rep.Apply(ctx, m, nil)}
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
