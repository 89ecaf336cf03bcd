// Package systables is the system keyspaces a node serves: system.local,
// system.peers and peers_v2, system_schema.*, system_virtual_schema.*,
// system.prepared_statements and the empty tables drivers and cqlsh look
// for, with Cassandra 4.0's layouts (defs.go).
//
// A system table is either generated or stored. A generated table's rows
// are made from the node's state (State: the schema, this node, its
// peers) each time it is read, so they can never disagree with the node;
// a stored table (system.prepared_statements) is in the engine, written
// by the node like user data.
//
// The package knows nothing of the coordinator: State is the small
// interface through which it reads what it shows.
package systables
