package proxy

import (
	"bytes"
	"context"
	"fmt"
	"slices"

	"github.com/datastax/go-cassandra-native-protocol/primitive"

	"github.com/cqld/cqld/batchlog"
	"github.com/cqld/cqld/cqlerr"
	"github.com/cqld/cqld/mutation"
	"github.com/cqld/cqld/ring"
)

// Batchlog keeps logged batches in nodes' batchlogs (batchlog.Client).
// Implementations are safe for concurrent use and do not keep the batch
// bytes.
type Batchlog interface {
	// Store writes batch id to host h's batchlog and returns once it is
	// durable there.
	Store(ctx context.Context, h ring.HostID, id batchlog.ID, batch []byte) error
	// Remove removes batch id from host h's batchlog, without waiting.
	Remove(h ring.HostID, id batchlog.ID)
}

var (
	_ Batchlog          = (*batchlog.Client)(nil)
	_ batchlog.Replayer = (*Proxy)(nil)
)

// spansPartitions reports whether m's Updates are of more than one
// partition: Cassandra's batch of several Mutations, which a logged batch
// writes through the batchlog (a keyspace and partition key each; Updates
// of several tables of one partition are one Mutation).
func spansPartitions(m *mutation.Mutation) bool {
	for _, u := range m.Updates[1:] {
		if u.Table.Def.Keyspace != m.Updates[0].Table.Def.Keyspace || !bytes.Equal(u.Key, m.Updates[0].Key) {
			return true
		}
	}
	return false
}

// applyLogged writes a logged batch atomically (StorageProxy.mutateAtomically):
// its level checked against every partition's replicas, the batch stored
// in the batchlog of up to two other nodes of this data center (a
// timeout there is WRITE_TIMEOUT of write type BATCH_LOG), its partitions
// written (write type BATCH), and, once every one has the
// acknowledgements its level needs, the batch removed from those
// batchlogs. A batch that is not removed is replayed by the nodes
// holding it.
func (p *Proxy) applyLogged(ctx context.Context, cl primitive.ConsistencyLevel, m *mutation.Mutation, check func() error) error {
	w, err := p.planWrite(cl, primitive.WriteTypeBatch, m.Updates, nil)
	if err != nil {
		return err
	}
	if len(w.hosts) == 0 && cl == primitive.ConsistencyLevelAny {
		return nil // no replica anywhere, as Apply answers it
	}
	if check != nil {
		// A batch planned against a definition that changed since is
		// refused before it is logged, not replayed later.
		if err := check(); err != nil {
			return err
		}
	}
	hosts, err := p.batchlogHosts(cl == primitive.ConsistencyLevelAny)
	if err != nil {
		return err
	}
	// One encoding serves the batchlog entry and the replicas' writes.
	if w.enc, err = encode(w.updates); err != nil {
		return err
	}
	batch := batchlog.EncodeEach(len(w.updates), w.enc.update)
	id := batchlog.NewID(p.opts.Now(), p.opts.Random)
	if err := p.storeBatch(ctx, hosts, id, batch); err != nil {
		return err
	}
	if p.opts.AfterBatchlog != nil {
		p.opts.AfterBatchlog()
	}
	if err := p.write(ctx, w, check, nil); err != nil {
		return err
	}
	for _, h := range hosts {
		p.opts.Batchlog.Remove(h, id)
	}
	return nil
}

// batchlogHosts chooses where a batch is logged
// (ReplicaPlans.forBatchlogWrite): this node alone when it is the only
// one of its data center; else up to two other live nodes of its data
// center, from other racks than this node's when there are two such,
// from two different racks when there are several; under ANY this node
// when no other is up. No node at all is UNAVAILABLE at ONE.
func (p *Proxy) batchlogHosts(isAny bool) ([]ring.HostID, error) {
	local, dc := p.opts.Topology.Local()
	var members []ring.Node
	localRack := ""
	for _, n := range p.opts.Topology.Nodes() {
		if n.DC == dc {
			members = append(members, n)
		}
		if n.HostID == local {
			localRack = n.Rack
		}
	}
	if len(members) == 1 {
		return []ring.HostID{members[0].HostID}, nil
	}
	var valid []ring.Node
	otherRacks := 0
	for _, n := range members {
		if n.HostID != local && p.alive(n.HostID) {
			valid = append(valid, n)
			if n.Rack != localRack {
				otherRacks++
			}
		}
	}
	if len(valid) > 2 && otherRacks >= 2 {
		valid = slices.DeleteFunc(valid, func(n ring.Node) bool { return n.Rack == localRack })
	}
	var chosen []ring.HostID
	if len(valid) <= 2 {
		for _, n := range valid {
			chosen = append(chosen, n.HostID)
		}
	} else {
		chosen = p.twoRacks(valid)
	}
	if len(chosen) == 0 && isAny {
		chosen = []ring.HostID{local}
	}
	if len(chosen) == 0 {
		return nil, unavailable(primitive.ConsistencyLevelOne, 1, 0)
	}
	return chosen, nil
}

// twoRacks picks two of nodes (more than two): two at random when they
// share one rack, else one at random from each of two racks chosen at
// random.
func (p *Proxy) twoRacks(nodes []ring.Node) []ring.HostID {
	byRack := map[string][]ring.HostID{}
	var racks []string
	for _, n := range nodes {
		if _, ok := byRack[n.Rack]; !ok {
			racks = append(racks, n.Rack)
		}
		byRack[n.Rack] = append(byRack[n.Rack], n.HostID)
	}
	shuffle := func(n int, swap func(i, j int)) {
		for i := n - 1; i > 0; i-- {
			swap(i, int(p.opts.Random()%uint64(i+1)))
		}
	}
	if len(racks) == 1 {
		hs := byRack[racks[0]]
		shuffle(len(hs), func(i, j int) { hs[i], hs[j] = hs[j], hs[i] })
		return hs[:2]
	}
	if len(racks) > 2 {
		shuffle(len(racks), func(i, j int) { racks[i], racks[j] = racks[j], racks[i] })
	}
	out := make([]ring.HostID, 0, 2)
	for _, r := range racks[:2] {
		hs := byRack[r]
		out = append(out, hs[p.opts.Random()%uint64(len(hs))])
	}
	return out
}

// storeBatch writes batch id to every host's batchlog and waits for all
// (Cassandra's ONE or TWO of the batchlog's replicas, which are all it
// chose).
func (p *Proxy) storeBatch(ctx context.Context, hosts []ring.HostID, id batchlog.ID, batch []byte) error {
	cl := primitive.ConsistencyLevelOne
	if len(hosts) > 1 {
		cl = primitive.ConsistencyLevelTwo
	}
	results := make(chan hostResult, len(hosts))
	for i, h := range hosts {
		p.goBackground(func() {
			results <- hostResult{host: i, err: p.opts.Batchlog.Store(ctx, h, id, batch)}
		})
	}
	for done := 0; done < len(hosts); done++ {
		select {
		case r := <-results:
			switch {
			case r.err == nil:
			case hintable(r.err):
				return &cqlerr.WriteTimeout{Consistency: cl, Received: int32(done), BlockFor: int32(len(hosts)), WriteType: primitive.WriteTypeBatchLog}
			default:
				return &cqlerr.WriteFailure{Consistency: cl, Received: int32(done), BlockFor: int32(len(hosts)), WriteType: primitive.WriteTypeBatchLog,
					Reasons: p.failureReasons([]ring.HostID{hosts[r.host]}), Err: fmt.Errorf("proxy: batchlog write to %s: %w", hosts[r.host], r.err)}
			}
		case <-ctx.Done():
			return &cqlerr.WriteTimeout{Consistency: cl, Received: int32(done), BlockFor: int32(len(hosts)), WriteType: primitive.WriteTypeBatchLog}
		}
	}
	return nil
}

// Replay implements batchlog.Replayer: every Update of m goes to all its
// natural and pending replicas, and Replay returns once each has answered
// or been hinted (a replica down, or failing with a timeout or an
// unreachable peer, or still silent when ctx ends); it fails when a
// replica refused the write or could not be hinted.
func (p *Proxy) Replay(ctx context.Context, m *mutation.Mutation) error {
	w, err := p.planWrite(primitive.ConsistencyLevelAny, primitive.WriteTypeBatch, m.Updates, nil)
	if err != nil {
		return err
	}
	enc, err := encode(w.updates)
	if err != nil {
		return err
	}
	errs := make(chan error, len(w.hosts))
	for j, h := range w.hosts {
		hm, err := enc.mutation(w.updatesOf[j])
		if err != nil {
			return err
		}
		p.goBackground(func() {
			err := errDown
			if p.alive(h) {
				err = p.applyTo(ctx, h, hm)
			}
			switch {
			case err == nil:
			case !hintable(err):
				err = fmt.Errorf("proxy: replay to %s: %w", h, err)
			case p.hint(h, hm, "batchlog"):
				err = nil
			default:
				err = fmt.Errorf("proxy: replay to %s missed and not hinted: %w", h, err)
			}
			errs <- err
		})
	}
	var first error
	for range w.hosts {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	return first
}

func (p *Proxy) applyTo(ctx context.Context, h ring.HostID, m *mutation.Mutation) error {
	rep, err := p.replica(h)
	if err != nil {
		return err
	}
	return rep.Apply(ctx, m, nil)
}
