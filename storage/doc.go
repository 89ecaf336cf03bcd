// Package storage is a node's data on disk: the schema catalog, the node's
// identity, and the table data engine.
//
// # Tables
//
// Engine keeps every table's cells in one pebble LSM with pebble's own WAL
// off. A write is a Mutation (a pebble batch) that Engine.Apply first
// appends to the commit log (package commitlog) and, once the log's sync
// mode says it is durable, applies to pebble's memtable; ApplyAsync does
// the same for a caller that must not block (a network event loop) and
// reports the outcome through a callback; while pebble stalls writes, or
// is close to (pressure.go), it applies on a goroutine of its own, so a
// stall never holds an event loop. Tables are written in 32 KiB blocks,
// gathered into 256 KiB system calls (tablebuf.go). When pebble flushes a memtable,
// on its own or when asked, the commit log segments the flush covered are
// released (release.go: sequence numbers map the flush back to commit log
// positions), so the log holds about what the memtables hold. A flush the
// engine asks for (Engine.Flush) also stores the commit log position it
// covers (the log's end when it began). At start-up the commit log is
// replayed into pebble from that position, and the flush that follows
// releases every replayed segment, so restarts never pile segments up;
// replay is idempotent because every cell write is a pebble Merge
// reconciled last-write-wins. Truncate removes a table's key range and
// records when, in the same batch, under a key of the engine's own
// (truncation.go), so a replica can tell a hint written before the
// truncation (Engine.TruncatedAt).
//
// keys.go draws the key layout: (table id, token, partition key) then the
// partition deletion, range tombstones, static cells and rows, each row's
// deletion, marker and cells together, clustering values encoded so that
// bytewise order is Cassandra's clustering order (keyenc.go). cell.go is a
// cell's value (timestamp, TTL, deletion time, value) and Cassandra's
// reconciliation; merge.go is the pebble Merger that applies it, so writes
// never read first.
//
// Reads (read.go) gather a partition's deletions first, then stream its
// rows, dropping every cell shadowed by a newer partition, range, row or
// collection deletion, or expired by its TTL. The comparer splits off each
// key's partition prefix, so sstables carry bloom filters of partitions and
// a partition read (one prefix seek) skips the files without it.
//
// Purge (purge.go) drops tombstones older than a table's gc_grace_seconds,
// cells expired longer ago than that, and the data tombstones and dropped
// columns shadow, re-checking each partition under the apply lock so that
// no concurrent write is lost.
//
// Secondary indexes (index.go) keep their entries in a hidden table per
// index, written by the base write's own Mutation and never read first;
// ScanIndex follows them to the base rows, whose current values the caller
// checks, so stale entries cost a read but never a wrong answer.
//
// Counters are ordinary cells here: the replica (package replica) adds
// deltas to totals under its partition lock.
//
// Partition reads come resolved (ReadPartition, Scan: live rows only) or
// unresolved (ReadRaw, partition.go: every key with its cell, tombstones
// included), which ReconcilePartitions merges across replicas by cell
// timestamp and Table.Resolve turns into live rows through the same row
// assembly as ReadPartition. ScanRaw (rangeread.go) reads a token range
// unresolved, in ring order, resumable after a partition, directly or
// through an index's entries; PartitionDigest (digest.go) summarises an
// unresolved partition so replicas compare answers without sending them;
// Table.Entries (entries.go) decodes each key back into the write that
// made it, which checks a partition from another node before it is
// trusted and lets read repair write it again.
//
// PartitionBuilder (builder.go) makes a partition in memory in the same
// key layout, for rows that are made when read rather than stored (the
// system tables, package systables); Table.Resolve and
// Table.ScanPartitions read such partitions as ReadPartition and Scan read
// the store.
//
// # Schema and identity
//
// The catalog (catalog.go) and the node identity (node.go) are small
// documents rewritten whole on every change, atomically: written to a
// temporary file, fsynced, renamed over the old one, and the directory
// fsynced, so a crash leaves either the old or the new version, never a
// mix. Readers take an immutable *Schema and never lock.
//
// # Failures
//
// A write the commit log could not make durable, or one refused while the
// LSM cannot flush (flushstate.go), fails with ErrWriteFailed, which
// clients see as WRITE_FAILURE. Pebble retries a failed flush by itself;
// backoff.go spaces the retries out, and the first that succeeds lets
// writes in again. A write of pebble's MANIFEST that finds the disk full
// waits and retries the same way (pebble cannot survive its failure);
// any other MANIFEST failure fails the LSM until a restart, writes
// refused and reads going on, and EngineOptions.OnDiskFailure lets the
// node apply disk_failure_policy (lsmfailure.go).
//
// All file I/O goes through pebble's vfs.FS so tests can run on an
// in-memory, crashable or fault-injecting file system.
package storage
