package proxy

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/cqld/cqld/internal/wire"
	"github.com/cqld/cqld/replica"
	"github.com/cqld/cqld/ring"
	"github.com/cqld/cqld/storage"
)

// The repeat proposer (docs/paxos.md has the argument). A coordinator
// whose lightweight transaction on a partition was just chosen asks, in
// the same proposal, each replica to promise its next ballot and to answer
// its data as of that promise (replica.ProposeOptions.Next): the first
// round of its next transaction on the partition, done in advance. With a
// quorum of such promises, that transaction decides on their data with
// the chosen update laid over it and proposes at once
// (ProposeOptions.Fast): one round trip, the commit aside. A replica
// accepts it only if the promise still stands (no other proposer came)
// and its data is still what the promise was made on (no write came); if
// none accepts, the transaction goes the usual way, and if only some do
// its outcome is unknown, as any proposal's.

// DefaultRepeatWindow is how close two transactions on one partition
// through this node must be for the second to ask for the next promise,
// and how long a promise given in advance is used (Options.RepeatWindow).
const DefaultRepeatWindow = time.Second

// maxRepeats bounds the partitions remembered.
const maxRepeats = 1 << 14

// repeatEntry is what this node knows of its last transactions on a
// partition.
type repeatEntry struct {
	// at is when the last one began.
	at time.Time
	// chosen is the last proposal this node saw chosen on the partition:
	// a round that finds it accepted and not committed knows it chosen, and
	// need not propose it again (paxosRun.known).
	chosen replica.Proposal
	// next is the ballot a quorum promised in advance with chosen, none
	// when the last proposal did not ask or did not get a quorum of such
	// promises; view is the quorum's data as of the promises with chosen
	// laid over it, read the slice they read (encoded), hosts the
	// participants then.
	next  replica.Ballot
	view  *storage.Partition
	read  string
	hosts []ring.HostID
}

// repeats are the partitions this node ran transactions on lately. Safe
// for concurrent use.
type repeats struct {
	window time.Duration
	mu     sync.Mutex
	m      map[string]*repeatEntry
}

func repeatKey(t *storage.Table, pk []byte) string { return string(t.Def.ID[:]) + string(pk) }

func readKey(s storage.Slice) string { return string(wire.AppendSlice(nil, s)) }

// take returns, and forgets, the promise given in advance for a
// transaction on key reading read, when there is one fresh enough, for the
// same participants (fast); whether the partition had a transaction lately
// (so this one should ask for the next promise); and the last proposal
// known chosen there. It records this transaction's start.
func (rs *repeats) take(key, read string, hosts []ring.HostID, now time.Time) (fast *repeatEntry, recent bool, chosen replica.Proposal) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.m == nil {
		rs.m = map[string]*repeatEntry{}
	}
	old := rs.m[key]
	if old == nil && len(rs.m) >= maxRepeats {
		for k, e := range rs.m {
			if now.Sub(e.at) > rs.window || len(rs.m) >= maxRepeats {
				delete(rs.m, k)
			}
			if len(rs.m) < maxRepeats/2 {
				break
			}
		}
	}
	e := &repeatEntry{at: now}
	rs.m[key] = e
	if old == nil || now.Sub(old.at) > rs.window {
		return nil, false, replica.Proposal{}
	}
	e.chosen = old.chosen
	if old.next.IsZero() || old.read != read || !slices.Equal(old.hosts, hosts) {
		return nil, true, old.chosen
	}
	return old, true, old.chosen
}

// known is the last proposal known chosen on key, for a SERIAL read.
func (rs *repeats) known(key string, now time.Time) replica.Proposal {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if e := rs.m[key]; e != nil && now.Sub(e.at) <= rs.window {
		return e.chosen
	}
	return replica.Proposal{}
}

// keep records e, begun at e.at, unless a later transaction on the
// partition began meanwhile.
func (rs *repeats) keep(key string, e *repeatEntry) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if cur := rs.m[key]; cur != nil && cur.at.After(e.at) {
		return
	}
	if rs.m == nil {
		rs.m = map[string]*repeatEntry{}
	}
	rs.m[key] = e
}

// repeat runs c on the promise given in advance e: done reports whether
// it is answered (err), or must go the usual way (nothing was accepted).
func (r *paxosRun) repeat(ctx context.Context, c *CAS, e *repeatEntry) (done bool, err error) {
	m := r.p.opts.CASMetrics
	count := func(outcome string) {
		if m != nil {
			m.Repeats.WithLabelValues(outcome).Inc()
		}
	}
	u, err := c.Decide(e.view)
	if err != nil {
		return true, err
	}
	if u == nil {
		// Nothing to propose: the usual first round reads the data afresh
		// (its answer cannot rest on data read before the transaction
		// began), one round trip as well.
		count("nothing")
		return false, nil
	}
	prop, err := proposal(e.next, u)
	if err != nil {
		return true, err
	}
	x := proposeExtra{fast: true, view: storage.PartitionDigest(e.view), catchUp: e.chosen, next: r.wantNext(c)}
	res, err := r.propose(ctx, prop, nil, x)
	switch {
	case err != nil:
		return true, err
	case res.chosen:
		count("chosen")
		return true, r.committed(ctx, c, prop)
	case res.accepted > 0:
		count("unknown")
		return true, r.unknown(res.accepted)
	}
	count("refused")
	return false, nil
}

// wantNext is the next ballot to ask a proposal's replicas to promise in
// advance, when the partition had a transaction through this node lately.
func (r *paxosRun) wantNext(c *CAS) proposeNext {
	if !r.recent {
		return proposeNext{}
	}
	return proposeNext{ballot: r.p.ballots.next(replica.Ballot{}), read: &c.Read}
}

// proposeNext asks a proposal's replicas to promise ballot in advance and
// answer the data within read.
type proposeNext struct {
	ballot replica.Ballot
	read   *storage.Slice
}

// chose records prop chosen (a quorum accepted it), and with next, the
// promise of next.ballot the quorum gave in advance with their data
// datas (nil when not asked, or not every one of them gave it).
func (r *paxosRun) chose(prop replica.Proposal, next proposeNext, datas []*storage.Partition) {
	e := &repeatEntry{at: r.started, chosen: prop}
	if !next.ballot.IsZero() && datas != nil {
		view, err := storage.ReconcilePartitions(datas...)
		if err == nil {
			view, err = prop.Update.Over(view)
		}
		if err == nil {
			e.next, e.view, e.read, e.hosts = next.ballot, view, readKey(*next.read), slices.Clone(r.pl.participants)
		} else {
			r.p.log.Debug("proxy: no promise in advance for a lightweight transaction", "err", err)
		}
	}
	r.p.repeats.keep(r.key, e)
}
