package auth

import (
	"slices"

	"github.com/datastax/go-cassandra-native-protocol/primitive"
	"golang.org/x/crypto/bcrypt"

	"github.com/cqld/cqld/cqlerr"
	"github.com/cqld/cqld/statements"
)

// Exec is what running a role or permission statement needs beyond the
// statement.
type Exec struct {
	State *State
	// Performer is the role the connection logged in as.
	Performer string
	// Keyspace is the session's keyspace, for a table named without one.
	Keyspace string
	// Hash makes a password's salted hash (Store.Hash).
	Hash func(password string) ([]byte, error)
	// Exists reports whether a keyspace or table exists; nil means all do.
	Exists func(Resource) bool
}

// Result is what a role or permission statement does: the changes to
// submit together (Store.Submit), or, for LIST, the rows to answer.
type Result struct {
	Changes []Change
	// Roles are the rows of LIST ROLES and LIST USERS (Users set):
	// Cassandra's columns role, super (the role's own flag), login,
	// options for roles, name, super for users.
	Roles []Role
	Users bool
	// Grants are the rows of LIST PERMISSIONS: role, username (the role
	// again), resource (Resource.String) and permission.
	Grants []Grant
	// Listed is set for a LIST statement, whose empty result Cassandra
	// answers VOID rather than with no rows.
	Listed bool
}

// Plan checks, as Cassandra's role and permission statements do, that
// e.Performer may run st (a *statements.CreateRole, AlterRole, DropRole,
// GrantPermissions, RevokePermissions, GrantRole, RevokeRole, ListRoles or
// ListPermissions), and returns what it does. Refusals carry Cassandra's
// code and message. Plan reads e.State only: the changes are checked again
// when applied, so a race with another change fails there.
func Plan(e Exec, st statements.Statement) (Result, error) {
	if e.Performer == "" {
		return Result{}, cqlerr.Unauthorizedf("You have not logged in")
	}
	s := e.State
	switch st := st.(type) {
	case *statements.CreateRole:
		return e.createRole(st)
	case *statements.AlterRole:
		return e.alterRole(st)
	case *statements.DropRole:
		if err := e.checkRolePermission(Drop, RoleResource(st.Name)); err != nil {
			return Result{}, err
		}
		_, exists := s.Role(st.Name)
		if exists && s.IsSuper(st.Name) && !s.IsSuper(e.Performer) {
			return Result{}, cqlerr.Unauthorizedf("Only superusers can drop a role with superuser status")
		}
		if !exists && !st.IfExists {
			return Result{}, cqlerr.Invalidf("%s doesn't exist", st.Name)
		}
		if st.Name == e.Performer {
			return Result{}, cqlerr.Invalidf("Cannot DROP primary role for current login")
		}
		return changes(Change{Op: OpDropRole, Role: st.Name, IfExists: st.IfExists}), nil
	case *statements.GrantRole:
		return e.roleMembership(OpGrantRole, st.Role, st.Grantee)
	case *statements.RevokeRole:
		return e.roleMembership(OpRevokeRole, st.Role, st.Revokee)
	case *statements.GrantPermissions:
		return e.changePermissions(OpGrantPermissions, st.Permissions, st.Resource, st.Grantee)
	case *statements.RevokePermissions:
		return e.changePermissions(OpRevokePermissions, st.Permissions, st.Resource, st.Revokee)
	case *statements.ListRoles:
		return e.listRoles(st)
	case *statements.ListPermissions:
		return e.listPermissions(st)
	}
	return Result{}, cqlerr.Invalidf("not a role or permission statement: %T", st)
}

func changes(cs ...Change) Result { return Result{Changes: cs} }

// checkRolePermission is AuthenticationStatement.checkPermission: the
// refusal does not say which permission is missing.
func (e Exec) checkRolePermission(p Permission, r Resource) error {
	if e.State.Authorize(e.Performer, p, r) != nil {
		return cqlerr.Unauthorizedf("User %s does not have sufficient privileges to perform the requested operation", e.Performer)
	}
	return nil
}

// roleOptions checks the options CassandraRoleManager supports with
// PasswordAuthenticator and turns them into a change's attributes.
func (e Exec) roleOptions(o statements.RoleOptions, c *Change) error {
	if o.Options != nil {
		return cqlerr.Invalidf("org.apache.cassandra.auth.CassandraRoleManager doesn't support OPTIONS")
	}
	if o.Datacenters != nil {
		return cqlerr.Invalidf("ACCESS TO DATACENTERS is not supported yet: cqld has no network authorizer")
	}
	if o.Login != nil {
		c.Set |= AttrLogin
		c.Login = *o.Login
	}
	if o.Superuser != nil {
		c.Set |= AttrSuperuser
		c.Superuser = *o.Superuser
	}
	switch {
	case o.Password != nil:
		h, err := e.Hash(*o.Password)
		if err != nil {
			return err
		}
		c.Set |= AttrPassword
		c.SaltedHash = h
	case o.HashedPassword != nil:
		if _, err := bcrypt.Cost([]byte(*o.HashedPassword)); err != nil || len(*o.HashedPassword) > maxHash {
			return cqlerr.Invalidf("Invalid hashed password value. Please use jBcrypt.")
		}
		c.Set |= AttrPassword
		c.SaltedHash = []byte(*o.HashedPassword)
	}
	return nil
}

func (e Exec) createRole(st *statements.CreateRole) (Result, error) {
	s := e.State
	if err := e.checkRolePermission(Create, AllRoles()); err != nil {
		return Result{}, err
	}
	if st.Options.Superuser != nil && *st.Options.Superuser && !s.IsSuper(e.Performer) {
		return Result{}, cqlerr.Unauthorizedf("Only superusers can create a role with superuser status")
	}
	if st.Name == "" {
		return Result{}, cqlerr.Invalidf("Role name can't be an empty string")
	}
	if _, exists := s.Role(st.Name); exists {
		if st.IfNotExists {
			return Result{}, nil
		}
		return Result{}, cqlerr.Invalidf("%s already exists", st.Name)
	}
	c := Change{Op: OpCreateRole, Role: st.Name, IfExists: st.IfNotExists}
	if err := e.roleOptions(st.Options, &c); err != nil {
		return Result{}, err
	}
	// The creator gets every permission on the new role, as in Cassandra.
	on := RoleResource(st.Name)
	return changes(c, Change{Op: OpGrantPermissions, Grantee: e.Performer, Resource: on, Permissions: on.Applicable()}), nil
}

func (e Exec) alterRole(st *statements.AlterRole) (Result, error) {
	s := e.State
	o := st.Options
	super := s.IsSuper(e.Performer)
	if o.Superuser != nil && slices.Contains(s.RolesOf(e.Performer, true), st.Name) {
		return Result{}, cqlerr.Unauthorizedf("You aren't allowed to alter your own superuser status or that of a role granted to you")
	}
	if o.Superuser != nil && !super {
		return Result{}, cqlerr.Unauthorizedf("Only superusers are allowed to alter superuser status")
	}
	switch {
	case super:
	case st.Name == e.Performer:
		// A role may change its own password, nothing else.
		if o.Login != nil {
			return Result{}, cqlerr.Unauthorizedf("You aren't allowed to alter LOGIN")
		}
		if o.Options != nil {
			return Result{}, cqlerr.Unauthorizedf("You aren't allowed to alter OPTIONS")
		}
	default:
		if err := e.checkRolePermission(Alter, RoleResource(st.Name)); err != nil {
			return Result{}, err
		}
	}
	if o.Password == nil && o.HashedPassword == nil && o.Login == nil && o.Superuser == nil && o.Options == nil &&
		!o.AllDatacenters && o.Datacenters == nil {
		return Result{}, cqlerr.Invalidf("ALTER [ROLE|USER] can't be empty")
	}
	if _, exists := s.Role(st.Name); !exists {
		if st.IfExists {
			return Result{}, nil
		}
		return Result{}, cqlerr.Invalidf("%s doesn't exist", st.Name)
	}
	c := Change{Op: OpAlterRole, Role: st.Name}
	if err := e.roleOptions(o, &c); err != nil {
		return Result{}, err
	}
	return changes(c), nil
}

// roleMembership is GRANT role TO grantee and REVOKE role FROM revokee,
// which need AUTHORIZE on the role.
func (e Exec) roleMembership(op Op, role, grantee string) (Result, error) {
	if err := e.checkRolePermission(Authorize, RoleResource(role)); err != nil {
		return Result{}, err
	}
	for _, name := range []string{role, grantee} {
		if _, ok := e.State.Role(name); !ok {
			return Result{}, cqlerr.Invalidf("%s doesn't exist", name)
		}
	}
	return changes(Change{Op: op, Role: role, Grantee: grantee}), nil
}

// resource resolves a statement's resource, a table's keyspace from the
// session.
func (e Exec) resource(r statements.AuthResource) (Resource, error) {
	switch r.Kind {
	case statements.AllKeyspacesResource:
		return AllKeyspaces(), nil
	case statements.KeyspaceResource:
		return Keyspace(r.Keyspace), nil
	case statements.TableResource:
		ks := r.Keyspace
		if ks == "" {
			ks = e.Keyspace
		}
		if ks == "" {
			return Resource{}, cqlerr.Invalidf("No keyspace has been specified. USE a keyspace, or explicitly specify keyspace.tablename")
		}
		return Table(ks, r.Table), nil
	case statements.AllRolesResource:
		return AllRoles(), nil
	case statements.RoleResource:
		return RoleResource(r.Role), nil
	}
	return Resource{}, cqlerr.Invalidf("unknown resource kind %d", r.Kind)
}

func (e Exec) exists(r Resource) bool {
	switch r.Kind {
	case AllKeyspacesKind, AllRolesKind:
		return true
	case RoleKind:
		_, ok := e.State.Role(r.Role)
		return ok
	}
	return e.Exists == nil || e.Exists(r)
}

// permissions is the statement's set: ALL, or the names given.
func permissions(ps statements.Permissions) Permissions {
	if ps.All {
		return AllPermissions
	}
	var out Permissions
	for _, n := range ps.Names {
		if p, ok := ParsePermission(n); ok {
			out |= Of(p)
		}
	}
	return out
}

func (e Exec) changePermissions(op Op, ps statements.Permissions, r statements.AuthResource, grantee string) (Result, error) {
	res, err := e.resource(r)
	if err != nil {
		return Result{}, err
	}
	perms := permissions(ps) & res.Applicable()
	if perms == 0 {
		return Result{}, &cqlerr.Error{Code: primitive.ErrorCodeSyntaxError,
			Msg: "Resource type " + res.TypeName() + " does not support any of the requested permissions"}
	}
	s := e.State
	if err := s.Authorize(e.Performer, Authorize, res); err != nil {
		return Result{}, err
	}
	for _, p := range perms.List() {
		if err := s.Authorize(e.Performer, p, res); err != nil {
			return Result{}, err
		}
	}
	if _, ok := s.Role(grantee); !ok {
		return Result{}, cqlerr.Invalidf("Role %s doesn't exist", grantee)
	}
	if !e.exists(res) {
		return Result{}, cqlerr.Invalidf("Resource %s doesn't exist", res)
	}
	return changes(Change{Op: op, Grantee: grantee, Resource: res, Permissions: perms}), nil
}

func (e Exec) listRoles(st *statements.ListRoles) (Result, error) {
	s := e.State
	if st.Of != "" {
		if _, ok := s.Role(st.Of); !ok {
			return Result{}, cqlerr.Invalidf("%s doesn't exist", RoleResource(st.Of))
		}
	}
	var names []string
	switch {
	case s.Authorize(e.Performer, Describe, AllRoles()) == nil && st.Of == "":
		for _, r := range s.Roles() {
			names = append(names, r.Name)
		}
	case s.Authorize(e.Performer, Describe, AllRoles()) == nil:
		names = s.RolesOf(st.Of, !st.NoRecursive)
	case st.Of == "":
		names = s.RolesOf(e.Performer, !st.NoRecursive)
	case slices.Contains(s.RolesOf(e.Performer, true), st.Of):
		names = s.RolesOf(st.Of, !st.NoRecursive)
	default:
		return Result{}, cqlerr.Unauthorizedf("You are not authorized to view roles granted to %s ", st.Of)
	}
	out := Result{Users: st.Users, Listed: true}
	for _, name := range names {
		r, _ := s.Role(name)
		if st.Users && !r.Login {
			continue
		}
		out.Roles = append(out.Roles, r)
	}
	return out, nil
}

func (e Exec) listPermissions(st *statements.ListPermissions) (Result, error) {
	s := e.State
	var on []Resource
	if st.On != nil {
		res, err := e.resource(*st.On)
		if err != nil {
			return Result{}, err
		}
		if !e.exists(res) {
			return Result{}, cqlerr.Invalidf("%s doesn't exist", res)
		}
		on = []Resource{res}
		if !st.NoRecursive {
			on = res.Chain()
		}
	}
	if st.Of != "" {
		if _, ok := s.Role(st.Of); !ok {
			return Result{}, cqlerr.Invalidf("%s doesn't exist", RoleResource(st.Of))
		}
	}
	if !s.IsSuper(e.Performer) && (st.Of == "" || !slices.Contains(s.RolesOf(e.Performer, true), st.Of)) {
		who := st.Of
		if who == "" {
			who = "everyone"
		}
		return Result{}, cqlerr.Unauthorizedf("You are not authorized to view %s's permissions", who)
	}
	var roles []string
	if st.Of != "" {
		roles = s.RolesOf(st.Of, true)
	}
	return Result{Grants: s.Grants(roles, on, permissions(st.Permissions)), Listed: true}, nil
}
