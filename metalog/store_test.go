package metalog

import (
	"errors"
	"log/slog"
	"reflect"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

func TestStoreKeepsLogsAndValuesAcrossReopen(t *testing.T) {
	dir := t.TempDir()
	s, err := openStore(dir, slog.New(slog.DiscardHandler))
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

	s, err = openStore(dir, slog.New(slog.DiscardHandler))
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
