// Package proxy is the coordinator's side of replication, Cassandra's
// StorageProxy: for a keyspace's placement on the ring, it sends writes to
// every replica of their partitions and answers once the request's
// consistency level is met, reads from as many replicas as the level
// needs and reconciles their answers, and scans the ring range by range.
//
// # Seams
//
// A Proxy is wired from small interfaces (Options): Topology (which
// replicas hold a token of a keyspace, natural and pending, each host's
// data center; RingTopology implements it over the ring the cluster
// publishes), Liveness (gossip's Alive), Replicas (a host's
// replica.Replica: replica.Local for this node, called directly, a remote
// one for the others), Hints (hinted handoff's Store) and Batchlog (the
// batchlog.Client logged batches are kept with).
//
// # Writes
//
// Apply groups a mutation's Updates by replica, one Mutation per host, and
// sends each to all natural and pending replicas of its partition. Each
// Update needs its level's acknowledgements (levels.go, as
// ConsistencyLevel.blockForWrite: pending replicas add to the count, the
// LOCAL_ levels count the local data center alone, EACH_QUORUM a quorum
// in each). Too few replicas up is UNAVAILABLE before anything is sent; a
// replica that is down gets a hint (written off the request's path), one
// that fails with a timeout or an unreachable peer gets one when it does,
// and under ANY a stored hint counts. A write is encoded once
// (mutation.Append): the remote replicas are sent those bytes, the same
// ones for replicas of the same Updates, and answer on their transport's
// goroutine (messaging.AsyncRequester); this node's replica takes the
// request's Updates through ApplyAsync and answers on the commit log's
// goroutine; no goroutine waits for a replica. Writes still running once
// the level is met go on, under the request's deadline without its
// cancellation, and Close waits for them.
//
// A logged batch over several partitions (write type BATCH) is atomic
// through the batchlog (batch.go, StorageProxy.mutateAtomically): stored
// whole in the batchlog of up to two other live nodes of this data center
// (ReplicaPlans.forBatchlogWrite; the entry is made from the write's one
// encoding), then written, then removed from them
// once every partition has its level; a batchlog that does not answer is
// WRITE_TIMEOUT of type BATCH_LOG. The nodes holding a batch that was not
// removed replay it (batchlog.Manager, through Replay: every replica,
// hints for the missing). A batch whose partitions all have this node as
// their only replica is atomic without it.
//
// Counters go through a leader replica that adds the deltas to its totals
// (counter.go); the totals then replicate as plain cells.
//
// # Reads
//
// A read asks blockFor replicas: this node first, then its data center's,
// then the others. One replica's answer is its own read. With several, as
// Cassandra's read executors do, the first is asked for the partition
// unresolved and the others for its digest (replica.Digest); when every
// digest matches the data's, the data is the answer. On a mismatch the
// replicas that answered are read again in full, their answers reconciled
// (storage.ReconcilePartitions, so a tombstone on one replica shadows data
// on another), and every stale replica is sent the Update that makes it
// current; the read waits for those writes (blocking read repair) before
// it resolves the rows. A replica that has not answered by the table's
// speculative retry threshold, or is unreachable, has one more replica
// asked in its place: for data when none has come yet, else for a digest.
// The threshold is the table's speculative_retry (package speculate): a
// fixed time, or a percentile of the table's recent coordinator read
// latencies (a decaying histogram per table, recomputed once per read
// timeout; half the read timeout until there are latencies), or the MIN
// or MAX of both; NEVER never speculates, nor does a threshold past the
// read timeout, and ALWAYS asks one more replica for data from the
// start. EACH_QUORUM reads ask the nearest quorum of every data center,
// as Cassandra 4.0's do, and do not speculate.
//
// Range scans walk the ring's ranges in token order; neighbouring ranges
// read from the same single replica are one scan, so that a one-node
// cluster makes exactly one replica.Local call. With several replicas per
// range, as Cassandra's range reads do, each replica is asked for its
// partitions unresolved a page at a time (replica.ReadRange), the pages
// are merged in ring order, each partition reconciled from every
// replica's version (none for a replica without it) and the replicas
// whose version differs repaired before its rows are passed on. Through a
// secondary index, a replica that does not list a partition another lists
// is read for it, since its newer version may no longer match the index
// (ReplicaFilteringProtection in Cassandra).
//
// # Lightweight transactions
//
// A conditional write (Conditional, a CAS) and a SERIAL read are Paxos
// among the partition's replicas, the prepare and the read in one round
// trip (paxos.go; docs/paxos.md has the argument): a prepare-and-read to
// every participant (natural and pending replicas, the local data
// center's for LOCAL_SERIAL) gathers a quorum of promises with the data;
// a proposal found in progress is finished first; Decide chooses the
// update on the quorum's reconciled data; a quorum accepts it; the
// commit goes to every replica and is waited for at the statement's
// level. A SERIAL read is the first round alone. Ballots come from a
// hybrid logical clock per node (ballots.go); the LWTs this node
// coordinates on one partition take turns (casqueue.go) rather than
// duel. A coordinator's next transaction on a partition it just ran one
// on proposes at once, on a promise the replicas gave in advance with the
// previous proposal (paxos_repeat.go, the repeat proposer). A partition
// whose only replica is this node runs on that replica's Alone, the same
// state machine under its lock, in one write.
//
// # Metrics
//
// Metrics (optional) are request latencies by operation and level, the
// UNAVAILABLE, timeout and failure answers, read repairs, digest
// mismatches, speculative retries and hints by reason; CASMetrics the
// lightweight transactions' contention, timeouts, unfinished proposals,
// catch-ups and round trips.
//
// # One node
//
// On a ring of one node with replication factor 1 every call is exactly
// the one replica.Local call the coordinator made before the cluster, and
// AllLocal tells the coordinator's inline path it may keep running on the
// event loop, where its request then goes to this node's replica through
// ApplyLocal or ReadLocal without that question asked again. What it costs to find that out is paid once per keyspace
// and ring, not per partition: the topology knows each keyspace's sole
// replica (SoleReplicaTopology) and the levels this node meets by itself
// when it is that replica (LocalAlone, worked out once per keyspace
// definition and ring published), so a write, a read or AllLocal on a
// node alone asks whether its level is among them and places no token.
package proxy
