package cluster

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// listSchema is a SchemaApplier over a list of names: "+x" adds x, "-x"
// removes it, and either fails when it would change nothing, as schema
// changes do.
type listSchema struct {
	names   []string
	applied uint64
}

func (l *listSchema) SchemaApplied() uint64 { return l.applied }

func (l *listSchema) ApplySchema(index uint64, b []byte) (any, error) {
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
