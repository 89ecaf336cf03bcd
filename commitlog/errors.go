package commitlog

import (
	"errors"
	"fmt"
)

var (
	// ErrClosed is returned by every method called after Close.
	ErrClosed = errors.New("commitlog: closed")
	// ErrStopped wraps the I/O error that made the log stop accepting writes
	// under commit_failure_policy stop, stop_commit or die. Every Append
	// after it fails with it.
	ErrStopped = errors.New("commitlog: stopped accepting writes after an I/O error")
	// ErrTooLarge is returned by Append for a payload larger than MaxPayload.
	ErrTooLarge = errors.New("commitlog: record too large")
	// ErrCorrupt is wrapped by every *CorruptionError.
	ErrCorrupt = errors.New("commitlog: corrupt record")
	// ErrReplayAfterAppend is returned by Replay once Append has been called.
	ErrReplayAfterAppend = errors.New("commitlog: Replay called after Append")
	// ErrBadPosition is returned by MarkFlushed for a position past the end of
	// the log.
	ErrBadPosition = errors.New("commitlog: position past the end of the log")
)

// CorruptionError reports a record that does not decode although later bytes
// of the same segment prove it had been synced: it is damage, not a write
// torn by a crash. Replay stops with it unless Options.IgnoreReplayErrors is
// set.
type CorruptionError struct {
	File   string
	Offset int64
	Reason string
}

func (e *CorruptionError) Error() string {
	return fmt.Sprintf("commitlog: corrupt record in %s at offset %d: %s; later records prove it was synced, "+
		"so start-up stops here (commitlog_ignore_replay_errors: true skips it)",
		e.File, e.Offset, e.Reason)
}

func (e *CorruptionError) Unwrap() error { return ErrCorrupt }
