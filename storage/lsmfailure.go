package storage

import "errors"

// Pebble cannot undo a change to its LSM whose MANIFEST record failed to
// be written: it calls its logger's Fatalf and expects the process to end.
// A full disk is kept from getting there (backoff.go retries the write);
// any other MANIFEST failure (an I/O error, a failed sync) is a failure of
// the data disk, and the node applies disk_failure_policy to it as
// Cassandra does to an FSError, instead of dying whatever the policy says.
//
// Returning from Fatalf leaves pebble's in-memory LSM at the last change
// that was recorded, which is consistent: reads go on from it and the
// memtables. From then on the engine refuses writes (flushState.fail), no
// table is created or removed (backoffFS.failed), and EngineOptions.
// OnDiskFailure hears of it once. A restart recovers as from a crash:
// pebble rebuilds its MANIFEST, and the commit log, which no flush after
// the failure released, replays what the memtables held.

// lsmFailed records a MANIFEST failure. Pebble calls it (through Fatalf)
// with its own mutex held, so it only records and signals.
func (e *Engine) lsmFailed(msg string) {
	if e.flushes.fail(errors.New("pebble: " + msg)) {
		e.fs.failed.Store(true)
		poke(e.failReq)
	}
}
