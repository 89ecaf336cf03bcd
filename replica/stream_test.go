package replica

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/cqld/cqld/commitlog"
	"github.com/cqld/cqld/mutation"
	"github.com/cqld/cqld/storage"
)

// fill writes random cells, rows, tombstones and TTLs to partitions
// 0..n-1 of tbl on l.
func fill(t *testing.T, l *Local, tbl *storage.Table, n int, seed uint64) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, seed))
	m := mutation.New()
	defer m.Release()
	for k := range n {
		for range 1 + rng.IntN(8) {
			randomOp(rng, m, tbl, i32(k))
		}
	}
	if err := l.Apply(context.Background(), m, nil); err != nil {
		t.Fatal(err)
	}
}

// raw is every partition of tbl on l in rg, unresolved, in ring order.
func raw(t testing.TB, l *Local, tbl *storage.Table, rg storage.TokenRange) []*storage.Partition {
	t.Helper()
	ps, _, err := l.ReadRange(context.Background(), tbl, RangeCommand{Range: rg})
	if err != nil {
		t.Fatal(err)
	}
	return ps
}

func samePartitions(a, b []*storage.Partition) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !bytes.Equal(a[i].Key, b[i].Key) || len(a[i].KVs) != len(b[i].KVs) {
			return false
		}
		for j := range a[i].KVs {
			if !bytes.Equal(a[i].KVs[j].Key, b[i].KVs[j].Key) || !bytes.Equal(a[i].KVs[j].Value, b[i].KVs[j].Value) {
				return false
			}
		}
	}
	return true
}

var wholeRing = storage.TokenRange{Start: storage.MinToken, End: storage.MinToken}

// A range streamed in small pages arrives bit for bit, tombstones and TTLs
// included, and nothing outside the range does; pulled from a peer,
// pushed to one, or copied between two local engines alike.
func TestStreamCopiesRange(t *testing.T) {
	ctx := context.Background()
	part := storage.TokenRange{Start: -1 << 62, End: 1 << 62}
	for _, tc := range []struct {
		name string
		run  func(n *twoNodes, s *Stream, o StreamOptions) (src, dst *Local, err error)
	}{
		{"local", func(n *twoNodes, s *Stream, o StreamOptions) (*Local, *Local, error) {
			return n.la, n.lb, s.Run(ctx, n.la, n.lb, o)
		}},
		{"pull", func(n *twoNodes, s *Stream, o StreamOptions) (*Local, *Local, error) {
			return n.lb, n.la, s.Run(ctx, n.remote, n.la, o)
		}},
		{"push", func(n *twoNodes, s *Stream, o StreamOptions) (*Local, *Local, error) {
			return n.la, n.lb, s.Run(ctx, n.la, n.remote, o)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := newTwoNodes(t, RemoteOptions{})
			fill(t, n.la, n.tbl, 300, 1)
			fill(t, n.lb, n.tbl, 300, 2)
			reg := prometheus.NewRegistry()
			o := StreamOptions{PageBytes: 512, Metrics: NewStreamMetrics(reg), Direction: "in"}
			s := &Stream{Table: n.tbl, Range: part}
			// The sink's own data in the range, before, to check that the
			// stream merges into it rather than replacing it.
			src, dst, err := tc.run(n, s, o)
			if err != nil {
				t.Fatal(err)
			}
			if !s.Done || s.Partitions == 0 || s.Bytes == 0 {
				t.Fatalf("stream ended with %+v", s)
			}
			if got := testutil.ToFloat64(o.Metrics.Partitions.WithLabelValues("in")); got != float64(s.Partitions) {
				t.Errorf("partitions metric %v, stream %d", got, s.Partitions)
			}
			want := raw(t, src, n.tbl, part)
			if int64(len(want)) != s.Partitions {
				t.Errorf("streamed %d partitions of %d", s.Partitions, len(want))
			}
			// Every key the source has in the range is on the sink with
			// the source's cell, or a newer one the sink had.
			for _, p := range want {
				q, err := dst.Read(ctx, n.tbl, p.Key, storage.Slice{})
				if err != nil {
					t.Fatal(err)
				}
				mine, err := src.Read(ctx, n.tbl, p.Key, storage.Slice{})
				if err != nil {
					t.Fatal(err)
				}
				r, err := storage.ReconcilePartitions(mine, q)
				if err != nil {
					t.Fatal(err)
				}
				if !samePartitions([]*storage.Partition{r}, []*storage.Partition{q}) {
					t.Fatalf("partition %x on the sink lacks what the source streamed", p.Key)
				}
			}
			// Outside the range the sink has only its own data.
			if tc.name != "pull" {
				outside := storage.TokenRange{Start: part.End, End: part.Start}
				before := openLocalOn(t, vfs.NewMem(), "ref", "periodic")
				fill(t, before, n.tbl, 300, 2)
				if !samePartitions(raw(t, n.lb, n.tbl, outside), raw(t, before, n.tbl, outside)) {
					t.Error("the stream wrote partitions outside its range")
				}
			}
		})
	}
}

// An empty sink receives exactly the source's partitions.
func TestStreamIntoEmpty(t *testing.T) {
	n := newTwoNodes(t, RemoteOptions{})
	fill(t, n.lb, n.tbl, 200, 3)
	s := &Stream{Table: n.tbl, Range: wholeRing}
	if err := s.Run(context.Background(), n.remote, n.la, StreamOptions{PageBytes: 300}); err != nil {
		t.Fatal(err)
	}
	if !samePartitions(raw(t, n.la, n.tbl, wholeRing), raw(t, n.lb, n.tbl, wholeRing)) {
		t.Fatal("the sink's partitions differ from the source's")
	}
}

// failingSource fails once it has served pages pages.
type failingSource struct {
	StreamSource
	pages int
}

var errSourceDied = errors.New("source died")

func (f *failingSource) StreamPage(ctx context.Context, t *storage.Table, rg storage.TokenRange, after []byte, maxBytes int) ([]*storage.Partition, bool, error) {
	if f.pages == 0 {
		return nil, false, errSourceDied
	}
	f.pages--
	return f.StreamSource.StreamPage(ctx, t, rg, after, maxBytes)
}

// A stream whose source dies resumes from another source where it
// stopped: no partition is applied twice and none is missed.
func TestStreamResumesFromAnotherSource(t *testing.T) {
	ctx := context.Background()
	n := newTwoNodes(t, RemoteOptions{})
	fill(t, n.lb, n.tbl, 200, 4)
	// A second copy of b's data, the other source.
	other := openLocalOn(t, vfs.NewMem(), "other", "periodic")
	fill(t, other, n.tbl, 200, 4)

	s := &Stream{Table: n.tbl, Range: wholeRing}
	err := s.Run(ctx, &failingSource{StreamSource: n.remote, pages: 5}, n.la, StreamOptions{PageBytes: 256})
	if !errors.Is(err, errSourceDied) {
		t.Fatalf("first run: %v, want the source's death", err)
	}
	if s.Done || s.After == nil || s.Partitions == 0 {
		t.Fatalf("after the failure the stream is %+v", s)
	}
	firstRun := s.Partitions
	if err := s.Run(ctx, other, n.la, StreamOptions{PageBytes: 256}); err != nil {
		t.Fatal(err)
	}
	want := raw(t, n.lb, n.tbl, wholeRing)
	if s.Partitions != int64(len(want)) || firstRun >= s.Partitions {
		t.Errorf("streamed %d partitions (%d before the failure) of %d", s.Partitions, firstRun, len(want))
	}
	if !samePartitions(raw(t, n.la, n.tbl, wholeRing), want) {
		t.Fatal("after resuming, the sink's partitions differ from the source's")
	}
	if err := s.Run(ctx, &failingSource{pages: 0}, n.la, StreamOptions{}); err != nil {
		t.Errorf("a done stream runs again: %v", err)
	}
}

// A sink that fails stops the stream at the last page it applied, and
// the source's reader stops too.
func TestStreamSinkFailure(t *testing.T) {
	n := newTwoNodes(t, RemoteOptions{})
	fill(t, n.la, n.tbl, 100, 5)
	s := &Stream{Table: n.tbl, Range: wholeRing}
	sink := &failingSink{StreamSink: n.lb, pages: 2}
	if err := s.Run(context.Background(), n.la, sink, StreamOptions{PageBytes: 128}); !errors.Is(err, errSourceDied) {
		t.Fatalf("got %v", err)
	}
	if got := raw(t, n.lb, n.tbl, wholeRing); int64(len(got)) != s.Partitions || s.Done {
		t.Errorf("the sink holds %d partitions, the stream says %d applied (done %v)", len(got), s.Partitions, s.Done)
	}
}

type failingSink struct {
	StreamSink
	pages int
}

func (f *failingSink) StreamApply(ctx context.Context, t *storage.Table, ps []*storage.Partition) error {
	if f.pages == 0 {
		return errSourceDied
	}
	f.pages--
	return f.StreamSink.StreamApply(ctx, t, ps)
}

// A stream message of an unknown kind, or a streamed partition that is
// not one of its table's, is refused and applies nothing.
func TestStreamRefusesBadMessages(t *testing.T) {
	n := newTwoNodes(t, RemoteOptions{})
	_, err := n.a.Request(context.Background(), n.b.Addr(), 15, []byte{codecV1, 9})
	if err == nil {
		t.Fatal("a stream message of unknown kind was served")
	}
	bad := appendStreamApply(nil, n.tbl.Def.ID, []*storage.Partition{{Key: i32(1), KVs: []storage.PartitionKV{{Key: []byte("nope"), Value: []byte{1}}}}})
	if _, err := n.a.Request(context.Background(), n.b.Addr(), 15, bad); err == nil {
		t.Fatal("a malformed streamed partition was applied")
	}
	if got := raw(t, n.lb, n.tbl, wholeRing); len(got) != 0 {
		t.Fatalf("b holds %d partitions after refusing them", len(got))
	}
}

func FuzzDecodeStreamRequest(f *testing.F) {
	tbl, ps := samplePartitions(f)
	f.Add(appendStreamPage(nil, &streamPageRequest{Table: tbl.Def.ID, Range: storage.TokenRange{Start: -5, End: 7}, MaxBytes: 1 << 20}))
	f.Add(appendStreamPage(nil, &streamPageRequest{Table: tbl.Def.ID, Range: storage.TokenRange{Start: 7, End: -5}, After: i32(3)}))
	f.Add(appendStreamApply(nil, tbl.Def.ID, ps))
	f.Add(appendStreamApply(nil, tbl.Def.ID, nil))
	f.Fuzz(func(t *testing.T, in []byte) {
		kind, c, r := decodeStreamRequest(in)
		if r.Err() != nil {
			return
		}
		switch kind {
		case streamKindPage:
			if r.End() != nil {
				return
			}
			if out := appendStreamPage(nil, c); !bytes.Equal(out, in) {
				t.Fatalf("page request %x encodes as %x", in, out)
			}
		case streamKindApply:
			if c.Table != tbl.Def.ID {
				return
			}
			ps, err := decodeStreamApply(r, tbl)
			if err != nil {
				return
			}
			if out := appendStreamApply(nil, c.Table, ps); !bytes.Equal(out, in) {
				t.Fatalf("apply request %x encodes as %x", in, out)
			}
			for _, p := range ps {
				resolve(t, tbl, p)
			}
		default:
			t.Fatalf("kind %d decoded", kind)
		}
	})
}

// BenchmarkStream pulls a table (no index) of 2 KiB cells from a peer over
// the in-memory transport into a Local on disk (batch sync: an fsync per
// commit log append), as a joining node does; b.SetBytes is the
// partitions' size.
func BenchmarkStream(b *testing.B) {
	n := newTwoNodes(b, RemoteOptions{})
	n.tbl = newTestTable(b, n.tbl.Def.ID, nil)
	value := make([]byte, 2048)
	m := mutation.New()
	const parts = 4000
	for k := range parts {
		for c := range 5 {
			m.WriteCell(n.tbl, i32(k), storage.CellTarget{Clustering: [][]byte{i32(c)}, Column: "v"}, storage.Cell{Timestamp: 1, Value: value})
		}
		if k%20 == 19 {
			if err := n.lb.Apply(context.Background(), m, nil); err != nil {
				b.Fatal(err)
			}
			m.Release()
			m = mutation.New()
		}
	}
	var size int64
	for _, p := range raw(b, n.lb, n.tbl, wholeRing) {
		size += int64(p.Size())
	}
	b.SetBytes(size)
	b.ResetTimer()
	for range b.N {
		s := &Stream{Table: n.tbl, Range: wholeRing}
		if err := s.Run(context.Background(), n.remote, n.la, StreamOptions{}); err != nil {
			b.Fatal(err)
		}
		if s.Partitions != parts {
			b.Fatalf("streamed %d partitions", s.Partitions)
		}
	}
}

// A page larger than the sink's commit log takes in one record (its
// segment size is small) is written in smaller records, all of it.
func TestStreamApplySplitsRecords(t *testing.T) {
	fs := vfs.NewMem()
	e, err := storage.OpenEngine(storage.EngineOptions{
		FS: fs, Dir: "small",
		Log:    commitlog.Options{Dir: "small/commitlog", Sync: "periodic", SegmentSize: 64 << 10},
		Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close() })
	sink := NewLocal(e)
	src := openLocalOn(t, vfs.NewMem(), "src", "periodic")
	tbl := newTestTable(t, [16]byte{9}, nil)
	value := make([]byte, 4096)
	for k := range 60 {
		m := mutation.New()
		for c := range 3 {
			m.WriteCell(tbl, i32(k), storage.CellTarget{Clustering: [][]byte{i32(c)}, Column: "v"}, storage.Cell{Timestamp: 1, Value: value})
		}
		if err := src.Apply(context.Background(), m, nil); err != nil {
			t.Fatal(err)
		}
		m.Release()
	}
	ps := raw(t, src, tbl, wholeRing)
	if err := sink.StreamApply(context.Background(), tbl, ps); err != nil {
		t.Fatal(err)
	}
	if !samePartitions(raw(t, sink, tbl, wholeRing), ps) {
		t.Fatal("the sink's partitions differ from the page")
	}
}
