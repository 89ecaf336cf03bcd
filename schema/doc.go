// Package schema is the one place DDL is applied: CREATE, ALTER and DROP
// of keyspaces, tables, user types and indexes, with Cassandra 4.0's rules,
// messages and error classes.
//
// A schema change is a value, Change: the statement's CQL text and the
// session's keyspace, with what its proposer chose that the schema does
// not hold (the change's time, the id of a table it creates, the data
// centers a replication shorthand names). Schema.Apply applies one Change
// to the node's catalog, under one lock, reading only the Change and the
// schema current then, so every node applying the same Changes in the
// same order reaches the same schema and the same digest. The checks a
// change's outcome depends on (does the table exist, is the type in use)
// are made against the schema when it applies, not when it was proposed:
// of two concurrent CREATE TABLEs of one name, the first applied wins and
// the second answers ALREADY_EXISTS.
//
// The data follows through Data, which the storage engine satisfies: a
// dropped table's rows are truncated (its id is never reused, so a
// failure leaves only unreachable rows), and a new index is put in the
// schema marked building (so writes index themselves), then built from
// the rows already written and marked built; a restart finishes the
// builds it interrupted (FinishIndexBuilds).
//
// Apply returns the SCHEMA_CHANGE result answering the change, or a
// VoidResult when IF [NOT] EXISTS made it a no-op; the caller pushes
// Event(result) to its own registered clients.
package schema
