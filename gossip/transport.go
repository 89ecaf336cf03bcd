package gossip

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"time"

	"github.com/hashicorp/memberlist"

	"github.com/cqld/cqld/messaging"
)

// Bounds of what a transport buffers.
const (
	// maxPacketSize bounds one packet. memberlist keeps its packets
	// under UDPBufferSize (1400 bytes); user messages may be larger.
	maxPacketSize = 64 << 10
	// maxStreamSize bounds each side of a stream exchange; memberlist's
	// push/pull of a thousand nodes is under 1 MiB.
	maxStreamSize = 8 << 20
	// packetQueue bounds the packets received but not yet taken by
	// memberlist; more are dropped, as a full UDP socket buffer drops.
	packetQueue = 512
	// maxStreams bounds the streams accepted at once; more are refused.
	maxStreams = 32
)

// transport is memberlist's Transport over a messaging.Transport, under
// messaging.VerbGossip. A packet is a one-way Send. A stream is one
// exchange: memberlist's dialer writes its message, then either reads
// the answer (push/pull, TCP ping) or closes (a reliable user message),
// and its acceptor reads the message, writes its answer and closes. So the
// dialer's conn sends what was written as one Request at its first Read
// (or as a one-way Send at Close) and serves the response; the acceptor's
// conn serves the request and answers with what was written when it is
// closed. A conn refuses a write after its exchange, so a memberlist
// pattern outside this one fails loudly instead of hanging.
type transport struct {
	mt      messaging.Transport
	self    netip.AddrPort
	packets chan *memberlist.Packet
	streams chan net.Conn
	slots   chan struct{} // one per accepted stream open
	ttl     time.Duration // the deadline of a packet sent
	metrics *Metrics
	log     *slog.Logger

	ctx    context.Context // cancelled by Shutdown
	cancel context.CancelFunc
	mu     sync.Mutex // guards closed and handlers.Add
	closed bool
	// handlers counts the messaging handlers running in this transport,
	// which Shutdown waits for.
	handlers sync.WaitGroup
}

var _ memberlist.NodeAwareTransport = (*transport)(nil)

func newTransport(mt messaging.Transport, ttl time.Duration, metrics *Metrics, log *slog.Logger) *transport {
	ctx, cancel := context.WithCancel(context.Background())
	t := &transport{
		mt:      mt,
		self:    mt.Addr(),
		packets: make(chan *memberlist.Packet, packetQueue),
		streams: make(chan net.Conn),
		slots:   make(chan struct{}, maxStreams),
		ttl:     ttl,
		metrics: metrics,
		log:     log,
		ctx:     ctx,
		cancel:  cancel,
	}
	mt.Handle(messaging.VerbGossip, t.handle)
	return t
}

// FinalAdvertiseAddr implements memberlist.Transport: a node is known by its
// internode address, whatever memberlist was configured with.
func (t *transport) FinalAdvertiseAddr(string, int) (net.IP, int, error) {
	return net.IP(t.self.Addr().Unmap().AsSlice()), int(t.self.Port()), nil
}

// WriteTo implements memberlist.Transport.
func (t *transport) WriteTo(b []byte, addr string) (time.Time, error) {
	return t.WriteToAddress(b, memberlist.Address{Addr: addr})
}

// WriteToAddress implements memberlist.NodeAwareTransport.
func (t *transport) WriteToAddress(b []byte, a memberlist.Address) (time.Time, error) {
	to, err := parseAddr(a.Addr)
	if err != nil {
		return time.Time{}, err
	}
	if len(b) > maxPacketSize {
		return time.Time{}, fmt.Errorf("gossip: packet of %d bytes to %s, over %d", len(b), to, maxPacketSize)
	}
	ctx, cancel := context.WithTimeout(t.ctx, t.ttl)
	defer cancel()
	now := time.Now()
	err = t.mt.Send(ctx, to, messaging.VerbGossip, appendEnvelope(make([]byte, 0, 1+len(b)), kindPacket, b))
	switch {
	case err == nil:
		return now, nil
	case errors.Is(err, messaging.ErrClosed), errors.Is(err, messaging.ErrTooLarge):
		return now, fmt.Errorf("gossip: packet to %s: %w", to, err)
	default:
		// memberlist counts a failed probe only when the error is a
		// *net.OpError writing to the network (failedRemote in its
		// state.go): anything else it takes for its own fault and skips
		// the probe, so a peer whose link is cut would never go down.
		return now, &net.OpError{Op: "write", Net: "udp", Addr: net.UDPAddrFromAddrPort(to), Err: err}
	}
}

// PacketCh implements memberlist.Transport.
func (t *transport) PacketCh() <-chan *memberlist.Packet { return t.packets }

// DialTimeout implements memberlist.Transport.
func (t *transport) DialTimeout(addr string, timeout time.Duration) (net.Conn, error) {
	return t.DialAddressTimeout(memberlist.Address{Addr: addr}, timeout)
}

// DialAddressTimeout implements memberlist.NodeAwareTransport. No
// connection is made here: messaging dials when the exchange is sent.
// timeout is the exchange's deadline unless memberlist sets another.
func (t *transport) DialAddressTimeout(a memberlist.Address, timeout time.Duration) (net.Conn, error) {
	to, err := parseAddr(a.Addr)
	if err != nil {
		return nil, err
	}
	t.mu.Lock()
	closed := t.closed
	t.mu.Unlock()
	if closed {
		return nil, fmt.Errorf("gossip: dial %s: %w", to, net.ErrClosed)
	}
	return newDialConn(t, to, time.Now().Add(timeout)), nil
}

// StreamCh implements memberlist.Transport.
func (t *transport) StreamCh() <-chan net.Conn { return t.streams }

// Shutdown implements memberlist.Transport: it stops serving VerbGossip and
// returns once every handler of this transport has returned. The
// messaging transport is the caller's and stays open.
func (t *transport) Shutdown() error {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return nil
	}
	t.closed = true
	t.mu.Unlock()
	t.mt.Handle(messaging.VerbGossip, nil)
	t.cancel()
	t.handlers.Wait()
	return nil
}

// handle serves one VerbGossip message.
func (t *transport) handle(ctx context.Context, m messaging.Inbound) ([]byte, error) {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		t.metrics.Dropped.WithLabelValues(DropClosed).Inc()
		return nil, errors.New("gossip: shutting down")
	}
	t.handlers.Add(1)
	t.mu.Unlock()
	defer t.handlers.Done()

	kind, body, err := decodeEnvelope(m.Payload, maxStreamSize)
	if err == nil && kind == kindPacket && len(body) > maxPacketSize {
		err = fmt.Errorf("%w: packet of %d bytes, over %d", errMalformed, len(body), maxPacketSize)
	}
	if err != nil {
		t.metrics.Dropped.WithLabelValues(DropMalformed).Inc()
		t.log.Debug("gossip: message dropped", "from", m.From, "err", err)
		return nil, err
	}
	if kind == kindPacket {
		t.packet(m.From, body)
		return nil, nil
	}
	return t.stream(ctx, m.From, body)
}

func (t *transport) packet(from netip.AddrPort, body []byte) {
	p := &memberlist.Packet{Buf: body, From: net.UDPAddrFromAddrPort(from), Timestamp: time.Now()}
	select {
	case t.packets <- p:
	default:
		t.metrics.Dropped.WithLabelValues(DropQueueFull).Inc()
	}
}

// stream hands memberlist a conn that reads body and returns what
// memberlist wrote to it once it closes it.
func (t *transport) stream(ctx context.Context, from netip.AddrPort, body []byte) ([]byte, error) {
	select {
	case t.slots <- struct{}{}:
		defer func() { <-t.slots }()
	default:
		t.metrics.Dropped.WithLabelValues(DropBusy).Inc()
		return nil, fmt.Errorf("gossip: %s has %d streams open", t.self, maxStreams)
	}
	c := newAcceptConn(t, from, body)
	select {
	case t.streams <- c:
	case <-ctx.Done():
		return nil, fmt.Errorf("gossip: stream from %s not accepted: %w", from, ctx.Err())
	case <-t.ctx.Done():
		t.metrics.Dropped.WithLabelValues(DropClosed).Inc()
		return nil, errors.New("gossip: shutting down")
	}
	select {
	case <-c.done:
		return c.answer(), nil
	case <-ctx.Done():
		return nil, fmt.Errorf("gossip: stream from %s not answered: %w", from, ctx.Err())
	case <-t.ctx.Done():
		return nil, errors.New("gossip: shutting down")
	}
}

func parseAddr(s string) (netip.AddrPort, error) {
	ap, err := netip.ParseAddrPort(s)
	if err != nil {
		return ap, fmt.Errorf("gossip: address %q: %w", s, err)
	}
	return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port()), nil
}
