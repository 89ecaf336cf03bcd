package cluster

import (
	"errors"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"golang.org/x/crypto/bcrypt"

	"github.com/cqld/cqld/auth"
)

func authEntry(t *testing.T, cs ...auth.Change) []byte {
	t.Helper()
	return mustEntry(t, Entry{Kind: KindAuth, Auth: auth.AppendChanges(nil, cs)})
}

func openAuth(t *testing.T, fs vfs.FS) *auth.Store {
	t.Helper()
	st, err := auth.OpenStore(auth.StoreOptions{FS: fs, Dir: "system_auth", Cost: bcrypt.MinCost, Replicated: true})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// Role entries apply to the role state in log order and are recorded with
// it: a restarted node skips them; a refused one is answered to its
// proposer and changes nothing; a snapshot carries the roles to another
// node.
func TestStateAppliesRoleEntries(t *testing.T) {
	fs := vfs.NewMem()
	schema := &listSchema{}
	var store *auth.Store
	open := func() *State {
		store = openAuth(t, fs)
		s, err := OpenState(StateOptions{FS: fs, Dir: "system", Schema: schema, Auth: NewAuthLog(store)})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	s := open()
	alice := auth.Change{Op: auth.OpCreateRole, Role: "alice", Set: auth.AttrLogin, Login: true}
	grant := auth.Change{Op: auth.OpGrantPermissions, Grantee: "alice", Resource: auth.Keyspace("ks"), Permissions: auth.Of(auth.Select)}
	if _, err := s.Apply(1, authEntry(t, alice, grant)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Apply(2, mustEntry(t, Entry{Kind: KindSchema, Schema: []byte("+a")})); err != nil {
		t.Fatal(err)
	}
	id := [16]byte{3}
	done := s.Expect(id)
	if _, err := s.Apply(3, mustEntry(t, Entry{Kind: KindAuth, Proposal: id, Auth: auth.AppendChanges(nil, []auth.Change{alice})})); err == nil {
		t.Fatal("a second CREATE ROLE alice applied")
	}
	if r := <-done; r.Err == nil || r.Err.Error() != "alice already exists" {
		t.Fatalf("the proposer got %+v", r)
	}
	if _, err := s.Apply(4, mustEntry(t, Entry{Kind: KindAuth, Auth: []byte{0xff}})); err == nil {
		t.Fatal("garbage role changes applied")
	}
	if s.Applied() != 2 || store.Applied() != 1 || !store.State().Allows("alice", auth.Select, auth.Table("ks", "t")) {
		t.Fatalf("applied %d, roles at %d", s.Applied(), store.Applied())
	}
	revoke := grant
	revoke.Op = auth.OpRevokePermissions
	if _, err := s.Apply(5, authEntry(t, revoke)); err != nil {
		t.Fatal(err)
	}

	// Restarted, the log replays from the start: nothing applies twice
	// (a second CREATE ROLE alice would fail, a second grant would undo
	// the revoke).
	s = open()
	if s.Applied() != 5 {
		t.Fatalf("reopened at %d", s.Applied())
	}
	for i, b := range [][]byte{authEntry(t, alice, grant), mustEntry(t, Entry{Kind: KindSchema, Schema: []byte("+a")})} {
		if _, err := s.Apply(uint64(i+1), b); err != nil {
			t.Fatalf("replayed entry %d: %v", i+1, err)
		}
	}
	if store.State().Allows("alice", auth.Select, auth.Table("ks", "t")) {
		t.Fatal("the replayed grant undid the revoke")
	}

	snap, err := s.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	otherStore := openAuth(t, vfs.NewMem())
	o, err := OpenState(StateOptions{FS: vfs.NewMem(), Dir: "system", Schema: &listSchema{}, Auth: NewAuthLog(otherStore)})
	if err != nil {
		t.Fatal(err)
	}
	if err := o.Restore(5, snap); err != nil {
		t.Fatal(err)
	}
	if _, ok := otherStore.State().Role("alice"); !ok || otherStore.Applied() != 5 || o.Applied() != 5 {
		t.Fatalf("restored: roles %v at %d", otherStore.State().Roles(), otherStore.Applied())
	}
}

// A role entry whose state cannot be written stops the State, as a schema
// entry's does; restarted, the node applies it.
func TestStateStopsWhenRolesCannotBeWritten(t *testing.T) {
	fs := vfs.NewMem()
	store := openAuth(t, fs)
	var failures []error
	s, err := OpenState(StateOptions{FS: fs, Dir: "system", Schema: &listSchema{}, Auth: NewAuthLog(store),
		OnFailure: func(err error) { failures = append(failures, err) }})
	if err != nil {
		t.Fatal(err)
	}
	if err := fs.RemoveAll("system_auth"); err != nil {
		t.Fatal(err)
	}
	alice := auth.Change{Op: auth.OpCreateRole, Role: "alice"}
	if _, err := s.Apply(1, authEntry(t, alice)); !errors.Is(err, auth.ErrWrite) {
		t.Fatalf("entry on a removed directory: %v", err)
	}
	if _, err := s.Apply(2, mustEntry(t, Entry{Kind: KindSchema, Schema: []byte("+a")})); !errors.Is(err, ErrStopped) {
		t.Fatalf("the next entry: %v", err)
	}
	if len(failures) != 1 || !errors.Is(failures[0], auth.ErrWrite) {
		t.Fatalf("OnFailure got %v", failures)
	}
	store = openAuth(t, fs)
	s, err = OpenState(StateOptions{FS: fs, Dir: "system", Schema: &listSchema{}, Auth: NewAuthLog(store)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Apply(1, authEntry(t, alice)); err != nil {
		t.Fatal(err)
	}
	if _, ok := store.State().Role("alice"); !ok {
		t.Fatal("alice not created after the restart")
	}
}
