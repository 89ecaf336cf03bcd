// Package hints is hinted handoff: a coordinator that could not get a
// write to a replica (down, or it did not answer in time) keeps the
// mutation as a hint, on disk, and delivers it when the replica is up
// again, so the replica catches up without a repair. The proxy writes
// hints (Store.Write); a dispatcher goroutine delivers them through the
// Deliver func the node gives it (messaging.VerbHint to the target, which
// applies the mutation to its replica.Local). The store knows bytes and
// host ids, not CQL: a hint is an encoded mutation (one or more mutation.Append Updates) and the
// time it was written.
//
// # Files
//
// Hints live in hints_directory, one series of files per target host,
// named as Cassandra names them: <host id>-<creation unix ms>-1.hints. A
// target has at most one file being written; it is closed, and the next
// one started, before a record would take it past max_hints_file_size,
// when the dispatcher finds the target alive (so that what was written
// becomes deliverable, as Cassandra's HintsDispatchTrigger does), and on
// Close. Closed files are delivered oldest first and removed once every
// hint in them is acknowledged (or dropped). After a restart every file is
// a closed one: appends always start a new file.
//
// # Durability
//
// Write copies the hint into its target's buffer (BufferSize, 64 KiB by
// default) and returns; a Write that fills the buffer writes it to the
// operating system, without an fsync. Every hints_flush_period the flusher
// writes each buffer out and fdatasyncs each file (the directory too, for a
// new file); Flush does the same on demand and Close closes every file
// durably. So a hint is durable at most hints_flush_period after its Write
// returned, or once a Flush or Close that started after it returns; a crash
// loses at most the hints of the last period, as in Cassandra. The write the
// hint belongs to was answered at its consistency level by the replicas
// that took it (a hint never counts towards one, except for ANY, which
// promises no more), so a lost hint leaves the replica to read repair and
// repair. Memory is one buffer per target, and for dispatch the hints in
// flight (MaxInFlightBytes, or one larger hint), whatever the backlog:
// hints for a peer that is down are on disk, not in memory.
//
// Delivery is at least once: a hint is never delivered again after Deliver
// returned nil for it, within one run of the store. After a restart the
// hints of a partly delivered file are delivered again from its start; a
// write error that left part of a buffer in the file it abandoned makes
// that part be written again to the next file. Hints are mutations with their own
// timestamps, so delivering one twice changes nothing.
//
// # On-disk format
//
// These constants are frozen. All integers are little-endian. A file is a
// header followed by records; every record starts at a multiple of 8.
//
//	file header (48 bytes)
//	0            8            12         16          32              40            44         48
//	+------------+------------+----------+-----------+---------------+-------------+----------+
//	| magic      | version= 1 | reserved | target    | created       | CRC32C of   | reserved |
//	| "CQLDHINT" | uint32     | 0        | host id   | unix ms int64 | bytes 0..40 | 0        |
//	+------------+------------+----------+-----------+---------------+-------------+----------+
//
//	record: 32-byte header, payload, zero padding to a multiple of 8
//	0            4        8        12     13         16             24           28         32
//	+------------+--------+--------+------+----------+--------------+------------+----------+---------+-----+
//	| CRC32C of  | length | synced | kind | reserved | created      | CRC32C of  | reserved | payload | pad |
//	| bytes 4..32| uint32 | uint32 | byte | 3 zeros  | unix µs int64| payload    | 0        | length  | 0-7 |
//	+------------+--------+--------+------+----------+--------------+------------+----------+---------+-----+
//
// The header has a checksum of its own, so a length is trusted, and
// checked against what is left of the file and MaxHintSize, before a
// payload is read. Kind 1 is a hint; kind 2 is an end record (no payload,
// created 0, synced = its own offset), which Close and rotation append
// after an fsync: everything before it is durable, nothing after it is read.
// Zero is never a kind, so zeroed bytes never decode. synced is how far the
// file was fsynced when the record was written (never past the record).
//
// # Torn tails and corruption
//
// Dispatch reads a file record by record. At a record (or a file header)
// that does not decode it looks ahead in the file for a valid record whose
// synced claim is past the bad one: if there is one, the bad bytes had been
// fsynced and are damage, so the file is quarantined (renamed *.corrupt,
// never read again) with an error log line naming the file and the offset,
// and counted; the hints after the damage are lost to the target, which
// needs a repair. Otherwise the bytes are a tail a crash tore (never
// synced, so no hint in it was promised durable): they are logged, counted
// and cut, and the file is done. Claims are only made for bytes an fsync
// covered, so a crash never looks like damage.
//
// An I/O error writing or syncing a file abandons it: nothing more is
// written to it, its records so far stay for dispatch (a partial record at
// its end reads as a torn tail), and the hints still buffered go to a new
// file at the next flush or Write. A Write whose own hint could not be
// written (a full disk) fails with the error, the hint not written and
// counted; memory stays bounded because the buffer is never grown past one
// record beyond BufferSize.
//
// # Window, age and dispatch
//
// Write refuses, with ErrWindowExpired and a count, a hint for a target
// that Liveness says has been down longer than max_hint_window (3 h), as
// Cassandra does: past it the replica is expected to be repaired, and
// hints would pile up without end. The dispatcher wakes every
// DispatchInterval, or on Wake (the node calls it when gossip marks a node
// up); for each target that is up, in host id order, a file at a time, it
// sends hints in the order written, up to MaxInFlight (16) of them and
// MaxInFlightBytes under way at once, so that a replay does not take a
// round trip per hint, paced so the bytes sent per second stay under
// hinted_handoff_throttle (one limit for the dispatcher, shared by every
// target). Mutations carry their timestamps, so the order they are applied
// in does not matter; with MaxInFlight 1 it is the order written. A hint older than MaxAge (the
// gc grace of its tables) is dropped, counted, not delivered: its
// tombstones may already be purged on the target, so it could resurrect
// data. A delivery that fails stops that target until a backoff (MinRetry,
// doubling to MaxRetry) has passed; the next attempt resumes at the first
// hint that failed and skips the ones after it that were acknowledged (at
// most a window of them, remembered in memory).
//
// # Transfer
//
// A node that decommissions hands its hints over before it leaves, as
// Cassandra's HintsService.transferHints: Transfer closes each target's
// file being written and sends every hint, whether its target is up or
// not, through a Deliver the caller gives (the node's sends each to one
// live node, which applies it if it is the target and otherwise keeps it
// in its own store as a hint for the target, with its write time). It
// reads, ages, paces and resumes as dispatch does, holding the dispatcher
// off meanwhile; what it delivered is removed.
//
// hinted_handoff_enabled is the caller's: a node with it off does not call
// Write (and need not open a Store); hints already on disk are still
// delivered by a store that is open.
//
// # Invariants
//
//   - A target's records reach its file in Write order: buffered under
//     target.mu, written out under target.mu, by one file handle.
//   - A file's synced offset only grows, after an fdatasync covering it.
//   - Nothing is written to a file after an I/O error hit it.
//   - Only the dispatcher reads or removes closed files (under dispatchMu).
//   - The store runs two goroutines, the flusher and the dispatcher, and the
//     dispatcher one per delivery in flight, which it waits for before it
//     moves a target's offset; Close stops and waits for all of them before
//     closing the files.
//   - All file I/O goes through vfs.FS (Options.FS), so tests run the store
//     on vfs.NewMem and inject faults with vfs/errorfs.
package hints
