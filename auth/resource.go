package auth

import (
	"fmt"
	"math/bits"
	"strings"
)

// Permission is one of Cassandra's permissions.
type Permission uint8

// The permissions, in Cassandra's order (LIST PERMISSIONS sorts by it).
const (
	Create Permission = iota
	Alter
	Drop
	Select
	Modify
	Authorize
	Describe
	Execute
	numPermissions
)

var permissionNames = [numPermissions]string{"CREATE", "ALTER", "DROP", "SELECT", "MODIFY", "AUTHORIZE", "DESCRIBE", "EXECUTE"}

func (p Permission) String() string {
	if p < numPermissions {
		return permissionNames[p]
	}
	return fmt.Sprintf("Permission(%d)", uint8(p))
}

// ParsePermission reads a permission name, in any case.
func ParsePermission(s string) (Permission, bool) {
	for i, n := range permissionNames {
		if strings.EqualFold(s, n) {
			return Permission(i), true
		}
	}
	return 0, false
}

// Permissions is a set of permissions.
type Permissions uint16

// AllPermissions is every permission; a resource applies only some.
const AllPermissions = Permissions(1<<numPermissions - 1)

// Of is the set of the given permissions.
func Of(ps ...Permission) Permissions {
	var s Permissions
	for _, p := range ps {
		s |= 1 << p
	}
	return s
}

// Has reports whether p is in the set.
func (s Permissions) Has(p Permission) bool { return s&(1<<p) != 0 }

// List is the set's permissions in Cassandra's order.
func (s Permissions) List() []Permission {
	out := make([]Permission, 0, bits.OnesCount16(uint16(s)))
	for p := Permission(0); p < numPermissions; p++ {
		if s.Has(p) {
			out = append(out, p)
		}
	}
	return out
}

func (s Permissions) String() string {
	names := make([]string, 0, numPermissions)
	for _, p := range s.List() {
		names = append(names, p.String())
	}
	return "{" + strings.Join(names, ", ") + "}"
}

// ResourceKind is what a Resource names.
type ResourceKind uint8

// The resources permissions are granted on. A single function and MBeans
// are not resources cqld has.
const (
	AllKeyspacesKind ResourceKind = iota + 1
	KeyspaceKind
	TableKind
	AllRolesKind
	RoleKind
	AllFunctionsKind
	KeyspaceFunctionsKind
)

// Resource is what a permission is granted on. The zero Resource is none.
// Resources are comparable, so they key maps.
type Resource struct {
	Kind ResourceKind
	// Keyspace and Table name a KeyspaceKind or TableKind resource (a
	// KeyspaceFunctionsKind one its Keyspace), Role a RoleKind one.
	Keyspace, Table, Role string
}

// AllKeyspaces is ALL KEYSPACES, the root of the data resources.
func AllKeyspaces() Resource { return Resource{Kind: AllKeyspacesKind} }

// Keyspace is KEYSPACE ks.
func Keyspace(ks string) Resource { return Resource{Kind: KeyspaceKind, Keyspace: ks} }

// Table is TABLE ks.t.
func Table(ks, t string) Resource { return Resource{Kind: TableKind, Keyspace: ks, Table: t} }

// AllRoles is ALL ROLES, the root of the role resources.
func AllRoles() Resource { return Resource{Kind: AllRolesKind} }

// RoleResource is ROLE r.
func RoleResource(r string) Resource { return Resource{Kind: RoleKind, Role: r} }

// AllFunctions is ALL FUNCTIONS, the root of the function resources.
func AllFunctions() Resource { return Resource{Kind: AllFunctionsKind} }

// KeyspaceFunctions is ALL FUNCTIONS IN KEYSPACE ks.
func KeyspaceFunctions(ks string) Resource {
	return Resource{Kind: KeyspaceFunctionsKind, Keyspace: ks}
}

// Name is the resource as system_auth.role_permissions spells it: "data",
// "data/ks", "data/ks/t", "roles", "roles/r", "functions", "functions/ks".
func (r Resource) Name() string {
	switch r.Kind {
	case AllKeyspacesKind:
		return "data"
	case KeyspaceKind:
		return "data/" + r.Keyspace
	case TableKind:
		return "data/" + r.Keyspace + "/" + r.Table
	case AllRolesKind:
		return "roles"
	case RoleKind:
		return "roles/" + r.Role
	case AllFunctionsKind:
		return "functions"
	case KeyspaceFunctionsKind:
		return "functions/" + r.Keyspace
	}
	return ""
}

// String is the resource as Cassandra's messages and LIST PERMISSIONS show
// it: "<table ks.t>".
func (r Resource) String() string {
	switch r.Kind {
	case AllKeyspacesKind:
		return "<all keyspaces>"
	case KeyspaceKind:
		return "<keyspace " + r.Keyspace + ">"
	case TableKind:
		return "<table " + r.Keyspace + "." + r.Table + ">"
	case AllRolesKind:
		return "<all roles>"
	case RoleKind:
		return "<role " + r.Role + ">"
	case AllFunctionsKind:
		return "<all functions>"
	case KeyspaceFunctionsKind:
		return "<all functions in " + r.Keyspace + ">"
	}
	return "<none>"
}

// ParseResource reads a Name.
func ParseResource(name string) (Resource, error) {
	parts := strings.SplitN(name, "/", 3)
	var r Resource
	switch {
	case parts[0] == "data" && len(parts) == 1:
		r = AllKeyspaces()
	case parts[0] == "data" && len(parts) == 2:
		r = Keyspace(parts[1])
	case parts[0] == "data" && len(parts) == 3:
		r = Table(parts[1], parts[2])
	case parts[0] == "roles" && len(parts) == 1:
		r = AllRoles()
	case parts[0] == "roles":
		r = RoleResource(strings.TrimPrefix(name, "roles/"))
	case parts[0] == "functions" && len(parts) == 1:
		r = AllFunctions()
	case parts[0] == "functions" && len(parts) == 2:
		r = KeyspaceFunctions(parts[1])
	default:
		return Resource{}, fmt.Errorf("%w: resource %q", ErrCorrupt, name)
	}
	if !r.valid() {
		return Resource{}, fmt.Errorf("%w: resource %q", ErrCorrupt, name)
	}
	return r, nil
}

func (r Resource) valid() bool {
	switch r.Kind {
	case AllKeyspacesKind, AllRolesKind, AllFunctionsKind:
		return r.Keyspace == "" && r.Table == "" && r.Role == ""
	case KeyspaceKind, KeyspaceFunctionsKind:
		return r.Keyspace != "" && !strings.Contains(r.Keyspace, "/") && r.Table == "" && r.Role == ""
	case TableKind:
		return r.Keyspace != "" && r.Table != "" && !strings.Contains(r.Keyspace+r.Table, "/") && r.Role == ""
	case RoleKind:
		return r.Role != "" && r.Keyspace == "" && r.Table == ""
	}
	return false
}

// Parent is the resource whose permissions r inherits: a table's keyspace,
// a keyspace's ALL KEYSPACES, a role's ALL ROLES, a keyspace's functions'
// ALL FUNCTIONS. ok is false at a root.
func (r Resource) Parent() (parent Resource, ok bool) {
	switch r.Kind {
	case KeyspaceKind:
		return AllKeyspaces(), true
	case TableKind:
		return Keyspace(r.Keyspace), true
	case RoleKind:
		return AllRoles(), true
	case KeyspaceFunctionsKind:
		return AllFunctions(), true
	}
	return Resource{}, false
}

// Applicable is the set of permissions that can be granted on r, as
// Cassandra's DataResource, RoleResource and FunctionResource define them.
func (r Resource) Applicable() Permissions {
	switch r.Kind {
	case AllKeyspacesKind, KeyspaceKind:
		return Of(Create, Alter, Drop, Select, Modify, Authorize)
	case TableKind:
		return Of(Alter, Drop, Select, Modify, Authorize)
	case AllRolesKind:
		return Of(Create, Alter, Drop, Authorize, Describe)
	case RoleKind:
		return Of(Alter, Drop, Authorize)
	case AllFunctionsKind, KeyspaceFunctionsKind:
		return Of(Create, Alter, Drop, Authorize, Execute)
	}
	return 0
}

// TypeName is the Cassandra class of the resource, as its syntax errors
// name it.
func (r Resource) TypeName() string {
	switch r.Kind {
	case AllRolesKind, RoleKind:
		return "RoleResource"
	case AllFunctionsKind, KeyspaceFunctionsKind:
		return "FunctionResource"
	}
	return "DataResource"
}
