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
// in the chain. Lightweight transactions (Conditional) are refused by a
// Remote with ErrUnsupported: they stay on one replica until Paxos. Index
// queries go as range reads with an index query (RangeCommand.Index): the
// peer answers the partitions its entries name, whole, and the caller
// filters the resolved rows as it does a Local's.
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
//
// The writes that read first run on the replica, where the data is, under
// the replica's lock of the partition (locks.go): a counter update carries
// deltas, which the replica adds to its current totals and writes as
// ordinary cells with a newer timestamp (as a Cassandra counter leader
// does; replaying the commit log replays totals, so it stays idempotent),
// and a lightweight transaction's read, condition and write run inside
// Conditional. Blind writes take no lock.
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
