// Package coordinator executes CQL requests for clients.
//
// It implements the frontend's Handler and Inliner: a QUERY is parsed
// (package statements), analysed into a plan against the live schema, and
// run; a PREPARE stores the plan under Cassandra's statement id (the MD5 of
// the keyspace and query text) and an EXECUTE runs a stored plan with bound
// values. Plans are immutable and shared by concurrent executions; what
// one run needs (bound values, the statement's clock, the request's
// context) is its execution. Every error from a layer below becomes a CQL
// ERROR in exactly one place, errorMessage; a panic while running a
// request is answered as a SERVER_ERROR and logged.
//
// User data is reached only through Data (package proxy), at the
// request's consistency level: writes are built as mutation values and
// sent to every replica the ring places their partitions on, counter
// deltas and lightweight transactions' read-decide-write run on a replica
// under its partition lock, reads come back as rows reconciled from the
// replicas' answers. A node alone is a ring of one: the same path, its
// local replica holding every partition; only then may a request run
// inline, on an event loop (Inline).
//
// # Files: analysis apart from execution
//
// plan_*.go analyse a statement into its plan: a value made from the AST
// and the schema alone (plan_select.go, plan_write.go, plan_batch.go,
// plan_schema.go, with plan_where.go for restrictions, plan_selection.go
// for the selection, plan_terms.go for values and bind markers,
// plan_index.go, plan_json.go), and the pure evaluation of its parts
// against bound values. run_*.go execute plans: they are the only code
// that reads or writes through Data (run_select.go, run_write.go,
// run_lists.go, run_batch.go, run_schema.go). table*.go is the compiled
// table both sides share. lwt.go still holds both halves of a conditional
// write.
//
// The plans are not a package of their own (the statements/plan)
// on purpose: a plan is a tree of some forty types (the table and its
// columns, key restrictions, value expressions, selection expressions,
// projections, write operations) that the executing code reads field by
// field, and whose values are evaluated against an execution (bound
// values, the statement's clock). A package would export all of them and
// the execution with them for a single user, the run code beside them;
// the file split keeps the seam visible without that surface. Nothing
// outside the coordinator needs a plan: replicas receive mutations and
// read commands, not plans.
//
// A SELECT of a system table (system.local, system.peers, system_schema.*,
// ...: package systables) is compiled into the same plan as one of a user
// table, from a tableInfo over the system table's layout; only the rows
// come from elsewhere: this node's replica of the system keyspaces
// (systables.Replica, at any consistency level), which makes them from
// live state on each read (sysState), or reads them from the engine for a
// stored one. Statements never write system tables.
//
// Prepared statements are kept by package prepared: cached LRU within
// prepared_statements_cache_size estimated bytes and mirrored to
// system.prepared_statements, a real table in the engine as in Cassandra,
// so they are prepared again at start and ids survive restarts; the cache
// holds each one's compiled form (preparedStmt: its plan, its result
// metadata id, the schema it was analysed against) opaquely. A PREPARE
// of known text under the same schema does no parsing. A statement whose
// table was altered answers UNPREPARED (the driver prepares it again and
// v5 clients holding the old result metadata id get Metadata_changed); one
// whose table was dropped answers INVALID and is forgotten. Evicted ids
// answer UNPREPARED.
//
// # Who may do what
//
// Every plan is authorized before it runs, on each QUERY, EXECUTE (on the
// event loop too) and statement of a BATCH, in one place: authorize
// (auth.go) computes the permission Cassandra 4.0's statement checks and
// on what, and asks the role state (Options.Roles) whether the
// connection's role holds it, itself, through a role granted to it or on
// a parent resource; under AllowAllAuthorizer it checks only what
// Cassandra checks whatever the authorizer (no schema change in a system
// keyspace). A plan kind it does not know is refused, never run
// unchecked. The role and permission statements are a rolePlan, checked
// and run by auth.Plan against the state current when it runs, their
// changes submitted through Options.RoleChanges (the metadata log). A
// CREATE KEYSPACE or TABLE that created something grants its creator
// every permission on it.
//
// A schema change is checked when analysed as Cassandra checks it when
// preparing; when it runs, it becomes a schema.Change (its text, the
// statement's time, the ids it needs) submitted through
// Options.SchemaChanges, which applies it (package schema), durable in the
// storage catalog before it is answered, and pushes its SCHEMA_CHANGE
// event through Options.Publish.
package coordinator
