package auth

// Op is what a Change does.
type Op uint8

// The changes. Their values are in the codec: never renumber them.
const (
	OpCreateRole Op = iota + 1
	OpAlterRole
	OpDropRole
	OpGrantPermissions
	OpRevokePermissions
	OpGrantRole
	OpRevokeRole
	// OpDropResource forgets every permission on a resource that is
	// gone (a dropped keyspace or table), so a new one of the same name
	// does not inherit them. Forgetting a keyspace forgets its tables'
	// too: a dropped keyspace takes its tables with it.
	OpDropResource
	// OpSetupDefault creates Role as OpCreateRole would, but only in a
	// state that has no roles at all, as Cassandra's
	// CassandraRoleManager.setupDefaultRole does: the default superuser
	// of a new cluster, which nodes may propose at once, and which is not
	// made again once an operator has dropped it.
	OpSetupDefault
	numOps
)

// Attrs says which of a role's attributes a create or alter sets.
type Attrs uint8

// The attributes. Their values are in the codec.
const (
	AttrPassword Attrs = 1 << iota
	AttrLogin
	AttrSuperuser
	AttrOptions
	allAttrs = AttrPassword | AttrLogin | AttrSuperuser | AttrOptions
)

// Change is one change to the role state: the unit the replicated metadata
// log carries. Applying it is deterministic: everything random (a
// password's salt) was drawn when it was made, so it holds a bcrypt hash,
// never a password.
type Change struct {
	Op Op
	// Role is the role created, altered or dropped, or the role granted
	// (GRANT Role TO Grantee) or revoked.
	Role string
	// Grantee receives or loses permissions or a role.
	Grantee string
	// Resource and Permissions are what is granted or revoked; Resource
	// alone is what OpDropResource forgets.
	Resource    Resource
	Permissions Permissions

	// Set lists the attributes below that a create or alter sets; a
	// create leaves the others false or empty.
	Set        Attrs
	SaltedHash []byte
	Login      bool
	Superuser  bool
	Options    map[string]string

	// IfExists makes a create of a role that exists (IF NOT EXISTS), or a
	// drop of one that does not (IF EXISTS), do nothing instead of failing.
	IfExists bool
}
