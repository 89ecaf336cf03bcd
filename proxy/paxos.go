package proxy

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/datastax/go-cassandra-native-protocol/primitive"

	"github.com/cqld/cqld/cqlerr"
	"github.com/cqld/cqld/mutation"
	"github.com/cqld/cqld/replica"
	"github.com/cqld/cqld/ring"
	"github.com/cqld/cqld/storage"
)

// Lightweight transactions are Paxos among a partition's replicas, in the
// shape of CASSANDRA-14448: the prepare and the read are one round trip,
// the proposal a second, and the commit is acknowledged at the
// statement's level (docs/paxos.md has the argument).
//
//  1. Prepare-and-read: a new ballot goes to every live participant (the
//     natural and pending replicas; the local data center's for
//     LOCAL_SERIAL). Each promises it if it is after every ballot it
//     holds and answers, in the same message, its accepted proposal, its
//     most recent commit and the data the statement reads. A refusal is
//     contention: back off and try again with a later ballot. A quorum
//     of promises with a proposal accepted after the most recent commit
//     is a round that may have been chosen: it is re-proposed under our
//     ballot, committed, and the round starts again.
//  2. Propose: the quorum's data reconciled (last write wins), Decide
//     chooses the update; it is proposed under the ballot, with the most
//     recent commit attached for the replicas that may lack it. A quorum
//     of acceptances chooses it; none is contention; some is an unknown
//     outcome (WRITE_TIMEOUT), since a later round may finish it.
//  3. Commit to every replica, waited for at the commit level: not at all
//     at ANY, the first acknowledgement at ONE, and so on.
//
// A SERIAL read is round 1 alone when no proposal is in progress.
// A partition whose only replica is this node runs on replica.Local's
// Alone: the same state machine under the partition lock, one write.

// CAS is a lightweight transaction on one partition, as Conditional runs
// it.
type CAS struct {
	Table *storage.Table
	Key   []byte
	// Read is the part of the partition the conditions read.
	Read storage.Slice
	// Serial (SERIAL or LOCAL_SERIAL) is whose quorum the Paxos rounds
	// need; Commit is the level the commit is acknowledged at.
	Serial, Commit primitive.ConsistencyLevel
	// Decide is given the partition within Read as a quorum of replicas
	// holds it (unresolved, reconciled: Table.Resolve makes rows of it)
	// and returns the update to write, of this partition, or nil to write
	// nothing. It runs once an attempt, and an attempt that loses to
	// another proposer runs it again: only its last answer counts.
	// Conditional does not keep the update.
	Decide func(current *storage.Partition) (*mutation.Update, error)
	// Check, when set, runs as the update is committed, as Apply's check.
	Check func() error
}

// Paxos variants (Options.PaxosVariant).
const (
	// PaxosV2 is the prepare and the read in one round trip, and one
	// round trip for a coordinator's repeated transactions on a partition
	// (the repeat proposer).
	PaxosV2 = "v2"
	// PaxosV1 is Cassandra 3.0's shape, kept as a benchmark's baseline:
	// the prepare, then a separate read at QUORUM, then the proposal and
	// the commit.
	PaxosV1 = "v1"
	// PaxosV2NoRepeat is PaxosV2 without the repeat proposer's one round
	// trip (paxos_repeat.go), for comparing.
	PaxosV2NoRepeat = "v2_no_repeat"
)

// DefaultCASContentionTimeout is cas_contention_timeout's default.
const DefaultCASContentionTimeout = time.Second

// Conditional runs c: it returns once the update Decide chose is
// committed at c.Commit, or once Decide chose nothing. Too few
// participants up is *cqlerr.Unavailable at c.Serial; losing to other
// proposers until cas_contention_timeout, or a round's deadline passing,
// is *cqlerr.WriteTimeout with write type CAS (SIMPLE for the commit's
// own timeout, as Cassandra's); a proposal only some replicas accepted is
// *cqlerr.CasWriteUnknown, its outcome unknown.
func (p *Proxy) Conditional(ctx context.Context, c *CAS) (err error) {
	start := p.started()
	defer func() { p.measured("cas", c.Serial, start, err) }()
	pl, err := p.planPaxos(c.Table, c.Key, c.Serial)
	if err != nil {
		return err
	}
	if pl.alone != nil {
		return p.casAlone(ctx, pl, c)
	}
	unlock, err := p.queue.lock(ctx, c.Table, c.Key)
	if err != nil {
		return p.casTimeout(pl, "write", 0, 0)
	}
	defer unlock()
	r := p.newPaxosRun(pl, c.Table, c.Key, "write")
	defer r.done()
	if p.opts.PaxosVariant == "" || p.opts.PaxosVariant == PaxosV2 {
		var e *repeatEntry
		e, r.recent, r.known = p.repeats.take(r.key, readKey(c.Read), pl.participants, r.started)
		if e != nil {
			if done, err := r.repeat(ctx, c, e); done {
				return err
			}
		}
	}
	return r.cas(ctx, c)
}

// readPartitionSerial is ReadPartition at SERIAL or LOCAL_SERIAL: rows
// resolved from readSerial's data, or, on a partition whose one replica
// is this node, read by it directly.
func (p *Proxy) readPartitionSerial(ctx context.Context, cl primitive.ConsistencyLevel, t *storage.Table, pk []byte, o storage.ReadOptions, fn func(*storage.Row) bool) error {
	pl, err := p.planPaxos(t, pk, cl)
	if err != nil {
		return err
	}
	if pl.alone != nil {
		return pl.alone.AloneRead(ctx, t, pk, o, p.nextBallot, fn)
	}
	part, err := p.readSerialOn(ctx, pl, t, pk, o.Slice)
	if err != nil {
		return err
	}
	return t.Resolve(part, o, fn)
}

// readSerial reads partition pk of t within slice at SERIAL or
// LOCAL_SERIAL: the prepare-and-read round alone, once no proposal is in
// progress. Its timeouts are READ_TIMEOUT, as Cassandra's.
func (p *Proxy) readSerial(ctx context.Context, cl primitive.ConsistencyLevel, t *storage.Table, pk []byte, slice storage.Slice) (*storage.Partition, error) {
	pl, err := p.planPaxos(t, pk, cl)
	if err != nil {
		return nil, err
	}
	return p.readSerialOn(ctx, pl, t, pk, slice)
}

// readSerialOn is readSerial on plan pl.
func (p *Proxy) readSerialOn(ctx context.Context, pl *paxosPlan, t *storage.Table, pk []byte, slice storage.Slice) (*storage.Partition, error) {
	cl := pl.serial
	if pl.alone != nil {
		var data *storage.Partition
		err := pl.alone.Alone(ctx, t, pk, slice, p.nextBallot, func(_ replica.Ballot, d *storage.Partition) (*mutation.Update, error) {
			data = d
			return nil, nil
		}, nil)
		return data, err
	}
	r := p.newPaxosRun(pl, t, pk, "read")
	defer r.done()
	r.known = p.repeats.known(r.key, r.started)
	data, err := r.read(ctx, slice)
	return data, readError(err, cl, pl.readBlockFor)
}

// paxosPlan is who takes part in a partition's Paxos rounds.
type paxosPlan struct {
	serial primitive.ConsistencyLevel
	// participants are the live natural and pending replicas (of the
	// local data center for LOCAL_SERIAL), contacted by prepares and
	// proposals; required of them make a quorum.
	participants []ring.HostID
	required     int
	// scoped counts the natural and pending replicas in scope, live or
	// not.
	scoped int
	// natural and pending are every replica, the commit's targets.
	natural, pending []ring.HostID
	strategy         ring.Strategy
	// readBlockFor is what a SERIAL read's READ_TIMEOUT reports: the
	// level's quorum of the replication factor.
	readBlockFor int
	// alone, when set, is this node's replica, the partition's only one.
	alone aloneReplica
}

// aloneReplica is a replica that runs a whole lightweight transaction
// for a coordinator in its own process (replica.Local).
type aloneReplica interface {
	Alone(ctx context.Context, t *storage.Table, pk []byte, read storage.Slice, ballot func(after replica.Ballot) replica.Ballot,
		decide func(b replica.Ballot, data *storage.Partition) (*mutation.Update, error), check func() error) error
	AloneRead(ctx context.Context, t *storage.Table, pk []byte, o storage.ReadOptions, ballot func(after replica.Ballot) replica.Ballot, fn func(*storage.Row) bool) error
}

var _ aloneReplica = (*replica.Local)(nil)

// planPaxos places partition pk of t for Paxos at level serial
// (ReplicaPlans.forPaxos), refusing it as Cassandra does: too few
// participants up, or more than one pending replica.
func (p *Proxy) planPaxos(t *storage.Table, pk []byte, serial primitive.ConsistencyLevel) (*paxosPlan, error) {
	ks, err := p.keyspace(t)
	if err != nil {
		return nil, err
	}
	st, err := p.strategy(ks)
	if err != nil {
		return nil, err
	}
	natural, pending, err := p.opts.Topology.Replicas(ks, storage.Token(pk))
	if err != nil {
		return nil, err
	}
	pl := &paxosPlan{serial: serial, natural: natural, pending: pending, strategy: st}
	n := p.needFor(serial, st, nil, false)
	pl.readBlockFor = n.total()
	scopedNatural, scopedPending := natural, pending
	if serial == primitive.ConsistencyLevelLocalSerial {
		scopedNatural, scopedPending = p.inLocalDC(natural), p.inLocalDC(pending)
	}
	all := len(scopedNatural) + len(scopedPending)
	pl.required, pl.scoped = all/2+1, all
	if len(scopedPending) == 0 && p.allAlive(scopedNatural) {
		pl.participants = scopedNatural // shared, never modified
	} else {
		for _, hs := range [][]ring.HostID{scopedNatural, scopedPending} {
			for _, h := range hs {
				if p.alive(h) {
					pl.participants = append(pl.participants, h)
				}
			}
		}
	}
	if len(pl.participants) < pl.required {
		return nil, unavailable(serial, pl.required, len(pl.participants))
	}
	if len(scopedPending) > 1 {
		return nil, &cqlerr.Unavailable{Consistency: serial, Required: int32(all + 1), Alive: int32(len(pl.participants)),
			Message: fmt.Sprintf("Cannot perform LWT operation as there is more than one (%d) pending range movement", len(scopedPending))}
	}
	if len(natural) == 1 && len(pending) == 0 && natural[0] == p.local() {
		rep, err := p.replica(natural[0])
		if err != nil {
			return nil, err
		}
		if a, ok := rep.(aloneReplica); ok {
			pl.alone = a
		}
	}
	return pl, nil
}

// inLocalDC is hs of the local data center, a copy.
func (p *Proxy) inLocalDC(hs []ring.HostID) []ring.HostID {
	local := p.localDC()
	return slices.DeleteFunc(slices.Clone(hs), func(h ring.HostID) bool { return p.opts.Topology.DC(h) != local })
}

func (p *Proxy) allAlive(hs []ring.HostID) bool {
	for _, h := range hs {
		if !p.alive(h) {
			return false
		}
	}
	return true
}

// casAlone runs c on this node's replica, the partition's only one.
func (p *Proxy) casAlone(ctx context.Context, pl *paxosPlan, c *CAS) error {
	err := pl.alone.Alone(ctx, c.Table, c.Key, c.Read, p.nextBallot, func(_ replica.Ballot, data *storage.Partition) (*mutation.Update, error) {
		return c.Decide(data)
	}, c.Check)
	if m := p.opts.CASMetrics; m != nil {
		m.RoundTrips.WithLabelValues("write").Observe(0)
	}
	return err
}

// paxosRun is one lightweight transaction's rounds.
type paxosRun struct {
	p  *Proxy
	pl *paxosPlan
	t  *storage.Table
	pk []byte
	op string // "write" or "read", the metrics' label
	// giveUp is when contention stops being retried
	// (cas_contention_timeout after the start).
	giveUp      time.Time
	contentions int
	roundTrips  int
	// after is the latest ballot a replica refused ours for: the next
	// ballot must be after it.
	after replica.Ballot
	// lastRound is how long the last attempt's round took, the scale of
	// the back-off.
	lastRound time.Duration
	// started is when the run began; key names its partition for the
	// repeat proposer, and recent says a transaction on it through this
	// node came shortly before.
	started time.Time
	key     string
	recent  bool
	// known is the last proposal this node saw chosen on the partition; a
	// round whose promises show it accepted and not committed lays it over
	// their data (overlaid) instead of proposing it again: it is chosen.
	known, overlaid replica.Proposal
}

func (p *Proxy) newPaxosRun(pl *paxosPlan, t *storage.Table, pk []byte, op string) *paxosRun {
	now := p.opts.Now()
	return &paxosRun{p: p, pl: pl, t: t, pk: pk, op: op, started: now, key: repeatKey(t, pk), giveUp: now.Add(p.casContentionTimeout())}
}

func (p *Proxy) casContentionTimeout() time.Duration {
	if d := p.opts.CASContentionTimeout; d > 0 {
		return d
	}
	return DefaultCASContentionTimeout
}

// done records the run's round trips.
func (r *paxosRun) done() {
	if m := r.p.opts.CASMetrics; m != nil {
		m.RoundTrips.WithLabelValues(r.op).Observe(float64(r.roundTrips))
	}
}

// cas runs the write's rounds until its update is committed, or Decide
// chose none.
func (r *paxosRun) cas(ctx context.Context, c *CAS) error {
	read := &c.Read
	if r.p.opts.PaxosVariant == PaxosV1 {
		read = nil
	}
	for {
		b, promises, err := r.begin(ctx, read)
		if err != nil {
			return err
		}
		data, err := r.data(ctx, promises, c.Read)
		if err != nil {
			return err
		}
		u, err := c.Decide(data)
		if err != nil {
			return err
		}
		if u == nil {
			r.catchUpLaggards(promises)
			return nil
		}
		if u.Table != r.t || string(u.Key) != string(r.pk) {
			return fmt.Errorf("proxy: a lightweight transaction on %s.%s decided an update of another partition", r.t.Def.Keyspace, r.t.Def.Name)
		}
		prop, err := proposal(b, u)
		if err != nil {
			return err
		}
		switch res, err := r.propose(ctx, prop, promises, proposeExtra{next: r.wantNext(c)}); {
		case err != nil:
			return err
		case res.chosen:
			return r.committed(ctx, c, prop)
		case res.accepted > 0:
			// Some replicas accepted it: a later round may finish it, or
			// not.
			return r.unknown(res.accepted)
		}
		if err := r.contended(ctx); err != nil {
			return err
		}
	}
}

// committed commits prop, chosen for c, at c's level; a partition of one
// replica committed it as it accepted it.
func (r *paxosRun) committed(ctx context.Context, c *CAS, prop replica.Proposal) error {
	if len(r.pl.natural)+len(r.pl.pending) == 1 {
		return nil
	}
	return r.commit(ctx, prop, c.Commit, c.Check)
}

// read runs a SERIAL read's rounds: the data as of a quorum's promise with
// no proposal in progress.
func (r *paxosRun) read(ctx context.Context, slice storage.Slice) (*storage.Partition, error) {
	read := &slice
	if r.p.opts.PaxosVariant == PaxosV1 {
		read = nil
	}
	_, promises, err := r.begin(ctx, read)
	if err != nil {
		return nil, err
	}
	data, err := r.data(ctx, promises, slice)
	if err != nil {
		return nil, err
	}
	r.catchUpLaggards(promises)
	return data, nil
}

// begin runs prepare rounds until a quorum has promised a ballot with no
// proposal in progress among them, finishing each one it finds (round 1),
// and returns the ballot and the promises.
func (r *paxosRun) begin(ctx context.Context, read *storage.Slice) (replica.Ballot, []promiseOf, error) {
	for {
		if !r.p.opts.Now().Before(r.giveUp) {
			return replica.Ballot{}, nil, r.timeout(0)
		}
		b := r.p.ballots.next(r.after)
		started := r.p.opts.Now()
		round, err := r.prepare(ctx, b, read)
		r.lastRound = r.p.opts.Now().Sub(started)
		if err != nil {
			return replica.Ballot{}, nil, err
		}
		inProgress, latest, settled, err := r.inProgress(ctx, round)
		if err != nil {
			return replica.Ballot{}, nil, err
		}
		if !round.refused.IsZero() || !settled {
			r.after = r.after.Max(round.refused)
			r.p.ballots.observe(round.refused)
			if err := r.contended(ctx); err != nil {
				return replica.Ballot{}, nil, err
			}
			continue
		}
		r.p.ballots.observe(inProgress.Ballot.Max(latest.Ballot))
		r.overlaid = replica.Proposal{}
		if inProgress.IsZero() || r.p.opts.PaxosUnsafeSkipInProgress {
			return b, round.promises, nil
		}
		if inProgress.Ballot == r.known.Ballot {
			r.overlaid = r.known
			return b, round.promises, nil
		}
		if err := r.finish(ctx, b, inProgress, round.promises); err != nil {
			return replica.Ballot{}, nil, err
		}
	}
}

// inProgress is the proposal a round's promises show in progress (the
// latest accepted, if after the latest commit), none when there is none,
// and the latest commit. A proposal made on a promise given in advance
// (Fast) is in progress only once seen accepted by a quorum: one that
// every replica in scope has answered about without a quorum accepting it
// can never be chosen, and is passed over; while some have not answered,
// settled is false (the round cannot tell, and is retried). The answers
// still to come are waited for as the rule needs them.
func (r *paxosRun) inProgress(ctx context.Context, round *prepareRound) (inProgress, latest replica.Proposal, settled bool, err error) {
	dead := map[replica.Ballot]bool{}
	for {
		if !round.refused.IsZero() {
			return replica.Proposal{}, replica.Proposal{}, true, nil
		}
		inProgress, latest = summarize(round.promises, dead)
		if inProgress.IsZero() || !inProgress.Ballot.After(latest.Ballot) {
			return replica.Proposal{}, latest, true, nil
		}
		if !inProgress.Fast || inProgress.Ballot == r.known.Ballot {
			return inProgress, latest, true, nil // or known chosen
		}
		acceptedBy := 0
		for _, pr := range round.promises {
			if pr.Accepted.Ballot == inProgress.Ballot {
				acceptedBy++
			}
		}
		switch {
		case acceptedBy >= r.pl.required:
			return inProgress, latest, true, nil
		case round.all():
			dead[inProgress.Ballot] = true
		case round.left > 0:
			if err := round.await(ctx, len(round.promises)+1); err != nil {
				return replica.Proposal{}, replica.Proposal{}, false, err
			}
		default:
			return replica.Proposal{}, replica.Proposal{}, false, nil
		}
	}
}

// finish re-proposes a proposal found in progress under ballot b and
// commits it at the participants' quorum, so that the next prepare's
// quorum holds it.
func (r *paxosRun) finish(ctx context.Context, b replica.Ballot, inProgress replica.Proposal, promises []promiseOf) error {
	m := r.p.opts.CASMetrics
	if m != nil {
		m.UnfinishedCommits.WithLabelValues(r.op).Inc()
	}
	prop, err := proposal(b, inProgress.Update)
	if err != nil {
		return err
	}
	res, err := r.propose(ctx, prop, promises, proposeExtra{})
	if err != nil {
		return err
	}
	if !res.chosen {
		return r.contended(ctx)
	}
	if m != nil {
		m.Reproposals.WithLabelValues(r.op).Inc()
	}
	if len(r.pl.natural)+len(r.pl.pending) == 1 {
		return nil
	}
	return r.commit(ctx, prop, r.pl.serial, nil)
}

// data is the partition as the promises' quorum holds it, or, in the v1
// variant, as a separate read at QUORUM (LOCAL_QUORUM) answers; with the
// proposal known chosen laid over it when the round found it uncommitted.
func (r *paxosRun) data(ctx context.Context, promises []promiseOf, slice storage.Slice) (*storage.Partition, error) {
	var data *storage.Partition
	var err error
	if r.p.opts.PaxosVariant == PaxosV1 {
		r.roundTrips++
		if data, err = r.p.Read(ctx, quorumOf(r.pl.serial), r.t, r.pk, slice); err != nil {
			return nil, err
		}
	} else {
		parts := make([]*storage.Partition, 0, len(promises))
		for _, pr := range promises {
			if pr.Data == nil {
				return nil, fmt.Errorf("proxy: replica %s promised without the data", pr.host)
			}
			parts = append(parts, pr.Data)
		}
		data, err = storage.ReconcilePartitions(parts...)
	}
	if err == nil && !r.overlaid.IsZero() {
		data, err = r.overlaid.Update.Over(data)
	}
	if err != nil {
		return nil, fmt.Errorf("proxy: lightweight transaction on %s.%s: %w", r.t.Def.Keyspace, r.t.Def.Name, err)
	}
	return data, nil
}

// contended counts a round lost to another proposer and backs off before
// the next: a random time up to a multiple of the last round's that grows
// with each loss (so that proposers dueling over one partition spread
// out), within cas_contention_timeout. Past it, it is the CAS timeout.
func (r *paxosRun) contended(ctx context.Context) error {
	r.contentions++
	if m := r.p.opts.CASMetrics; m != nil {
		m.Contended.WithLabelValues(r.op).Inc()
	}
	left := r.giveUp.Sub(r.p.opts.Now())
	if left <= 0 {
		return r.timeout(0)
	}
	scale := max(r.lastRound, time.Millisecond)
	limit := min(scale<<min(r.contentions, 5), 100*time.Millisecond, left)
	select {
	case <-r.p.opts.After(r.p.jitter(limit)):
		return nil
	case <-ctx.Done():
		return r.timeout(0)
	}
}

// timeout is the CAS write timeout of a round that got received of the
// quorum's answers.
func (r *paxosRun) timeout(received int) error {
	return r.p.casTimeout(r.pl, r.op, received, r.contentions)
}

// unknown is a transaction's error when received replicas, not a quorum,
// accepted its proposal: counted with the timeouts, whose outcome is as
// unknown.
func (r *paxosRun) unknown(received int) error {
	r.p.timedOut(r.op)
	return &cqlerr.CasWriteUnknown{Consistency: r.pl.serial, Received: int32(received), BlockFor: int32(r.pl.required)}
}

// casTimeout is the CAS write timeout of a transaction of op (counted).
func (p *Proxy) casTimeout(pl *paxosPlan, op string, received, contentions int) error {
	p.timedOut(op)
	return &cqlerr.WriteTimeout{Consistency: pl.serial, Received: int32(received), BlockFor: int32(pl.required),
		WriteType: primitive.WriteTypeCas, Contentions: int32(contentions)}
}

// timedOut counts a transaction of op answered with a timeout or an
// unknown outcome.
func (p *Proxy) timedOut(op string) {
	if m := p.opts.CASMetrics; m != nil {
		m.Timeouts.WithLabelValues(op).Inc()
	}
}

// readError is a SERIAL read's error as Cassandra reports it: its write
// timeouts and failures as READ_TIMEOUT and READ_FAILURE.
func readError(err error, cl primitive.ConsistencyLevel, blockFor int) error {
	_, timeout := errors.AsType[*cqlerr.WriteTimeout](err)
	_, unknown := errors.AsType[*cqlerr.CasWriteUnknown](err)
	if timeout || unknown {
		return &cqlerr.ReadTimeout{Consistency: cl, Received: 0, BlockFor: int32(blockFor)}
	}
	if wf, ok := errors.AsType[*cqlerr.WriteFailure](err); ok {
		return &cqlerr.ReadFailure{Consistency: cl, Received: wf.Received, BlockFor: wf.BlockFor, Reasons: wf.Reasons, Err: wf.Err}
	}
	return err
}

// quorumOf is the quorum level of serial: QUORUM, or LOCAL_QUORUM for
// LOCAL_SERIAL.
func quorumOf(serial primitive.ConsistencyLevel) primitive.ConsistencyLevel {
	if serial == primitive.ConsistencyLevelLocalSerial {
		return primitive.ConsistencyLevelLocalQuorum
	}
	return primitive.ConsistencyLevelQuorum
}

// proposal is u under ballot b: a copy of u (proposals outlive the
// request, whose buffers u references, and are re-timestamped) with b's
// timestamp.
func proposal(b replica.Ballot, u *mutation.Update) (replica.Proposal, error) {
	enc, err := encode([]*mutation.Update{u})
	if err != nil {
		return replica.Proposal{}, err
	}
	m, err := enc.mutation([]int{0})
	if err != nil {
		return replica.Proposal{}, err
	}
	m.Updates[0].SetTimestamp(b.Micros())
	return replica.Proposal{Ballot: b, Update: m.Updates[0]}, nil
}

// summarize returns the latest accepted proposal (those of dead ballots
// aside) and the latest commit among promises.
func summarize(promises []promiseOf, dead map[replica.Ballot]bool) (inProgress, latest replica.Proposal) {
	for _, pr := range promises {
		if pr.Accepted.Ballot.Compare(inProgress.Ballot) > 0 && !dead[pr.Accepted.Ballot] {
			inProgress = pr.Accepted
		}
		if pr.Committed.Ballot.Compare(latest.Ballot) > 0 {
			latest = pr.Committed
		}
	}
	return inProgress, latest
}
