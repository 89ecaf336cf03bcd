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
// one for the others) and Hints (hinted handoff's Store).
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
// and under ANY a stored hint counts. Writes still running once the level is met go on, on a
// copy of the mutation and under the request's deadline without its
// cancellation, on goroutines Close waits for.
//
// Counters go through a leader replica that adds the deltas to its totals
// (counter.go); the totals then replicate as plain cells.
//
// # Reads
//
// A read asks blockFor replicas: this node first, then its data center's,
// then the others. One replica's answer is its own read. Several answer
// unresolved partitions; when they differ the proxy reconciles them
// (storage.ReconcilePartitions, so a tombstone on one replica shadows
// data on another), sends every stale replica the Update that makes it
// current and waits for those writes (blocking read repair) before it
// resolves the rows. A replica slower than the table's speculative retry
// delay, or unreachable, has one more replica asked in its place. Every
// answer is a full read: digest reads are to
// come with the replica interface's digest. EACH_QUORUM reads ask the
// nearest quorum of every data center, as Cassandra 4.0's do.
//
// Range scans walk the ring's ranges in token order; neighbouring ranges
// read from the same single replica are one scan, so that a one-node
// cluster makes exactly one replica.Local call. With several replicas per
// range, each lists its partitions a page at a time and each partition is
// read and reconciled as a single-partition read is.
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
// UNAVAILABLE, timeout and failure answers, read repairs, speculative
// retries and hints by reason; CASMetrics the lightweight transactions'
// contention, timeouts, unfinished proposals, catch-ups and round trips.
//
// # One node
//
// On a ring of one node with replication factor 1 every call is exactly
// the one replica.Local call the coordinator made before the cluster, and
// AllLocal tells the coordinator's inline path it may keep running on the
// event loop.
package proxy
