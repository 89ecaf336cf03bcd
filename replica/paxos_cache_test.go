package replica

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/cqld/cqld/internal/israce"
	"github.com/cqld/cqld/mutation"
	"github.com/cqld/cqld/storage"
)

// storedPaxos reads partition pk of t's Paxos state from system.paxos
// alone, as the replica did before it had a cache: what the cache must
// serve.
func storedPaxos(t *testing.T, l *Local, tbl *storage.Table, pk []byte) PaxosState {
	t.Helper()
	var cells paxosCells
	ck := paxosRow(tbl)
	o := storage.ReadOptions{Now: l.nowSeconds(), Slice: storage.Slice{Start: &storage.Bound{Prefix: ck, Inclusive: true}, End: &storage.Bound{Prefix: ck, Inclusive: true}}}
	err := l.engine.ReadPartition(paxosTable, pk, o, func(r *storage.Row) bool {
		for _, c := range r.Cells {
			if i := paxosColumn(c.Column); i >= 0 {
				c.Cell.Value = bytes.Clone(c.Cell.Value)
				cells.cell[i], cells.has[i] = c.Cell, true
			}
		}
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	return cells.state(tbl, o.Now)
}

// describe is st in a comparable form: its ballots and its updates'
// encodings.
func describe(t *testing.T, st PaxosState) string {
	t.Helper()
	enc := func(p Proposal) string {
		if p.Update == nil {
			return "-"
		}
		b, err := mutation.Append(nil, p.Update)
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprintf("%x", b)
	}
	return fmt.Sprintf("promised %s accepted %s fast %v %s committed %s %s",
		st.Promised, st.Accepted.Ballot, st.Accepted.Fast, enc(st.Accepted), st.Committed.Ballot, enc(st.Committed))
}

// After any sequence of rounds, refused ones, failed writes, lone
// transactions, truncations, purges, flushes and clock jumps past the
// state's TTL, the state the replica serves (from its cache when it holds
// the partition) is the state system.paxos holds.
func TestPaxosCacheIsTheStoredState(t *testing.T) {
	seeds := uint64(48)
	if israce.Enabled {
		seeds = 6
	}
	for seed := range seeds {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { checkPaxosCache(t, seed, 600) })
	}
}

func checkPaxosCache(t *testing.T, seed uint64, steps int) {
	rng := rand.New(rand.NewPCG(seed, 1))
	clock := time.Unix(1_800_000_000, 0)
	e := openLocalOn(t, vfs.NewMem(), "data", "periodic").engine
	l := NewLocalWith(e, LocalOptions{Now: func() time.Time { return clock }})
	tbl := testTable(t, [16]byte{9})
	ctx := context.Background()
	errCheck := errors.New("check refused")
	var commits []Proposal
	// Ballots come from around the clock, and now and then from a
	// proposer hours behind it, before states that have expired since.
	ballot := func() Ballot {
		at := clock.UnixMicro() + rng.Int64N(60) - 30
		if rng.IntN(8) == 0 {
			at -= rng.Int64N(5 * 3600 * 1e6)
		}
		return ballotAt(at, byte(1+rng.IntN(2)))
	}
	proposal := func(k int) Proposal {
		b := ballot()
		p := Proposal{Ballot: b, Update: update(tbl, k, rng.IntN(3), fmt.Sprint(rng.IntN(100)))}
		p.Update.SetTimestamp(b.Micros())
		return p
	}
	earlier := func(k int) Proposal {
		for range 4 {
			if len(commits) > 0 {
				if c := commits[rng.IntN(len(commits))]; string(c.Update.Key) == string(i32(k)) {
					return c
				}
			}
		}
		return Proposal{}
	}
	ballots := func(after Ballot) Ballot { return ballotAt(max(after.Micros(), clock.UnixMicro())+1, 3) }
	hits := 0
	for step := range steps {
		k := 1 + rng.IntN(3)
		pk := i32(k)
		var err error
		op := rng.IntN(100)
		switch {
		case op < 25:
			var read *storage.Slice
			if rng.IntN(2) == 0 {
				read = wholePartition
			}
			_, err = l.Prepare(ctx, tbl, pk, ballot(), read)
		case op < 50:
			p := proposal(k)
			var o ProposeOptions
			if rng.IntN(3) == 0 {
				o.CatchUp = earlier(k)
			}
			switch rng.IntN(4) {
			case 0:
				o.Commit = true
			case 1:
				o.Next, o.Read = ballotAt(p.Ballot.Micros()+1+rng.Int64N(5), p.Ballot[8]&0x3f), wholePartition
			case 2:
				o.Fast = true
			}
			var a *Acceptance
			if a, err = l.Propose(ctx, p, o); err == nil && a.OK && o.Commit {
				commits = append(commits, p)
			}
		case op < 70:
			p := proposal(k)
			if c := earlier(k); !c.IsZero() && rng.IntN(2) == 0 {
				p = c
			}
			var check func() error
			if rng.IntN(4) == 0 {
				check = func() error { return errCheck }
			}
			if err = l.Commit(ctx, p, check); err == nil {
				commits = append(commits, p)
			}
		case op < 78:
			var check func() error
			if rng.IntN(4) == 0 {
				check = func() error { return errCheck }
			}
			err = l.Alone(ctx, tbl, pk, storage.Slice{}, ballots, func(b Ballot, _ *storage.Partition) (*mutation.Update, error) {
				if rng.IntN(5) == 0 {
					return nil, nil
				}
				return update(tbl, k, 0, "alone"), nil
			}, check)
		case op < 80:
			err = l.AloneRead(ctx, tbl, pk, storage.ReadOptions{Now: l.nowSeconds()}, ballots, func(*storage.Row) bool { return true })
		case op < 82:
			err = l.Truncate(ctx, tbl)
		case op < 85:
			_, err = e.Purge(paxosTable, l.nowSeconds())
		case op < 87:
			err = e.Flush()
		case op < 90:
			clock = clock.Add(time.Duration(rng.Int64N(4*3600)) * time.Second)
		default:
			clock = clock.Add(time.Duration(rng.Int64N(50)) * time.Microsecond)
		}
		if err != nil && !errors.Is(err, errCheck) {
			t.Fatalf("step %d: %v", step, err)
		}
		clock = clock.Add(time.Duration(rng.Int64N(20)) * time.Microsecond)
		for k := 1; k <= 3; k++ {
			pk := i32(k)
			_, cached := l.paxosCache.get(tbl, pk, l.nowSeconds())
			got, err := l.loadPaxos(tbl, pk, l.nowSeconds())
			if err != nil {
				t.Fatal(err)
			}
			if g, w := describe(t, got), describe(t, storedPaxos(t, l, tbl, pk)); g != w {
				t.Fatalf("step %d (op %d), partition %d (cached %v):\nserved %s\nstored %s", step, op, k, cached, g, w)
			}
			if cached {
				hits++
			}
		}
	}
	if hits < steps {
		t.Fatalf("the cache served %d of %d states: too few to test it", hits, 3*steps)
	}
}

// A state whose proposal is too big to keep is not cached, and the cache
// keeps at most maxPaxosEntries partitions.
func TestPaxosCacheBounds(t *testing.T) {
	l, tbl := openLocal(t, "periodic")
	ctx := context.Background()
	now := time.Now().UnixMicro()
	big := Proposal{Ballot: ballotAt(now, 1), Update: update(tbl, 1, 0, string(make([]byte, maxPaxosEntryBytes)))}
	if ok, _, err := propose(ctx, l, big, ProposeOptions{}); !ok || err != nil {
		t.Fatal(ok, err)
	}
	state(t, l, tbl, 1)
	if _, ok := l.paxosCache.get(tbl, i32(1), l.nowSeconds()); ok {
		t.Fatal("a state with a proposal past maxPaxosEntryBytes was cached")
	}
	for k := range maxPaxosEntries + 10 {
		state(t, l, tbl, k+2)
	}
	if n := l.paxosCache.len(); n != maxPaxosEntries {
		t.Fatalf("%d entries cached, want %d", n, maxPaxosEntries)
	}
}

// A purge judging expiry on a clock ahead of the replica's (one running
// beside a round) may remove cells the replica still counts live: the
// cache does not serve a cell that close to its expiry.
func TestPaxosCacheNearExpiry(t *testing.T) {
	clock := time.Unix(1_800_000_000, 0)
	e := openLocalOn(t, vfs.NewMem(), "data", "periodic").engine
	l := NewLocalWith(e, LocalOptions{Now: func() time.Time { return clock }})
	tbl := testTable(t, [16]byte{9})
	ctx := context.Background()
	p := proposalOf(tbl, clock.UnixMicro(), 1, 1, 0, "v")
	if ok, _, err := propose(ctx, l, p, ProposeOptions{}); !ok || err != nil {
		t.Fatal(ok, err)
	}
	if err := l.Commit(ctx, p, nil); err != nil {
		t.Fatal(err)
	}
	state(t, l, tbl, 1)
	clock = clock.Add(time.Duration(paxosTTL(tbl)-1) * time.Second)
	if _, err := e.Purge(paxosTable, l.nowSeconds()+2); err != nil {
		t.Fatal(err)
	}
	if g, w := describe(t, state(t, l, tbl, 1)), describe(t, storedPaxos(t, l, tbl, i32(1))); g != w {
		t.Fatalf("served %s\nstored %s", g, w)
	}
}

// Rounds beside TRUNCATEs (which change system.paxos without the
// partitions' locks) leave the cache holding what the store holds. The
// interleavings are the scheduler's: this exercises the generation under
// -race rather than forcing each one.
func TestPaxosCacheBesideTruncate(t *testing.T) {
	l, tbl := openLocal(t, "periodic")
	ctx := context.Background()
	var wg sync.WaitGroup
	for g := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 150 {
				k := 1 + (i+g)%3
				b := ballotAt(time.Now().UnixMicro(), byte(1+g))
				if pr, err := l.Prepare(ctx, tbl, i32(k), b, nil); err != nil || !pr.OK {
					continue
				}
				p := Proposal{Ballot: b, Update: update(tbl, k, 0, "v")}
				p.Update.SetTimestamp(b.Micros())
				if a, err := l.Propose(ctx, p, ProposeOptions{}); err != nil || !a.OK {
					continue
				}
				if err := l.Commit(ctx, p, nil); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	for range 20 {
		if err := l.Truncate(ctx, tbl); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Millisecond)
	}
	wg.Wait()
	for k := 1; k <= 3; k++ {
		if g, w := describe(t, state(t, l, tbl, k)), describe(t, storedPaxos(t, l, tbl, i32(k))); g != w {
			t.Fatalf("partition %d: served %s\nstored %s", k, g, w)
		}
	}
}
