// Package cluster is what a node knows about the cluster it belongs to and
// agrees on with every other node: the members of the ring with their
// tokens and states, and the schema. Both change only through entries of
// the replicated metadata log (metalog), applied in log order by every
// node's State, so two nodes that have applied the same index agree.
//
// # Entries
//
// An Entry is one change: a schema change (its bytes are the schema
// package's, applied by a SchemaApplier), or a topology change — a node
// joining with its tokens, a node's status (normal, leaving), a node
// removed. Entries carry everything their application needs (the
// proposer chose the tokens, the ids and the times), so applying them is
// deterministic. Their encoding is versioned and bounded; they arrive from
// other nodes.
//
// # State
//
// State is the log's state machine. It keeps the topology as an immutable
// Topology value, republished on every change (readers load it without
// locks), and the index of the last entry applied. It persists both in one
// file, system/metadata.json, rewritten atomically after each entry, so a
// restarted node skips the entries it had already applied. The schema
// itself is the catalog's (storage.Catalog persists it); a schema entry
// that was applied to the catalog but not yet recorded here when the node
// crashed is applied again at restart, which schema changes tolerate: a
// second application fails without changing anything (the object exists,
// or is gone) or changes nothing (the same options set again).
package cluster
