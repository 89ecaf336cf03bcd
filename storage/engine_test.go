package storage

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/datastax/go-cassandra-native-protocol/datatype"

	"github.com/cqld/cqld/commitlog"
)

func testTable(t testing.TB, desc bool) *Table {
	t.Helper()
	order := "asc"
	if desc {
		order = "desc"
	}
	def := &TableDef{Keyspace: "ks", Name: "t", ID: [16]byte{1, 2, 3}, Columns: []ColumnDef{
		{Name: "k", Type: "int", Kind: KindPartitionKey, Position: 0, Order: "none"},
		{Name: "c", Type: "int", Kind: KindClustering, Position: 0, Order: order},
		{Name: "s", Type: "text", Kind: KindStatic, Position: -1, Order: "none"},
		{Name: "v", Type: "text", Kind: KindRegular, Position: -1, Order: "none"},
	}}
	tbl, err := NewTable(def, testTypeOf)
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

// testTypeOf parses testTable's column types.
func testTypeOf(s string) (datatype.DataType, error) {
	if s == "int" {
		return datatype.Int, nil
	}
	return datatype.Varchar, nil
}

func openTestEngine(t testing.TB, fs vfs.FS, sync string) *Engine {
	t.Helper()
	e, err := OpenEngine(EngineOptions{
		FS: fs, Dir: "data",
		Log:    commitlog.Options{Dir: "commitlog", Sync: sync, SegmentSize: 1 << 20},
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func i32(n int) []byte { return binary.BigEndian.AppendUint32(nil, uint32(n)) }

func live(ts int64, v string) Cell { return Cell{Timestamp: ts, Value: []byte(v)} }

// readAll returns partition k as "c=v" strings in read order.
func readAll(t testing.TB, e *Engine, tbl *Table, k int, o ReadOptions) []string {
	t.Helper()
	var out []string
	err := e.ReadPartition(tbl, i32(k), o, func(r *Row) bool {
		if r.Static {
			out = append(out, "static="+string(r.Cells[0].Cell.Value))
			return true
		}
		v := ""
		for _, c := range r.Cells {
			v = string(c.Cell.Value)
		}
		out = append(out, fmt.Sprintf("%d=%s", int32(binary.BigEndian.Uint32(r.Clustering[0])), v))
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestEngineSemantics(t *testing.T) {
	for _, desc := range []bool{false, true} {
		e := openTestEngine(t, vfs.NewMem(), commitlog.SyncBatch)
		tbl := testTable(t, desc)
		m := e.NewMutation()
		for c := 1; c <= 5; c++ {
			if err := m.WriteRowMarker(tbl, i32(1), [][]byte{i32(c)}, Cell{Timestamp: 10}); err != nil {
				t.Fatal(err)
			}
			if err := m.WriteCell(tbl, i32(1), CellTarget{Clustering: [][]byte{i32(c)}, Column: "v"}, live(10, fmt.Sprint("v", c))); err != nil {
				t.Fatal(err)
			}
		}
		m.WriteCell(tbl, i32(1), CellTarget{Static: true, Column: "s"}, live(10, "st"))
		if err := e.Apply(m); err != nil {
			t.Fatal(err)
		}
		// An older write loses; a newer one wins; a delete shadows older cells only.
		m = e.NewMutation()
		m.WriteCell(tbl, i32(1), CellTarget{Clustering: [][]byte{i32(2)}, Column: "v"}, live(5, "old"))
		m.WriteCell(tbl, i32(1), CellTarget{Clustering: [][]byte{i32(3)}, Column: "v"}, live(20, "new"))
		m.DeleteRow(tbl, i32(1), [][]byte{i32(4)}, Cell{Timestamp: 15, Tombstone: true})
		// c >= 5: in clustering order that is a start bound for ASC and an
		// end bound for DESC.
		rng := Slice{Start: &Bound{Prefix: [][]byte{i32(5)}, Inclusive: true}}
		if desc {
			rng = Slice{End: &Bound{Prefix: [][]byte{i32(5)}, Inclusive: true}}
		}
		m.DeleteRange(tbl, i32(1), rng, Cell{Timestamp: 15, Tombstone: true})
		if err := e.Apply(m); err != nil {
			t.Fatal(err)
		}
		want := []string{"static=st", "1=v1", "2=v2", "3=new"}
		if desc {
			want = []string{"static=st", "3=new", "2=v2", "1=v1"}
		}
		if got := readAll(t, e, tbl, 1, ReadOptions{}); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("desc=%v: got %v, want %v", desc, got, want)
		}
		rev := append([]string{want[0]}, reverse(want[1:])...)
		if got := readAll(t, e, tbl, 1, ReadOptions{Reverse: true}); fmt.Sprint(got) != fmt.Sprint(rev) {
			t.Fatalf("desc=%v reverse: got %v, want %v", desc, got, rev)
		}
		// A partition deletion newer than everything empties it.
		m = e.NewMutation()
		m.DeletePartition(tbl, i32(1), Cell{Timestamp: 100, Tombstone: true})
		e.Apply(m)
		if got := readAll(t, e, tbl, 1, ReadOptions{}); len(got) != 0 {
			t.Fatalf("after partition delete: %v", got)
		}
		e.Close()
	}
}

func reverse(s []string) []string {
	out := make([]string, len(s))
	for i, v := range s {
		out[len(s)-1-i] = v
	}
	return out
}

// TestEngineCrashKeepsAcknowledgedWrites runs concurrent writers on a
// crashable file system, takes a crash clone (only synced bytes survive)
// and checks every acknowledged write is readable after reopening it.
func TestEngineCrashKeepsAcknowledgedWrites(t *testing.T) {
	for _, mode := range []string{commitlog.SyncBatch, commitlog.SyncGroup, commitlog.SyncAdaptive} {
		t.Run(mode, func(t *testing.T) {
			fs := vfs.NewCrashableMem()
			e := openTestEngine(t, fs, mode)
			tbl := testTable(t, false)
			var mu sync.Mutex
			acked := map[int]bool{}
			var crashed *vfs.MemFS
			var wg sync.WaitGroup
			for w := 0; w < 8; w++ {
				wg.Add(1)
				go func(w int) {
					defer wg.Done()
					for i := 0; i < 50; i++ {
						c := w*1000 + i
						m := e.NewMutation()
						m.WriteRowMarker(tbl, i32(w), [][]byte{i32(c)}, Cell{Timestamp: 1})
						if err := e.Apply(m); err != nil {
							return
						}
						mu.Lock()
						acked[c] = true
						if len(acked) == 200 {
							crashed = fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 0})
						}
						mu.Unlock()
					}
				}(w)
			}
			wg.Wait()
			e.Close()
			mu.Lock()
			snapshot := crashed
			mu.Unlock()
			if snapshot == nil {
				t.Fatal("no crash clone taken")
			}
			// Everything acknowledged before the clone must be there.
			e2 := openTestEngine(t, snapshot, mode)
			defer e2.Close()
			got := 0
			for w := 0; w < 8; w++ {
				e2.ReadPartition(tbl, i32(w), ReadOptions{}, func(*Row) bool { got++; return true })
			}
			if got < 200 {
				t.Fatalf("%d rows survived the crash, at least 200 were acknowledged before it", got)
			}
		})
	}
}

// writeRow1 is a mutation of e writing v to row (1, 1) of tbl.
func writeRow1(t testing.TB, e *Engine, tbl *Table, v string) *Mutation {
	t.Helper()
	m := e.NewMutation()
	if err := m.WriteCell(tbl, i32(1), CellTarget{Clustering: [][]byte{i32(1)}, Column: "v"}, live(1, v)); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestRefusedMutationIsReleased checks that a mutation ApplyIf or
// ApplyAsync refuses (its check fails, or the commit log will not take it)
// goes back to its pool, as an applied one does: its callers never discard
// it themselves.
func TestRefusedMutationIsReleased(t *testing.T) {
	for _, mode := range []string{commitlog.SyncPeriodic, commitlog.SyncBatch} {
		t.Run(mode, func(t *testing.T) {
			e := openTestEngine(t, vfs.NewMem(), mode)
			defer e.Close()
			tbl := testTable(t, false)
			write := func(v string) *Mutation { return writeRow1(t, e, tbl, v) }
			refused := errors.New("stale")
			check := func() error { return refused }
			tooLarge := strings.Repeat("x", e.log.MaxPayload()+1)
			noThen := func(error) { t.Error("then called for a refused write") }
			for _, c := range []struct {
				name  string
				v     string
				apply func(*Mutation) error
				want  error
			}{
				{"ApplyIf, check fails", "v", func(m *Mutation) error { return e.ApplyIf(m, check) }, refused},
				{"ApplyIf, too large", tooLarge, func(m *Mutation) error { return e.ApplyIf(m, nil) }, commitlog.ErrTooLarge},
				{"ApplyAsync, check fails", "v", func(m *Mutation) error {
					_, err := e.ApplyAsync(m, check, noThen)
					return err
				}, refused},
				{"ApplyAsync, too large", tooLarge, func(m *Mutation) error {
					_, err := e.ApplyAsync(m, nil, noThen)
					return err
				}, commitlog.ErrTooLarge},
			} {
				m := write(c.v)
				if err := c.apply(m); !errors.Is(err, c.want) {
					t.Fatalf("%s: %v, want %v", c.name, err, c.want)
				}
				if m.b != nil {
					t.Errorf("%s: the refused mutation kept its batch", c.name)
				}
			}
		})
	}
}

// TestApplyIf checks that a failed precondition applies nothing, and that
// WaitApplies waits for an apply whose precondition passed before it began.
func TestApplyIf(t *testing.T) {
	e := openTestEngine(t, vfs.NewMem(), commitlog.SyncPeriodic)
	defer e.Close()
	tbl := testTable(t, false)
	write := func(v string) *Mutation { return writeRow1(t, e, tbl, v) }
	refused := errors.New("stale")
	if err := e.ApplyIf(write("no"), func() error { return refused }); err != refused {
		t.Fatalf("ApplyIf with a failing check: %v", err)
	}
	if got := readAll(t, e, tbl, 1, ReadOptions{}); len(got) != 0 {
		t.Fatalf("a refused mutation was applied: %v", got)
	}

	checked, release := make(chan struct{}), make(chan struct{})
	applied := make(chan error, 1)
	go func() {
		applied <- e.ApplyIf(write("yes"), func() error {
			close(checked)
			<-release
			return nil
		})
	}()
	<-checked
	waited := make(chan struct{})
	go func() {
		e.WaitApplies()
		close(waited)
	}()
	select {
	case <-waited:
		t.Fatal("WaitApplies returned while an apply that passed its check was still running")
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	if err := <-applied; err != nil {
		t.Fatal(err)
	}
	<-waited
	if got := readAll(t, e, tbl, 1, ReadOptions{}); fmt.Sprint(got) != "[1=yes]" {
		t.Fatalf("after the apply: %v", got)
	}
}

// A read stopped by tombstone_failure_threshold says which partition it
// was in: its key, whose token the coordinator logs.
func TestTombstoneOverwhelmNamesThePartition(t *testing.T) {
	e := openTestEngine(t, vfs.NewMem(), commitlog.SyncPeriodic)
	defer e.Close()
	tbl := testTable(t, false)
	m := e.NewMutation()
	for c := range 3 {
		if err := m.WriteCell(tbl, i32(7), CellTarget{Clustering: [][]byte{i32(c)}, Column: "v"},
			Cell{Timestamp: 1, Tombstone: true, LocalDeletionTime: 1}); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.Apply(m); err != nil {
		t.Fatal(err)
	}
	err := e.ReadPartition(tbl, i32(7), ReadOptions{Now: 2, Tombstones: &Tombstones{Fail: 2}}, func(*Row) bool { return true })
	var over *TombstoneOverwhelmError
	if !errors.As(err, &over) {
		t.Fatalf("read past the threshold: %v", err)
	}
	if !bytes.Equal(over.Key, i32(7)) || over.Count != 3 {
		t.Errorf("stopped at %d tombstones in partition %x, want 3 in %x", over.Count, over.Key, i32(7))
	}
}
