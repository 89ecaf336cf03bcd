// Package systables is the system keyspaces a node serves: system.local,
// system.peers and peers_v2, system_schema.*, system_virtual_schema.*,
// system.prepared_statements, system.paxos and the empty tables drivers
// and cqlsh look for, with Cassandra 4.0's layouts (defs.go).
//
// A system table is a table like any other to the coordinator: it compiles
// a SELECT on it into the same plan as on a user table, so restrictions,
// ORDER BY, LIMIT, paging, aggregates, GROUP BY, JSON and functions are
// the user read path's. Only its data source differs: Replica, this
// node's replica of the system keyspaces, which no other node holds
// (Cassandra's LocalStrategy) and which statements never write. It serves
// two kinds of table:
//
//   - generated: the rows are made from the node's state (State: the
//     schema, this node, its peers) on each read, so they can never
//     disagree with the node, then laid out as partitions in the store's
//     key layout (storage.PartitionBuilder) and read as the store's
//     partitions are read, in token order. This is what Cassandra's
//     virtual tables do (AbstractVirtualTable builds its partitions on
//     each select). A generator is a function from State to rows, listed
//     in generators (tables.go); a table in neither list is empty. The
//     system_auth tables are generated from the role state (auth.go), which
//     the metadata log keeps on every node, as Cassandra's system_auth is
//     what its role manager and authorizer read.
//   - stored: the rows are in the engine, written by the node like user
//     data and read through the node's replica of its engine (Reader):
//     system.prepared_statements, written by the prepared statement
//     cache, and system.paxos, the Paxos state of lightweight
//     transactions (package replica). A system table that must keep data
//     the node cannot make again (system.batches) goes in stored.
//
// system_traces is neither: its tables are stored like user tables in a
// keyspace replicated over the ring (SimpleStrategy, replication factor
// 2, as Cassandra's), which the proxy places through WithDistributed and
// the coordinator reads through its replicas (Distributed). The node's
// tracer writes them.
//
// The package knows nothing of the coordinator: State and Reader are the
// small interfaces through which it reads what it shows.
package systables
