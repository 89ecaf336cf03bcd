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
	// Performer is the role the connection logged in as; "" is the
	// anonymous user of AllowAllAuthenticator, under which
	// CassandraRoleManager takes no PASSWORD and role statements are
	// refused once checked.
	Performer string
	// Authorizer is set under CassandraAuthorizer: permissions are
	// checked, granted and listed. Under AllowAllAuthorizer every check
	// passes, and GRANT, REVOKE and LIST PERMISSIONS are refused with its
	// messages.
	Authorizer bool
	// Keyspace is the session's keyspace, for a table named without one.
	Keyspace string
	// Hash makes a password's salted hash (Store.Hash).
	Hash func(password string) ([]byte, error)
	// Exists reports whether a keyspace or table exists; nil means all do.
	Exists func(Resource) bool
}

// Result is what a role or permission statement does: the changes to
// submit together, or, for LIST, the rows to answer.
type Result struct {
	Changes []Change
	// Roles are the rows of LIST ROLES and LIST USERS (Users set):
	// Cassandra's columns role, super (the role's own flag), login,
	// options, datacenters for roles; name, super (inherited too),
	// datacenters for users.
	Roles []Role
	Users bool
	// Grants are the rows of LIST PERMISSIONS: role, username (the role
	// again), resource (Resource.String) and permission.
	Grants []Grant
	// Listed is set for a LIST statement. Void is set for one that found
	// nothing, which Cassandra answers VOID rather than with no rows
	// (LIST USERS of roles none of which may log in has rows: none).
	Listed, Void bool
}

// Plan checks, as Cassandra's role and permission statements do, that
// e.Performer may run st (a *statements.CreateRole, AlterRole, DropRole,
// GrantPermissions, RevokePermissions, GrantRole, RevokeRole, ListRoles or
// ListPermissions), and returns what it does. The checks come in
// Cassandra's order (the statement's authorize, then its validate, then
// what execute refuses), so each refusal is the one Cassandra gives, with
// its code and message. Plan reads e.State only: the changes are checked
// again when applied, so a race with another change fails there.
func Plan(e Exec, st statements.Statement) (Result, error) {
	switch st := st.(type) {
	case *statements.CreateRole:
		return e.createRole(st)
	case *statements.AlterRole:
		return e.alterRole(st)
	case *statements.DropRole:
		return e.dropRole(st)
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

// maxKey is the longest partition key Cassandra stores, which a role's
// name is in system_auth.roles.
const maxKey = 65535

// anonymous is ClientState.ensureNotAnonymous.
func (e Exec) anonymous() error {
	if e.Performer == "" {
		return cqlerr.Unauthorizedf("You have to be logged in and not anonymous to perform this request")
	}
	return nil
}

// allows is the authorizer's answer: every permission under
// AllowAllAuthorizer.
func (e Exec) allows(p Permission, r Resource) bool {
	return !e.Authorizer || e.State.Allows(e.Performer, p, r)
}

// ensure is ClientState.ensurePermission.
func (e Exec) ensure(p Permission, r Resource) error {
	if e.allows(p, r) {
		return nil
	}
	return cqlerr.Unauthorizedf("User %s has no %s permission on %s or any of its parents", e.Performer, p, r)
}

// isSuper is AuthenticatedUser.isSuper: never for the anonymous user.
func (e Exec) isSuper() bool { return e.Performer != "" && e.State.IsSuper(e.Performer) }

// checkRolePermission is AuthenticationStatement.checkPermission: the
// refusal does not say which permission is missing.
func (e Exec) checkRolePermission(p Permission, r Resource) error {
	if !e.allows(p, r) {
		return cqlerr.Unauthorizedf("User %s does not have sufficient privileges to perform the requested operation", e.Performer)
	}
	return nil
}

// roleOptions checks the options CassandraRoleManager supports (PASSWORD
// only with PasswordAuthenticator) and turns them into a change's
// attributes: RoleOptions.validate.
func (e Exec) roleOptions(o statements.RoleOptions, c *Change) error {
	const manager = "org.apache.cassandra.auth.CassandraRoleManager"
	if o.Options != nil {
		return cqlerr.Invalidf("%s doesn't support OPTIONS", manager)
	}
	if e.Performer == "" && o.Password != nil {
		return cqlerr.Invalidf("%s doesn't support PASSWORD", manager)
	}
	if e.Performer == "" && o.HashedPassword != nil {
		return cqlerr.Invalidf("%s doesn't support HASHED_PASSWORD", manager)
	}
	if o.Datacenters != nil || o.AllDatacenters {
		return cqlerr.Invalidf("ACCESS TO DATACENTERS operations not supported by AllowAllNetworkAuthorizer")
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
	// authorize
	if err := e.checkRolePermission(Create, AllRoles()); err != nil {
		return Result{}, err
	}
	if st.Options.Superuser != nil && *st.Options.Superuser && !e.isSuper() {
		return Result{}, cqlerr.Unauthorizedf("Only superusers can create a role with superuser status")
	}
	// validate
	c := Change{Op: OpCreateRole, Role: st.Name, IfExists: st.IfNotExists}
	if err := e.roleOptions(st.Options, &c); err != nil {
		return Result{}, err
	}
	if st.Name == "" {
		return Result{}, cqlerr.Invalidf("Role name can't be an empty string")
	}
	if err := e.anonymous(); err != nil {
		return Result{}, err
	}
	if len(st.Name) > maxKey {
		// The name is system_auth.roles' partition key.
		return Result{}, cqlerr.Invalidf("Key length of %d is longer than maximum of %d", len(st.Name), maxKey)
	}
	if _, exists := s.Role(st.Name); exists {
		if st.IfNotExists {
			return Result{}, nil
		}
		return Result{}, cqlerr.Invalidf("%s already exists", st.Name)
	}
	if !e.Authorizer {
		return changes(c), nil
	}
	// The creator gets every permission on the new role, as in Cassandra.
	on := RoleResource(st.Name)
	return changes(c, Change{Op: OpGrantPermissions, Grantee: e.Performer, Resource: on, Permissions: on.Applicable()}), nil
}

func (e Exec) alterRole(st *statements.AlterRole) (Result, error) {
	s := e.State
	o := st.Options
	// authorize
	super := e.isSuper()
	if o.Superuser != nil && e.Performer != "" && slices.Contains(s.RolesOf(e.Performer, true), st.Name) {
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
	// validate
	c := Change{Op: OpAlterRole, Role: st.Name}
	if err := e.roleOptions(o, &c); err != nil {
		return Result{}, err
	}
	if o.Password == nil && o.HashedPassword == nil && o.Login == nil && o.Superuser == nil && o.Options == nil &&
		!o.AllDatacenters && o.Datacenters == nil {
		return Result{}, cqlerr.Invalidf("ALTER [ROLE|USER] can't be empty")
	}
	if err := e.anonymous(); err != nil {
		return Result{}, err
	}
	if _, exists := s.Role(st.Name); !exists {
		if st.IfExists {
			return Result{}, nil
		}
		return Result{}, cqlerr.Invalidf("%s doesn't exist", st.Name)
	}
	return changes(c), nil
}

func (e Exec) dropRole(st *statements.DropRole) (Result, error) {
	s := e.State
	// authorize
	if err := e.checkRolePermission(Drop, RoleResource(st.Name)); err != nil {
		return Result{}, err
	}
	_, exists := s.Role(st.Name)
	if exists && s.IsSuper(st.Name) && !e.isSuper() {
		return Result{}, cqlerr.Unauthorizedf("Only superusers can drop a role with superuser status")
	}
	// validate
	if err := e.anonymous(); err != nil {
		return Result{}, err
	}
	if !exists && !st.IfExists {
		return Result{}, cqlerr.Invalidf("%s doesn't exist", st.Name)
	}
	if st.Name == e.Performer {
		return Result{}, cqlerr.Invalidf("Cannot DROP primary role for current login")
	}
	if !exists {
		return Result{}, nil
	}
	return changes(Change{Op: OpDropRole, Role: st.Name, IfExists: st.IfExists}), nil
}

// roleMembership is GRANT role TO grantee and REVOKE role FROM revokee,
// which need AUTHORIZE on the role.
func (e Exec) roleMembership(op Op, role, grantee string) (Result, error) {
	if err := e.checkRolePermission(Authorize, RoleResource(role)); err != nil {
		return Result{}, err
	}
	if err := e.anonymous(); err != nil {
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
	case statements.AllFunctionsResource:
		return AllFunctions(), nil
	case statements.KeyspaceFunctionsResource:
		return KeyspaceFunctions(r.Keyspace), nil
	}
	return Resource{}, cqlerr.Invalidf("unknown resource kind %d", r.Kind)
}

func (e Exec) exists(r Resource) bool {
	switch r.Kind {
	case AllKeyspacesKind, AllRolesKind, AllFunctionsKind:
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
	// authorize
	if err := e.ensure(Authorize, res); err != nil {
		return Result{}, err
	}
	for _, p := range perms.List() {
		if err := e.ensure(p, res); err != nil {
			return Result{}, err
		}
	}
	// validate
	if err := e.anonymous(); err != nil {
		return Result{}, err
	}
	if _, ok := e.State.Role(grantee); !ok {
		return Result{}, cqlerr.Invalidf("Role %s doesn't exist", grantee)
	}
	if !e.exists(res) {
		return Result{}, cqlerr.Invalidf("Resource %s doesn't exist", res)
	}
	if !e.Authorizer {
		// AllowAllAuthorizer's grant and revoke throw, and nothing
		// catches them: a server error.
		what := "GRANT"
		if op == OpRevokePermissions {
			what = "REVOKE"
		}
		return Result{}, &cqlerr.Error{Code: primitive.ErrorCodeServerError,
			Msg: "java.lang.UnsupportedOperationException: " + what + " operation is not supported by AllowAllAuthorizer"}
	}
	return changes(Change{Op: op, Grantee: grantee, Resource: res, Permissions: perms}), nil
}

func (e Exec) listRoles(st *statements.ListRoles) (Result, error) {
	s := e.State
	if err := e.anonymous(); err != nil {
		return Result{}, err
	}
	if st.Of != "" {
		if _, ok := s.Role(st.Of); !ok {
			return Result{}, cqlerr.Invalidf("%s doesn't exist", RoleResource(st.Of))
		}
	}
	var names []string
	describe := e.allows(Describe, AllRoles())
	switch {
	case describe && st.Of == "":
		for _, r := range s.Roles() {
			names = append(names, r.Name)
		}
	case describe:
		names = s.RolesOf(st.Of, !st.NoRecursive)
	case st.Of == "":
		names = s.RolesOf(e.Performer, !st.NoRecursive)
	case slices.Contains(s.RolesOf(e.Performer, true), st.Of):
		names = s.RolesOf(st.Of, !st.NoRecursive)
	default:
		return Result{}, cqlerr.Unauthorizedf("You are not authorized to view roles granted to %s ", st.Of)
	}
	out := Result{Users: st.Users, Listed: true, Void: len(names) == 0}
	for _, name := range names {
		r, _ := s.Role(name)
		if st.Users {
			if !r.Login {
				continue
			}
			// LIST USERS' super is the status the role holds, granted
			// roles' included.
			r.Superuser = s.IsSuper(name)
		}
		out.Roles = append(out.Roles, r)
	}
	return out, nil
}

func (e Exec) listPermissions(st *statements.ListPermissions) (Result, error) {
	s := e.State
	if err := e.anonymous(); err != nil {
		return Result{}, err
	}
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
	if !e.Authorizer {
		return Result{}, cqlerr.Invalidf("LIST PERMISSIONS operation is not supported by AllowAllAuthorizer")
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
	g := s.Grants(roles, on, permissions(st.Permissions))
	return Result{Grants: g, Listed: true, Void: len(g) == 0}, nil
}
