package replica

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/datastax/go-cassandra-native-protocol/datatype"

	"github.com/cqld/cqld/commitlog"
	"github.com/cqld/cqld/mutation"
	"github.com/cqld/cqld/storage"
)

func openLocal(t *testing.T, sync string) (*Local, *storage.Table) {
	t.Helper()
	return openLocalOn(t, vfs.NewMem(), "data", sync), testTable(t, [16]byte{9})
}

// openLocalOn opens a replica over an engine in dir of fs, closed at the
// end of the test.
func openLocalOn(t testing.TB, fs vfs.FS, dir, sync string) *Local {
	t.Helper()
	e, err := storage.OpenEngine(storage.EngineOptions{
		FS: fs, Dir: dir,
		Log:    commitlog.Options{Dir: fs.PathJoin(dir, "commitlog"), Sync: sync, SegmentSize: 1 << 20},
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close() })
	return NewLocal(e)
}

// testTable is ks.t (k int, c int, v text, PRIMARY KEY (k, c)) with the
// given id and an index v_idx on v.
func testTable(t testing.TB, id [16]byte) *storage.Table {
	t.Helper()
	return newTestTable(t, id, []storage.IndexDef{{Name: "v_idx", Column: "v", Target: "v"}})
}

func newTestTable(t testing.TB, id [16]byte, indexes []storage.IndexDef) *storage.Table {
	t.Helper()
	def := &storage.TableDef{Keyspace: "ks", Name: "t", ID: id, Columns: []storage.ColumnDef{
		{Name: "k", Type: "int", Kind: storage.KindPartitionKey, Position: 0, Order: "none"},
		{Name: "c", Type: "int", Kind: storage.KindClustering, Position: 0, Order: "asc"},
		{Name: "v", Type: "text", Kind: storage.KindRegular, Position: -1, Order: "none"},
	}, Indexes: indexes}
	tbl, err := storage.NewTable(def, func(s string) (datatype.DataType, error) {
		if s == "int" {
			return datatype.Int, nil
		}
		return datatype.Varchar, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

func i32(n int) []byte { return binary.BigEndian.AppendUint32(nil, uint32(n)) }

// rows reads partition k back as clustering value -> v.
func rows(t *testing.T, l *Local, tbl *storage.Table, k int) map[int]string {
	t.Helper()
	out := map[int]string{}
	err := l.ReadPartition(context.Background(), tbl, i32(k), storage.ReadOptions{Now: 1}, func(r *storage.Row) bool {
		for _, c := range r.Cells {
			out[int(binary.BigEndian.Uint32(r.Clustering[0]))] = string(c.Cell.Value)
		}
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestLocalApplyAndRead(t *testing.T) {
	for _, sync := range []string{"periodic", "batch"} {
		t.Run(sync, func(t *testing.T) {
			l, tbl := openLocal(t, sync)
			ctx := context.Background()
			m := mutation.New()
			for c := range 3 {
				m.WriteCell(tbl, i32(1), storage.CellTarget{Clustering: [][]byte{i32(c)}, Column: "v"}, storage.Cell{Timestamp: 10, Value: []byte{'a' + byte(c)}})
			}
			m.WriteCell(tbl, i32(2), storage.CellTarget{Clustering: [][]byte{i32(0)}, Column: "v"}, storage.Cell{Timestamp: 10, Value: []byte("z")})
			if err := l.Apply(ctx, m, nil); err != nil {
				t.Fatal(err)
			}
			m.Release()

			// A failing check applies nothing.
			m = mutation.New()
			m.DeletePartition(tbl, i32(1), storage.Cell{Timestamp: 20, Tombstone: true, LocalDeletionTime: 1})
			stale := errors.New("stale")
			if err := l.Apply(ctx, m, func() error { return stale }); !errors.Is(err, stale) {
				t.Fatalf("Apply with a failing check: %v", err)
			}
			if got := rows(t, l, tbl, 1); len(got) != 3 || got[2] != "c" {
				t.Fatalf("partition 1 after a refused delete: %v", got)
			}

			// The same delete through ApplyAsync lands, now or later.
			done := make(chan error, 1)
			pending, err := l.ApplyAsync(m, nil, func(err error) { done <- err })
			m.Release()
			if pending {
				err = <-done
			}
			if err != nil {
				t.Fatal(err)
			}
			// A mode that waits for an fsync never answers at once; periodic
			// mode answers at once unless the apply lock is taken (a flush
			// marking the log's end), when the write goes to a goroutine.
			if l.ApplyWaits() && !pending {
				t.Fatalf("ApplyWaits, but the write completed before its sync")
			}
			if got := rows(t, l, tbl, 1); len(got) != 0 {
				t.Fatalf("partition 1 after its deletion: %v", got)
			}
			if got := rows(t, l, tbl, 2); got[0] != "z" {
				t.Fatalf("partition 2: %v", got)
			}
			// Unresolved, partition 1 still has its cells, and the
			// deletion that shadows them.
			p, err := l.Read(ctx, tbl, i32(1), storage.Slice{})
			if err != nil {
				t.Fatal(err)
			}
			if len(p.KVs) != 4 {
				t.Fatalf("partition 1 unresolved has %d keys, want the deletion and 3 cells", len(p.KVs))
			}
			n := 0
			if err := tbl.Resolve(p, storage.ReadOptions{Now: 1}, func(*storage.Row) bool { n++; return true }); err != nil || n != 0 {
				t.Fatalf("partition 1 resolved: %d rows, %v", n, err)
			}

			// A cancelled request reaches no data.
			cancelled, cancel := context.WithCancel(ctx)
			cancel()
			if err := l.Apply(cancelled, mutation.New(), nil); !errors.Is(err, context.Canceled) {
				t.Fatalf("Apply on a cancelled context: %v", err)
			}
		})
	}
}

// Counter deltas are added on the replica under the partition's lock:
// concurrent increments through Apply are never lost, and two deltas to
// one counter in one mutation add up.
func TestLocalCounters(t *testing.T) {
	l, tbl := openLocal(t, "periodic")
	ctx := context.Background()
	tg := storage.CellTarget{Clustering: [][]byte{i32(0)}, Column: "v"}
	const writers, each = 8, 50
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				m := mutation.New()
				m.AddCounter(tbl, i32(1), tg, 1, int64(w*each+i))
				if w == 0 && i == 0 {
					m.AddCounter(tbl, i32(1), tg, 2, 0) // the same counter twice: +3 in all
				}
				err := l.Apply(ctx, m, nil)
				m.Release()
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	var total int64
	err := l.ReadPartition(ctx, tbl, i32(1), storage.ReadOptions{Now: 1}, func(r *storage.Row) bool {
		total = int64(binary.BigEndian.Uint64(r.Cells[0].Cell.Value))
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := int64(writers*each + 2); total != want {
		t.Fatalf("counter total %d, want %d", total, want)
	}
}

// A read stops soon after its context ends, whatever is left to read.
func TestLocalReadsStopAtTheirDeadline(t *testing.T) {
	l, tbl := openLocal(t, "periodic")
	m := mutation.New()
	for k := range 500 {
		m.WriteCell(tbl, i32(k), storage.CellTarget{Clustering: [][]byte{i32(0)}, Column: "v"}, storage.Cell{Timestamp: 1, Value: []byte("x")})
	}
	if err := l.Apply(context.Background(), m, nil); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	rows := 0
	err := l.Scan(ctx, tbl, storage.ScanOptions{Now: 1}, func([]byte, *storage.Row) bool {
		if rows++; rows == 10 {
			cancel()
		}
		return true
	})
	if !errors.Is(err, context.Canceled) || rows >= 10+checkEvery {
		t.Fatalf("scan cancelled after 10 rows: read %d rows, err %v", rows, err)
	}
	expired, cancel2 := context.WithDeadline(context.Background(), time.Unix(1, 0))
	defer cancel2()
	if err := l.ReadPartition(expired, tbl, i32(1), storage.ReadOptions{Now: 1}, func(*storage.Row) bool { return true }); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("read past its deadline: %v", err)
	}
}
