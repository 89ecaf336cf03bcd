package batchlog

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/cqld/cqld/mutation"
	"github.com/cqld/cqld/storage"
)

// replays records the batches a Manager replays; fail makes the next
// replays fail.
type replays struct {
	mu   sync.Mutex
	got  []string // the first value written by each replayed batch
	fail error
}

func (r *replays) Replay(_ context.Context, m *mutation.Mutation) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, string(m.Updates[0].Ops[0].Cell.Value))
	return r.fail
}

// A stored batch survives a restart of its node (it went through the
// commit log); a round replays, oldest first, the batches at least
// ReplayAfter old and removes them, leaving the younger ones; a batch of
// dropped tables only is removed without a replay; a batch that does not
// decode is dropped; a failed replay is counted and the batch removed.
func TestManagerReplaysOldBatches(t *testing.T) {
	fs := vfs.NewMem()
	tbl := testTable(t, 1)
	clk := &clock{now: time.Unix(1000, 0)}
	e := openEngine(t, fs, "n")
	s, err := OpenStore(e, clk.Now)
	if err != nil {
		t.Fatal(err)
	}
	put := func(v string, age time.Duration, tables ...*storage.Table) ID {
		t.Helper()
		b, err := Encode(batchOf(v, tables, 1, 2))
		if err != nil {
			t.Fatal(err)
		}
		id := NewID(clk.now.Add(-age), func() uint64 { return uint64(len(v)) })
		if err := s.Put(id, b); err != nil {
			t.Fatal(err)
		}
		return id
	}
	put("older", 10*time.Second, tbl)
	put("old", 5*time.Second, tbl)
	put("young", time.Second, tbl)
	put("dropped", time.Minute, testTable(t, 9))
	if err := s.Put(NewID(clk.now.Add(-time.Hour), func() uint64 { return 1 }), []byte{codecV1, 5, 1}); err != nil {
		t.Fatal(err)
	}
	// Restart the node: the batches are read back from the commit log.
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	e = openEngine(t, fs, "n")
	defer e.Close()
	if s, err = OpenStore(e, clk.Now); err != nil {
		t.Fatal(err)
	}

	r := &replays{}
	metrics := NewMetrics(prometheus.NewRegistry())
	m := &Manager{o: ManagerOptions{Store: s, Replayer: r, ReplayAfter: 4 * time.Second, WriteTimeout: time.Second, Now: clk.Now,
		Tables: func(id [16]byte) (*storage.Table, bool) { return tbl, id == tbl.Def.ID },
		Logger: discard(), Metrics: metrics}}
	if err := m.Replay(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(r.got) != 2 || r.got[0] != "older" || r.got[1] != "old" {
		t.Fatalf("replayed %v, want older then old", r.got)
	}
	if got := testutil.ToFloat64(metrics.Pending); got != 5 {
		t.Fatalf("pending %v, want 5", got)
	}
	left := stored(t, s)
	if len(left) != 1 {
		t.Fatalf("%d batches left, want the young one", len(left))
	}
	// Three seconds on the young one is due; its replay fails, and it is
	// counted and removed all the same.
	clk.now = clk.now.Add(3 * time.Second)
	r.fail = errors.New("a replica refused")
	if err := m.Replay(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(r.got) != 3 || r.got[2] != "young" || testutil.ToFloat64(metrics.ReplayFailures) != 1 || testutil.ToFloat64(metrics.Replayed) != 3 {
		t.Fatalf("replayed %v, %v failures", r.got, testutil.ToFloat64(metrics.ReplayFailures))
	}
	if left := stored(t, s); len(left) != 0 {
		t.Fatalf("%d batches left", len(left))
	}
}

// A round stopped by its context leaves the batch it was replaying
// stored.
func TestManagerStopsWithContext(t *testing.T) {
	tbl := testTable(t, 1)
	clk := &clock{now: time.Unix(1000, 0)}
	e := openEngine(t, vfs.NewMem(), "n")
	defer e.Close()
	s, _ := OpenStore(e, clk.Now)
	b, _ := Encode(batchOf("x", []*storage.Table{tbl}, 1))
	if err := s.Put(NewID(clk.now.Add(-time.Minute), func() uint64 { return 1 }), b); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	m := &Manager{o: ManagerOptions{Store: s, Replayer: &replays{}, ReplayAfter: time.Second, WriteTimeout: time.Second, Now: clk.Now,
		Tables: func([16]byte) (*storage.Table, bool) { return tbl, true }, Logger: discard()}}
	if err := m.Replay(ctx); err == nil {
		t.Fatal("a cancelled round completed")
	}
	if len(stored(t, s)) != 1 {
		t.Fatal("the batch was removed without a replay")
	}
}

func stored(t *testing.T, s *Store) []ID {
	t.Helper()
	var ids []ID
	if err := s.Each(func(id ID, _ []byte) bool { ids = append(ids, id); return true }); err != nil {
		t.Fatal(err)
	}
	return ids
}
