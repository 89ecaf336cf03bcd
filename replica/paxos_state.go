package replica

import "github.com/cqld/cqld/mutation"

// Proposal is an update of one partition proposed, accepted or committed
// under a ballot. Its Update writes its cells at the ballot's timestamp
// (mutation.Update.SetTimestamp). The zero Proposal is none.
type Proposal struct {
	Ballot Ballot
	Update *mutation.Update
	// Fast marks a proposal made on a promise given in advance
	// (ProposeOptions.Fast): it may be finished by another proposer only
	// once seen accepted by a quorum (docs/paxos.md, the repeat proposer).
	Fast bool
}

// IsZero reports whether p is no proposal.
func (p Proposal) IsZero() bool { return p.Ballot.IsZero() }

// PaxosState is one partition's Paxos state on a replica, as
// system.paxos keeps it. The transitions are pure: each returns the new
// state, which the replica persists before it answers.
type PaxosState struct {
	// Promised is the highest ballot promised (in_progress_ballot).
	Promised Ballot
	// Accepted is the proposal accepted and not yet known committed
	// (proposal_ballot, proposal); a commit at or after it clears it.
	Accepted Proposal
	// Committed is the most recent commit (most_recent_commit_at,
	// most_recent_commit).
	Committed Proposal
}

// Promise is the ballot a prepare must be after and a proposal must
// equal or be after: the highest the replica holds. Accepting a ballot
// and learning a commit both imply having promised it.
func (s *PaxosState) Promise() Ballot {
	return s.Promised.Max(s.Accepted.Ballot).Max(s.Committed.Ballot)
}

// InProgress reports whether the accepted proposal is newer than the most
// recent commit: a round that may have reached a quorum and must be
// finished before another begins.
func (s *PaxosState) InProgress() bool {
	return !s.Accepted.IsZero() && s.Accepted.Ballot.After(s.Committed.Ballot)
}

// Prepare promises b if it is after every ballot the replica holds. A
// refused prepare leaves s as it was; Promise is then the higher ballot
// to tell the proposer.
func (s PaxosState) Prepare(b Ballot) (PaxosState, bool) {
	if !b.After(s.Promise()) {
		return s, false
	}
	s.Promised = b
	return s, true
}

// Propose accepts p if its ballot is the one promised (the same
// proposer) or after every ballot held.
func (s PaxosState) Propose(p Proposal) (PaxosState, bool) {
	if promise := s.Promise(); p.Ballot != promise && !p.Ballot.After(promise) {
		return s, false
	}
	s.Promised, s.Accepted = p.Ballot, p
	return s, true
}

// Commit learns the commit of p: it becomes the most recent commit if it
// is the newest, and clears an accepted proposal at or before it. The
// replica applies p's update to the table whatever the state says, since
// a commit's cells are timestamped with its ballot and applying one again,
// or late, changes nothing a newer write holds.
func (s PaxosState) Commit(p Proposal) PaxosState {
	if p.Ballot.Compare(s.Committed.Ballot) > 0 {
		s.Committed = p
	}
	if !s.Accepted.IsZero() && s.Accepted.Ballot.Compare(p.Ballot) <= 0 {
		s.Accepted = Proposal{}
	}
	return s
}
