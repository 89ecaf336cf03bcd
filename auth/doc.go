// Package auth holds who may connect and what they may do: roles (with a
// bcrypt hash of their password, LOGIN, SUPERUSER and OPTIONS), which roles
// are granted to which, and the permissions granted on resources (ALL
// KEYSPACES, KEYSPACE, TABLE, ALL ROLES, ROLE), with Cassandra's
// PasswordAuthenticator, CassandraRoleManager and CassandraAuthorizer
// semantics and messages.
//
// The state is an immutable value (State) changed only by applying Change
// values, one at a time, deterministically: a change carries everything
// random (a password's salted hash, never the password), so every node that
// applies the same changes in the same order holds the same state. That is
// what lets the cluster's replicated metadata log carry role changes
// exactly as it carries schema changes. Until it does, a Store is the local
// submitter: it applies a change, writes the new state's snapshot
// atomically to its file, and only then publishes the state.
//
// A snapshot is the list of changes that rebuilds the state from empty
// (State.Changes), so one bounded codec (codec.go) serves both the log's
// records and the file; its decoders take untrusted bytes and are fuzzed.
//
// Checks:
//
//   - Authenticator.Authenticate takes a SASL PLAIN token and answers the
//     role, or BAD_CREDENTIALS. bcrypt is slow on purpose, so it runs on a
//     worker; an unknown user is checked against a dummy hash of the same
//     cost, so that answering takes as long as for a wrong password. A
//     Limiter bounds failed attempts per client address.
//   - State.Authorize(role, permission, resource) looks through the role,
//     the roles granted to it (transitively) and the resource's parents; a
//     superuser anywhere in the chain holds every permission.
//
// Statements: Plan takes a parsed role or permission statement (package
// statements) and the role running it, checks it as Cassandra's
// CreateRoleStatement ... ListPermissionsStatement do (their authorize,
// validate and execute steps in that order, with their refusals and
// wording, under AllowAllAuthenticator's anonymous user and under
// AllowAllAuthorizer too), and returns the changes to submit together
// (under CassandraAuthorizer CREATE ROLE also grants its creator ALTER,
// DROP and AUTHORIZE on the new role) or the rows of a LIST. The executor
// supplies the schema (does a keyspace or table exist) and the password
// hashing.
//
// Errors meant for clients are *cqlerr.Error with Cassandra's code and
// wording; ErrCorrupt marks bytes that are not an encoding.
package auth
