// Package schema is the one place DDL is applied: CREATE, ALTER and DROP
// of keyspaces, tables, user types and indexes, with Cassandra 4.0's rules,
// messages and error classes.
//
// A schema change is a value, Change: the statement's CQL text and the
// session's keyspace, with what its proposer chose that the schema does
// not hold (the change's time, the id of a table it creates, the data
// centers a replication shorthand names). Its codec (Append, Decode) is
// versioned and bounded, for entries that arrive from other nodes.
//
// Schema.Apply applies one Change to the node's catalog, one change at a
// time, reading only the Change and the schema current then, so every node
// applying the same Changes in the same order reaches the same schema and
// the same digest. Each change is first decided against the current
// schema, every check made and the new definitions built, and only then
// written; Validate is that decision alone, the dry run a proposer makes
// to refuse a bad statement before it is ordered. The checks a change's
// outcome depends on (does the table exist, is the type in use) are made
// when it applies, not when it was proposed: of two concurrent CREATE
// TABLEs of one name, the first applied wins and the second answers
// ALREADY_EXISTS. Check makes the fewer checks Cassandra makes when a
// statement is prepared.
//
// The data follows through Data, which the storage engine satisfies: a
// dropped table's rows are truncated (its id is never reused, so a
// failure leaves only unreachable rows), and a new index is put in the
// schema marked building (so writes index themselves), then built from the
// rows already written and marked built. A build is the node's own: one
// that fails leaves the index building (queries scan) rather than making
// this node's schema differ, and a restart finishes the builds left
// undone (FinishIndexBuilds). The build state is no part of the schema
// digest (the schema version nodes compare), and a node restored from
// another's snapshot keeps its own: it builds the indexes the snapshot
// brings and it did not have.
//
// Apply returns the SCHEMA_CHANGE result answering the change, or a
// VoidResult when IF [NOT] EXISTS made it a no-op; each node that applies
// a change pushes Event(result) to its own registered clients. The
// coordinator hands its changes to a Submitter: Local applies them here,
// each event published before the next change; the cluster's will order
// them through the metadata log and answer once the change has applied on
// the node that proposed it.
package schema
