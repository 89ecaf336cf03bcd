// Package describe is the server side of CQL's DESCRIBE statement, as
// Cassandra 4.0's DescribeStatement answers it: DESCRIBE [FULL] SCHEMA,
// KEYSPACES, [ONLY] KEYSPACE, TABLES, TABLE, INDEX, TYPES, TYPE,
// FUNCTIONS, FUNCTION, AGGREGATES, AGGREGATE, MATERIALIZED VIEW, CLUSTER
// and the generic DESCRIBE name, with or without WITH INTERNALS. cqlsh 4.0
// and later send these to the server and print the answer.
//
// The answer is rows of keyspace_name, type and name (the listings), with
// create_statement for the elements: the CQL that recreates each one, as
// Cassandra's toCqlString methods write it (cql.go), so that DESCRIBE
// SCHEMA's output run on an empty node makes the same schema. Elements
// come in Cassandra's order: keyspaces and tables by name ignoring case,
// user types so that a type follows those it uses, then functions and
// aggregates by name and argument types, each table followed by its
// indexes. Where Cassandra's output follows the iteration order of
// a java.util.HashMap (a keyspace's replication options, DESCRIBE
// CLUSTER's range ownership, a table's dropped columns) it is reproduced
// (java.go), as are Java's renderings of doubles.
//
// Paging is Cassandra's: an offset into the elements, in a paging state
// that also holds the server's release version and the schema version, so
// that the next page is refused once the schema changed (paging.go). The
// package reads a Schema the caller assembles (user, system and virtual
// keyspaces alike) and knows nothing of the node: it is pure, and safe
// for concurrent use.
package describe
