package hints

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/cqld/cqld/metrics"
	"github.com/cqld/cqld/ring"
)

// Defaults, Cassandra's.
const (
	DefaultMaxFileSize      = 128 << 20
	DefaultFlushPeriod      = 10 * time.Second
	DefaultMaxWindow        = 3 * time.Hour
	DefaultThrottle         = 1024 << 10 // bytes per second
	DefaultDispatchInterval = 10 * time.Second
	DefaultBufferSize       = 64 << 10
	DefaultMaxInFlight      = 16
	DefaultMaxInFlightBytes = 4 << 20
	DefaultMinRetry         = time.Second
	DefaultMaxRetry         = time.Minute

	// MinFileSize keeps a file able to hold its header, a record and an
	// end record.
	MinFileSize = 4 << 10
)

// Liveness is what the store needs to know of the failure detector (gossip).
type Liveness interface {
	// DownSince reports whether target is down now and, if so, since when
	// (a node the failure detector has not heard from since this node
	// started is down since the start). It must be safe for concurrent use
	// and must not block.
	DownSince(target ring.HostID) (since time.Time, down bool)
}

// LivenessFunc adapts a function to Liveness.
type LivenessFunc func(target ring.HostID) (since time.Time, down bool)

// DownSince calls f.
func (f LivenessFunc) DownSince(target ring.HostID) (time.Time, bool) { return f(target) }

var _ Liveness = LivenessFunc(nil)

// Deliver sends one hint, an encoded mutation written at created (the
// time Store.Write was given), to its target and returns once the target
// has applied it (nil) or it failed; the target leaves out what it
// truncated since created. It is called from
// goroutines of the dispatcher, up to Options.MaxInFlight at once for one
// target, so it must be safe for concurrent use, with a context that Close
// cancels; it must give itself a deadline (write_request_timeout) and must
// not keep m after returning.
type Deliver func(ctx context.Context, target ring.HostID, created time.Time, m []byte) error

// Options configure a Store. The zero value of each field means its default.
type Options struct {
	// FS does all file I/O; nil means vfs.Default.
	FS vfs.FS
	// Dir is hints_directory. Open creates it if needed.
	Dir string

	// MaxFileSize is max_hints_file_size: a target's current file is closed
	// and a new one started before a record would take it past this size.
	MaxFileSize int64
	// FlushPeriod is hints_flush_period: how often each target's buffer is
	// written out and fsynced.
	FlushPeriod time.Duration
	// BufferSize is the size of each target's write buffer: a Write that
	// fills it writes it to the operating system (without an fsync).
	BufferSize int
	// MaxWindow is max_hint_window: no hint is written for a target that has
	// been down longer.
	MaxWindow time.Duration

	// Throttle is hinted_handoff_throttle in bytes per second, shared by
	// every target; negative means no limit.
	Throttle int64
	// DispatchInterval is how often the dispatcher looks for live targets
	// with hints (Wake makes it look at once).
	DispatchInterval time.Duration
	// MaxInFlight and MaxInFlightBytes bound the deliveries to one target
	// under way at once (a hint larger than MaxInFlightBytes goes alone).
	// With MaxInFlight 1 hints are delivered strictly in the order written.
	MaxInFlight      int
	MaxInFlightBytes int
	// MinRetry and MaxRetry bound the backoff after a failed delivery: the
	// first retry waits MinRetry, each failure after it twice as long.
	MinRetry, MaxRetry time.Duration

	// Liveness tells which targets are down and since when. Required.
	Liveness Liveness
	// Deliver sends a hint to its target. Required.
	Deliver Deliver
	// MaxAge, if not nil, is how old a hint may be when it is delivered
	// (the smallest gc_grace_seconds of the tables its mutation writes,
	// looked up when it is dispatched, so a schema change counts): an older
	// one is dropped, counted, since its tombstones may already be purged
	// on the target. It is called from the dispatcher goroutine and must
	// not keep m.
	MaxAge func(m []byte) time.Duration

	// Now and After are the clock; nil means time.Now and time.After.
	Now   func() time.Time
	After func(d time.Duration) <-chan time.Time

	// Logger receives replay reports and I/O errors; nil means slog.Default().
	Logger *slog.Logger
	// Metrics, if not nil, receives the store's metrics (metrics.NewHints).
	Metrics *metrics.Hints
}

func (o Options) withDefaults() (Options, error) {
	if o.FS == nil {
		o.FS = vfs.Default
	}
	if o.Dir == "" {
		return o, fmt.Errorf("hints: no directory")
	}
	if o.Liveness == nil || o.Deliver == nil {
		return o, fmt.Errorf("hints: Options.Liveness and Options.Deliver are required")
	}
	if o.MaxFileSize == 0 {
		o.MaxFileSize = DefaultMaxFileSize
	}
	if o.MaxFileSize < MinFileSize || o.MaxFileSize > maxFileSize {
		return o, fmt.Errorf("hints: max_hints_file_size %d is outside [%d, %d]", o.MaxFileSize, MinFileSize, int64(maxFileSize))
	}
	defaultDuration(&o.FlushPeriod, DefaultFlushPeriod)
	defaultDuration(&o.MaxWindow, DefaultMaxWindow)
	defaultDuration(&o.DispatchInterval, DefaultDispatchInterval)
	defaultDuration(&o.MinRetry, DefaultMinRetry)
	defaultDuration(&o.MaxRetry, DefaultMaxRetry)
	if o.FlushPeriod < 0 || o.MaxWindow < 0 || o.DispatchInterval < 0 || o.MinRetry < 0 || o.MaxRetry < o.MinRetry {
		return o, fmt.Errorf("hints: negative period, window or retry bound")
	}
	if o.BufferSize == 0 {
		o.BufferSize = DefaultBufferSize
	}
	if o.BufferSize < 0 {
		return o, fmt.Errorf("hints: negative buffer size")
	}
	if o.MaxInFlight == 0 {
		o.MaxInFlight = DefaultMaxInFlight
	}
	if o.MaxInFlightBytes == 0 {
		o.MaxInFlightBytes = DefaultMaxInFlightBytes
	}
	if o.MaxInFlight < 0 || o.MaxInFlightBytes < 0 {
		return o, fmt.Errorf("hints: negative in-flight bound")
	}
	if o.Throttle == 0 {
		o.Throttle = DefaultThrottle
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.After == nil {
		o.After = time.After
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Metrics == nil {
		o.Metrics = metrics.NewHints(prometheus.NewRegistry())
	}
	return o, nil
}

func defaultDuration(d *time.Duration, def time.Duration) {
	if *d == 0 {
		*d = def
	}
}
