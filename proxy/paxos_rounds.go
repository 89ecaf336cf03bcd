package proxy

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/datastax/go-cassandra-native-protocol/primitive"

	"github.com/cqld/cqld/cqlerr"
	"github.com/cqld/cqld/messaging"
	"github.com/cqld/cqld/mutation"
	"github.com/cqld/cqld/replica"
	"github.com/cqld/cqld/ring"
	"github.com/cqld/cqld/storage"
)

// The three rounds of a lightweight transaction, each sent to its
// replicas at once and waited for as the protocol needs.

// promiseOf is a replica's promise.
type promiseOf struct {
	host ring.HostID
	*replica.Promise
}

type prepareAnswer struct {
	host ring.HostID
	pr   *replica.Promise
	err  error
}

// prepareRound is a prepare's answers: the promises so far, and the
// answers still to come.
type prepareRound struct {
	r        *paxosRun
	promises []promiseOf
	// refused is the later ballot of the first replica that refused.
	refused replica.Ballot
	answers chan prepareAnswer
	// left counts the answers still to come, errs the failed ones.
	left, errs int
	failed     []ring.HostID
	firstErr   error
}

// prepare sends ballot b to every participant and returns once the first
// quorum promised it, or a replica refused it, or the round cannot get a
// quorum (its timeout or failure).
func (r *paxosRun) prepare(ctx context.Context, b replica.Ballot, read *storage.Slice) (*prepareRound, error) {
	r.roundTrips++
	parts := r.pl.participants
	pr := &prepareRound{r: r, answers: make(chan prepareAnswer, len(parts)), left: len(parts)}
	for _, h := range parts {
		rep, err := r.p.replica(h)
		if err != nil {
			pr.answers <- prepareAnswer{host: h, err: err}
			continue
		}
		r.p.goBackground(func() {
			p, err := rep.Prepare(ctx, r.t, r.pk, b, read)
			pr.answers <- prepareAnswer{host: h, pr: p, err: err}
		})
	}
	return pr, pr.await(ctx, r.pl.required)
}

// await takes answers until n promised, one refused, or every answer
// came; an error when the promises cannot reach a quorum.
func (pr *prepareRound) await(ctx context.Context, n int) error {
	r := pr.r
	for pr.left > 0 && len(pr.promises) < n && pr.refused.IsZero() {
		select {
		case a := <-pr.answers:
			pr.left--
			switch {
			case a.err != nil:
				pr.errs++
				if !hintable(a.err) {
					pr.failed = append(pr.failed, a.host)
					pr.firstErr = cmpOr(pr.firstErr, a.err)
				}
				if len(pr.promises)+pr.left < r.pl.required {
					return r.roundError(len(pr.promises), pr.failed, pr.firstErr)
				}
			case !a.pr.OK:
				pr.refused = a.pr.Ballot
			default:
				pr.promises = append(pr.promises, promiseOf{host: a.host, Promise: a.pr})
			}
		case <-ctx.Done():
			return r.timeout(len(pr.promises))
		}
	}
	if len(pr.promises) < r.pl.required && pr.refused.IsZero() {
		return r.roundError(len(pr.promises), pr.failed, pr.firstErr)
	}
	return nil
}

// all reports whether every replica of the partition in the round's scope
// (natural and pending, of the local data center for LOCAL_SERIAL)
// promised.
func (pr *prepareRound) all() bool { return len(pr.promises) == pr.r.pl.scoped }

// roundError is the error of a prepare or proposal round that cannot get
// its quorum: a WRITE_FAILURE when a replica refused the request, a
// timeout when they were only late or unreachable.
func (r *paxosRun) roundError(received int, failed []ring.HostID, err error) error {
	if len(failed) == 0 {
		return r.timeout(received)
	}
	return &cqlerr.WriteFailure{Consistency: r.pl.serial, Received: int32(received), BlockFor: int32(r.pl.required),
		WriteType: primitive.WriteTypeCas, Reasons: r.p.failureReasons(failed),
		Err: fmt.Errorf("proxy: lightweight transaction on %s: %w", failed[0], err)}
}

// proposeResult is how a proposal fared.
type proposeResult struct {
	// chosen: a quorum accepted it.
	chosen bool
	// accepted counts the replicas that accepted it or may have (their
	// answer was lost): when not chosen, some is an unknown outcome, none
	// a plain loss to a later ballot.
	accepted int
}

type proposeAnswer struct {
	host ring.HostID
	a    *replica.Acceptance
	err  error
}

// proposeExtra shapes a proposal beyond the usual: fast, at a ballot
// promised in advance, decided on data of digest view, every participant
// getting catchUp (the proposal the promise came with); and with next,
// asking the replicas to promise the next ballot in advance (the repeat
// proposer).
type proposeExtra struct {
	fast    bool
	view    storage.Digest
	catchUp replica.Proposal
	next    proposeNext
}

// propose sends prop to every participant, each that may lack the most
// recent commit among promises getting it along, and returns once a
// quorum accepted it, or once every participant has answered: a
// proposal no replica accepted can be retried under a later ballot, one
// that some did cannot (a later round may finish it).
func (r *paxosRun) propose(ctx context.Context, prop replica.Proposal, promises []promiseOf, x proposeExtra) (proposeResult, error) {
	r.roundTrips++
	_, latest := summarize(promises, nil)
	current := map[ring.HostID]bool{}
	for _, pr := range promises {
		current[pr.host] = pr.Committed.Ballot == latest.Ballot
	}
	if !r.overlaid.IsZero() {
		// The proposal known chosen, accepted and not yet committed among
		// the promises, is the latest commit: every participant gets it.
		latest, current = r.overlaid, nil
	}
	parts := r.pl.participants
	fuse := len(r.pl.natural)+len(r.pl.pending) == 1
	answers := make(chan proposeAnswer, len(parts))
	for _, h := range parts {
		o := replica.ProposeOptions{Commit: fuse, Fast: x.fast, View: x.view, Next: x.next.ballot, Read: x.next.read}
		switch {
		case x.fast:
			o.CatchUp = x.catchUp
		case !latest.IsZero() && !current[h]:
			o.CatchUp = latest
			if m := r.p.opts.CASMetrics; m != nil {
				m.CatchUps.WithLabelValues(r.op).Inc()
			}
		}
		rep, err := r.p.replica(h)
		if err != nil {
			answers <- proposeAnswer{host: h, err: err}
			continue
		}
		r.p.goBackground(func() {
			a, err := rep.Propose(ctx, prop, o)
			answers <- proposeAnswer{host: h, a: a, err: err}
		})
	}
	var (
		accepted, maybe int
		datas           []*storage.Partition
		failed          []ring.HostID
		firstErr        error
	)
	for range parts {
		select {
		case a := <-answers:
			switch {
			case a.err == nil && a.a.OK:
				accepted++
				if a.a.Next && a.a.Data != nil {
					datas = append(datas, a.a.Data)
				}
				if accepted >= r.pl.required {
					if len(datas) != accepted {
						datas = nil
					}
					r.chose(prop, x.next, datas)
					return proposeResult{chosen: true, accepted: accepted}, nil
				}
			case a.err == nil:
				r.after = r.after.Max(a.a.Promise)
				r.p.ballots.observe(a.a.Promise)
			case undelivered(a.err):
			default:
				// Lost on the way back, or failed on the replica: it may
				// have been accepted.
				maybe++
				if !hintable(a.err) {
					failed = append(failed, a.host)
					firstErr = cmpOr(firstErr, a.err)
				}
			}
		case <-ctx.Done():
			return proposeResult{}, r.timeout(accepted)
		}
	}
	if accepted+maybe > 0 && len(failed) > 0 {
		return proposeResult{}, r.roundError(accepted, failed, firstErr)
	}
	if x.fast && maybe == 0 {
		// Every participant answered, too few accepted: a proposal on a
		// promise given in advance no one may finish (inProgress) is dead,
		// as if refused by all.
		return proposeResult{}, nil
	}
	return proposeResult{accepted: accepted + maybe}, nil
}

// undelivered reports whether a request's error says it never reached its
// replica.
func undelivered(err error) bool {
	return errors.Is(err, messaging.ErrUnreachable) || errors.Is(err, messaging.ErrQueueFull)
}

// commit sends prop's commit to every natural and pending replica and
// waits for level cl as a write does (Apply's write path: hints for the
// replicas down or late, timeouts and failures with Cassandra's fields,
// write type SIMPLE as Cassandra's commit reports it), but not at all at
// ANY: the commits then complete on their own, under the request's
// deadline.
func (r *paxosRun) commit(ctx context.Context, prop replica.Proposal, cl primitive.ConsistencyLevel, check func() error) error {
	p := r.p
	w, err := p.planWrite(cl, primitive.WriteTypeSimple, []*mutation.Update{prop.Update}, nil)
	if err != nil {
		return err
	}
	w.send = func(ctx context.Context, rep replica.Replica, _ *mutation.Mutation, check func() error) error {
		return rep.Commit(ctx, prop, check)
	}
	if cl == primitive.ConsistencyLevelAny {
		bg, cancel := detach(ctx)
		p.goBackground(func() {
			defer cancel()
			_ = p.write(bg, w, check, nil)
		})
		return nil
	}
	if n := w.needs[0]; n.total() > 1 || !slices.Contains(w.hosts, p.local()) {
		r.roundTrips++ // a remote acknowledgement to wait for
	}
	err = p.write(ctx, w, check, nil)
	if wt, ok := errors.AsType[*cqlerr.WriteTimeout](err); ok {
		p.timedOut(r.op)
		wt.Contentions = int32(r.contentions)
	}
	return err
}

// catchUpLaggards sends the most recent commit among promises (or the
// proposal known chosen the round laid over their data) to the replicas
// whose promise showed an older one, in the background: a round that
// proposes nothing leaves them as current as one that does.
func (r *paxosRun) catchUpLaggards(promises []promiseOf) {
	_, latest := summarize(promises, nil)
	if !r.overlaid.IsZero() {
		latest = r.overlaid // newer, and committed by none of them
	}
	if latest.IsZero() {
		return
	}
	for _, pr := range promises {
		if pr.Committed.Ballot == latest.Ballot {
			continue
		}
		rep, err := r.p.replica(pr.host)
		if err != nil {
			continue
		}
		if m := r.p.opts.CASMetrics; m != nil {
			m.CatchUps.WithLabelValues(r.op).Inc()
		}
		ctx, cancel := context.WithTimeout(context.Background(), catchUpTimeout)
		r.p.goBackground(func() {
			defer cancel()
			if err := rep.Commit(ctx, latest, nil); err != nil {
				r.p.log.Debug("proxy: catch-up commit not made", "replica", pr.host.String(), "err", err)
			}
		})
	}
}

// catchUpTimeout bounds a catch-up commit sent in the background.
const catchUpTimeout = 2 * time.Second

// cmpOr is a if set, else b.
func cmpOr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}
