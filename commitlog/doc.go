// Package commitlog is cqld's write-ahead log: every mutation is appended
// here, and acknowledged to the client only when it is durable under the
// configured sync mode (ARCHITECTURE.md, "Durability contract"). It knows
// bytes and positions, not CQL. The storage engine appends before applying a
// mutation to its memtable, replays the log at start-up, and tells the log
// with MarkFlushed which records its flushes made durable elsewhere.
//
// # Segments
//
// The log is a sequence of segment files in commitlog_directory, named
// CommitLog-<id>.log with ids that only ever grow (the newest segment is
// never removed, so ids keep growing across restarts). A Position is a
// segment id and the byte offset of a record in it. Appends go to one
// current segment; when the next record would not fit in
// commitlog_segment_size, the log rotates to the next segment, which a
// background goroutine has already prepared: created and preallocated, or
// reused from a freed segment, with its header written and the file and
// directory synced. The flusher writes zeros a chunk ahead of the records
// (a megabyte at a time), so that a sync is a flush of data alone: writing
// into unwritten (fallocated) extents, or past the end of the file, makes
// each fdatasync also commit extent and size changes to the file system's
// journal, which costs more than the data. The old segment goes to the
// flusher, which gives it a final sync and an end record. After a restart, appends always start a new
// segment; old segments are read only by Replay.
//
// The storage engine calls MarkFlushed as its memtables reach disk, so
// the live segments hold about what the memtables hold. When they exceed
// commitlog_total_space all the same, OnFull asks the engine to flush up
// to the oldest segment that keeps the rest under the cap. MarkFlushed
// frees every whole segment before the flushed position (End, the position after the last record, frees all but the
// current segment, and after a restart every segment Replay read): up to
// two freed files are renamed CommitLog-<id>.recycle and reused (no file
// creation or allocation on rotation), the rest are deleted.
//
// # On-disk format
//
// These constants are frozen. All integers are little-endian. A segment is
// a header followed by records; every record starts at a multiple of 8, so
// a record's length never straddles a sector.
//
//	segment header (24 bytes)
//	0                   8                   16            20            24
//	+-------------------+-------------------+-------------+-------------+
//	| magic "CQLDCLOG"  | segment id        | version = 1 | CRC32C of   |
//	|                   | uint64            | uint32      | bytes 0..20 |
//	+-------------------+-------------------+-------------+-------------+
//
//	record: 24-byte header, payload, zero padding to a multiple of 8
//	0        4        8        12     13         16           24
//	+--------+--------+--------+------+----------+------------+---------+-----+
//	| CRC32C | length | synced | kind | reserved | segment id | payload | pad |
//	| uint32 | uint32 | uint32 | byte | 3 zeros  | uint64     | length  | 0-7 |
//	+--------+--------+--------+------+----------+------------+---------+-----+
//
// The record fields:
//
//   - CRC32C (Castagnoli) covers the payload followed by header bytes 4..24,
//     so it checks the length, synced offset, kind and segment id too.
//     (Payload first lets an append checksum its payload before it holds
//     the log's lock.) Padding is not covered.
//   - kind 1 is a data record; kind 2 is an end record (length 0, synced =
//     its own offset): everything before it is durable and everything after
//     it is not part of the segment. Kind 0 never occurs, so zeroed bytes
//     never decode.
//   - segment id is the segment the record was written to. A reused file
//     keeps an older segment's records after the new ones; their id differs,
//     so they are never replayed.
//   - synced is how far this segment was durable when the record was
//     written (never past the record itself). It is how replay tells a torn
//     tail from damage, below. It is 32 bits wide, which caps segments at
//     2 GiB.
//
// # Sync modes and the flusher
//
// An append checksums its payload, then under the log's lock picks its
// position, copies its record into the current segment's buffer and, unless
// the mode acknowledges it at once, queues a waiter. It makes no system
// call. One flusher goroutine does all segment I/O: each cycle it swaps the
// buffer out, writes it with one WriteAt (the bytes reach the operating
// system before the fdatasync that acknowledges them), syncs up to its end,
// and completes every waiter that sync covers. Appends that arrive during
// a cycle keep buffering and queue for the next one; no append waits for a
// write or an fsync except for its own durability.
//
// Append blocks its goroutine until then. AppendAsync does not: its waiter
// holds a callback, which the flusher hands, with the sync's result, to a
// completion goroutine that calls the callbacks in order; so a caller that
// must not block (the network event loop) starts a write and gets its
// answer later, and no goroutine is parked per write in flight. The
// completion goroutine, not the flusher, runs them, so the next sync cycle
// starts while the last one's writers are being answered; except, in
// adaptive mode, for a lone writer: when a sync completes one waiter, the
// sync before saw no other writer, nobody else waits and no callback is
// being run, the flusher calls it itself (and the completion goroutine
// waits for it, so callbacks keep their order). That saves a hand-off and
// a wake-up, about a third of what a lone durable write costs beside its
// fsync (docs/commitlog.md); a write that queues meanwhile waits for the
// callback, a few microseconds, or, should it block (a pebble write
// stall), for as long as the callback does. The flusher also calls the
// callbacks itself as an adaptive gather that may wait (one with a
// deadline) begins, if the completion goroutine has not begun them: that
// goroutine, made runnable behind the flusher on the flusher's processor,
// would otherwise run only when the runtime finds it a processor, which
// under load takes longer than the callbacks do. It does so even when the
// writers the gather expects have all queued already, whose sync then
// starts after the callbacks; the time counts against the deadline.
//
// A lone writer can do without the flusher altogether. An event loop
// brackets each connection's burst of requests with Hold and Release:
// adaptive appends made in between do not wake the flusher, and Release
// does it once. When the log serves a lone writer (one waiter, the last
// sync saw no other, the write before came from the same connection), the
// fdatasync's moving average is within loneSyncMax (1 ms) and no cycle is
// running, Release runs the cycle itself, on the event loop, callback
// included, so the answer leaves with the loop's next write without a
// thread woken on the way: no flusher wake-up, no wake-up of the loop
// after the sync. The loop's other connections wait for that fdatasync,
// as Redis's do for its own; a second writer or a slow disk sends the
// write back to the flusher, and a write pebble might stall is applied on
// a goroutine of its own (storage's pressure), never on the loop. cycle,
// a mutex, keeps the cycles of the flusher and of a Release one at a
// time.
//
//	mode      acknowledged                              when a sync cycle starts
//	periodic  when buffered; written to the OS at once  every commitlog_sync_period
//	          by the flusher, synced every period
//	batch     after the fsync that covers it            as soon as anyone waits (back to back)
//	group     after the fsync that ends its window      at the end of the current window
//	adaptive  after an fsync                            as soon as anyone waits, once the writers
//	                                                    it expects have queued (at most half an fsync)
//
// In periodic mode the first append into an empty buffer wakes the flusher,
// which writes the buffer to the OS without syncing, so a killed process
// loses at most the records of one such write. If syncs fall more than half
// a period behind, appends wait for their sync, so the loss window on power
// failure stays near one period; and so they do while more than
// maxUnwritten bytes are buffered ahead of the flusher's writes (a disk
// that stalls them), so that the buffer does not grow with the stall.
//
// Adaptive mode exists because batch mode, which starts a sync whenever
// anyone waits, splits writers into cohorts when the disk is slower than a
// client's round trip: a writer acknowledged by sync k sends its next write
// after sync k+1 has started with the few writes queued meanwhile, so it
// waits for k+2, about two fsyncs. Adaptive mode learns how many writers
// are active: after each sync, the waiters it completed plus those that
// queued while it ran. Before starting the next sync it waits until that
// many have queued and every append already inside Append has queued, or
// until a deadline of half the moving average (EWMA, weight 1/8) of the
// fsync latency, capped by commitlog_sync_group_window. Half an fsync is
// what waiting may cost the writers already queued; a writer that misses
// the sync would wait at least a whole fsync more. A writer alone is
// expected alone, so its sync starts at once: adaptive adds no latency at
// one client. When the expected writers do not come in time (a busy CPU
// spreads them out, or they come back only a sync or more later), waiting
// only adds latency, so each gather that runs out its deadline halves the
// next one, and after three such gathers in a row the flusher stops
// waiting (even a short wait costs a timer and a wake-up, which under load
// is more than a gather saves), as batch mode does. Every 16th gather probes with the whole
// half fsync again; a probe that misses doubles the interval to the next,
// up to 64, and a gather that meets its writers resets it. Under load each
// sync then takes everyone who is coming, and the estimate follows writers
// that come and go within a sync or two.
//
// While a gather waits, an append wakes the flusher only when it brings
// the queue to the count expected, or was in flight when the gather began:
// a wake-up for each writer that queues would cost a futex call and a
// thread switch per write, on the appender's thread.
//
// # Replay
//
// Replay hands the engine every valid record of the old segments in order.
// A segment ends at its end record, at the end of the file, at zeros that
// run to the end of the file (space written ahead, never used), or at the
// first record that does not decode. At such a record, replay looks ahead in the
// same segment for valid records: if one claims (its synced field) that the
// segment had been synced past the bad record, the record was damaged after
// it was durable, and Replay stops with a *CorruptionError naming the file
// and offset, unless Options.IgnoreReplayErrors says to skip to the next
// valid record. Otherwise the bytes are a tail torn by a crash, zeroed, or
// left from the file's previous life: replay logs how many bytes it cuts and
// writes an end record there (and truncates, where the file allows), so the
// next replay reads the same records. Claims are only made for bytes an
// fdatasync covered, so a crash, whatever it leaves of unsynced data, never
// looks like damage; and a record is only acknowledged once its bytes are
// covered, so it is always before any torn tail.
//
// # Failures
//
// An I/O error on a write, sync or segment preparation fails every append
// waiting for durability: the log never acknowledges what it could not make
// durable. Then commit_failure_policy applies. stop and stop_commit make the
// log refuse every later append with ErrStopped and the cause, for good
// (Err reports it, OnFailure tells the node, which under stop also stops
// its client transports and keeps the process up for inspection, as
// Cassandra does); die does the same and then calls Die (os.Exit by
// default); ignore logs the error, fails the appends it hit, abandons the
// segment, and carries on in a new one, so writes resume by themselves
// once the disk works again.
//
// # Invariants
//
//   - Records in a segment are buffered in position order and the waiter
//     queue is in position order, both under Log.mu; only the flusher
//     writes a segment, its buffers in order, each before the sync that
//     covers it.
//   - A segment's synced offset only grows, and only after an fdatasync
//     covering it returned; it is the only source of claims on disk.
//   - Nothing is written to a segment after an I/O error hit it.
//   - The log runs four goroutines (flusher, preparer, OnFull notifier,
//     completion) and one for the failure hooks after a failure; Close
//     returns only once every one of them has.
//   - All file I/O goes through vfs.FS (Options.FS), so tests run the log on
//     vfs.NewCrashableMem and inject faults with vfs/errorfs.
package commitlog
