package messaging

import (
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Defaults of the Options fields left zero.
const (
	DefaultMaxMessageSize        = 16 << 20
	DefaultMaxQueueBytes         = 64 << 20
	DefaultLargeMessageThreshold = 64 << 10
	DefaultRequestTimeout        = 10 * time.Second
	DefaultDialTimeout           = 2 * time.Second
	DefaultHandshakeTimeout      = 5 * time.Second
	DefaultMaxConcurrentHandlers = 256

	// minMaxMessageSize leaves room for a message header and a payload.
	minMaxMessageSize = 1 << 10
)

// Options configure a transport. The zero value of each field means its
// default; ClusterName and Addr are required.
type Options struct {
	// ClusterName is cluster_name: a peer that names another is refused.
	ClusterName string
	// HostID is this node's host id, sent in the handshake.
	HostID [16]byte
	// Addr is this node's internode address. A TCPTransport listens on it
	// (port 0: a port the kernel picks) and, unless BroadcastAddr is set,
	// gives it to its peers.
	Addr netip.AddrPort
	// BroadcastAddr is broadcast_address:storage_port when it differs from
	// Addr (TCP only).
	BroadcastAddr netip.AddrPort

	// MaxMessageSize bounds one message, header included, sent or
	// received. Peers must agree on it: a larger message closes the
	// connection that carries it.
	MaxMessageSize int
	// MaxQueueBytes bounds the bytes of the messages queued toward one
	// peer and not yet written (and, per inbound connection, of the
	// responses not yet written). It is at least MaxMessageSize.
	MaxQueueBytes int
	// LargeMessageThreshold is the size above which a message goes on the
	// peer's large-message connection, so it does not hold up small ones
	// (TCP only).
	LargeMessageThreshold int
	// LZ4 compresses the segments this node sends (TCP only; the dialer
	// chooses for its connection).
	LZ4 bool

	// RequestTimeout is the deadline of a message whose context has none.
	RequestTimeout time.Duration
	// DialTimeout bounds a connection attempt and HandshakeTimeout its
	// handshake (TCP only).
	DialTimeout      time.Duration
	HandshakeTimeout time.Duration
	// MaxConcurrentHandlers bounds the handlers running at once.
	MaxConcurrentHandlers int

	// InjectedDelay is internode_injected_delay: a one-way delay added to
	// every message this node sends, requests and responses alike, so that
	// nodes on one machine see a real round-trip time. Each message waits
	// its own delay; messages are not serialised behind each other.
	InjectedDelay time.Duration

	// TLS, when set, encrypts connections (server_encryption_options; TCP
	// only).
	TLS *TLS

	// Clock gives time to everything but the caller's context: delays,
	// deadlines of messages received, expiry checks. Nil means the system
	// clock.
	Clock Clock
	// Metrics receives the transport's counters; nil means a private set
	// registered nowhere.
	Metrics *Metrics
	// Logger receives refused and broken connections; nil discards.
	Logger *slog.Logger
}

func (o Options) withDefaults() (Options, error) {
	if o.ClusterName == "" {
		return o, errors.New("messaging: Options.ClusterName is empty")
	}
	if !o.Addr.IsValid() {
		return o, errors.New("messaging: Options.Addr is not set")
	}
	setDefault(&o.MaxMessageSize, DefaultMaxMessageSize)
	setDefault(&o.MaxQueueBytes, max(DefaultMaxQueueBytes, o.MaxMessageSize))
	setDefault(&o.LargeMessageThreshold, DefaultLargeMessageThreshold)
	setDefault(&o.RequestTimeout, DefaultRequestTimeout)
	setDefault(&o.DialTimeout, DefaultDialTimeout)
	setDefault(&o.HandshakeTimeout, DefaultHandshakeTimeout)
	setDefault(&o.MaxConcurrentHandlers, DefaultMaxConcurrentHandlers)
	if o.MaxMessageSize < minMaxMessageSize {
		return o, fmt.Errorf("messaging: MaxMessageSize %d is below %d", o.MaxMessageSize, minMaxMessageSize)
	}
	if o.MaxQueueBytes < o.MaxMessageSize {
		return o, fmt.Errorf("messaging: MaxQueueBytes %d is below MaxMessageSize %d", o.MaxQueueBytes, o.MaxMessageSize)
	}
	if o.InjectedDelay < 0 {
		return o, fmt.Errorf("messaging: InjectedDelay %v is negative", o.InjectedDelay)
	}
	if o.Clock == nil {
		o.Clock = systemClock{}
	}
	if o.Metrics == nil {
		o.Metrics = NewMetrics(prometheus.NewRegistry())
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o, nil
}

func setDefault[T int | time.Duration](v *T, def T) {
	if *v <= 0 {
		*v = def
	}
}

// TLS is how a TCPTransport encrypts its connections. The TLS handshake
// comes first, before the hello; a connection that fails it is closed and
// logged with the peer's address and the reason, so a node without a
// certificate the others trust cannot join.
type TLS struct {
	// Server is the accepting side's configuration (tls.Config's
	// ClientAuth decides whether peers must present a certificate).
	Server *tls.Config
	// Optional accepts plaintext peers too (internode_encryption dc or
	// rack, or optional): the first byte tells them apart. Otherwise a
	// plaintext peer is refused with a hello saying TLS is required.
	Optional bool
	// Client returns the dialing side's configuration for a peer, or nil
	// to dial that peer in plaintext.
	Client func(peer netip.AddrPort) *tls.Config
}

// Clock is the time source of a transport, so tests of delays and expiry
// advance time instead of sleeping.
type Clock interface {
	Now() time.Time
	// NewTimer returns a timer that fires once, d from now.
	NewTimer(d time.Duration) Timer
}

// Timer is a Clock's one-shot timer.
type Timer interface {
	C() <-chan time.Time
	// Stop prevents the timer from firing; it reports whether it did.
	Stop() bool
}

type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

func (systemClock) NewTimer(d time.Duration) Timer { return systemTimer{time.NewTimer(d)} }

type systemTimer struct{ t *time.Timer }

func (t systemTimer) C() <-chan time.Time { return t.t.C }
func (t systemTimer) Stop() bool          { return t.t.Stop() }
