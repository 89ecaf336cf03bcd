package auth

import (
	"bytes"
	"errors"
	"slices"
	"testing"

	"github.com/datastax/go-cassandra-native-protocol/primitive"

	"github.com/cqld/cqld/cqlerr"
)

func create(name string, super bool) Change {
	return Change{Op: OpCreateRole, Role: name, Set: AttrLogin | AttrSuperuser, Login: true, Superuser: super}
}

func apply(t *testing.T, s *State, cs ...Change) *State {
	t.Helper()
	for _, c := range cs {
		n, err := s.Apply(c)
		if err != nil {
			t.Fatalf("apply %+v: %v", c, err)
		}
		s = n
	}
	return s
}

func wantErr(t *testing.T, err error, code primitive.ErrorCode, msg string) {
	t.Helper()
	var ce *cqlerr.Error
	if !errors.As(err, &ce) || ce.Code != code || ce.Msg != msg {
		t.Fatalf("got %v, want code %v %q", err, code, msg)
	}
}

// Each change that does not apply fails with Cassandra's message and leaves
// the state as it was.
func TestApplyErrors(t *testing.T) {
	base := apply(t, Empty(), create("alice", false), create("bob", false),
		Change{Op: OpGrantRole, Role: "bob", Grantee: "alice"})
	before := EncodeSnapshot(base)
	for _, tc := range []struct {
		c   Change
		msg string
	}{
		{create("alice", false), "alice already exists"},
		{Change{Op: OpAlterRole, Role: "carol"}, "carol doesn't exist"},
		{Change{Op: OpDropRole, Role: "carol"}, "carol doesn't exist"},
		{Change{Op: OpGrantRole, Role: "bob", Grantee: "carol"}, "carol doesn't exist"},
		{Change{Op: OpGrantRole, Role: "alice", Grantee: "alice"}, "alice is a member of alice"},
		{Change{Op: OpGrantRole, Role: "bob", Grantee: "alice"}, "alice is a member of bob"},
		{Change{Op: OpGrantRole, Role: "alice", Grantee: "bob"}, "alice is a member of bob"},
		{Change{Op: OpRevokeRole, Role: "alice", Grantee: "bob"}, "bob is not a member of alice"},
		{Change{Op: OpGrantPermissions, Grantee: "carol", Resource: AllKeyspaces(), Permissions: Of(Select)}, "Role carol doesn't exist"},
		{Change{Op: OpGrantPermissions, Grantee: "alice", Resource: Table("ks", "t"), Permissions: Of(Create)}, "Resource type DataResource does not support any of the requested permissions"},
		{Change{Op: OpGrantPermissions, Grantee: "alice", Resource: RoleResource("bob"), Permissions: Of(Select)}, "Resource type RoleResource does not support any of the requested permissions"},
	} {
		_, err := base.Apply(tc.c)
		wantErr(t, err, primitive.ErrorCodeInvalid, tc.msg)
	}
	if !bytes.Equal(before, EncodeSnapshot(base)) {
		t.Fatal("a failed change modified the state")
	}
	// IF [NOT] EXISTS turns the create and drop errors into no-ops.
	if n, err := base.Apply(Change{Op: OpCreateRole, Role: "alice", IfExists: true}); err != nil || n != base {
		t.Fatalf("create if not exists: %v", err)
	}
	if n, err := base.Apply(Change{Op: OpDropRole, Role: "carol", IfExists: true}); err != nil || n != base {
		t.Fatalf("drop if exists: %v", err)
	}
}

// Permissions are inherited from granted roles, transitively, and from a
// resource's parents; a superuser role anywhere in the chain has them all.
func TestAuthorize(t *testing.T) {
	s := apply(t, Empty(), create("admin", true), create("reader", false), create("team", false), create("alice", false),
		Change{Op: OpGrantPermissions, Grantee: "reader", Resource: Keyspace("ks"), Permissions: Of(Select)},
		Change{Op: OpGrantRole, Role: "reader", Grantee: "team"},
		Change{Op: OpGrantRole, Role: "team", Grantee: "alice"},
		Change{Op: OpGrantPermissions, Grantee: "alice", Resource: AllRoles(), Permissions: Of(Describe)},
	)
	for _, tc := range []struct {
		role string
		p    Permission
		r    Resource
		ok   bool
	}{
		{"alice", Select, Table("ks", "t"), true},
		{"alice", Select, Keyspace("ks"), true},
		{"alice", Select, AllKeyspaces(), false},
		{"alice", Select, Table("other", "t"), false},
		{"alice", Modify, Table("ks", "t"), false},
		{"alice", Describe, RoleResource("admin"), true},
		{"team", Select, Table("ks", "t"), true},
		{"team", Describe, AllRoles(), false},
		{"admin", Drop, Table("any", "t"), true},
		{"nobody", Select, Table("ks", "t"), false},
	} {
		err := s.Authorize(tc.role, tc.p, tc.r)
		if tc.ok && err != nil {
			t.Errorf("%s %s %s: %v", tc.role, tc.p, tc.r, err)
		}
		if !tc.ok && err == nil {
			t.Errorf("%s %s %s: allowed", tc.role, tc.p, tc.r)
		}
	}
	wantErr(t, s.Authorize("alice", Select, Table("other", "t")), primitive.ErrorCodeUnauthorized,
		"User alice has no SELECT permission on <table other.t> or any of its parents")
	if !s.IsSuper("admin") || s.IsSuper("alice") {
		t.Fatal("IsSuper")
	}
	s = apply(t, s, Change{Op: OpGrantRole, Role: "admin", Grantee: "team"})
	if !s.IsSuper("alice") {
		t.Fatal("superuser is not inherited")
	}
	s = apply(t, s, Change{Op: OpRevokeRole, Role: "team", Grantee: "alice"})
	if s.IsSuper("alice") || s.Authorize("alice", Select, Table("ks", "t")) == nil {
		t.Fatal("a revoked role's permissions are still inherited")
	}
}

// DROP ROLE forgets its memberships both ways, its permissions and the
// permissions on it, so a new role of the same name starts clean.
func TestDropRole(t *testing.T) {
	s := apply(t, Empty(), create("a", false), create("b", false), create("c", false),
		Change{Op: OpGrantRole, Role: "b", Grantee: "a"},
		Change{Op: OpGrantRole, Role: "c", Grantee: "b"},
		Change{Op: OpGrantPermissions, Grantee: "b", Resource: AllKeyspaces(), Permissions: Of(Select)},
		Change{Op: OpGrantPermissions, Grantee: "a", Resource: RoleResource("b"), Permissions: Of(Alter)},
		Change{Op: OpDropRole, Role: "b"},
		create("b", false),
	)
	if got := s.RolesOf("a", true); !slices.Equal(got, []string{"a"}) {
		t.Fatalf("a's roles after drop: %v", got)
	}
	if got := s.Grants(nil, nil, AllPermissions); len(got) != 0 {
		t.Fatalf("grants after drop: %v", got)
	}
	if r, _ := s.Role("b"); len(r.MemberOf) != 0 {
		t.Fatalf("new b inherits %v", r.MemberOf)
	}
}

func TestGrantsAndRevoke(t *testing.T) {
	s := apply(t, Empty(), create("a", false), create("b", false),
		Change{Op: OpGrantPermissions, Grantee: "a", Resource: Table("ks", "t"), Permissions: AllPermissions},
		Change{Op: OpGrantPermissions, Grantee: "b", Resource: Keyspace("ks"), Permissions: Of(Modify)},
		Change{Op: OpGrantRole, Role: "b", Grantee: "a"},
		Change{Op: OpRevokePermissions, Grantee: "a", Resource: Table("ks", "t"), Permissions: Of(Drop, Execute)},
	)
	got := s.Grants(s.RolesOf("a", true), Table("ks", "t").Chain(), AllPermissions)
	want := []Grant{
		{"a", Table("ks", "t"), Alter}, {"a", Table("ks", "t"), Select}, {"a", Table("ks", "t"), Modify}, {"a", Table("ks", "t"), Authorize},
		{"b", Keyspace("ks"), Modify},
	}
	if !slices.Equal(got, want) {
		t.Fatalf("grants:\n got %v\nwant %v", got, want)
	}
	if got := s.Grants([]string{"a"}, []Resource{Keyspace("ks")}, AllPermissions); len(got) != 0 {
		t.Fatalf("a's own grants on the keyspace: %v", got)
	}
	s = apply(t, s, Change{Op: OpDropResource, Resource: Table("ks", "t")})
	if s.Authorize("a", Select, Table("ks", "t")) == nil {
		t.Fatal("a dropped table's permissions survive")
	}
}

// Function resources: a keyspace's functions inherit from ALL FUNCTIONS,
// take only what FunctionResource applies, and go with a dropped keyspace
// while the keyspace's data permissions of other keyspaces stay.
func TestFunctionResources(t *testing.T) {
	s := apply(t, Empty(), create("a", false), create("b", false),
		Change{Op: OpGrantPermissions, Grantee: "a", Resource: AllFunctions(), Permissions: Of(Execute)},
		Change{Op: OpGrantPermissions, Grantee: "b", Resource: KeyspaceFunctions("ks"), Permissions: AllPermissions & KeyspaceFunctions("ks").Applicable()},
		Change{Op: OpGrantPermissions, Grantee: "b", Resource: KeyspaceFunctions("other"), Permissions: Of(Execute)},
	)
	if s.Authorize("a", Execute, KeyspaceFunctions("ks")) != nil || s.Authorize("a", Create, KeyspaceFunctions("ks")) == nil {
		t.Fatal("EXECUTE on ALL FUNCTIONS is not inherited alone")
	}
	if got, want := KeyspaceFunctions("ks").Applicable(), Of(Create, Alter, Drop, Authorize, Execute); got != want {
		t.Fatalf("applicable %v, want %v", got, want)
	}
	for _, r := range []Resource{AllFunctions(), KeyspaceFunctions("ks")} {
		if got, err := ParseResource(r.Name()); err != nil || got != r {
			t.Fatalf("%s: parsed %v, %v", r.Name(), got, err)
		}
	}
	wantErr(t, s.Authorize("a", Create, KeyspaceFunctions("ks")), primitive.ErrorCodeUnauthorized,
		"User a has no CREATE permission on <all functions in ks> or any of its parents")
	s = apply(t, s, Change{Op: OpDropResource, Resource: Keyspace("ks")})
	if s.Authorize("b", Execute, KeyspaceFunctions("ks")) == nil {
		t.Fatal("a dropped keyspace's function permissions survive")
	}
	if s.Authorize("b", Execute, KeyspaceFunctions("other")) != nil {
		t.Fatal("another keyspace's function permissions went with it")
	}
}

// Applying a state's Changes to an empty state rebuilds it, byte for byte.
func TestChangesRebuild(t *testing.T) {
	s := apply(t, Empty(), create("a", true), create("b", false),
		Change{Op: OpAlterRole, Role: "b", Set: AttrPassword | AttrOptions, SaltedHash: []byte("h"), Options: map[string]string{"k": "v"}},
		Change{Op: OpGrantRole, Role: "a", Grantee: "b"},
		Change{Op: OpGrantPermissions, Grantee: "b", Resource: RoleResource("a"), Permissions: Of(Alter)},
	)
	rebuilt := apply(t, Empty(), s.Changes()...)
	if !bytes.Equal(EncodeSnapshot(s), EncodeSnapshot(rebuilt)) {
		t.Fatal("rebuilt state differs")
	}
	if r, _ := rebuilt.Role("b"); string(r.SaltedHash) != "h" || r.Options["k"] != "v" || !r.Login || r.Superuser {
		t.Fatalf("b rebuilt as %+v", r)
	}
}
