package metalog

import (
	"errors"
	"log/slog"
	"os"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"
	"github.com/hashicorp/raft"
)

func TestStoreKeepsLogsAndValuesAcrossReopen(t *testing.T) {
	dir := t.TempDir()
	s, err := openStore(dir, slog.New(slog.DiscardHandler), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if first, last := mustIndexes(t, s); first != 0 || last != 0 {
		t.Fatalf("empty store: first %d last %d, want 0 0", first, last)
	}
	var logs []*raft.Log
	for i := uint64(1); i <= 10; i++ {
		logs = append(logs, &raft.Log{Index: i, Term: 1 + i/5, Type: raft.LogCommand, Data: []byte{byte(i)},
			AppendedAt: time.Unix(0, int64(i)*1e9)})
	}
	if err := s.StoreLogs(logs[:9]); err != nil {
		t.Fatal(err)
	}
	if err := s.StoreLog(logs[9]); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteRange(1, 3); err != nil {
		t.Fatal(err)
	}
	if err := s.SetUint64([]byte("CurrentTerm"), 42); err != nil {
		t.Fatal(err)
	}
	if err := s.Set([]byte("LastVoteCand"), []byte("c")); err != nil {
		t.Fatal(err)
	}
	if err := s.close(); err != nil {
		t.Fatal(err)
	}

	s, err = openStore(dir, slog.New(slog.DiscardHandler), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	if first, last := mustIndexes(t, s); first != 4 || last != 10 {
		t.Errorf("first %d last %d, want 4 10", first, last)
	}
	for _, want := range logs[3:] {
		var got raft.Log
		if err := s.GetLog(want.Index, &got); err != nil {
			t.Fatalf("GetLog(%d): %v", want.Index, err)
		}
		if !reflect.DeepEqual(&got, want) {
			t.Errorf("GetLog(%d) = %+v, want %+v", want.Index, got, want)
		}
	}
	var l raft.Log
	if err := s.GetLog(2, &l); !errors.Is(err, raft.ErrLogNotFound) {
		t.Errorf("GetLog of a deleted entry: %v, want ErrLogNotFound", err)
	}
	if v, err := s.GetUint64([]byte("CurrentTerm")); err != nil || v != 42 {
		t.Errorf("CurrentTerm = %d, %v", v, err)
	}
	if v, err := s.Get([]byte("LastVoteCand")); err != nil || string(v) != "c" {
		t.Errorf("LastVoteCand = %q, %v", v, err)
	}
	if v, err := s.GetUint64([]byte("absent")); err != nil || v != 0 {
		t.Errorf("absent key = %d, %v, want 0", v, err)
	}
	// Everything from an index on, as raft deletes after a snapshot.
	if err := s.DeleteRange(0, ^uint64(0)); err != nil {
		t.Fatal(err)
	}
	if first, last := mustIndexes(t, s); first != 0 || last != 0 {
		t.Errorf("after deleting all: first %d last %d", first, last)
	}
}

func mustIndexes(t *testing.T, s *store) (uint64, uint64) {
	t.Helper()
	first, err := s.FirstIndex()
	if err != nil {
		t.Fatal(err)
	}
	last, err := s.LastIndex()
	if err != nil {
		t.Fatal(err)
	}
	return first, last
}

// A store whose disk fills up does not end the process, as pebble's
// Fatalf would: the write that failed and every later one return
// ErrStoreFailed, and onFailure hears of it once (the node then stops
// under disk_failure_policy). The current term alone is not refused:
// raft panics on that.
func TestStoreFullDiskFailsWrites(t *testing.T) {
	var full atomic.Bool
	fs := errorfs.Wrap(vfs.NewMem(), errorfs.InjectorFunc(func(op errorfs.Op) error {
		if full.Load() && op.Kind.ReadOrWrite() == errorfs.OpIsWrite {
			return &os.PathError{Op: "write", Path: op.Path, Err: syscall.ENOSPC}
		}
		return nil
	}))
	var failures []error
	var mu sync.Mutex
	s, err := openStore("raft", slog.New(slog.DiscardHandler), fs, func(err error) {
		mu.Lock()
		defer mu.Unlock()
		failures = append(failures, err)
	})
	if err != nil {
		t.Fatal(err)
	}
	entry := func(i uint64) *raft.Log {
		return &raft.Log{Index: i, Term: 1, Type: raft.LogCommand, Data: []byte{byte(i)}}
	}
	if err := s.StoreLog(entry(1)); err != nil {
		t.Fatal(err)
	}

	full.Store(true)
	if err := s.StoreLog(entry(2)); !errors.Is(err, ErrStoreFailed) {
		t.Fatalf("StoreLog on a full disk = %v, want ErrStoreFailed", err)
	}
	full.Store(false) // refused still: pebble cannot go on after a failed commit
	if err := s.StoreLog(entry(3)); !errors.Is(err, ErrStoreFailed) {
		t.Errorf("StoreLog after the failure = %v, want ErrStoreFailed", err)
	}
	if err := s.Set([]byte("LastVoteCand"), []byte("c")); !errors.Is(err, ErrStoreFailed) {
		t.Errorf("Set after the failure = %v, want ErrStoreFailed", err)
	}
	if err := s.DeleteRange(1, 1); !errors.Is(err, ErrStoreFailed) {
		t.Errorf("DeleteRange after the failure = %v, want ErrStoreFailed", err)
	}
	if err := s.SetUint64(keyCurrentTerm, 2); err != nil {
		t.Errorf("SetUint64(CurrentTerm) after the failure = %v, want nil", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(failures) != 1 || !errors.Is(failures[0], ErrStoreFailed) || !strings.Contains(failures[0].Error(), "no space left") {
		t.Errorf("onFailure heard %v, want one ErrStoreFailed about the full disk", failures)
	}
	var got raft.Log
	if err := s.GetLog(1, &got); err != nil || got.Index != 1 {
		t.Errorf("GetLog(1) after the failure = %+v, %v", got, err)
	}
}
