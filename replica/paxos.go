package replica

import (
	"context"
	"fmt"
	"sync"

	"github.com/cqld/cqld/mutation"
	"github.com/cqld/cqld/storage"
)

// Paxos is a replica's part in lightweight transactions: the acceptor of
// each partition's Paxos rounds (paxos_state.go), whose state it keeps in
// system.paxos (paxos_table.go). Every change of state is durable, whatever
// the commit log's sync mode, before the call returns, and each call runs
// under the replica's lock of its partition, so that a prepare's promise
// and its read of the data are one atomic step. Implementations are safe
// for concurrent use and do not keep the updates they are given.
type Paxos interface {
	// Prepare promises ballot b for partition pk of t if b is after every
	// ballot the replica holds and, when read is not nil, reads the
	// partition within *read as of that promise. A refused prepare is not
	// an error: Promise.OK is false.
	Prepare(ctx context.Context, t *storage.Table, pk []byte, b Ballot, read *storage.Slice) (*Promise, error)
	// Propose accepts p (an update of one partition under its ballot) if
	// its ballot is the one promised or after every ballot held.
	Propose(ctx context.Context, p Proposal, o ProposeOptions) (*Acceptance, error)
	// Commit applies p's update to its table and records it as the
	// partition's most recent commit, clearing an accepted proposal at or
	// before it, in one durable write. check runs as Apply's does.
	Commit(ctx context.Context, p Proposal, check func() error) error
}

// Promise is a replica's answer to a prepare.
type Promise struct {
	// OK reports whether the replica promised the ballot.
	OK bool
	// Ballot is the replica's promise once the prepare is done: the
	// prepared ballot when OK, else the later one it holds, which a
	// proposer must get past.
	Ballot Ballot
	// Accepted is the replica's accepted proposal, Committed its most
	// recent commit; either may be none. Both are none when refused.
	Accepted, Committed Proposal
	// Data is the partition within the prepare's read, unresolved (cells
	// and tombstones), as the promise was made; nil when refused or when
	// nothing was to be read.
	Data *storage.Partition
}

// ProposeOptions shape a proposal.
type ProposeOptions struct {
	// CatchUp, when not none, is the partition's most recent commit as
	// the proposer knows it, for a replica that may not have it: the
	// replica commits it first, in the same durable write, so that every
	// replica accepting the proposal holds what the proposal was decided
	// on.
	CatchUp Proposal
	// Commit commits the proposal as soon as it is accepted: a partition
	// with one replica, whose acceptance alone chooses it.
	Commit bool
	// Next, when not none, is the proposer's next ballot, for its next
	// transaction on the partition: having accepted, the replica promises
	// it too, in the same durable write, and answers the data within Read
	// as of that promise. It is that transaction's first round done in
	// advance: with a quorum of such promises, the proposer may propose at
	// Next at once (Fast), deciding on that data with this proposal laid
	// over it (docs/paxos.md, the repeat proposer).
	Next Ballot
	Read *storage.Slice
	// Fast marks a proposal at a ballot promised in advance: accepted only
	// if that promise still stands and the replica's data within the
	// promise's read, CatchUp laid over it, has the digest View: the data
	// the proposer decided on. That is the proposer's view, reconciled from
	// the quorum whose promises it counted, not the data this replica read
	// as it promised: a replica can promise late, after a write the view
	// lacks, and must refuse a decision made without it.
	Fast bool
	View storage.Digest
}

// Acceptance is a replica's answer to a proposal.
type Acceptance struct {
	OK bool
	// Promise is the replica's promise once the proposal is done: the
	// proposal's ballot when accepted, else the later one it holds.
	Promise Ballot
	// Next reports that the replica promised ProposeOptions.Next; Data is
	// then the partition within ProposeOptions.Read as of that promise,
	// unresolved.
	Next bool
	Data *storage.Partition
}

var (
	_ Paxos = (*Local)(nil)
	_ Paxos = (*Remote)(nil)
)

// Prepare implements Paxos.
func (l *Local) Prepare(ctx context.Context, t *storage.Table, pk []byte, b Ballot, read *storage.Slice) (*Promise, error) {
	if err := expired(ctx); err != nil {
		return nil, err
	}
	defer l.lockPartition(pk).Unlock()
	l.alone.touch(t, pk)
	now := l.nowSeconds()
	st, err := l.loadPaxos(t, pk, now)
	if err != nil {
		return nil, err
	}
	next, ok := st.Prepare(b)
	if !ok {
		return &Promise{Ballot: st.Promise()}, nil
	}
	sm := l.engine.NewMutation()
	w := l.paxosWriter(sm, t, pk, now)
	if err := w.promise(b); err != nil {
		return nil, discard(sm, err)
	}
	if err := l.paxosApplied(w, l.applyDurable(sm, nil)); err != nil {
		return nil, err
	}
	pr := &Promise{OK: true, Ballot: next.Promise(), Accepted: st.Accepted, Committed: st.Committed}
	if read != nil {
		if pr.Data, err = l.engine.ReadRaw(t, pk, *read); err != nil {
			return nil, err
		}
	}
	return pr, nil
}

// Propose implements Paxos.
func (l *Local) Propose(ctx context.Context, p Proposal, o ProposeOptions) (*Acceptance, error) {
	if err := expired(ctx); err != nil {
		return nil, err
	}
	u := p.Update
	if err := checkProposal(p, o.CatchUp); err != nil {
		return nil, err
	}
	defer l.lockPartition(u.Key).Unlock()
	l.alone.touch(u.Table, u.Key)
	now := l.nowSeconds()
	st, err := l.loadPaxos(u.Table, u.Key, now)
	if err != nil {
		return nil, err
	}
	sm := l.engine.NewMutation()
	w := l.paxosWriter(sm, u.Table, u.Key, now)
	if c := o.CatchUp; !c.IsZero() && c.Ballot.Compare(st.Committed.Ballot) > 0 {
		if err := l.commitInto(sm, w, c); err != nil {
			return nil, discard(sm, err)
		}
		st = st.Commit(c)
	}
	fresh := true
	if o.Fast {
		if fresh, err = l.fastStands(u, p.Ballot, st, o.CatchUp, o.View); err != nil {
			return nil, discard(sm, err)
		}
	}
	p.Fast = o.Fast
	next, ok := st.Propose(p)
	ok = ok && fresh
	a := &Acceptance{OK: ok}
	switch {
	case ok && o.Commit:
		err = l.commitInto(sm, w, p)
		next = next.Commit(p)
	case ok:
		err = w.accept(p)
	default:
		next = st
	}
	if err == nil && ok && !o.Next.IsZero() && o.Read != nil {
		if next, a.Next = next.Prepare(o.Next); a.Next {
			err = w.promise(o.Next)
		}
	}
	if err != nil {
		return nil, discard(sm, err)
	}
	a.Promise = next.Promise()
	if sm.Empty() {
		discard(sm, nil)
	} else if err := l.paxosApplied(w, l.applyDurable(sm, nil)); err != nil {
		return nil, err
	}
	if a.Next {
		if a.Data, err = l.keepFast(p, o.Next, *o.Read); err != nil {
			return nil, err
		}
	}
	return a, nil
}

// fastStands reports whether a proposal at b, made on a promise given in
// advance, may be accepted: the promise is the one kept (and taken now:
// it serves one proposal), it still stands, and the data within its read,
// catchUp laid over it, has digest view, the data the proposal was
// decided on. REQUIRES: the partition locked.
func (l *Local) fastStands(u *mutation.Update, b Ballot, st PaxosState, catchUp Proposal, view storage.Digest) (bool, error) {
	fp, ok := l.fast.take(u.Table, u.Key)
	if !ok || fp.ballot != b || st.Promise() != b {
		return false, nil
	}
	data, err := l.overlaid(u.Table, u.Key, fp.read, catchUp.Update)
	if err != nil {
		return false, err
	}
	return storage.PartitionDigest(data) == view, nil
}

// keepFast keeps the promise of next, just made with the acceptance of p,
// with the read it answers, and returns the data within read as of it.
// REQUIRES: the partition locked.
func (l *Local) keepFast(p Proposal, next Ballot, read storage.Slice) (*storage.Partition, error) {
	u := p.Update
	data, err := l.engine.ReadRaw(u.Table, u.Key, read)
	if err != nil {
		return nil, err
	}
	l.fast.keep(u.Table, u.Key, next, read)
	return data, nil
}

// overlaid is the partition within read with u (when not nil) laid over
// it, as it will be once u is applied.
func (l *Local) overlaid(t *storage.Table, pk []byte, read storage.Slice, u *mutation.Update) (*storage.Partition, error) {
	data, err := l.engine.ReadRaw(t, pk, read)
	if err != nil || u == nil {
		return data, err
	}
	return u.Over(data)
}

// Commit implements Paxos. It needs no look at the state: the commit's
// cells, at its ballot's timestamp, win over everything older and lose to
// everything newer, as the state machine's Commit would decide.
func (l *Local) Commit(ctx context.Context, p Proposal, check func() error) error {
	if err := expired(ctx); err != nil {
		return err
	}
	if err := checkProposal(p, Proposal{}); err != nil {
		return err
	}
	u := p.Update
	defer l.lockPartition(u.Key).Unlock()
	l.alone.touch(u.Table, u.Key)
	sm := l.engine.NewMutation()
	w := l.paxosWriter(sm, u.Table, u.Key, l.nowSeconds())
	if err := l.commitInto(sm, w, p); err != nil {
		return discard(sm, err)
	}
	return l.paxosApplied(w, l.applyDurable(sm, check))
}

// Alone runs a lightweight transaction on partition pk of t for a
// coordinator in this process, when this replica is the partition's only
// one: under the partition's lock, it finishes a proposal a remote
// coordinator left accepted, takes a ballot after every one the partition
// has seen (from ballot), reads *read and has decide choose the update,
// which it commits at that ballot's timestamp. decide returning nil writes
// nothing.
//
// No promise is recorded and nothing is proposed apart from the commit:
// with the lock held from the read to the commit no other proposer can
// come between them, and a crash ends this coordinator along with the
// promise it would have recorded. The commit is as durable as the commit
// log's sync mode makes data (no extra sync in periodic mode): this
// replica's state is no other acceptor's business, a remote proposer's
// next durable promise or acceptance here syncs the log and with it the
// commit, and losing both the commit and its data in a crash is what
// periodic mode allows of any write.
func (l *Local) Alone(ctx context.Context, t *storage.Table, pk []byte, read storage.Slice, ballot func(after Ballot) Ballot,
	decide func(b Ballot, data *storage.Partition) (*mutation.Update, error), check func() error) error {
	if err := expired(ctx); err != nil {
		return err
	}
	defer l.lockPartition(pk).Unlock()
	now := l.nowSeconds()
	st, err := l.aloneState(t, pk, now, ballot)
	if err != nil {
		return err
	}
	b := ballot(st.Promise())
	data, err := l.engine.ReadRaw(t, pk, read)
	if err != nil {
		return err
	}
	u, err := decide(b, data)
	if err != nil || u == nil {
		return err
	}
	if err := checkProposal(Proposal{Ballot: b, Update: u}, Proposal{}); err != nil {
		return err
	}
	if u.Table != t || string(u.Key) != string(pk) {
		return fmt.Errorf("replica: a lightweight transaction on %s.%s decided an update of another partition", t.Def.Keyspace, t.Def.Name)
	}
	u.SetTimestamp(b.Micros())
	return l.commitAlone(t, pk, now, st, Proposal{Ballot: b, Update: u}, false, check)
}

// AloneRead is Alone for a read: it calls fn for each live row of
// partition pk of t within o, once a proposal a remote coordinator left in
// progress is finished.
func (l *Local) AloneRead(ctx context.Context, t *storage.Table, pk []byte, o storage.ReadOptions, ballot func(after Ballot) Ballot, fn func(*storage.Row) bool) error {
	if err := expired(ctx); err != nil {
		return err
	}
	defer l.lockPartition(pk).Unlock()
	if _, err := l.aloneState(t, pk, l.nowSeconds(), ballot); err != nil {
		return err
	}
	return l.engine.ReadPartition(t, pk, o, fn)
}

// aloneState is the Paxos state of partition pk of t for Alone, once a
// proposal in progress is finished (committed under a ballot after every
// one held): read only when it may hold something (aloneState.mustRead),
// its promise no earlier than the floor. REQUIRES: the partition locked.
func (l *Local) aloneState(t *storage.Table, pk []byte, now int32, ballot func(after Ballot) Ballot) (PaxosState, error) {
	var st PaxosState
	if l.alone.mustRead(l, t, pk) {
		var err error
		if st, err = l.loadPaxos(t, pk, now); err != nil {
			return st, err
		}
	}
	st.Promised = st.Promised.Max(l.alone.floor)
	if st.InProgress() {
		p := Proposal{Ballot: ballot(st.Promise()), Update: st.Accepted.Update}
		p.Update.SetTimestamp(p.Ballot.Micros())
		if err := l.commitAlone(t, pk, now, st, p, true, nil); err != nil {
			return st, fmt.Errorf("replica: finishing the accepted proposal %s: %w", st.Accepted.Ballot, err)
		}
		st = st.Commit(p)
	}
	return st, nil
}

// commitAlone commits p for Alone, on state st, in one write at the sync
// mode's durability. A proposal a remote coordinator left accepted
// (finish) is committed as any commit is. Alone's own keeps, beside its
// data, the promise of its ballot alone: with one replica no other can lag
// and need the update, and the promise is what later rounds must get past
// (Promise); the proposal columns are cleared only when st has one.
func (l *Local) commitAlone(t *storage.Table, pk []byte, now int32, st PaxosState, p Proposal, finish bool, check func() error) error {
	sm := l.engine.NewMutation()
	w := l.paxosWriter(sm, t, pk, now)
	w.noProposal = st.Accepted.IsZero()
	var err error
	if finish {
		err = l.commitInto(sm, w, p)
	} else if err = w.promise(p.Ballot); err == nil {
		err = l.applyInto(sm, p.Update)
		if err == nil && !w.noProposal {
			err = w.clearProposal(p.Ballot)
		}
	}
	if err != nil {
		return discard(sm, err)
	}
	return l.paxosApplied(w, l.engine.ApplyIf(sm, check))
}

// applyInto adds u's data to sm.
func (l *Local) applyInto(sm *storage.Mutation, u *mutation.Update) error {
	for i := range u.Ops {
		if err := apply(sm, u, &u.Ops[i]); err != nil {
			return fmt.Errorf("replica: %s.%s: %w", u.Table.Def.Keyspace, u.Table.Def.Name, err)
		}
	}
	return nil
}

// commitInto adds p's commit to sm: its update's data and the state.
func (l *Local) commitInto(sm *storage.Mutation, w *paxosWriter, p Proposal) error {
	if err := l.applyInto(sm, p.Update); err != nil {
		return err
	}
	return w.commit(p)
}

// applyDurable applies sm and returns once it is durable, in every sync
// mode: in periodic mode, after a sync of the commit log.
func (l *Local) applyDurable(sm *storage.Mutation, check func() error) error {
	if err := l.engine.ApplyIf(sm, check); err != nil {
		return err
	}
	if !l.engine.ApplyWaits() {
		return l.engine.Sync()
	}
	return nil
}

// lockPartition locks pk's stripe and returns it, for its Unlock.
func (l *Local) lockPartition(pk []byte) *sync.Mutex {
	mu := &l.locks[l.locks.stripe(pk)]
	mu.Lock()
	return mu
}

// checkProposal refuses a proposal that is not one: no ballot, no update,
// counters; and a catch-up commit of another partition.
func checkProposal(p, catchUp Proposal) error {
	u := p.Update
	switch {
	case p.Ballot.IsZero() || u == nil || u.Table == nil:
		return fmt.Errorf("%w: a proposal without a ballot or an update", ErrBadMessage)
	case (&mutation.Mutation{Updates: []*mutation.Update{u}}).HasCounters():
		return fmt.Errorf("replica: a lightweight transaction on %s.%s adds to counters", u.Table.Def.Keyspace, u.Table.Def.Name)
	case !catchUp.IsZero() && (catchUp.Update == nil || catchUp.Update.Table != u.Table || string(catchUp.Update.Key) != string(u.Key)):
		return fmt.Errorf("%w: a catch-up commit of another partition", ErrBadMessage)
	}
	return nil
}

// discard drops an unapplied storage mutation, returning err.
func discard(sm *storage.Mutation, err error) error {
	sm.Discard()
	return err
}
