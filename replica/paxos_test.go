package replica

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/cqld/cqld/commitlog"
	"github.com/cqld/cqld/mutation"
	"github.com/cqld/cqld/storage"
)

// update is an update of partition k of tbl setting row c's v.
func update(tbl *storage.Table, k, c int, v string) *mutation.Update {
	m := &mutation.Mutation{}
	m.WriteCell(tbl, i32(k), storage.CellTarget{Clustering: [][]byte{i32(c)}, Column: "v"}, storage.Cell{Timestamp: 1, Value: []byte(v)})
	return m.Updates[0]
}

func proposalOf(tbl *storage.Table, micros int64, n byte, k, c int, v string) Proposal {
	p := Proposal{Ballot: ballotAt(micros, n), Update: update(tbl, k, c, v)}
	p.Update.SetTimestamp(micros)
	return p
}

// state is partition k's Paxos state on l.
func state(t *testing.T, l *Local, tbl *storage.Table, k int) PaxosState {
	t.Helper()
	st, err := l.loadPaxos(tbl, i32(k), l.nowSeconds())
	if err != nil {
		t.Fatal(err)
	}
	return st
}

var wholePartition = &storage.Slice{}

// One round on a replica: the promise answers the data as of the
// promise, the acceptance and the commit are kept in system.paxos, and
// the commit writes the data at the ballot's timestamp.
func TestLocalPaxosRound(t *testing.T) {
	l, tbl := openLocal(t, "batch")
	ctx := context.Background()
	if err := l.Apply(ctx, &mutation.Mutation{Updates: []*mutation.Update{update(tbl, 1, 0, "before")}}, nil); err != nil {
		t.Fatal(err)
	}
	pr, err := l.Prepare(ctx, tbl, i32(1), ballotAt(100, 1), wholePartition)
	if err != nil || !pr.OK || pr.Ballot != ballotAt(100, 1) || !pr.Accepted.IsZero() || !pr.Committed.IsZero() {
		t.Fatalf("prepare: %+v, %v", pr, err)
	}
	if got := resolved(t, tbl, pr.Data); got[0] != "before" {
		t.Fatalf("promise's data %v", got)
	}
	// A second proposer with an earlier ballot is refused and told ours.
	if pr, err := l.Prepare(ctx, tbl, i32(1), ballotAt(99, 2), wholePartition); err != nil || pr.OK || pr.Ballot != ballotAt(100, 1) || pr.Data != nil {
		t.Fatalf("earlier prepare: %+v, %v", pr, err)
	}
	p := proposalOf(tbl, 100, 1, 1, 0, "after")
	if ok, promise, err := propose(ctx, l, p, ProposeOptions{}); !ok || promise != p.Ballot || err != nil {
		t.Fatalf("propose: %v %s %v", ok, promise, err)
	}
	if st := state(t, l, tbl, 1); st.Accepted.Ballot != p.Ballot || !st.InProgress() {
		t.Fatalf("after the proposal: %+v", st)
	}
	if got := rows(t, l, tbl, 1); got[0] != "before" {
		t.Fatalf("an accepted proposal is not data yet: %v", got)
	}
	if err := l.Commit(ctx, p, nil); err != nil {
		t.Fatal(err)
	}
	st := state(t, l, tbl, 1)
	if st.Committed.Ballot != p.Ballot || !st.Accepted.IsZero() || st.InProgress() {
		t.Fatalf("after the commit: %+v", st)
	}
	if got := rows(t, l, tbl, 1); got[0] != "after" {
		t.Fatalf("committed data %v", got)
	}
	if u := st.Committed.Update; len(u.Ops) != 1 || u.Ops[0].Cell.Timestamp != 100 {
		t.Fatalf("most recent commit %+v", u)
	}
	// The next round sees the commit in its promise.
	pr, err = l.Prepare(ctx, tbl, i32(1), ballotAt(101, 2), nil)
	if err != nil || !pr.OK || pr.Committed.Ballot != p.Ballot || pr.Data != nil {
		t.Fatalf("next prepare: %+v, %v", pr, err)
	}
}

func resolved(t *testing.T, tbl *storage.Table, p *storage.Partition) map[int]string {
	t.Helper()
	out := map[int]string{}
	if err := tbl.Resolve(p, storage.ReadOptions{Now: 1}, func(r *storage.Row) bool {
		for _, c := range r.Cells {
			out[int(r.Clustering[0][3])] = string(c.Cell.Value)
		}
		return true
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// Each step of a round is durable when it returns, even with the commit
// log in periodic mode: a power cut right after it (every byte not synced
// lost) and a restart replay it from the commit log.
func TestLocalPaxosStepsSurviveACrash(t *testing.T) {
	tbl := testTable(t, [16]byte{9})
	ctx := context.Background()
	fs := vfs.NewCrashableMem()
	e, l := openCrashable(t, fs)
	p := proposalOf(tbl, 100, 1, 1, 0, "v")
	catchUp := proposalOf(tbl, 50, 3, 1, 1, "older")
	steps := []struct {
		name  string
		do    func(l *Local) error
		check func(st PaxosState, data map[int]string) error
	}{
		{"promise", func(l *Local) error {
			_, err := l.Prepare(ctx, tbl, i32(1), p.Ballot, nil)
			return err
		}, func(st PaxosState, _ map[int]string) error {
			if st.Promised != p.Ballot {
				return fmt.Errorf("promised %s", st.Promised)
			}
			return nil
		}},
		{"acceptance with a catch-up commit", func(l *Local) error {
			ok, _, err := propose(ctx, l, p, ProposeOptions{CatchUp: catchUp})
			if !ok && err == nil {
				err = fmt.Errorf("refused")
			}
			return err
		}, func(st PaxosState, data map[int]string) error {
			if st.Accepted.Ballot != p.Ballot || st.Committed.Ballot != catchUp.Ballot || data[1] != "older" {
				return fmt.Errorf("state %+v, data %v", st, data)
			}
			return nil
		}},
		{"commit", func(l *Local) error { return l.Commit(ctx, p, nil) }, func(st PaxosState, data map[int]string) error {
			if st.Committed.Ballot != p.Ballot || !st.Accepted.IsZero() || data[0] != "v" {
				return fmt.Errorf("state %+v, data %v", st, data)
			}
			return nil
		}},
	}
	for _, s := range steps {
		if err := s.do(l); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		crashed := fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 0})
		_ = e.Close()
		fs = crashed
		e, l = openCrashable(t, fs)
		if err := s.check(state(t, l, tbl, 1), rows(t, l, tbl, 1)); err != nil {
			t.Fatalf("after the %s and a crash: %v", s.name, err)
		}
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
}

// openCrashable opens a replica on fs in periodic mode; the test closes
// its engine.
func openCrashable(t *testing.T, fs vfs.FS) (*storage.Engine, *Local) {
	t.Helper()
	e, err := storage.OpenEngine(storage.EngineOptions{
		FS: fs, Dir: "data",
		Log:    commitlog.Options{Dir: "data/commitlog", Sync: "periodic", SyncPeriod: time.Hour, SegmentSize: 1 << 20},
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	return e, NewLocal(e)
}

// testBallots is a ballot clock for Alone.
type testBallots struct{ last atomic.Int64 }

func (b *testBallots) next(after Ballot) Ballot {
	for {
		last := b.last.Load()
		m := max(last+1, after.Micros()+1)
		if b.last.CompareAndSwap(last, m) {
			return ballotAt(m, 7)
		}
	}
}

// Alone runs read-decide-commit under the partition's lock: concurrent
// increments of one value are all counted.
func TestLocalAloneSerializes(t *testing.T) {
	l, tbl := openLocal(t, "periodic")
	ctx := context.Background()
	var ballots testBallots
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 25 {
				err := l.Alone(ctx, tbl, i32(1), storage.Slice{}, ballots.next, func(b Ballot, data *storage.Partition) (*mutation.Update, error) {
					n := len(resolved(t, tbl, data)[0])
					return update(tbl, 1, 0, string(make([]byte, n+1))), nil
				}, nil)
				if err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	if n := len(rows(t, l, tbl, 1)[0]); n != 100 {
		t.Fatalf("after 100 increments the value is %d long", n)
	}
	// Alone keeps the promise of its last ballot: later rounds get past it.
	if st := state(t, l, tbl, 1); st.Promise().Micros() != 100 {
		t.Fatalf("promise %s", st.Promise())
	}
}

// Alone finishes a proposal a remote coordinator left accepted before it
// reads, under a later ballot.
func TestLocalAloneFinishesAnAcceptedProposal(t *testing.T) {
	l, tbl := openLocal(t, "periodic")
	ctx := context.Background()
	left := proposalOf(tbl, 100, 1, 1, 0, "left")
	if ok, _, err := propose(ctx, l, left, ProposeOptions{}); !ok || err != nil {
		t.Fatal(ok, err)
	}
	var ballots testBallots
	var seen map[int]string
	err := l.Alone(ctx, tbl, i32(1), storage.Slice{}, ballots.next, func(b Ballot, data *storage.Partition) (*mutation.Update, error) {
		seen = resolved(t, tbl, data)
		if b.Micros() <= 101 {
			return nil, fmt.Errorf("ballot %s not after the finished one", b)
		}
		return nil, nil
	}, nil)
	if err != nil || seen[0] != "left" {
		t.Fatalf("saw %v, %v", seen, err)
	}
	if st := state(t, l, tbl, 1); st.InProgress() || st.Committed.Ballot.Micros() != 101 {
		t.Fatalf("state %+v", st)
	}
}

// A round through a Remote is the peer's Local's round, answer for
// answer.
func TestRemotePaxosRound(t *testing.T) {
	n := newTwoNodes(t, RemoteOptions{})
	ctx := context.Background()
	tbl := n.tbl
	older := proposalOf(tbl, 50, 3, 1, 1, "older")
	if err := n.remote.Commit(ctx, older, nil); err != nil {
		t.Fatal(err)
	}
	pr, err := n.remote.Prepare(ctx, tbl, i32(1), ballotAt(100, 1), wholePartition)
	if err != nil || !pr.OK || pr.Committed.Ballot != older.Ballot || len(pr.Committed.Update.Ops) != 1 || resolved(t, tbl, pr.Data)[1] != "older" {
		t.Fatalf("prepare: %+v, %v", pr, err)
	}
	if pr, err := n.remote.Prepare(ctx, tbl, i32(1), ballotAt(100, 2), nil); err != nil || pr.OK || pr.Ballot != ballotAt(100, 1) {
		t.Fatalf("refused prepare: %+v, %v", pr, err)
	}
	p := proposalOf(tbl, 100, 1, 1, 0, "v")
	if ok, promise, err := propose(ctx, n.remote, proposalOf(tbl, 99, 2, 1, 0, "late"), ProposeOptions{}); ok || promise != p.Ballot || err != nil {
		t.Fatalf("refused proposal: %v %s %v", ok, promise, err)
	}
	if ok, _, err := propose(ctx, n.remote, p, ProposeOptions{CatchUp: older}); !ok || err != nil {
		t.Fatalf("proposal: %v %v", ok, err)
	}
	pr, err = n.remote.Prepare(ctx, tbl, i32(1), ballotAt(101, 2), nil)
	if err != nil || !pr.OK || pr.Accepted.Ballot != p.Ballot || string(pr.Accepted.Update.Ops[0].Cell.Value) != "v" {
		t.Fatalf("prepare after the proposal: %+v, %v", pr, err)
	}
	later := proposalOf(tbl, 101, 2, 1, 0, "w")
	if ok, _, err := propose(ctx, n.remote, later, ProposeOptions{Commit: true}); !ok || err != nil {
		t.Fatalf("proposal committed at once: %v %v", ok, err)
	}
	if got := rows(t, n.lb, tbl, 1); got[0] != "w" || got[1] != "older" {
		t.Fatalf("peer's data %v", got)
	}
	if st := state(t, n.lb, tbl, 1); st.Committed.Ballot != later.Ballot || st.InProgress() {
		t.Fatalf("peer's state %+v", st)
	}
	// A table the peer does not know.
	other := testTable(t, [16]byte{8})
	if _, err := n.remote.Prepare(ctx, other, i32(1), ballotAt(200, 1), nil); !errors.Is(err, ErrUnknownTable) {
		t.Fatalf("prepare of an unknown table: %v", err)
	}
	if err := n.remote.Commit(ctx, proposalOf(other, 200, 1, 1, 0, "x"), nil); !errors.Is(err, ErrUnknownTable) {
		t.Fatalf("commit of an unknown table: %v", err)
	}
}

// TRUNCATE drops the table's Paxos state with its rows: no most recent
// commit is left to bring a row back.
func TestTruncateDropsPaxosState(t *testing.T) {
	l, tbl := openLocal(t, "periodic")
	ctx := context.Background()
	p := proposalOf(tbl, time.Now().UnixMicro()-1000, 1, 1, 0, "v")
	if err := l.Commit(ctx, p, nil); err != nil {
		t.Fatal(err)
	}
	if err := l.Truncate(ctx, tbl); err != nil {
		t.Fatal(err)
	}
	if st := state(t, l, tbl, 1); !st.Committed.IsZero() || !st.Promised.IsZero() {
		t.Fatalf("state after TRUNCATE: %+v", st)
	}
}

// An update's partition form is what the store holds once the update is
// applied to an empty partition: what a coordinator lays over a read.
func TestUpdatePartitionIsTheStores(t *testing.T) {
	l, tbl := openLocal(t, "periodic")
	m := &mutation.Mutation{}
	pk := i32(3)
	live := storage.Cell{Timestamp: 10, Value: []byte("x")}
	dead := storage.Cell{Timestamp: 9, Tombstone: true, LocalDeletionTime: 100}
	m.WriteRowMarker(tbl, pk, [][]byte{i32(1)}, live)
	m.WriteCell(tbl, pk, storage.CellTarget{Clustering: [][]byte{i32(1)}, Column: "v"}, live)
	m.WriteCell(tbl, pk, storage.CellTarget{Clustering: [][]byte{i32(2)}, Column: "v"}, dead)
	m.DeleteRow(tbl, pk, [][]byte{i32(3)}, dead)
	m.DeleteRange(tbl, pk, storage.Slice{Start: &storage.Bound{Prefix: [][]byte{i32(5)}, Inclusive: true}}, dead)
	m.DeletePartition(tbl, pk, dead)
	want, err := m.Updates[0].Partition()
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Apply(context.Background(), m, nil); err != nil {
		t.Fatal(err)
	}
	got, err := l.Read(context.Background(), tbl, pk, storage.Slice{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.KVs) != len(want.KVs) {
		t.Fatalf("%d keys in the store, %d in the update's partition", len(got.KVs), len(want.KVs))
	}
	for i := range got.KVs {
		if string(got.KVs[i].Key) != string(want.KVs[i].Key) || string(got.KVs[i].Value) != string(want.KVs[i].Value) {
			t.Fatalf("key %d: store %x=%x, update %x=%x", i, got.KVs[i].Key, got.KVs[i].Value, want.KVs[i].Key, want.KVs[i].Value)
		}
	}
}

// propose is p.Propose answered as accepted and promise.
func propose(ctx context.Context, px Paxos, p Proposal, o ProposeOptions) (bool, Ballot, error) {
	a, err := px.Propose(ctx, p, o)
	if err != nil {
		return false, Ballot{}, err
	}
	return a.OK, a.Promise, nil
}

// The repeat proposer's promise given in advance: a proposal at it is
// accepted while no other proposer came and the data is the data the
// proposer decided on; a plain write, another proposer's prepare, or a
// restart refuse it, and so does a replica that promised after a write
// the proposer's view lacks (it promised too late to be in the quorum the
// view was read from).
func TestLocalFastPromise(t *testing.T) {
	ctx := context.Background()
	read := &storage.Slice{}
	plain := func(t *testing.T, l *Local, tbl *storage.Table) {
		if err := l.Apply(ctx, &mutation.Mutation{Updates: []*mutation.Update{update(tbl, 1, 5, "plain")}}, nil); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name    string
		before  func(t *testing.T, l *Local, tbl *storage.Table)
		between func(t *testing.T, l *Local, tbl *storage.Table) *Local
		// elsewhere: the view was read from other replicas, which lack
		// what before wrote.
		elsewhere bool
		ok        bool
	}{
		{name: "nothing between", ok: true},
		{name: "the proposal's own commit between", between: func(t *testing.T, l *Local, tbl *storage.Table) *Local {
			if err := l.Commit(ctx, proposalOf(tbl, 100, 1, 1, 0, "b"), nil); err != nil {
				t.Fatal(err)
			}
			return nil
		}, ok: true},
		{name: "a plain write between", between: func(t *testing.T, l *Local, tbl *storage.Table) *Local {
			plain(t, l, tbl)
			return nil
		}},
		{name: "a plain write before, in the view", before: plain, ok: true},
		{name: "a plain write before, not in the view", before: plain, elsewhere: true},
		{name: "another proposer's prepare between", between: func(t *testing.T, l *Local, tbl *storage.Table) *Local {
			if _, err := l.Prepare(ctx, tbl, i32(1), ballotAt(250, 2), nil); err != nil {
				t.Fatal(err)
			}
			return nil
		}},
		{name: "a restart between", between: func(t *testing.T, l *Local, tbl *storage.Table) *Local {
			return NewLocal(l.engine) // the same data, a new process's replica
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, tbl := openLocal(t, "periodic")
			if tc.before != nil {
				tc.before(t, l, tbl)
			}
			b := proposalOf(tbl, 100, 1, 1, 0, "b")
			n := ballotAt(200, 1)
			a, err := l.Propose(ctx, b, ProposeOptions{Next: n, Read: read})
			if err != nil || !a.OK || !a.Next || a.Promise != n || a.Data == nil {
				t.Fatalf("proposal with the next promise: %+v, %v", a, err)
			}
			data := a.Data
			if tc.elsewhere {
				data = &storage.Partition{Key: data.Key}
			}
			view, err := b.Update.Over(data)
			if err != nil {
				t.Fatal(err)
			}
			o := ProposeOptions{Fast: true, CatchUp: b, View: storage.PartitionDigest(view)}
			if tc.between != nil {
				if l2 := tc.between(t, l, tbl); l2 != nil {
					l = l2
				}
			}
			fast := proposalOf(tbl, 200, 1, 1, 0, "fast")
			a, err = l.Propose(ctx, fast, o)
			if err != nil || a.OK != tc.ok {
				t.Fatalf("fast proposal: %+v, %v; want accepted %v", a, err, tc.ok)
			}
			// A promise given in advance serves one proposal.
			if a, err := l.Propose(ctx, fast, o); err != nil || a.OK {
				t.Fatalf("second fast proposal: %+v, %v", a, err)
			}
		})
	}
}

// After a restart, Alone still finishes a proposal left in progress and
// takes ballots after every one the replica held, though it reads the
// state only of partitions rounds touched: its first call scans it.
func TestLocalAloneAfterARestart(t *testing.T) {
	l, tbl := openLocal(t, "periodic")
	ctx := context.Background()
	const future = 4_000_000_000_000_000 // microseconds, far after the test clock
	left := proposalOf(tbl, future, 1, 1, 0, "left")
	if ok, _, err := propose(ctx, l, left, ProposeOptions{}); !ok || err != nil {
		t.Fatal(ok, err)
	}
	if err := l.Commit(ctx, proposalOf(tbl, future+5, 1, 2, 0, "other"), nil); err != nil {
		t.Fatal(err)
	}
	restarted := NewLocal(l.engine)
	var ballots testBallots
	for k, want := range map[int]string{1: "left", 2: "other", 3: ""} {
		var seen map[int]string
		err := restarted.Alone(ctx, tbl, i32(k), storage.Slice{}, ballots.next, func(b Ballot, data *storage.Partition) (*mutation.Update, error) {
			if b.Micros() <= future+5 {
				return nil, fmt.Errorf("ballot %s not after the latest held", b)
			}
			seen = resolved(t, tbl, data)
			return nil, nil
		}, nil)
		if err != nil || seen[0] != want {
			t.Fatalf("partition %d: saw %v, %v; want %q", k, seen, err, want)
		}
	}
}
