package storage

import (
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/cqld/cqld/commitlog"
)

// TruncatedAt is when Truncate ran, by the engine's clock, and it
// survives a restart: from the commit log before a flush, from the LSM
// after one.
func TestTruncatedAtSurvivesRestarts(t *testing.T) {
	fs := vfs.NewMem()
	clock := time.UnixMicro(1_700_000_000_000_000)
	open := func() *Engine {
		return openEngineWith(t, EngineOptions{FS: fs, Dir: "data", Now: func() time.Time { return clock },
			Log: commitlog.Options{Dir: "commitlog", Sync: commitlog.SyncBatch, SegmentSize: 1 << 20}})
	}
	e := open()
	tbl := testTable(t, false)
	if _, ok := e.TruncatedAt(tbl.Def.ID); ok {
		t.Fatal("a table never truncated has a truncation time")
	}
	if err := e.Truncate(tbl); err != nil {
		t.Fatal(err)
	}
	first := clock
	other := *tbl.Def
	other.ID = [16]byte{9}
	ot, err := NewTable(&other, testTypeOf)
	if err != nil {
		t.Fatal(err)
	}
	clock = clock.Add(time.Hour)
	if err := e.Truncate(ot); err != nil {
		t.Fatal(err)
	}
	check := func(when string) {
		t.Helper()
		if at, ok := e.TruncatedAt(tbl.Def.ID); !ok || !at.Equal(first) {
			t.Fatalf("%s: the first table truncated at %v, %v; want %v", when, at, ok, first)
		}
		if at, ok := e.TruncatedAt(other.ID); !ok || !at.Equal(clock) {
			t.Fatalf("%s: the second table truncated at %v, %v; want %v", when, at, ok, clock)
		}
	}
	check("at once")
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	e = open()
	check("replayed from the commit log")
	if err := e.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	e = open()
	defer e.Close()
	check("read from the LSM")
}
