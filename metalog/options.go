package metalog

import (
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/cqld/cqld/messaging"
	"github.com/cqld/cqld/ring"
	"github.com/prometheus/client_golang/prometheus"
)

// Options configure a Log. Dir, Transport, HostID and FSM are required.
type Options struct {
	// Dir holds the log's state: the log and stable store (a pebble
	// database in Dir/raft) and the snapshots (Dir/snapshots). It must be
	// this log's alone.
	Dir string
	// Transport carries the log's RPCs (VerbMetadata); the Log registers
	// its handler on it and removes it on Close, but does not close it.
	Transport messaging.Transport
	// HostID names this node in the log; Addr is its internode address
	// (Transport.Addr() if unset).
	HostID ring.HostID
	Addr   netip.AddrPort
	// FSM applies the entries.
	FSM FSM
	// Bootstrap starts a new cluster with this node as its only voter if
	// Dir holds no raft state yet. Exactly one node of a new cluster
	// bootstraps; the others Join.
	Bootstrap bool
	// Seeds are the members Join asks to add this node. A node that would
	// bootstrap first asks the other seeds whether they are members of a
	// cluster, and if one is, it does not bootstrap: it must Join.
	Seeds []netip.AddrPort
	// OnConflict is called, once, when this node turns out to run a
	// cluster of its own at an address that a running cluster gives
	// another server (the error wraps ErrAddressTaken and says what to
	// do). The node must stop: its cluster and the other are split. Nil
	// only logs.
	OnConflict func(error)
	// OnFailure is called, once, when the log's store could not write to
	// its disk (full, or failing): the store refuses every write from
	// then on, so this node acknowledges no entry and grants no vote, and
	// the node must stop until restarted. Nil only logs.
	OnFailure func(error)
	// FS does the store's file I/O; nil is the operating system's.
	FS vfs.FS
	// Logger receives the log's lines and raft's; nil discards.
	Logger *slog.Logger
	// Metrics registers the log's gauges (cqld_metalog_*); nil registers
	// them nowhere.
	Metrics prometheus.Registerer
	// MaxMessageSize is the Transport's (messaging.Options.MaxMessageSize,
	// its default if 0): a snapshot must fit in one message.
	MaxMessageSize int
	// Timing is raft's timing; zero fields take the defaults.
	Timing Timing
}

// Timing is raft's timing and the log's. The defaults suit a cluster on
// a network; tests and single nodes set them small.
type Timing struct {
	// HeartbeatTimeout and ElectionTimeout: a follower that hears from no
	// leader for this long starts an election (defaults 1s).
	HeartbeatTimeout time.Duration
	ElectionTimeout  time.Duration
	// LeaderLeaseTimeout: a leader that hears from no quorum for this long
	// steps down (default 500ms, at most HeartbeatTimeout).
	LeaderLeaseTimeout time.Duration
	// CommitTimeout: how long a follower may go without learning the
	// commit index while entries arrive (default 50ms).
	CommitTimeout time.Duration
	// SnapshotInterval and SnapshotThreshold: every interval, a snapshot
	// is taken if at least threshold entries came since the last
	// (defaults 120s and 8192); TrailingLogs entries stay in the log after
	// a snapshot, for followers a little behind (default 10240).
	SnapshotInterval  time.Duration
	SnapshotThreshold uint64
	TrailingLogs      uint64
	// RPCTimeout bounds one RPC to a peer (default 5s; a snapshot gets
	// this much per MiB more).
	RPCTimeout time.Duration
	// RetryInterval is the first wait of Join between rounds of its
	// seeds, and of a forwarded request while no leader is known; it
	// doubles up to MaxRetryInterval (defaults 100ms and 5s).
	RetryInterval    time.Duration
	MaxRetryInterval time.Duration
}

func (o Options) withDefaults() (Options, error) {
	switch {
	case o.Dir == "":
		return o, errors.New("metalog: Options.Dir is empty")
	case o.Transport == nil:
		return o, errors.New("metalog: Options.Transport is nil")
	case o.HostID == ring.HostID{}:
		return o, errors.New("metalog: Options.HostID is zero")
	case o.FSM == nil:
		return o, errors.New("metalog: Options.FSM is nil")
	}
	if !o.Addr.IsValid() {
		o.Addr = o.Transport.Addr()
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Metrics == nil {
		o.Metrics = prometheus.NewRegistry()
	}
	if o.MaxMessageSize <= 0 {
		o.MaxMessageSize = messaging.DefaultMaxMessageSize
	}
	if o.MaxMessageSize < 2*snapshotOverhead {
		return o, fmt.Errorf("metalog: MaxMessageSize %d is below %d", o.MaxMessageSize, 2*snapshotOverhead)
	}
	t := &o.Timing
	setDefault(&t.HeartbeatTimeout, time.Second)
	setDefault(&t.ElectionTimeout, time.Second)
	setDefault(&t.LeaderLeaseTimeout, min(500*time.Millisecond, t.HeartbeatTimeout))
	setDefault(&t.CommitTimeout, 50*time.Millisecond)
	setDefault(&t.SnapshotInterval, 120*time.Second)
	setDefault(&t.SnapshotThreshold, 8192)
	setDefault(&t.TrailingLogs, 10240)
	setDefault(&t.RPCTimeout, 5*time.Second)
	setDefault(&t.RetryInterval, 100*time.Millisecond)
	setDefault(&t.MaxRetryInterval, max(5*time.Second, t.RetryInterval))
	return o, nil
}

func setDefault[T time.Duration | uint64](v *T, def T) {
	if *v <= 0 {
		*v = def
	}
}
