package statements

// The role and permission statements (Cassandra's authentication and
// authorization statements).

// RoleOptions are the options of CREATE/ALTER ROLE (WITH PASSWORD = ...
// AND LOGIN = ...) and of CREATE/ALTER USER. A nil field was not given.
type RoleOptions struct {
	Password       *string
	HashedPassword *string
	Login          *bool
	Superuser      *bool
	// Options is OPTIONS = {...}; nil when not given.
	Options map[string]string
	// AllDatacenters is ACCESS TO ALL DATACENTERS, Datacenters ACCESS TO
	// DATACENTERS {...}; neither when not given.
	AllDatacenters bool
	Datacenters    []string
}

// CreateRole is CREATE ROLE [IF NOT EXISTS] name [WITH options], or, with
// User, CREATE USER [IF NOT EXISTS] name [WITH PASSWORD 'p']
// [SUPERUSER|NOSUPERUSER], which the parser fills in as Cassandra does:
// LOGIN true, SUPERUSER false unless given. CREATE ROLE leaves LOGIN and
// SUPERUSER nil when not given (both default to false).
type CreateRole struct {
	Name        string
	IfNotExists bool
	Options     RoleOptions
	User        bool
}

// AlterRole is ALTER ROLE [IF EXISTS] name [WITH options], or ALTER USER.
type AlterRole struct {
	Name     string
	IfExists bool
	Options  RoleOptions
	User     bool
}

// DropRole is DROP ROLE [IF EXISTS] name, or DROP USER.
type DropRole struct {
	Name     string
	IfExists bool
	User     bool
}

// Permissions is ALL [PERMISSIONS], or the permissions named (upper-case,
// each once, in the order given). GRANT and REVOKE keep only those the
// resource applies (Cassandra's filterPermissions), which the parser
// leaves to the executor; LIST keeps them all.
type Permissions struct {
	All   bool
	Names []string
}

// ResourceKind is what an AuthResource names.
type ResourceKind uint8

// The resources of GRANT, REVOKE and LIST.
const (
	AllKeyspacesResource      ResourceKind = iota + 1 // ALL KEYSPACES
	KeyspaceResource                                  // KEYSPACE ks
	TableResource                                     // [TABLE] [ks.]t
	AllRolesResource                                  // ALL ROLES
	RoleResource                                      // ROLE r
	AllFunctionsResource                              // ALL FUNCTIONS
	KeyspaceFunctionsResource                         // ALL FUNCTIONS IN KEYSPACE ks
)

// AuthResource is what permissions are granted on. A table's Keyspace is
// "" when unqualified: the session's keyspace, as in Cassandra.
type AuthResource struct {
	Kind            ResourceKind
	Keyspace, Table string
	Role            string
}

// GrantPermissions is GRANT permissions ON resource TO grantee.
type GrantPermissions struct {
	Permissions Permissions
	Resource    AuthResource
	Grantee     string
}

// RevokePermissions is REVOKE permissions ON resource FROM revokee.
type RevokePermissions struct {
	Permissions Permissions
	Resource    AuthResource
	Revokee     string
}

// GrantRole is GRANT role TO grantee.
type GrantRole struct{ Role, Grantee string }

// RevokeRole is REVOKE role FROM revokee.
type RevokeRole struct{ Role, Revokee string }

// ListRoles is LIST ROLES [OF role] [NORECURSIVE], or, with Users, LIST
// USERS.
type ListRoles struct {
	Of          string // "" for all roles
	NoRecursive bool
	Users       bool
}

// ListPermissions is LIST permissions [ON resource] [OF role]
// [NORECURSIVE].
type ListPermissions struct {
	Permissions Permissions
	On          *AuthResource // nil for every resource
	Of          string        // "" for every role
	NoRecursive bool
}

func (*CreateRole) statement()        {}
func (*AlterRole) statement()         {}
func (*DropRole) statement()          {}
func (*GrantPermissions) statement()  {}
func (*RevokePermissions) statement() {}
func (*GrantRole) statement()         {}
func (*RevokeRole) statement()        {}
func (*ListRoles) statement()         {}
func (*ListPermissions) statement()   {}
