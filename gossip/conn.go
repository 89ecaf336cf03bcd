package gossip

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"sync"
	"time"

	"github.com/cqld/cqld/messaging"
)

// errExchanged is a write to a dialed conn after its exchange was sent: a
// memberlist stream pattern this transport does not carry.
var errExchanged = errors.New("gossip: stream written after its exchange")

// conn is one side of a memberlist stream (see transport). It is safe for
// concurrent use, though memberlist uses each conn from one goroutine.
type conn struct {
	t      *transport
	peer   netip.AddrPort
	dialer bool

	mu        sync.Mutex
	out       []byte // written, not yet sent
	in        []byte // left to read
	exchanged bool   // dialer: the request was sent
	closed    bool
	deadline  time.Time
	// ctx ends the dialer's exchange on Close.
	ctx    context.Context
	cancel context.CancelFunc
	// done is closed when the acceptor's conn is closed: its answer is
	// ready.
	done chan struct{}
}

var _ net.Conn = (*conn)(nil)

func newDialConn(t *transport, to netip.AddrPort, deadline time.Time) *conn {
	ctx, cancel := context.WithCancel(t.ctx)
	return &conn{t: t, peer: to, dialer: true, deadline: deadline, ctx: ctx, cancel: cancel}
}

func newAcceptConn(t *transport, from netip.AddrPort, request []byte) *conn {
	return &conn{t: t, peer: from, in: request, done: make(chan struct{})}
}

// Read implements net.Conn. A dialer's first Read sends what was written
// as a request and waits for the answer; after the answer (or the
// acceptor's request) is read, Read returns io.EOF.
func (c *conn) Read(p []byte) (int, error) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return 0, net.ErrClosed
	}
	if c.dialer && !c.exchanged {
		c.exchanged = true
		req, deadline := c.out, c.deadline
		c.out = nil
		c.mu.Unlock()
		resp, err := c.exchange(req, deadline)
		c.mu.Lock()
		if err != nil {
			c.mu.Unlock()
			return 0, err
		}
		c.in = resp
	}
	defer c.mu.Unlock()
	if len(c.in) == 0 {
		return 0, io.EOF
	}
	n := copy(p, c.in)
	c.in = c.in[n:]
	return n, nil
}

func (c *conn) exchange(req []byte, deadline time.Time) ([]byte, error) {
	if len(req) == 0 {
		return nil, fmt.Errorf("gossip: stream to %s read before anything was written", c.peer)
	}
	ctx, cancel := context.WithDeadline(c.ctx, deadline)
	defer cancel()
	resp, err := c.t.mt.Request(ctx, c.peer, messaging.VerbGossip, appendEnvelope(make([]byte, 0, 1+len(req)), kindStream, req))
	if err != nil {
		return nil, fmt.Errorf("gossip: stream to %s: %w", c.peer, err)
	}
	if len(resp) > maxStreamSize {
		return nil, fmt.Errorf("gossip: stream answer from %s of %d bytes, over %d", c.peer, len(resp), maxStreamSize)
	}
	return resp, nil
}

// Write implements net.Conn: it buffers p, up to maxStreamSize in all.
func (c *conn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.closed:
		return 0, net.ErrClosed
	case c.exchanged:
		return 0, fmt.Errorf("%w (to %s)", errExchanged, c.peer)
	case len(c.out)+len(p) > maxStreamSize:
		return 0, fmt.Errorf("gossip: stream to %s over %d bytes", c.peer, maxStreamSize)
	}
	c.out = append(c.out, p...)
	return len(p), nil
}

// Close implements net.Conn. A dialer that wrote but never read sends what
// it wrote one-way; an acceptor's close releases its answer.
func (c *conn) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	out, send := c.out, c.dialer && !c.exchanged && len(c.out) > 0
	c.exchanged = c.exchanged || send
	deadline := c.deadline
	c.mu.Unlock()
	if !c.dialer {
		close(c.done)
		return nil
	}
	defer c.cancel()
	if send {
		ctx, cancel := context.WithDeadline(c.ctx, deadline)
		defer cancel()
		if err := c.t.mt.Send(ctx, c.peer, messaging.VerbGossip, appendEnvelope(make([]byte, 0, 1+len(out)), kindStream, out)); err != nil {
			return fmt.Errorf("gossip: stream to %s: %w", c.peer, err)
		}
	}
	return nil
}

// answer is what the acceptor wrote; call it after done is closed.
func (c *conn) answer() []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.out
}

func (c *conn) LocalAddr() net.Addr  { return net.TCPAddrFromAddrPort(c.t.self) }
func (c *conn) RemoteAddr() net.Addr { return net.TCPAddrFromAddrPort(c.peer) }

// SetDeadline implements net.Conn: the dialer's exchange ends at the
// deadline. An acceptor's deadline is its request's, which messaging
// carries.
func (c *conn) SetDeadline(t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !t.IsZero() {
		c.deadline = t
	}
	return nil
}

func (c *conn) SetReadDeadline(t time.Time) error { return c.SetDeadline(t) }

// SetWriteDeadline implements net.Conn; writes only buffer, so it is
// ignored.
func (c *conn) SetWriteDeadline(time.Time) error { return nil }
