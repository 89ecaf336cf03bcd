// Package replica is the seam between the coordinator and the data: a
// Replica applies mutations and answers reads for the partitions it holds.
//
// The coordinator reaches data only through this interface. Today every
// partition is on this node, so a Replica is Local, over the node's storage
// engine, and the calls it makes are exactly the engine's. With the
// cluster, a remote implementation will send the same requests to another
// node over messaging, and the coordinator will pick replicas from the
// ring and combine their answers at the request's consistency level.
//
// Writes are values (package mutation): the coordinator builds them without
// touching storage, so the same mutation can be sent to several replicas,
// kept as a hint, or replayed.
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
// still holds.
package replica
