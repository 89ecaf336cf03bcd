package coordinator

import (
	"context"
	"fmt"
	"strings"

	"github.com/datastax/go-cassandra-native-protocol/datatype"
	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"

	"github.com/cqld/cqld/auth"
	"github.com/cqld/cqld/schema"
	"github.com/cqld/cqld/statements"
	"github.com/cqld/cqld/statements/types"
	"github.com/cqld/cqld/storage"
	"github.com/cqld/cqld/systables"
)

// This file is who may do what: the permission each plan needs, checked
// in one place (authorize) before it runs, as Cassandra's statements'
// authorize methods check it; the role and permission statements, run
// through auth.Plan; the permissions a creator gets on what it creates.

// roles is the node's role state now.
func (c *Coordinator) roles() *auth.State {
	if c.opts.Roles == nil {
		return auth.Empty()
	}
	return c.opts.Roles.State()
}

// authorize checks that role may run p, as Cassandra 4.0's statements
// check it: SELECT on the table read, MODIFY on the table written (and
// SELECT too for a conditional write), the schema permission of a DDL
// statement on its keyspace or table. Schema changes to system keyspaces
// are refused whatever the authorizer, as ClientState does. A system
// table that drivers read (system.local, peers, system_schema.*) needs
// no permission. Under AllowAllAuthorizer nothing else is checked.
func (c *Coordinator) authorize(role string, p plan) error {
	// Every request passes here: without an authorizer, a plan other
	// than a schema change costs one comparison of its type (authorize
	// is inlined).
	if !c.opts.Authorizer {
		if _, ddl := p.(*ddlPlan); !ddl {
			return nil
		}
	}
	return c.authorizeAll(role, p)
}

// authorizeAll is authorize past its fast path.
func (c *Coordinator) authorizeAll(role string, p plan) error {
	if d, ok := p.(*ddlPlan); ok {
		return c.authorizeDDL(role, d)
	}
	if !c.opts.Authorizer {
		return nil
	}
	switch p := p.(type) {
	case *usePlan, *rolePlan, *describePlan:
		// DESCRIBE shows the schema every client reads from
		// system_schema; Cassandra's DescribeStatement checks nothing.
		return nil
	case *tableSelectPlan:
		if err := c.ensureTable(role, auth.Select, p.t); err != nil {
			return err
		}
		return c.ensureExecute(role, p.fns)
	case *writePlan:
		return c.ensureWrite(role, p)
	case *batchPlan:
		for _, w := range p.children {
			if err := c.ensureWrite(role, w); err != nil {
				return err
			}
		}
		return nil
	case *casPlan:
		// A conditional write reads what it compares: SELECT too.
		for _, w := range p.writes {
			if err := c.ensureTable(role, auth.Modify, w.w.t); err != nil {
				return err
			}
			if err := c.ensureTable(role, auth.Select, w.w.t); err != nil {
				return err
			}
			if err := c.ensureExecute(role, w.w.fns); err != nil {
				return err
			}
		}
		return nil
	case *truncatePlan:
		return c.ensure(role, auth.Modify, auth.Table(p.keyspace, p.table))
	}
	// A plan this switch does not know would run unchecked: refuse it
	// loudly instead.
	return fmt.Errorf("coordinator: no permission check for %T", p)
}

// authorizeDDL is authorize for a schema change, which is checked under
// AllowAllAuthorizer too: a system keyspace's schema is not to be changed.
func (c *Coordinator) authorizeDDL(role string, p *ddlPlan) error {
	perm, res, ok, known := c.ddlPermission(p)
	if !known && c.opts.Authorizer {
		// As for a plan authorize does not know: a schema change this
		// does not know would run unchecked.
		return fmt.Errorf("coordinator: no permission check for %T", p.stmt)
	}
	if !ok {
		return nil
	}
	if err := preventSystemChange(perm, res); err != nil {
		return err
	}
	if err := c.ensure(role, perm, res); err != nil {
		return err
	}
	if s, ok := p.stmt.(*statements.CreateAggregate); ok && c.opts.Authorizer {
		return c.ensureAggregateFunctions(role, p.session, s)
	}
	return nil
}

// ensure is ClientState.ensurePermission under CassandraAuthorizer.
func (c *Coordinator) ensure(role string, p auth.Permission, r auth.Resource) error {
	if !c.opts.Authorizer {
		return nil
	}
	return c.roles().Authorize(role, p, r)
}

// ensureWrite is ModificationStatement.authorize for an unconditional
// write: MODIFY on its table, EXECUTE on the functions it calls.
func (c *Coordinator) ensureWrite(role string, w *writePlan) error {
	if err := c.ensureTable(role, auth.Modify, w.t); err != nil {
		return err
	}
	return c.ensureExecute(role, w.fns)
}

// ensureExecute checks EXECUTE on every user-defined function a plan
// calls, as Cassandra's statements check each of their getFunctions();
// native functions need none. Permissions on one function do not exist
// here, so the check is on the function's keyspace's functions, which a
// grant on them or on ALL FUNCTIONS gives; the refusal names the function
// as Cassandra's FunctionResource does. An aggregate's state and final
// functions are in its keyspace (functions.Users finds them there), so
// the check on the aggregate is theirs too.
func (c *Coordinator) ensureExecute(role string, fns *fnScope) error {
	if fns == nil || len(fns.used) == 0 {
		return nil
	}
	st := c.roles()
	for _, sig := range fns.used {
		if err := ensureExecuteDef(st, role, sig.Def); err != nil {
			return err
		}
	}
	return nil
}

// ensureExecuteDef checks EXECUTE on the function or aggregate def (a
// *storage.FunctionDef or *storage.AggregateDef).
func ensureExecuteDef(st *auth.State, role string, def any) error {
	switch d := def.(type) {
	case *storage.FunctionDef:
		return ensureExecuteOn(st, role, d.Keyspace, d.Name, d.ArgTypes)
	case *storage.AggregateDef:
		return ensureExecuteOn(st, role, d.Keyspace, d.Name, d.ArgTypes)
	}
	return nil
}

func ensureExecuteOn(st *auth.State, role, ks, name string, argTypes []string) error {
	if st.Allows(role, auth.Execute, auth.KeyspaceFunctions(ks)) {
		return nil
	}
	return unauthorizedf("User %s has no %s permission on <function %s.%s(%s)> or any of its parents",
		role, auth.Execute, ks, name, strings.Join(argTypes, ", "))
}

// ensureAggregateFunctions is the rest of CreateAggregateStatement's
// authorize: EXECUTE on the state function and the final function it
// names (in the aggregate's keyspace).
func (c *Coordinator) ensureAggregateFunctions(role, session string, s *statements.CreateAggregate) error {
	ks := s.Keyspace
	if ks == "" {
		ks = session
	}
	st := c.roles()
	if err := ensureExecuteOn(st, role, ks, s.StateFunc, append([]string{s.StateType}, s.ArgTypes...)); err != nil {
		return err
	}
	if s.FinalFunc != "" {
		return ensureExecuteOn(st, role, ks, s.FinalFunc, []string{s.StateType})
	}
	return nil
}

// ensureTable checks p on table t; SELECT on the system tables drivers
// and tools read needs no permission (Cassandra's
// Resources.isAlwaysReadable).
func (c *Coordinator) ensureTable(role string, p auth.Permission, t *tableInfo) error {
	ks, name := t.def.Keyspace, t.def.Name
	if p == auth.Select && t.system && alwaysReadable(ks, name) {
		return nil
	}
	return c.ensure(role, p, auth.Table(ks, name))
}

// alwaysReadable are the system tables every logged-in role may read.
func alwaysReadable(ks, table string) bool {
	switch ks {
	case "system":
		return table == "local" || table == "peers" || table == "peers_v2"
	case "system_schema", "system_virtual_schema":
		return true
	}
	return false
}

// preventSystemChange is ClientState.preventSystemKSSchemaModification:
// no CREATE, ALTER or DROP in a local system keyspace, and in a replicated
// one (system_auth, system_traces) only an ALTER of the keyspace itself.
func preventSystemChange(p auth.Permission, r auth.Resource) error {
	if p != auth.Create && p != auth.Alter && p != auth.Drop || r.Keyspace == "" {
		return nil
	}
	switch {
	case systables.IsReplicatedSystemKeyspace(r.Keyspace):
		if p == auth.Alter && r.Kind == auth.KeyspaceKind {
			return nil
		}
		return unauthorizedf("Cannot %s %s", p, r)
	case systables.IsSystemKeyspace(r.Keyspace):
		return unauthorizedf("%s keyspace is not user-modifiable.", r.Keyspace)
	}
	return nil
}

// ddlPermission is the permission a schema change needs and what on; ok
// is false for one that needs none (DROP INDEX of an index not found),
// known false for a statement it has no rule for.
func (c *Coordinator) ddlPermission(p *ddlPlan) (perm auth.Permission, res auth.Resource, ok, known bool) {
	// The keyspace as the change resolves it; "" when it names none in a
	// session without one, which the change then refuses.
	ks, _ := schema.KeyspaceOf(p.stmt, p.session)
	switch s := p.stmt.(type) {
	case *statements.CreateKeyspace:
		return auth.Create, auth.AllKeyspaces(), true, true
	case *statements.DropKeyspace:
		return auth.Drop, auth.Keyspace(ks), true, true
	case *statements.AlterKeyspace:
		return auth.Alter, auth.Keyspace(ks), true, true
	case *statements.CreateTable:
		return auth.Create, auth.Keyspace(ks), true, true
	case *statements.AlterTable:
		if s.View {
			// Cassandra checks ALTER on a view's base table, and there is
			// no view.
			return 0, auth.Resource{}, false, true
		}
		return auth.Alter, auth.Table(ks, s.Table), true, true
	case *statements.DropTable:
		if s.View {
			return 0, auth.Resource{}, false, true
		}
		return auth.Drop, auth.Table(ks, s.Table), true, true
	case *statements.CreateIndex:
		return auth.Alter, auth.Table(ks, s.Table), true, true
	case *statements.DropIndex:
		k := c.catalog.Current().Keyspace(ks)
		if k == nil {
			return 0, auth.Resource{}, false, true
		}
		for _, t := range k.Tables {
			for _, ix := range t.Indexes {
				if ix.Name == s.Name {
					return auth.Alter, auth.Table(k.Name, t.Name), true, true
				}
			}
		}
		return 0, auth.Resource{}, false, true
	case *statements.CreateType:
		return auth.Create, auth.Keyspace(ks), true, true
	case *statements.AlterType:
		return auth.Alter, auth.Keyspace(ks), true, true
	case *statements.DropType:
		return auth.Drop, auth.Keyspace(ks), true, true
	case *statements.CreateFunction:
		args := make([]string, len(s.Args))
		for i, a := range s.Args {
			args[i] = a.Type
		}
		return c.createFunctionPermission(ks, s.OrReplace, func(d *storage.KeyspaceDef) bool { return d.Function(s.Name, args) != nil })
	case *statements.CreateAggregate:
		return c.createFunctionPermission(ks, s.OrReplace, func(d *storage.KeyspaceDef) bool { return d.Aggregate(s.Name, s.ArgTypes) != nil })
	case *statements.DropFunction:
		// Cassandra asks DROP on the one function; permissions on one
		// function do not exist here, so on the keyspace's functions,
		// which a grant on the function's parents gives.
		return auth.Drop, auth.KeyspaceFunctions(ks), true, true
	}
	return 0, auth.Resource{}, false, false
}

// createFunctionPermission is CreateFunctionStatement's and
// CreateAggregateStatement's: ALTER to replace one that exists (on the
// keyspace's functions, as on DROP), CREATE on the keyspace's functions
// otherwise.
func (c *Coordinator) createFunctionPermission(ks string, orReplace bool, exists func(*storage.KeyspaceDef) bool) (auth.Permission, auth.Resource, bool, bool) {
	if d := c.catalog.Current().Keyspace(ks); orReplace && d != nil && exists(d) {
		return auth.Alter, auth.KeyspaceFunctions(ks), true, true
	}
	return auth.Create, auth.KeyspaceFunctions(ks), true, true
}

// grantCreator gives the role that created a keyspace or table every
// permission on it (and on a keyspace's functions), as Cassandra's
// AlterSchemaStatement does under CassandraAuthorizer, once res (the
// change's answer) says it was created. Permissions left on a resource of
// the same name are forgotten first, so a keyspace or table created again
// starts with its creator's alone.
func (c *Coordinator) grantCreator(ctx context.Context, role string, res message.Message) error {
	r, ok := res.(*message.SchemaChangeResult)
	if !ok || !c.opts.Authorizer || role == "" || r.ChangeType != primitive.SchemaChangeTypeCreated {
		return nil
	}
	var on auth.Resource
	var also []auth.Resource
	switch r.Target {
	case primitive.SchemaChangeTargetKeyspace:
		on = auth.Keyspace(r.Keyspace)
		also = []auth.Resource{auth.KeyspaceFunctions(r.Keyspace)}
	case primitive.SchemaChangeTargetTable:
		on = auth.Table(r.Keyspace, r.Object)
	default:
		return nil
	}
	cs := []auth.Change{{Op: auth.OpDropResource, Resource: on}}
	for _, res := range append([]auth.Resource{on}, also...) {
		cs = append(cs, auth.Change{Op: auth.OpGrantPermissions, Grantee: role, Resource: res, Permissions: res.Applicable()})
	}
	err := c.roleChanges().Submit(ctx, cs)
	if err != nil {
		return fmt.Errorf("granting %s its permissions on %s: %w", role, on, err)
	}
	return nil
}

// roleChanges is where role changes go: Options.RoleChanges, else the
// role store alone.
func (c *Coordinator) roleChanges() auth.Submitter {
	if c.opts.RoleChanges != nil {
		return c.opts.RoleChanges
	}
	if c.opts.Roles != nil {
		return auth.Local{Store: c.opts.Roles}
	}
	return noRoles{}
}

// noRoles refuses role changes on a coordinator without a role state.
type noRoles struct{}

func (noRoles) Submit(context.Context, []auth.Change) error {
	return invalidf("this node keeps no roles")
}

// rolePlan is a role or permission statement: CREATE/ALTER/DROP ROLE or
// USER, GRANT, REVOKE, LIST ROLES, USERS, PERMISSIONS. It is checked and
// run by auth.Plan against the role state current when it runs.
type rolePlan struct {
	noMarkers
	stmt    statements.Statement
	session string
}

// The columns of the LIST statements' rows, as Cassandra names them.
var (
	roleOptionsType = datatype.NewMap(datatype.Varchar, datatype.Varchar)
	listRolesCols   = listCols("roles", []string{"role", "super", "login", "options", "datacenters"},
		[]datatype.DataType{datatype.Varchar, datatype.Boolean, datatype.Boolean, roleOptionsType, datatype.Varchar})
	listUsersCols = listCols("users", []string{"name", "super", "datacenters"},
		[]datatype.DataType{datatype.Varchar, datatype.Boolean, datatype.Varchar})
	listPermissionsCols = listCols("permissions", []string{"role", "username", "resource", "permission"},
		[]datatype.DataType{datatype.Varchar, datatype.Varchar, datatype.Varchar, datatype.Varchar})
)

func listCols(table string, names []string, typs []datatype.DataType) []*message.ColumnMetadata {
	out := make([]*message.ColumnMetadata, len(names))
	for i, n := range names {
		out[i] = &message.ColumnMetadata{Keyspace: "system_auth", Table: table, Name: n, Index: int32(i), Type: typs[i]}
	}
	return out
}

func (p *rolePlan) resultColumns() []*message.ColumnMetadata {
	switch s := p.stmt.(type) {
	case *statements.ListRoles:
		if s.Users {
			return listUsersCols
		}
		return listRolesCols
	case *statements.ListPermissions:
		return listPermissionsCols
	}
	return nil
}

func (p *rolePlan) run(ctx context.Context, c *Coordinator, x *execution) (message.Message, error) {
	e := auth.Exec{
		State:      c.roles(),
		Performer:  x.role,
		Authorizer: c.opts.Authorizer,
		Keyspace:   p.session,
		Hash:       c.hashPassword,
		Exists:     c.resourceExists,
	}
	r, err := auth.Plan(e, p.stmt)
	if err != nil {
		return nil, err
	}
	if !r.Listed {
		if len(r.Changes) > 0 {
			if err := c.roleChanges().Submit(ctx, r.Changes); err != nil {
				return nil, err
			}
		}
		return &message.VoidResult{}, nil
	}
	if r.Void {
		return &message.VoidResult{}, nil
	}
	cols := p.resultColumns()
	var rows message.RowSet
	var err2 error
	enc := func(t datatype.DataType, v any) []byte {
		b, err := types.EncodeValue(t, v, x.version)
		if err != nil && err2 == nil {
			err2 = err
		}
		return b
	}
	// Cassandra's DCPermissions under AllowAllNetworkAuthorizer.
	const allDatacenters = "ALL"
	for _, role := range r.Roles {
		if r.Users {
			rows = append(rows, message.Row{enc(datatype.Varchar, role.Name), enc(datatype.Boolean, role.Superuser),
				enc(datatype.Varchar, allDatacenters)})
			continue
		}
		opts := role.Options
		if opts == nil {
			opts = map[string]string{}
		}
		rows = append(rows, message.Row{enc(datatype.Varchar, role.Name), enc(datatype.Boolean, role.Superuser),
			enc(datatype.Boolean, role.Login), enc(roleOptionsType, opts), enc(datatype.Varchar, allDatacenters)})
	}
	for _, g := range r.Grants {
		rows = append(rows, message.Row{enc(datatype.Varchar, g.Role), enc(datatype.Varchar, g.Role),
			enc(datatype.Varchar, g.Resource.String()), enc(datatype.Varchar, g.Permission.String())})
	}
	if err2 != nil {
		return nil, err2
	}
	if rows == nil {
		rows = message.RowSet{}
	}
	return &message.RowsResult{Metadata: &message.RowsMetadata{ColumnCount: int32(len(cols)), Columns: cols}, Data: rows}, nil
}

// hashPassword is the role store's bcrypt hash of a password.
func (c *Coordinator) hashPassword(password string) ([]byte, error) {
	if c.opts.Roles == nil {
		return nil, invalidf("this node keeps no roles")
	}
	return c.opts.Roles.Hash(password)
}

// resourceExists reports whether a keyspace (or its functions) or table
// exists, system ones included.
func (c *Coordinator) resourceExists(r auth.Resource) bool {
	switch r.Kind {
	case auth.KeyspaceKind, auth.KeyspaceFunctionsKind:
		return c.keyspaceExists(r.Keyspace)
	case auth.TableKind:
		if systables.Lookup(r.Keyspace, r.Table) != nil {
			return true
		}
		k := c.catalog.Current().Keyspace(r.Keyspace)
		return k != nil && k.Tables[r.Table] != nil
	}
	return true
}

// isRoleStatement reports whether st is run by a rolePlan.
func isRoleStatement(st statements.Statement) bool {
	switch st.(type) {
	case *statements.CreateRole, *statements.AlterRole, *statements.DropRole,
		*statements.GrantPermissions, *statements.RevokePermissions,
		*statements.GrantRole, *statements.RevokeRole,
		*statements.ListRoles, *statements.ListPermissions:
		return true
	}
	return false
}
