package proxy

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"

	"github.com/datastax/go-cassandra-native-protocol/primitive"

	"github.com/cqld/cqld/cqlerr"
	"github.com/cqld/cqld/messaging"
	"github.com/cqld/cqld/mutation"
	"github.com/cqld/cqld/replica"
	"github.com/cqld/cqld/ring"
	"github.com/cqld/cqld/storage"
	"github.com/cqld/cqld/tracing"
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
// acknowledged or hinted. A logged batch (write type BATCH) spanning
// partitions goes through the batchlog (batch.go) unless this node is
// the only replica of all of them. check runs on each replica as
// Replica.Apply runs it. Counter deltas go through a leader replica
// (counter.go). m is not kept after Apply returns; with counters it holds
// the totals written, as Replica.Apply leaves it.
func (p *Proxy) Apply(ctx context.Context, cl primitive.ConsistencyLevel, m *mutation.Mutation, wt primitive.WriteType, check func() error) (err error) {
	if p.opts.Metrics != nil {
		start := p.opts.Now()
		defer func() { p.observe("write", cl, start, err) }()
	}
	if cl == primitive.ConsistencyLevelAny && m.HasCounters() {
		return p.applyCounters(ctx, cl, m, wt, check) // refused
	}
	if local, err := p.localOnly(cl, m.Updates); err != nil || local {
		if err != nil {
			return err
		}
		// One replica, this node's: the write is the local one alone,
		// atomic across its partitions without a batchlog. Counters are
		// added there, their leader, as applyCounters would have them:
		// it answers as localOnly for a node alone, and its write is
		// this one.
		rep, err := p.localReplica()
		if err != nil {
			return err
		}
		return rep.Apply(ctx, m, check)
	}
	if m.HasCounters() {
		return p.applyCounters(ctx, cl, m, wt, check)
	}
	if wt == primitive.WriteTypeBatch && p.opts.Batchlog != nil && len(m.Updates) > 1 && spansPartitions(m) {
		return p.applyLogged(ctx, cl, m, check)
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
// planWrite for a cluster of one, without its allocations. A keyspace
// whose sole replica this node is (SoleReplicaTopology) is checked once,
// without placing each partition.
func (p *Proxy) localOnly(cl primitive.ConsistencyLevel, updates []*mutation.Update) (bool, error) {
	if len(updates) == 1 {
		// Most writes are of one partition: one question on a node alone.
		if here, err := p.soleHere(cl, updates[0].Table, true); err != nil || here {
			return here, err
		}
		var memo keyspaceMemo
		return p.placedHere(cl, &memo, updates[0])
	}
	var (
		memo keyspaceMemo
		sole *storage.Table // a table whose keyspace has this node as its sole replica
	)
	for _, u := range updates {
		if u.Table == sole {
			continue
		}
		if u.Table != memo.t {
			here, err := p.soleHere(cl, u.Table, true)
			if err != nil {
				return false, err
			}
			if here {
				sole = u.Table
				continue
			}
		}
		if here, err := p.placedHere(cl, &memo, u); err != nil || !here {
			return false, err
		}
	}
	return true, nil
}

// placedHere reports whether this node is the one replica, natural or
// pending, of u's partition as the topology places it, checking its level
// can be met.
func (p *Proxy) placedHere(cl primitive.ConsistencyLevel, memo *keyspaceMemo, u *mutation.Update) (bool, error) {
	st, natural, pending, err := memo.replicas(p, u)
	if err != nil {
		return false, err
	}
	if len(natural) != 1 || natural[0] != p.local() || len(pending) != 0 {
		return false, nil
	}
	n := p.needFor(cl, st, nil, true)
	if err := p.available(&n, natural); err != nil {
		return false, err
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
	// enc, when set, is the updates' encoding, made already (a logged
	// batch's, which its batchlog entry holds too).
	enc *encoded
}

// planWrite places updates, checking each level can be met. skip, when
// set, is a replica that already holds some Updates (a counter leader)
// and is left out of their targets, though its acknowledgement is
// counted by the caller.
func (p *Proxy) planWrite(cl primitive.ConsistencyLevel, wt primitive.WriteType, updates []*mutation.Update, skip map[int]ring.HostID) (*writePlan, error) {
	w := &writePlan{cl: cl, wt: wt, updates: updates, needs: make([]need, len(updates))}
	var (
		memo    keyspaceMemo
		liveBuf [8]ring.HostID
	)
	for i, u := range updates {
		st, natural, pending, err := memo.replicas(p, u)
		if err != nil {
			return nil, err
		}
		if w.hosts == nil {
			// Most writes are of one partition, whose replicas are all
			// the hosts.
			n := len(natural) + len(pending)
			w.hosts, w.updatesOf = make([]ring.HostID, 0, n), make([][]int, 0, n)
		}
		w.needs[i] = p.needFor(cl, st, pending, true)
		live := liveBuf[:0]
		for _, h := range natural {
			if p.alive(h) {
				live = append(live, h)
			}
		}
		for _, h := range pending {
			if p.alive(h) {
				live = append(live, h)
			}
		}
		if err := p.available(&w.needs[i], live); err != nil {
			return nil, err
		}
		target := func(h ring.HostID) {
			if s, ok := skip[i]; ok && s == h {
				return
			}
			// A write has a few replicas: a search beats a map.
			j := slices.Index(w.hosts, h)
			if j < 0 {
				j = len(w.hosts)
				w.hosts = append(w.hosts, h)
				w.updatesOf = append(w.updatesOf, nil)
			}
			w.updatesOf[j] = append(w.updatesOf[j], i)
		}
		for _, h := range natural {
			target(h)
		}
		for _, h := range pending {
			target(h)
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
	tallies := make([]tally, len(w.updates))
	for i := range w.needs {
		tallies[i] = newTally(&w.needs[i])
		if h, ok := acked[i]; ok {
			tallies[i].ack(p.opts.Topology.DC(h))
		}
	}
	if p.opts.Hints != nil {
		if err := p.hintLoad.check(w.hosts); err != nil {
			return err
		}
	}
	// The writes may outlive the request, whose buffers m references:
	// they take an encoding of their own, made once.
	enc := w.enc
	if enc == nil {
		var err error
		if enc, err = encode(w.updates); err != nil {
			return err
		}
	}
	bg, cancel := detach(ctx)
	traced := tracing.FromContext(ctx) != nil
	results := make(chan hostResult, len(w.hosts))
	outstanding := make([]bool, len(w.hosts))
	// sends counts the writes running; the last to end cancels bg.
	var sends atomic.Int32
	sends.Add(1)
	sent := func() {
		if sends.Add(-1) == 0 {
			cancel()
		}
	}
	// checkOnce is check's answer, asked once for the replicas that take
	// the encoding as it is.
	var checked, checkErr = check == nil, error(nil)
	checkOnce := func() error {
		if !checked {
			checked, checkErr = true, check()
		}
		return checkErr
	}
	for j, h := range w.hosts {
		idx := w.updatesOf[j]
		outstanding[j] = true
		if !p.alive(h) {
			// Its hint is written off the request's path; under ANY it
			// counts once kept.
			p.hintInBackground(h, enc, idx, "down", func(hinted bool) {
				results <- hostResult{host: j, err: errDown, hinted: hinted}
			})
			continue
		}
		rep, err := p.replica(h)
		if err != nil {
			results <- hostResult{host: j, err: err}
			continue
		}
		// answered takes a replica's answer on whatever goroutine gives
		// it (a transport's, the commit log's, a worker's): it must not
		// block, so a hint is written on a worker. Close waits for it
		// (p.wg, added with sends).
		answered := func(err error) {
			defer p.wg.Done()
			if err != nil && hintable(err) && p.opts.Hints != nil {
				p.hintInBackground(h, enc, idx, "late", func(hinted bool) {
					results <- hostResult{host: j, err: err, hinted: hinted}
					sent()
				})
				return
			}
			results <- hostResult{host: j, err: err}
			sent()
		}
		// onWorker sends a decoded copy with send on a worker.
		onWorker := func(send func(m *mutation.Mutation) error) {
			hm, err := enc.mutation(idx)
			if err != nil {
				results <- hostResult{host: j, err: err}
				return
			}
			sends.Add(1)
			p.wg.Add(1)
			p.goBackground(func() { answered(send(hm)) })
		}
		if w.send != nil {
			// A Paxos commit, its own message.
			onWorker(func(m *mutation.Mutation) error { return w.send(bg, rep, m, check) })
			continue
		}
		if traced {
			// A traced request's replicas record their steps (commit log,
			// memtable, messages) in Replica.Apply.
			onWorker(func(m *mutation.Mutation) error { return rep.Apply(bg, m, check) })
			continue
		}
		switch r := rep.(type) {
		case encodedReplica:
			// A remote replica is sent the encoding, and answers on the
			// transport's goroutine.
			if err := checkOnce(); err != nil {
				results <- hostResult{host: j, err: err}
				continue
			}
			sends.Add(1)
			p.wg.Add(1)
			r.ApplyEncodedAsync(bg, enc.payload(idx), answered)
		case *replica.Local:
			// This node's replica takes the request's own Updates, which
			// it copies before ApplyAsync returns, and answers on the
			// commit log's goroutine once durable.
			hm := &mutation.Mutation{Updates: make([]*mutation.Update, len(idx))}
			for k, i := range idx {
				hm.Updates[k] = w.updates[i]
			}
			sends.Add(1)
			p.wg.Add(1)
			if pending, err := r.ApplyAsync(hm, check, answered); !pending {
				answered(err)
			}
		default:
			onWorker(func(m *mutation.Mutation) error { return rep.Apply(bg, m, check) })
		}
	}
	sent()

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
func (p *Proxy) writeTimeout(w *writePlan, tallies []tally) error {
	for i := range tallies {
		if t := &tallies[i]; !t.met() {
			return &cqlerr.WriteTimeout{Consistency: w.cl, Received: int32(t.received()), BlockFor: int32(t.n.total()), WriteType: w.wt}
		}
	}
	return nil
}

func allMet(ts []tally) bool {
	for i := range ts {
		if !ts[i].met() {
			return false
		}
	}
	return true
}

// unreachable returns an Update whose level the replies still to come
// can no longer meet.
func (p *Proxy) unreachable(w *writePlan, tallies []tally, outstanding []bool) (int, bool) {
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

// hintInBackground stores for h the Updates idx of enc on a worker, then
// calls done with whether it was kept; the hint counts in p.hintLoad
// meanwhile.
func (p *Proxy) hintInBackground(h ring.HostID, enc *encoded, idx []int, reason string, done func(hinted bool)) {
	p.hintLoad.add(h, 1)
	p.goBackground(func() {
		hinted := p.hintEncoded(h, enc, idx, reason)
		p.hintLoad.add(h, -1)
		done(hinted)
	})
}

// hintEncoded stores for h the Updates idx of enc, as hint does.
func (p *Proxy) hintEncoded(h ring.HostID, enc *encoded, idx []int, reason string) bool {
	if p.opts.Hints == nil {
		return false
	}
	m, err := enc.mutation(idx)
	if err != nil {
		p.log.Warn("proxy: hint not stored", "target", h.String(), "err", err)
		return false
	}
	return p.hint(h, m, reason)
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
		if err := m.set(p, u.Table); err != nil {
			return nil, nil, nil, err
		}
	}
	natural, pending, err = p.opts.Topology.Replicas(m.ks, storage.Token(u.Key))
	return m.st, natural, pending, err
}

// set makes m table t's.
func (m *keyspaceMemo) set(p *Proxy, t *storage.Table) error {
	ks, err := p.keyspace(t)
	if err != nil {
		return err
	}
	st, err := p.strategy(ks)
	if err != nil {
		return err
	}
	*m = keyspaceMemo{t: t, ks: ks, st: st}
	return nil
}

// ApplyLocal applies m to this node's replica without blocking, as
// Replica.ApplyAsync does, for a write AllLocal found needs no other
// replica at cl (the coordinator's inline path); it is measured as Apply
// is.
func (p *Proxy) ApplyLocal(cl primitive.ConsistencyLevel, m *mutation.Mutation, check func() error, then func(error)) (pending bool, err error) {
	rep, err := p.localReplica()
	if err != nil {
		return false, err
	}
	start := p.started()
	if start.IsZero() {
		return rep.ApplyAsync(m, check, then)
	}
	pending, err = rep.ApplyAsync(m, check, func(err error) {
		p.measured("write", cl, start, err)
		then(err)
	})
	if !pending {
		p.measured("write", cl, start, err)
	}
	return pending, err
}
