// Package batchlog keeps logged batches until their writes are done, so
// that a batch whose coordinator dies halfway is still applied everywhere
// (Cassandra's BatchlogManager).
//
// A coordinator with a logged batch spanning several partitions first
// stores it, whole, in the batchlog of up to two other live nodes of its
// data center (the proxy chooses them as ReplicaPlans.forBatchlogWrite
// does), then writes the batch's partitions to their replicas, and once
// each has the acknowledgements its consistency level needs, removes the
// batch from those batchlogs. A batch still in a node's batchlog long
// after it was written (ReplayAfter, Cassandra's twice the write timeout)
// had a coordinator that did not finish: the node replays it, every
// partition to all its replicas with hints for those that do not answer
// (Replayer, the proxy), and then removes it.
//
// Storage: each node's batchlog is the table system.batches (id blob
// PRIMARY KEY, mutations blob), written by the storage engine through the
// commit log, so a stored batch is as durable as a user's write; a
// removal is a partition deletion, and the manager purges the table's
// tombstones after each replay round (gc_grace_seconds 0, as Cassandra's
// system.batches).
//
// Wire and disk formats (frozen; a change is a new version byte):
//
//	batch     := version (1 byte, 1), count (uvarint), count times an
//	             Update (mutation.Append's encoding) as bytes (uvarint
//	             length, then the bytes): a replay skips the Updates of a
//	             table dropped since
//	store     := version (1 byte, 1), id (16 bytes), batch as bytes
//	remove    := version (1 byte, 1), id (16 bytes)
//
// An ID is the coordinator's time (unix microseconds, 8 bytes big-endian)
// followed by 8 random bytes: a node replays the batches whose time is
// ReplayAfter behind its clock. Every decoder of these bytes is bounded
// and fuzzed.
//
// Goroutines: the Manager's replay loop, started by Start and waited for
// by Close. Everything else runs on its caller's goroutine, or on a
// messaging handler's (Serve).
package batchlog
