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
// User data is reached only through a replica.Replica: writes are built as
// mutation values and applied by the replica, counter deltas and
// lightweight transactions' read-decide-write run on the replica under its
// partition lock, reads come back as rows. Today the one replica is Local,
// this node's storage engine; the cluster will choose replicas on the ring
// and combine their answers at the request's consistency level, with
// storage.ReconcilePartitions for reads.
//
// A SELECT of a system table (system.local, system.peers, system_schema.*,
// ...: package systables) is compiled into the same plan as one of a user
// table, from a tableInfo over the system table's layout; only the rows
// come from elsewhere: this node's replica of the system keyspaces
// (systables.Replica, at any consistency level), which makes them from
// live state on each read (sysState), or reads them from the engine for a
// stored one. Statements never write system tables.
//
// Prepared statements (prepcache.go, prepstore.go) are cached LRU within
// prepared_statements_cache_size estimated bytes and mirrored to
// system.prepared_statements, a real table in the engine as in Cassandra,
// so they are prepared again at start and ids survive restarts. A PREPARE
// of known text under the same schema does no parsing. A statement whose
// table was altered answers UNPREPARED (the driver prepares it again and
// v5 clients holding the old result metadata id get Metadata_changed); one
// whose table was dropped answers INVALID and is forgotten. Evicted ids
// answer UNPREPARED.
//
// A schema change is checked when analysed as Cassandra checks it when
// preparing; when it runs, it becomes a schema.Change (its text, the
// statement's time, the ids it needs) submitted through
// Options.SchemaChanges, which applies it (package schema), durable in the
// storage catalog before it is answered, and pushes its SCHEMA_CHANGE
// event through Options.Publish.
package coordinator
