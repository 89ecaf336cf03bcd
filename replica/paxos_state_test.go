package replica

import (
	"testing"

	"github.com/cqld/cqld/mutation"
)

// ballotAt is the ballot of micros by node n.
func ballotAt(micros int64, n byte) Ballot { return NewBallot(micros, [8]byte{n}) }

func prop(micros int64, n byte) Proposal {
	return Proposal{Ballot: ballotAt(micros, n), Update: &mutation.Update{}}
}

// The transitions of one partition's state, step by step, as Paxos (and
// Cassandra's PaxosState) order them.
func TestPaxosStateTransitions(t *testing.T) {
	type step struct {
		op   string // prepare, propose, commit
		p    Proposal
		ok   bool
		want PaxosState
	}
	b := func(m int64, n byte) Ballot { return ballotAt(m, n) }
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{"a full round", []step{
			{"prepare", prop(10, 1), true, PaxosState{Promised: b(10, 1)}},
			{"propose", prop(10, 1), true, PaxosState{Promised: b(10, 1), Accepted: prop(10, 1)}},
			{"commit", prop(10, 1), true, PaxosState{Promised: b(10, 1), Committed: prop(10, 1)}},
		}},
		{"prepares must move forward in microseconds", []step{
			{"prepare", prop(10, 1), true, PaxosState{Promised: b(10, 1)}},
			{"prepare", prop(9, 2), false, PaxosState{Promised: b(10, 1)}},
			{"prepare", prop(10, 2), false, PaxosState{Promised: b(10, 1)}}, // same microseconds, another node
			{"prepare", prop(10, 1), false, PaxosState{Promised: b(10, 1)}}, // the same ballot again
			{"prepare", prop(11, 2), true, PaxosState{Promised: b(11, 2)}},
		}},
		{"a proposal after a later promise is refused", []step{
			{"prepare", prop(10, 1), true, PaxosState{Promised: b(10, 1)}},
			{"prepare", prop(11, 2), true, PaxosState{Promised: b(11, 2)}},
			{"propose", prop(10, 1), false, PaxosState{Promised: b(11, 2)}},
			{"propose", prop(11, 2), true, PaxosState{Promised: b(11, 2), Accepted: prop(11, 2)}},
		}},
		{"a proposal with the promised microseconds but another node's is refused", []step{
			{"prepare", prop(10, 1), true, PaxosState{Promised: b(10, 1)}},
			{"propose", prop(10, 2), false, PaxosState{Promised: b(10, 1)}},
		}},
		{"a proposal after everything held is accepted unprepared, and is a promise", []step{
			{"prepare", prop(10, 1), true, PaxosState{Promised: b(10, 1)}},
			{"propose", prop(12, 2), true, PaxosState{Promised: b(12, 2), Accepted: prop(12, 2)}},
			{"prepare", prop(11, 3), false, PaxosState{Promised: b(12, 2), Accepted: prop(12, 2)}},
		}},
		{"an older commit keeps the newer accepted proposal and the newer commit", []step{
			{"propose", prop(20, 1), true, PaxosState{Promised: b(20, 1), Accepted: prop(20, 1)}},
			{"commit", prop(15, 2), true, PaxosState{Promised: b(20, 1), Accepted: prop(20, 1), Committed: prop(15, 2)}},
			{"commit", prop(20, 1), true, PaxosState{Promised: b(20, 1), Committed: prop(20, 1)}},
			{"commit", prop(15, 2), true, PaxosState{Promised: b(20, 1), Committed: prop(20, 1)}},
		}},
		{"a commit is a promise", []step{
			{"commit", prop(30, 1), true, PaxosState{Committed: prop(30, 1)}},
			{"prepare", prop(30, 2), false, PaxosState{Committed: prop(30, 1)}},
			{"propose", prop(29, 2), false, PaxosState{Committed: prop(30, 1)}},
			{"prepare", prop(31, 2), true, PaxosState{Promised: b(31, 2), Committed: prop(30, 1)}},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var st PaxosState
			for i, s := range tc.steps {
				ok := true
				switch s.op {
				case "prepare":
					st, ok = st.Prepare(s.p.Ballot)
				case "propose":
					st, ok = st.Propose(s.p)
				case "commit":
					st = st.Commit(s.p)
				}
				if ok != s.ok || !sameState(st, s.want) {
					t.Fatalf("step %d (%s %s): ok %v, state %+v; want %v, %+v", i, s.op, s.p.Ballot, ok, st, s.ok, s.want)
				}
			}
		})
	}
}

func sameState(a, b PaxosState) bool {
	return a.Promised == b.Promised && a.Accepted.Ballot == b.Accepted.Ballot && a.Committed.Ballot == b.Committed.Ballot
}

func TestPaxosStateInProgress(t *testing.T) {
	for _, tc := range []struct {
		st   PaxosState
		want bool
	}{
		{PaxosState{}, false},
		{PaxosState{Accepted: prop(10, 1)}, true},
		{PaxosState{Accepted: prop(10, 1), Committed: prop(9, 1)}, true},
		{PaxosState{Accepted: prop(10, 1), Committed: prop(10, 1)}, false},
		{PaxosState{Accepted: prop(10, 1), Committed: prop(11, 1)}, false},
	} {
		if got := tc.st.InProgress(); got != tc.want {
			t.Errorf("%+v: in progress %v, want %v", tc.st, got, tc.want)
		}
	}
}
