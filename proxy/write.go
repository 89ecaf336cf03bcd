package proxy

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/datastax/go-cassandra-native-protocol/primitive"

	"github.com/cqld/cqld/cqlerr"
	"github.com/cqld/cqld/messaging"
	"github.com/cqld/cqld/mutation"
	"github.com/cqld/cqld/replica"
	"github.com/cqld/cqld/ring"
	"github.com/cqld/cqld/storage"
)

// Apply writes m at level cl (StorageProxy.mutate): every Update goes to
// all the natural and pending replicas of its partition, each replica
// getting one Mutation of the Updates it holds, and Apply returns once
// every Update has the acknowledgements its level needs. A level that the
// replicas up cannot meet is refused with *cqlerr.Unavailable before
// anything is sent; the deadline of ctx passing first answers
// *cqlerr.WriteTimeout with write type wt; replicas failing so that the
// level cannot be met answer *cqlerr.WriteFailure. A replica that is down,
// or does not answer by the deadline, gets a hint. The writes still
// running when Apply returns go on, on copies of m, until they are
// acknowledged or hinted. check runs on each replica as Replica.Apply
// runs it. Counter deltas go through a leader replica (counter.go). m is
// not kept after Apply returns; with counters it holds the totals
// written, as Replica.Apply leaves it.
func (p *Proxy) Apply(ctx context.Context, cl primitive.ConsistencyLevel, m *mutation.Mutation, wt primitive.WriteType, check func() error) (err error) {
	start := p.started()
	defer func() { p.measured("write", cl, start, err) }()
	if m.HasCounters() {
		return p.applyCounters(ctx, cl, m, wt, check)
	}
	if local, err := p.localOnly(cl, m.Updates); err != nil || local {
		if err != nil {
			return err
		}
		// One replica, this node's: the write is the local one alone.
		rep, err := p.replica(p.local())
		if err != nil {
			return err
		}
		return rep.Apply(ctx, m, check)
	}
	w, err := p.planWrite(cl, wt, m.Updates, nil)
	if err != nil {
		return err
	}
	if len(w.hosts) == 0 && cl == primitive.ConsistencyLevelAny {
		// No replica anywhere (a keyspace placed only in data centers
		// the ring lacks): nothing to write or hint, as on one node.
		return nil
	}
	return p.write(ctx, w, check, nil)
}

// localOnly reports whether this node is the one replica, natural or
// pending, of every Update, checking their level can be met; it is
// planWrite for a cluster of one, without its allocations.
func (p *Proxy) localOnly(cl primitive.ConsistencyLevel, updates []*mutation.Update) (bool, error) {
	local := p.local()
	var memo keyspaceMemo
	for _, u := range updates {
		st, natural, pending, err := memo.replicas(p, u)
		if err != nil {
			return false, err
		}
		if len(natural) != 1 || natural[0] != local || len(pending) != 0 {
			return false, nil
		}
		n := p.needFor(cl, st, nil, true)
		if err := p.available(&n, natural); err != nil {
			return false, err
		}
	}
	return true, nil
}

// writePlan is where a write's Updates go and what each needs.
type writePlan struct {
	cl      primitive.ConsistencyLevel
	wt      primitive.WriteType
	updates []*mutation.Update
	needs   []need
	// hosts are the replicas in the order first met; of hosts[i],
	// updatesOf[i] are the indexes of its Updates.
	hosts     []ring.HostID
	updatesOf [][]int
	// send, when set, replaces Replica.Apply: a Paxos commit.
	send func(ctx context.Context, rep replica.Replica, m *mutation.Mutation, check func() error) error
}

// planWrite places updates, checking each level can be met. skip, when
// set, is a replica that already holds some Updates (a counter leader)
// and is left out of their targets, though its acknowledgement is
// counted by the caller.
func (p *Proxy) planWrite(cl primitive.ConsistencyLevel, wt primitive.WriteType, updates []*mutation.Update, skip map[int]ring.HostID) (*writePlan, error) {
	w := &writePlan{cl: cl, wt: wt, updates: updates, needs: make([]need, len(updates))}
	index := map[ring.HostID]int{}
	var (
		memo keyspaceMemo
		live []ring.HostID
	)
	for i, u := range updates {
		st, natural, pending, err := memo.replicas(p, u)
		if err != nil {
			return nil, err
		}
		w.needs[i] = p.needFor(cl, st, pending, true)
		live = live[:0]
		for _, targets := range [][]ring.HostID{natural, pending} {
			for _, h := range targets {
				if p.alive(h) {
					live = append(live, h)
				}
			}
		}
		if err := p.available(&w.needs[i], live); err != nil {
			return nil, err
		}
		for _, targets := range [][]ring.HostID{natural, pending} {
			for _, h := range targets {
				if s, ok := skip[i]; ok && s == h {
					continue
				}
				j, ok := index[h]
				if !ok {
					j = len(w.hosts)
					index[h] = j
					w.hosts = append(w.hosts, h)
					w.updatesOf = append(w.updatesOf, nil)
				}
				w.updatesOf[j] = append(w.updatesOf[j], i)
			}
		}
	}
	return w, nil
}

// errDown is the answer of a replica gossip says is down: it is not sent
// the write, as if it were unreachable.
var errDown = fmt.Errorf("proxy: replica down: %w", messaging.ErrUnreachable)

// hostResult is one replica's answer to a write.
type hostResult struct {
	host   int
	err    error
	hinted bool
}

// write sends w's Updates and waits for their levels. acked holds, by
// Update, a reply received before (a counter leader's).
func (p *Proxy) write(ctx context.Context, w *writePlan, check func() error, acked map[int]ring.HostID) error {
	tallies := make([]*tally, len(w.updates))
	for i := range w.needs {
		tallies[i] = newTally(&w.needs[i])
		if h, ok := acked[i]; ok {
			tallies[i].ack(p.opts.Topology.DC(h))
		}
	}
	// The writes may outlive the request, whose buffers m references.
	updates, err := cloneUpdates(w.updates)
	if err != nil {
		return err
	}
	bg, cancel := detach(ctx)
	results := make(chan hostResult, len(w.hosts))
	outstanding := make([]bool, len(w.hosts))
	var sends sync.WaitGroup
	for j, h := range w.hosts {
		hm := &mutation.Mutation{}
		for _, i := range w.updatesOf[j] {
			hm.Updates = append(hm.Updates, updates[i])
		}
		if !p.alive(h) {
			// Its hint is written off the request's path; under ANY it
			// counts once kept.
			outstanding[j] = true
			p.goBackground(func() {
				results <- hostResult{host: j, err: errDown, hinted: p.hint(h, hm, "down")}
			})
			continue
		}
		rep, err := p.replica(h)
		if err != nil {
			results <- hostResult{host: j, err: err}
			outstanding[j] = true
			continue
		}
		outstanding[j] = true
		sends.Add(1)
		p.goBackground(func() {
			defer sends.Done()
			var err error
			if w.send != nil {
				err = w.send(bg, rep, hm, check)
			} else {
				err = rep.Apply(bg, hm, check)
			}
			hinted := false
			if err != nil && hintable(err) {
				hinted = p.hint(h, hm, "late")
			}
			results <- hostResult{host: j, err: err, hinted: hinted}
		})
	}
	// The detached context ends when the last write has answered.
	p.goBackground(func() {
		sends.Wait()
		cancel()
	})

	var failed []ring.HostID
	var firstErr error
	for {
		if allMet(tallies) {
			return nil
		}
		if !slices.Contains(outstanding, true) {
			// Nothing more can come (ANY with every replica down and no
			// hint kept): the timeout the level would end in, now.
			return p.writeTimeout(w, tallies)
		}
		select {
		case r := <-results:
			outstanding[r.host] = false
			switch {
			case r.err == nil:
				for _, i := range w.updatesOf[r.host] {
					tallies[i].ack(p.opts.Topology.DC(w.hosts[r.host]))
				}
			case r.hinted && w.cl == primitive.ConsistencyLevelAny:
				for _, i := range w.updatesOf[r.host] {
					tallies[i].ackAny()
				}
			default:
				// A replica late or unreachable is a timeout, as the
				// expired callback is in Cassandra; one that refused the
				// write is a failure.
				if !hintable(r.err) {
					failed = append(failed, w.hosts[r.host])
					if firstErr == nil {
						firstErr = r.err
					}
				}
				i, ok := p.unreachable(w, tallies, outstanding)
				switch {
				case ok && len(failed) > 0:
					return &cqlerr.WriteFailure{Consistency: w.cl, Received: int32(tallies[i].received()),
						BlockFor: int32(tallies[i].n.total()), WriteType: w.wt, Reasons: p.failureReasons(failed),
						Err: fmt.Errorf("proxy: write to %s: %w", failed[0], firstErr)}
				case ok:
					return &cqlerr.WriteTimeout{Consistency: w.cl, Received: int32(tallies[i].received()), BlockFor: int32(tallies[i].n.total()), WriteType: w.wt}
				}
			}
		case <-ctx.Done():
			return p.writeTimeout(w, tallies)
		}
	}
}

// writeTimeout is the WRITE_TIMEOUT of the first Update whose level is
// not met.
func (p *Proxy) writeTimeout(w *writePlan, tallies []*tally) error {
	for _, t := range tallies {
		if !t.met() {
			return &cqlerr.WriteTimeout{Consistency: w.cl, Received: int32(t.received()), BlockFor: int32(t.n.total()), WriteType: w.wt}
		}
	}
	return nil
}

func allMet(ts []*tally) bool {
	for _, t := range ts {
		if !t.met() {
			return false
		}
	}
	return true
}

// unreachable returns an Update whose level the replies still to come
// can no longer meet.
func (p *Proxy) unreachable(w *writePlan, tallies []*tally, outstanding []bool) (int, bool) {
	pendingDCs := make([][]string, len(w.updates))
	for j, out := range outstanding {
		if !out {
			continue
		}
		dc := p.opts.Topology.DC(w.hosts[j])
		for _, i := range w.updatesOf[j] {
			pendingDCs[i] = append(pendingDCs[i], dc)
		}
	}
	for i, t := range tallies {
		if w.cl != primitive.ConsistencyLevelAny && !t.met() && !t.reachable(pendingDCs[i]) {
			return i, true
		}
	}
	return 0, false
}

// hint stores m for h, reporting whether it was kept; reason is the
// Metrics.Hints label.
func (p *Proxy) hint(h ring.HostID, m *mutation.Mutation, reason string) bool {
	if p.opts.Hints == nil {
		return false
	}
	if err := p.opts.Hints.Store(h, m); err != nil {
		p.log.Warn("proxy: hint not stored", "target", h.String(), "err", err)
		return false
	}
	if pm := p.opts.Metrics; pm != nil {
		pm.Hints.WithLabelValues(reason).Inc()
	}
	return true
}

// hintable reports whether a replica's failure to write is its being
// unreachable or late, which a hint makes up for, rather than its refusing
// the write.
func hintable(err error) bool {
	for _, e := range []error{context.DeadlineExceeded, messaging.ErrTimeout, messaging.ErrUnreachable,
		messaging.ErrQueueFull, messaging.ErrConnectionLost, messaging.ErrClosed} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// detach is a context that keeps ctx's deadline and values but not its
// cancellation: a write the client no longer waits for still finishes,
// or times out and is hinted, as Cassandra's do.
func detach(ctx context.Context) (context.Context, context.CancelFunc) {
	bg := context.WithoutCancel(ctx)
	if dl, ok := ctx.Deadline(); ok {
		return context.WithDeadline(bg, dl)
	}
	return context.WithCancel(bg)
}

// cloneUpdates copies updates, keys and values with them, through the
// mutation codec.
func cloneUpdates(updates []*mutation.Update) ([]*mutation.Update, error) {
	tables := map[[16]byte]*storage.Table{}
	var buf []byte
	for _, u := range updates {
		tables[u.Table.Def.ID] = u.Table
		var err error
		if buf, err = mutation.Append(buf, u); err != nil {
			return nil, fmt.Errorf("proxy: copy of a write to %s.%s: %w", u.Table.Def.Keyspace, u.Table.Def.Name, err)
		}
	}
	lookup := func(id [16]byte) (*storage.Table, bool) { t, ok := tables[id]; return t, ok }
	out := make([]*mutation.Update, len(updates))
	for i := range out {
		u, rest, err := mutation.Decode(buf, lookup)
		if err != nil {
			return nil, fmt.Errorf("proxy: copy of a write: %w", err)
		}
		out[i], buf = u, rest
	}
	return out, nil
}

// keyspaceMemo is the keyspace and strategy of the last table looked up:
// a batch's Updates are mostly of one table.
type keyspaceMemo struct {
	t  *storage.Table
	ks *storage.KeyspaceDef
	st ring.Strategy
}

// replicas is u's keyspace strategy and its partition's natural and
// pending replicas.
func (m *keyspaceMemo) replicas(p *Proxy, u *mutation.Update) (st ring.Strategy, natural, pending []ring.HostID, err error) {
	if u.Table != m.t {
		ks, err := p.keyspace(u.Table)
		if err != nil {
			return nil, nil, nil, err
		}
		st, err := p.strategy(ks)
		if err != nil {
			return nil, nil, nil, err
		}
		*m = keyspaceMemo{t: u.Table, ks: ks, st: st}
	}
	natural, pending, err = p.opts.Topology.Replicas(m.ks, storage.Token(u.Key))
	return m.st, natural, pending, err
}
