package commitlog

import (
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/cqld/cqld/metrics"
)

// Sync modes (commitlog_sync). The package documentation says what each
// acknowledges.
const (
	SyncPeriodic = "periodic"
	SyncBatch    = "batch"
	SyncGroup    = "group"
	SyncAdaptive = "adaptive"
)

// Failure policies (commit_failure_policy).
const (
	PolicyStop       = "stop"
	PolicyStopCommit = "stop_commit"
	PolicyDie        = "die"
	PolicyIgnore     = "ignore"
)

// Defaults, the same as cqld's configuration defaults.
const (
	DefaultSegmentSize = 32 << 20
	DefaultTotalSpace  = 8192 << 20
	DefaultSync        = SyncAdaptive
	DefaultSyncPeriod  = 10 * time.Second
	DefaultGroupWindow = 15 * time.Millisecond

	// MinSegmentSize keeps a segment able to hold a header, a record of
	// MaxPayload and an end record.
	MinSegmentSize = 1 << 10
)

// Options configure a Log. The zero value of each field means its default.
type Options struct {
	// FS does all file I/O; nil means vfs.Default.
	FS vfs.FS
	// Dir is commitlog_directory. Open creates it if needed.
	Dir string

	// SegmentSize is commitlog_segment_size, at least MinSegmentSize and at
	// most 2 GiB. A payload may be at most half of it.
	SegmentSize int64
	// TotalSpace is commitlog_total_space: when the live segments exceed it,
	// OnFull is asked to flush the oldest ones.
	TotalSpace int64

	// Sync is commitlog_sync: SyncPeriodic, SyncBatch, SyncGroup or
	// SyncAdaptive.
	Sync string
	// SyncPeriod is commitlog_sync_period (periodic mode).
	SyncPeriod time.Duration
	// GroupWindow is commitlog_sync_group_window: the window of group mode,
	// and a cap on how long adaptive mode waits for the writers it expects
	// (it waits at most half an fsync).
	GroupWindow time.Duration

	// FailurePolicy is commit_failure_policy: PolicyStop (default),
	// PolicyStopCommit, PolicyDie or PolicyIgnore.
	FailurePolicy string
	// IgnoreReplayErrors makes Replay skip a corrupt record in the middle of
	// a segment, with a log line, instead of failing (Cassandra's
	// cassandra.commitlog.ignorereplayerrors).
	IgnoreReplayErrors bool

	// OnFull is called when the live segments exceed TotalSpace, with the
	// position the storage engine must flush up to; the engine flushes and
	// then calls MarkFlushed. It is called from a goroutine of the log, at
	// most one call at a time, and may call any method of the Log but
	// Close, which waits for it to return.
	OnFull func(upTo Position)
	// OnFailure is called once, from its own goroutine, when an I/O error
	// stops the log under PolicyStop, PolicyStopCommit or PolicyDie (before
	// Die). The node uses it to stop its transports under PolicyStop. Close
	// waits for it to return, so it must not wait for Close.
	OnFailure func(err error)
	// Die is called under PolicyDie after OnFailure; nil means os.Exit(1).
	Die func(err error)

	// Logger receives replay reports and I/O errors; nil means slog.Default().
	Logger *slog.Logger
	// Metrics, if not nil, receives the log's metrics (metrics.NewCommitLog).
	Metrics *metrics.CommitLog
}

func (o Options) withDefaults() (Options, error) {
	if o.FS == nil {
		o.FS = vfs.Default
	}
	if o.Dir == "" {
		return o, fmt.Errorf("commitlog: no directory")
	}
	if o.SegmentSize == 0 {
		o.SegmentSize = DefaultSegmentSize
	}
	if o.SegmentSize < MinSegmentSize || o.SegmentSize > maxSegmentSize {
		return o, fmt.Errorf("commitlog: segment size %d is outside [%d, %d]", o.SegmentSize, MinSegmentSize, maxSegmentSize)
	}
	if o.TotalSpace == 0 {
		o.TotalSpace = DefaultTotalSpace
	}
	if o.TotalSpace < o.SegmentSize {
		return o, fmt.Errorf("commitlog: total space %d is smaller than one segment (%d)", o.TotalSpace, o.SegmentSize)
	}
	switch o.Sync {
	case "":
		o.Sync = DefaultSync
	case SyncPeriodic, SyncBatch, SyncGroup, SyncAdaptive:
	default:
		return o, fmt.Errorf("commitlog: unknown sync mode %q (want periodic, batch, group or adaptive)", o.Sync)
	}
	if o.SyncPeriod == 0 {
		o.SyncPeriod = DefaultSyncPeriod
	}
	if o.GroupWindow == 0 {
		o.GroupWindow = DefaultGroupWindow
	}
	if o.SyncPeriod < 0 || o.GroupWindow < 0 {
		return o, fmt.Errorf("commitlog: negative sync period or group window")
	}
	switch o.FailurePolicy {
	case "":
		o.FailurePolicy = PolicyStop
	case PolicyStop, PolicyStopCommit, PolicyDie, PolicyIgnore:
	default:
		return o, fmt.Errorf("commitlog: unknown commit_failure_policy %q (want stop, stop_commit, die or ignore)", o.FailurePolicy)
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Die == nil {
		o.Die = func(error) { os.Exit(1) }
	}
	return o, nil
}
