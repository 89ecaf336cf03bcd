package auth

import (
	"cmp"
	"maps"
	"slices"

	"github.com/cqld/cqld/cqlerr"
)

// Role is a role as the state holds it. Its slices and map are shared with
// the state and must not be modified.
type Role struct {
	Name string
	// SaltedHash is the bcrypt hash of its password, nil when it has none.
	SaltedHash []byte
	Login      bool
	Superuser  bool
	Options    map[string]string
	// MemberOf is the roles granted to it, sorted.
	MemberOf []string
}

// State is the whole of the roles, their memberships and their permissions.
// It is an immutable value: Apply returns a new State and leaves its
// receiver as it was, so a State may be read from any goroutine without a
// lock, and a reader holding one sees a consistent picture.
type State struct {
	roles map[string]*Role
	// grants is each role's own permissions (not inherited), by resource.
	grants map[string]map[Resource]Permissions
	// cache holds what roles may do, resolved; nil when none is kept.
	// It belongs to this state alone and is set before the state is
	// shared (Store.publish).
	cache *cache
}

// Empty is the state with no roles.
func Empty() *State {
	return &State{roles: map[string]*Role{}, grants: map[string]map[Resource]Permissions{}}
}

// Role returns the named role.
func (s *State) Role(name string) (Role, bool) {
	r, ok := s.roles[name]
	if !ok {
		return Role{}, false
	}
	return *r, true
}

// Roles returns every role, sorted by name.
func (s *State) Roles() []Role {
	out := make([]Role, 0, len(s.roles))
	for _, name := range slices.Sorted(maps.Keys(s.roles)) {
		out = append(out, *s.roles[name])
	}
	return out
}

// Apply returns the state with c applied, or an error (with the CQL code
// and the message Cassandra gives) when c does not apply; s is unchanged
// either way. Apply is a pure function of s and c, so every node applying
// the same changes in the same order reaches the same state.
func (s *State) Apply(c Change) (*State, error) {
	switch c.Op {
	case OpCreateRole:
		if _, ok := s.roles[c.Role]; ok {
			if c.IfExists {
				return s, nil
			}
			return nil, cqlerr.Invalidf("%s already exists", c.Role)
		}
		if c.Role == "" {
			return nil, cqlerr.Invalidf("Role name can't be an empty string")
		}
		n := s.clone()
		r := &Role{Name: c.Role}
		setAttrs(r, c)
		n.roles[c.Role] = r
		return n, nil
	case OpAlterRole:
		old, ok := s.roles[c.Role]
		if !ok {
			return nil, cqlerr.Invalidf("%s doesn't exist", c.Role)
		}
		n := s.clone()
		r := *old
		setAttrs(&r, c)
		n.roles[c.Role] = &r
		return n, nil
	case OpDropRole:
		if _, ok := s.roles[c.Role]; !ok {
			if c.IfExists {
				return s, nil
			}
			return nil, cqlerr.Invalidf("%s doesn't exist", c.Role)
		}
		return s.dropRole(c.Role), nil
	case OpGrantPermissions, OpRevokePermissions:
		return s.changePermissions(c)
	case OpGrantRole:
		return s.grantRole(c.Role, c.Grantee)
	case OpRevokeRole:
		return s.revokeRole(c.Role, c.Grantee)
	case OpDropResource:
		return s.dropResource(c.Resource), nil
	case OpSetupDefault:
		if len(s.roles) > 0 {
			return s, nil
		}
		c.Op, c.IfExists = OpCreateRole, false
		return s.Apply(c)
	}
	return nil, cqlerr.Invalidf("unknown role change %d", c.Op)
}

// clone copies the maps of s, not the roles: a change replaces the roles
// it touches.
func (s *State) clone() *State {
	return &State{roles: maps.Clone(s.roles), grants: maps.Clone(s.grants)}
}

func setAttrs(r *Role, c Change) {
	if c.Set&AttrPassword != 0 {
		r.SaltedHash = slices.Clone(c.SaltedHash)
	}
	if c.Set&AttrLogin != 0 {
		r.Login = c.Login
	}
	if c.Set&AttrSuperuser != 0 {
		r.Superuser = c.Superuser
	}
	if c.Set&AttrOptions != 0 {
		r.Options = maps.Clone(c.Options)
		if len(r.Options) == 0 {
			r.Options = nil
		}
	}
}

// dropRole removes the role, its memberships both ways, its permissions
// and the permissions on it, as Cassandra's DROP ROLE does.
func (s *State) dropRole(name string) *State {
	n := s.clone()
	delete(n.roles, name)
	delete(n.grants, name)
	for other, r := range n.roles {
		if i, found := slices.BinarySearch(r.MemberOf, name); found {
			cp := *r
			cp.MemberOf = slices.Delete(slices.Clone(r.MemberOf), i, i+1)
			n.roles[other] = &cp
		}
	}
	on := RoleResource(name)
	for role, g := range n.grants {
		if _, ok := g[on]; ok {
			g = maps.Clone(g)
			delete(g, on)
			n.setGrants(role, g)
		}
	}
	return n
}

// dropResource forgets every permission on r, and on the tables and the
// functions of r when it is a keyspace, as Cassandra's
// AuthSchemaChangeListener does. It returns s itself when there are none.
func (s *State) dropResource(r Resource) *State {
	gone := func(res Resource) bool {
		return res == r || r.Kind == KeyspaceKind && res.Keyspace == r.Keyspace &&
			(res.Kind == TableKind || res.Kind == KeyspaceFunctionsKind)
	}
	n := s
	for role, g := range s.grants {
		if !slices.ContainsFunc(slices.Collect(maps.Keys(g)), gone) {
			continue
		}
		if n == s {
			n = s.clone()
		}
		g = maps.Clone(g)
		maps.DeleteFunc(g, func(res Resource, _ Permissions) bool { return gone(res) })
		n.setGrants(role, g)
	}
	return n
}

func (s *State) setGrants(role string, g map[Resource]Permissions) {
	if len(g) == 0 {
		delete(s.grants, role)
		return
	}
	s.grants[role] = g
}

func (s *State) changePermissions(c Change) (*State, error) {
	if _, ok := s.roles[c.Grantee]; !ok {
		return nil, cqlerr.Invalidf("Role %s doesn't exist", c.Grantee)
	}
	if !c.Resource.valid() {
		return nil, cqlerr.Invalidf("invalid resource %s", c.Resource)
	}
	perms := c.Permissions & c.Resource.Applicable()
	if perms == 0 {
		return nil, cqlerr.Invalidf("Resource type %s does not support any of the requested permissions", c.Resource.TypeName())
	}
	g := maps.Clone(s.grants[c.Grantee])
	if g == nil {
		g = map[Resource]Permissions{}
	}
	if c.Op == OpGrantPermissions {
		g[c.Resource] |= perms
	} else {
		g[c.Resource] &^= perms
		if g[c.Resource] == 0 {
			delete(g, c.Resource)
		}
	}
	n := s.clone()
	n.setGrants(c.Grantee, g)
	return n, nil
}

func (s *State) grantRole(role, grantee string) (*State, error) {
	for _, name := range []string{role, grantee} {
		if _, ok := s.roles[name]; !ok {
			return nil, cqlerr.Invalidf("%s doesn't exist", name)
		}
	}
	if slices.Contains(s.RolesOf(grantee, true), role) {
		return nil, cqlerr.Invalidf("%s is a member of %s", grantee, role)
	}
	if slices.Contains(s.RolesOf(role, true), grantee) {
		return nil, cqlerr.Invalidf("%s is a member of %s", role, grantee)
	}
	n := s.clone()
	r := *s.roles[grantee]
	r.MemberOf = slices.Clone(r.MemberOf)
	i, _ := slices.BinarySearch(r.MemberOf, role)
	r.MemberOf = slices.Insert(r.MemberOf, i, role)
	n.roles[grantee] = &r
	return n, nil
}

func (s *State) revokeRole(role, revokee string) (*State, error) {
	for _, name := range []string{role, revokee} {
		if _, ok := s.roles[name]; !ok {
			return nil, cqlerr.Invalidf("%s doesn't exist", name)
		}
	}
	old := s.roles[revokee]
	i, found := slices.BinarySearch(old.MemberOf, role)
	if !found {
		return nil, cqlerr.Invalidf("%s is not a member of %s", revokee, role)
	}
	n := s.clone()
	r := *old
	r.MemberOf = slices.Delete(slices.Clone(old.MemberOf), i, i+1)
	n.roles[revokee] = &r
	return n, nil
}

// RolesOf returns the role itself and the roles granted to it, with those
// granted to them when recursive, sorted; nil when the role does not exist.
func (s *State) RolesOf(name string, recursive bool) []string {
	r, ok := s.roles[name]
	if !ok {
		return nil
	}
	if !recursive {
		return slices.Sorted(slices.Values(append([]string{name}, r.MemberOf...)))
	}
	seen := map[string]bool{name: true}
	queue := []string{name}
	for len(queue) > 0 {
		cur := s.roles[queue[0]]
		queue = queue[1:]
		if cur == nil {
			continue
		}
		for _, m := range cur.MemberOf {
			if !seen[m] {
				seen[m] = true
				queue = append(queue, m)
			}
		}
	}
	return slices.Sorted(maps.Keys(seen))
}

// IsSuper reports whether the role, or a role granted to it, is a
// superuser.
func (s *State) IsSuper(name string) bool { return s.access(name).super }

// Grant is one permission a role holds on a resource: a row of LIST
// PERMISSIONS and of system_auth.role_permissions.
type Grant struct {
	Role       string
	Resource   Resource
	Permission Permission
}

// Grants lists the permissions granted directly to the given roles (every
// role when nil) on the given resources (every resource when nil), limited
// to perms; sorted by role, resource name and permission, as LIST
// PERMISSIONS shows them.
func (s *State) Grants(roles []string, on []Resource, perms Permissions) []Grant {
	if roles == nil {
		roles = slices.Sorted(maps.Keys(s.grants))
	}
	var out []Grant
	for _, name := range roles {
		g := s.grants[name]
		for _, res := range slices.SortedFunc(maps.Keys(g), func(a, b Resource) int { return cmp.Compare(a.Name(), b.Name()) }) {
			if on != nil && !slices.Contains(on, res) {
				continue
			}
			for _, p := range (g[res] & perms).List() {
				out = append(out, Grant{Role: name, Resource: res, Permission: p})
			}
		}
	}
	return out
}

// Chain is r and its parents, r first.
func (r Resource) Chain() []Resource {
	var out []Resource
	for res, ok := r, r.Kind != 0; ok; res, ok = res.Parent() {
		out = append(out, res)
	}
	return out
}

// Authorize checks that the role holds permission p on resource r, itself
// or through a role granted to it, on r or one of its parents; a
// superuser holds every permission. The refusal is UNAUTHORIZED with
// Cassandra's message.
func (s *State) Authorize(role string, p Permission, r Resource) error {
	if s.Allows(role, p, r) {
		return nil
	}
	return cqlerr.Unauthorizedf("User %s has no %s permission on %s or any of its parents", role, p, r)
}

// Allows is Authorize's answer without the error.
func (s *State) Allows(role string, p Permission, r Resource) bool {
	a := s.access(role)
	if a.super {
		return true
	}
	for res, ok := r, true; ok; res, ok = res.Parent() {
		if a.perms[res].Has(p) {
			return true
		}
	}
	return false
}

// Changes returns changes that rebuild s from Empty, in an order that
// applies: the roles, then their memberships, then their permissions.
// Encoded, they are the state's snapshot.
func (s *State) Changes() []Change {
	var out []Change
	roles := s.Roles()
	for _, r := range roles {
		c := Change{Op: OpCreateRole, Role: r.Name, Set: AttrLogin | AttrSuperuser, Login: r.Login, Superuser: r.Superuser}
		if r.SaltedHash != nil {
			c.Set |= AttrPassword
			c.SaltedHash = r.SaltedHash
		}
		if len(r.Options) > 0 {
			c.Set |= AttrOptions
			c.Options = r.Options
		}
		out = append(out, c)
	}
	for _, r := range roles {
		for _, m := range r.MemberOf {
			out = append(out, Change{Op: OpGrantRole, Role: m, Grantee: r.Name})
		}
	}
	for _, name := range slices.Sorted(maps.Keys(s.grants)) {
		g := s.grants[name]
		for _, res := range slices.SortedFunc(maps.Keys(g), func(a, b Resource) int { return cmp.Compare(a.Name(), b.Name()) }) {
			out = append(out, Change{Op: OpGrantPermissions, Grantee: name, Resource: res, Permissions: g[res]})
		}
	}
	return out
}
