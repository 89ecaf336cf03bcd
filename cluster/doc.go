// Package cluster is what a node knows about the cluster it belongs to and
// agrees on with every other node: the members of the ring with their
// tokens and states, and the schema. Both change only through entries of
// the replicated metadata log (metalog), applied in log order by every
// node's State, so two nodes that have applied the same index agree.
//
// # Entries
//
// An Entry is one change: a schema change (its bytes are the schema
// package's, applied by a SchemaApplier), one statement's role changes
// (the auth package's, applied by an AuthApplier), or a topology change —
// a node joining with its tokens, a node's status (normal, leaving), a
// node removed. Entries carry everything their application needs (the
// proposer chose the tokens, the ids and the times), so applying them is
// deterministic. Their encoding is versioned and bounded; they arrive from
// other nodes.
//
// # State
//
// State is the log's state machine. It keeps the topology as an immutable
// Topology value, republished on every change (readers load it without
// locks), and the index of the last entry applied. Each part records the
// index it is as of in the same atomic write as its state: the topology in
// metadata.json, the schema in the catalog's file (storage.Catalog), the
// roles in their store's file (auth.Store). So a restarted node applies
// again only the entries after the latest of them, and an entry that
// changed nothing (a refused schema change) is applied again against the
// same state, changing nothing again. A schema change that drops a
// keyspace or table first forgets the permissions granted on it
// (SchemaLog.OnDrop), without recording the index, so a restart between
// the two parts' writes does both again. An
// entry whose state cannot be written (an I/O error on the catalog or
// metadata.json) is not skipped: the State stops applying, takes no
// snapshot, and tells StateOptions.OnFailure, whose node stops
// (fail-stop); restarted, it applies the entry again from its log.
//
// # Members' states
//
// A member's status moves as Cassandra's gossip states do: a new node is
// JOINING (a pending replica of the ranges it will own, streaming them)
// and then NORMAL, or NORMAL at once (the first node, a seed, a node with
// auto_bootstrap off); a NORMAL member becomes LEAVING (decommission, or
// removenode of a dead one, while its ranges stream to their new
// replicas) and is then removed, or NORMAL again when its leave is given
// up. A member keeps its tokens. Only one node joins or leaves at a time:
// an entry that would start a second change is refused
// (ErrMovementInProgress) on every node alike, and a new node waits and
// proposes again. A node that applies its own removal records it and
// refuses to start again (ErrDecommissioned).
//
// # Node
//
// StartNode runs this node's membership: the internode transport, the
// metadata log (the first seed of a new cluster bootstraps it, every other
// node joins through the seeds), gossip, and this node's entry in the
// topology, with tokens allocated on the current ring to balance
// ownership (ring.AllocateTokens). SchemaLog is the schema.Submitter that
// carries DDL through the log; AuthLog is the auth.Submitter that carries
// role changes, and returns once every other live member has applied them
// (WaitApplied), so that a role change holds on every node when its
// statement returns. AuthLog.Setup proposes the default superuser of a new
// cluster, or hands the log a node's roles of before it (a role file
// without an index).
//
// Before StartNode returns, a node catches up (catchup.go): it asks the
// log's other servers over VerbTopology what they have applied and waits
// until it has applied as much, so that it never serves a schema or ring
// older than theirs. A new node does so before choosing its tokens; a
// member restarting does so within NodeOptions.CatchUpTimeout, past
// which it starts with a warning (a node cut off from the others must
// still start), and not at all when every other server refuses
// connections (none is running: a cluster started again one node after
// another).
//
// The log commits nothing without a majority of its voters up (a cluster
// of two with one down): a schema or ring change when gossip holds a
// majority down is refused after a short grace with an Unavailable that
// says so (quorum.go), rather than waiting out its timeout.
//
// A topology change runs on one node (changes.go): it sets a member's
// status through the log, waits until every live member has applied that
// entry (WaitApplied asks each over VerbTopology), so that every
// coordinator sends writes to the new replicas before data moves, lets
// its caller stream, and then records the outcome (NORMAL, or the
// member's removal from the ring and from the log's raft configuration).
package cluster
