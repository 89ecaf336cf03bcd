// Package replica is the seam between the coordinator and the data: a
// Replica applies mutations and answers reads for the partitions it holds.
//
// The coordinator reaches data only through this interface. Local is
// this node's own data, over its storage engine; Remote is another node's,
// reached over messaging: each call is one request to the peer's Server
// (Serve, server.go), which answers from its Local. A Remote resolves
// reads on the coordinator from the unresolved partitions the peer sends,
// so what a Remote answers is what the peer's Local would, bit for bit,
// with the same errors: a table the peer does not know is an
// *UnknownTableError (ErrUnknownTable), a write the peer could not make
// durable is storage.ErrWriteFailed, a deadline is context's, and
// messaging's own errors (ErrTimeout, ErrUnreachable, ErrQueueFull) stay
// in the chain. Index queries go as range reads with an index query (RangeCommand.Index): the
// peer answers the partitions its entries name, whole, and the caller
// filters the resolved rows as it does a Local's.
//
// A coordinator sending one write to several replicas encodes it once
// (AppendEncodedMutation) and sends the bytes with ApplyEncodedAsync; its
// reads go with ReadAsync and DigestAsync: their answers come to a
// callback on the transport's goroutine (messaging.AsyncRequester). On
// the peer, a write is served on the connection's reader through
// Local.ApplyAsync and answered from the commit log's goroutine once
// durable (messaging.AsyncServer), counters aside.
//
// The internode encodings (codec.go) are versioned and bounded; a
// partition from a peer is checked against its table
// (storage.Table.CheckPartition) before anything reconciles or resolves
// it, since those trust its keys.
//
// Writes are values (package mutation): the coordinator builds them without
// touching storage, so the same mutation can be sent to several replicas,
// kept as a hint, or replayed. A hint goes with the time it was written
// (VerbHint, ApplyHint), and the replica leaves out the updates of the
// tables it truncated since (storage.Engine.TruncatedAt), as Cassandra's
// hints do: a write made before a TRUNCATE does not come back after it.
// A decommissioning node hands its hints over to another node
// (VerbHintTransfer, TransferHint, ServeHintTransfer), which applies those
// for itself the same way and keeps the others in its own hints, write
// time and all, as Cassandra's HintVerbHandler.
//
// The writes that read first run on the replica, where the data is, under
// the replica's lock of the partition (locks.go): a counter update carries
// deltas, which the replica adds to its current totals and writes as
// ordinary cells with a newer timestamp (as a Cassandra counter leader
// does; replaying the commit log replays totals, so it stays idempotent).
// Blind writes take no lock.
//
// # Paxos
//
// A replica is the acceptor of its partitions' lightweight transactions
// (Paxos, paxos.go): Prepare promises a ballot and reads the data in the
// same step, Propose accepts a proposal (committing first the most recent
// commit a lagging replica is sent along), Commit applies one. The
// transitions are a pure state machine (paxos_state.go); the state lives
// in system.paxos (paxos_table.go), a real table with Cassandra 4.0's
// layout whose cells carry their ballot's timestamp and expire after
// max(3h, gc_grace_seconds), and each change is durable (synced, in every
// commit log mode) before the replica answers, in the same engine
// mutation as the data a commit writes. The rows of recently used
// partitions are kept in memory (paxos_cache.go), each following the
// writes its row gets cell by cell as the store resolves them, so that a
// round reads its state from memory and serves exactly what the store
// holds. Ballots (ballot.go) are
// Cassandra's: version 1 time UUIDs, promised only when later in
// microseconds than everything held. A proposal may carry the proposer's
// next ballot, which the replica promises in advance with its data
// (fast.go): a proposal at that ballot is then accepted only while no
// other proposer came and the replica's data is the data the proposer
// decided on, whose digest the proposal carries. Alone runs a whole
// transaction under the partition lock for a coordinator in this process
// when this replica is the partition's only one.
//
// Reads come in two forms: resolved (ReadPartition, Scan: live rows,
// deletions and expiry applied), which is all one replica needs, and
// unresolved (Read: cells and tombstones with their timestamps), which the
// coordinator reconciles across replicas with storage.ReconcilePartitions
// before resolving, so a deletion one replica has shadows the data another
// still holds. Digest summarises an unresolved answer in a fixed size, so
// a coordinator reads data from one replica and digests from the others;
// ReadRange pages a token range unresolved, for range scans reconciled
// across replicas. Read repair writes back with mutation.Repair.
//
// Streaming (stream.go) moves a token range of a table between replicas
// when the ring changes: a Stream reads pages of unresolved partitions
// from a StreamSource and writes them, as they are, through a
// StreamSink's commit log, one page ahead, resuming after the last
// partition applied when run again from another source. Local and Remote
// are both; over messaging it is VerbStream.
package replica
