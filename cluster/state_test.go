package cluster

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"

	"github.com/cqld/cqld/storage"
)

// listSchema is a SchemaApplier over a list of names: "+x" adds x, "-x"
// removes it, and either fails when it would change nothing, as schema
// changes do.
type listSchema struct {
	names   []string
	applied uint64
	// broken makes every change fail as a catalog that cannot be
	// written fails.
	broken bool
}

func (l *listSchema) SchemaApplied() uint64 { return l.applied }

func (l *listSchema) ApplySchema(index uint64, b []byte) (any, error) {
	if l.broken {
		return nil, fmt.Errorf("%w: create schema.json.tmp: no space left on device", storage.ErrCatalogWrite)
	}
	c := string(b)
	name := c[1:]
	switch {
	case c[0] == '+' && !slices.Contains(l.names, name):
		l.names, l.applied = append(l.names, name), index
		return "created " + name, nil
	case c[0] == '-' && slices.Contains(l.names, name):
		l.names, l.applied = slices.DeleteFunc(l.names, func(s string) bool { return s == name }), index
		return "dropped " + name, nil
	}
	return nil, fmt.Errorf("cannot apply %q", c)
}

func (l *listSchema) SchemaSnapshot() ([]byte, error) {
	return []byte(`"` + strings.Join(l.names, ",") + `"`), nil
}

func (l *listSchema) RestoreSchema(index uint64, b []byte) error {
	l.applied = index
	s := strings.Trim(string(b), `"`)
	l.names = nil
	if s != "" {
		l.names = strings.Split(s, ",")
	}
	return nil
}

func mustEntry(t *testing.T, e Entry) []byte {
	t.Helper()
	b, err := AppendEntry(nil, e)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestStateAppliesOnceAcrossRestarts(t *testing.T) {
	fs := vfs.NewMem()
	schema := &listSchema{}
	var changes int
	open := func() *State {
		s, err := OpenState(StateOptions{FS: fs, Dir: "system", Schema: schema,
			OnTopology: func(before, after *Topology) { changes++ }})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	s := open()
	id := [16]byte{7}
	done := s.Expect(id)
	if _, err := s.Apply(1, mustEntry(t, Entry{Kind: KindSchema, Proposal: id, Schema: []byte("+a")})); err != nil {
		t.Fatal(err)
	}
	if r := <-done; r.Err != nil || r.Value != "created a" {
		t.Fatalf("proposer got %+v", r)
	}
	if _, err := s.Apply(2, mustEntry(t, Entry{Kind: KindSchema, Schema: []byte("+a")})); err == nil {
		t.Fatal("a second CREATE of a applied")
	}
	if _, err := s.Apply(3, mustEntry(t, Entry{Kind: KindMember, Member: testMember(1, StatusNormal, 10, 20)})); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Apply(4, []byte("garbage")); !errors.Is(err, ErrBadEntry) {
		t.Fatalf("garbage entry: %v", err)
	}
	// An entry that changes nothing is not recorded: applied again after a
	// restart, it changes nothing again.
	if s.Applied() != 3 || s.Topology().Ring().Len() != 1 || changes != 1 {
		t.Fatalf("applied %d, ring of %d, %d topology changes", s.Applied(), s.Topology().Ring().Len(), changes)
	}

	// After a restart the log replays from its last snapshot: what was
	// applied is skipped.
	s = open()
	if s.Applied() != 3 || s.Topology().Ring().Len() != 1 {
		t.Fatalf("reopened: applied %d, ring of %d", s.Applied(), s.Topology().Ring().Len())
	}
	for i, e := range []Entry{
		{Kind: KindSchema, Schema: []byte("+a")},
		{Kind: KindSchema, Schema: []byte("+a")},
		{Kind: KindMember, Member: testMember(1, StatusNormal, 10, 20)},
	} {
		if _, err := s.Apply(uint64(i+1), mustEntry(t, e)); err != nil {
			t.Fatalf("replayed entry %d: %v", i+1, err)
		}
	}
	if _, err := s.Apply(5, mustEntry(t, Entry{Kind: KindMember, Member: testMember(2, StatusJoining, 30)})); err != nil {
		t.Fatal(err)
	}
	joining, leaving := s.Topology().Pending()
	if s.Topology().Ring().Len() != 1 || len(joining) != 1 || len(leaving) != 0 {
		t.Fatalf("a joining node: ring of %d, %d joining, %d leaving", s.Topology().Ring().Len(), len(joining), len(leaving))
	}
	if !slices.Equal(schema.names, []string{"a"}) {
		t.Fatalf("schema %v", schema.names)
	}

	// A snapshot restores another node to the same state.
	snap, err := s.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	other := &listSchema{}
	o, err := OpenState(StateOptions{FS: vfs.NewMem(), Dir: "system", Schema: other})
	if err != nil {
		t.Fatal(err)
	}
	if err := o.Restore(5, snap); err != nil {
		t.Fatal(err)
	}
	if o.Applied() != 5 || !slices.Equal(other.names, []string{"a"}) || len(o.Topology().Members()) != 2 {
		t.Fatalf("restored: applied %d, schema %v, members %v", o.Applied(), other.names, o.Topology().Members())
	}
}

func TestTopologyRefusesAnInvalidRing(t *testing.T) {
	s, err := OpenState(StateOptions{FS: vfs.NewMem(), Dir: "system", Schema: &listSchema{}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Apply(1, mustEntry(t, Entry{Kind: KindMember, Member: testMember(1, StatusNormal, 10)})); err != nil {
		t.Fatal(err)
	}
	// Another node claiming token 10 is refused; nothing changes.
	if _, err := s.Apply(2, mustEntry(t, Entry{Kind: KindMember, Member: testMember(2, StatusNormal, 10)})); err == nil {
		t.Fatal("two owners of one token accepted")
	}
	if _, err := s.Apply(3, mustEntry(t, Entry{Kind: KindRemove, Member: testMember(9, StatusNormal)})); err == nil {
		t.Fatal("removing an unknown member accepted")
	}
	if len(s.Topology().Members()) != 1 || s.Applied() != 3 {
		t.Fatalf("members %v, applied %d", s.Topology().Members(), s.Applied())
	}
}

// TestStateStopsWhenItCannotWrite: an entry whose schema change cannot be
// written is not skipped: the State tells OnFailure, applies nothing more
// and takes no snapshot; reopened (the node restarted), it applies that
// entry and the ones after it.
func TestStateStopsWhenItCannotWrite(t *testing.T) {
	fs := vfs.NewMem()
	schema := &listSchema{}
	var failures []error
	open := func() *State {
		s, err := OpenState(StateOptions{FS: fs, Dir: "system", Schema: schema,
			OnFailure: func(err error) { failures = append(failures, err) }})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	s := open()
	entries := []Entry{
		{Kind: KindSchema, Schema: []byte("+a")},
		{Kind: KindSchema, Schema: []byte("+b")},
		{Kind: KindSchema, Schema: []byte("+c")},
		{Kind: KindMember, Member: testMember(1, StatusNormal, 10, 20)},
	}
	if _, err := s.Apply(1, mustEntry(t, entries[0])); err != nil {
		t.Fatal(err)
	}
	schema.broken = true
	id := [16]byte{9}
	done := s.Expect(id)
	e := entries[1]
	e.Proposal = id
	if _, err := s.Apply(2, mustEntry(t, e)); !errors.Is(err, storage.ErrCatalogWrite) {
		t.Fatalf("entry 2 on a broken catalog: %v", err)
	}
	if r := <-done; !errors.Is(r.Err, storage.ErrCatalogWrite) {
		t.Fatalf("its proposer got %+v", r)
	}
	schema.broken = false
	for i, e := range entries[2:] {
		if _, err := s.Apply(uint64(i+3), mustEntry(t, e)); !errors.Is(err, ErrStopped) {
			t.Fatalf("entry %d after the failure: %v, want ErrStopped", i+3, err)
		}
	}
	if len(failures) != 1 || !errors.Is(failures[0], ErrStopped) || !errors.Is(failures[0], storage.ErrCatalogWrite) {
		t.Fatalf("OnFailure got %v, want one ErrStopped wrapping the write's error", failures)
	}
	if s.Applied() != 1 || !slices.Equal(schema.names, []string{"a"}) || s.Topology().Ring().Len() != 0 {
		t.Fatalf("after the failure: applied %d, schema %v, ring of %d", s.Applied(), schema.names, s.Topology().Ring().Len())
	}
	if _, err := s.Snapshot(); !errors.Is(err, ErrStopped) {
		t.Fatalf("snapshot after the failure: %v", err)
	}

	s = open()
	for i, e := range entries {
		if _, err := s.Apply(uint64(i+1), mustEntry(t, e)); err != nil {
			t.Fatalf("entry %d after the restart: %v", i+1, err)
		}
	}
	if s.Applied() != 4 || !slices.Equal(schema.names, []string{"a", "b", "c"}) || s.Topology().Ring().Len() != 1 {
		t.Fatalf("after the restart: applied %d, schema %v, ring of %d", s.Applied(), schema.names, s.Topology().Ring().Len())
	}
}

// TestStateStopsWhenMetadataCannotBeWritten: a topology entry whose
// metadata.json cannot be written stops the State too.
func TestStateStopsWhenMetadataCannotBeWritten(t *testing.T) {
	var full atomic.Bool
	fs := errorfs.Wrap(vfs.NewMem(), errorfs.InjectorFunc(func(op errorfs.Op) error {
		if full.Load() && op.Kind == errorfs.OpCreate {
			return &os.PathError{Op: "create", Path: op.Path, Err: syscall.ENOSPC}
		}
		return nil
	}))
	var failures int
	s, err := OpenState(StateOptions{FS: fs, Dir: "system", Schema: &listSchema{}, OnFailure: func(error) { failures++ }})
	if err != nil {
		t.Fatal(err)
	}
	full.Store(true)
	if _, err := s.Apply(1, mustEntry(t, Entry{Kind: KindMember, Member: testMember(1, StatusNormal, 10)})); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("a member entry on a full disk: %v", err)
	}
	full.Store(false)
	if _, err := s.Apply(2, mustEntry(t, Entry{Kind: KindSchema, Schema: []byte("+a")})); !errors.Is(err, ErrStopped) || failures != 1 {
		t.Fatalf("the next entry: %v, %d failures; want ErrStopped after one", err, failures)
	}
}
