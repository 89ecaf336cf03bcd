package messaging

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cqld/cqld/tlsconf"
)

// TCPTransport is the Transport between nodes: it listens on the node's
// storage_port and dials its peers there. Per peer it keeps two
// connections, one for small messages and one for large ones, each
// multiplexing any number of requests (doc.go tells the design).
type TCPTransport struct {
	*core
	ln      net.Listener
	localIP net.IP // outbound connections leave from the listen address

	mu     sync.Mutex
	closed bool
	peers  map[netip.AddrPort]*peer
	// accepted are the connections peers dialed, from accept to close.
	accepted map[net.Conn]struct{}

	cut partition // the peers Partition cut this node off from
}

var _ Transport = (*TCPTransport)(nil)

// peer is what the transport keeps per peer it sends to.
type peer struct {
	addr     netip.AddrPort
	label    string
	counters *peerCounters
	budget   budget
	// conns are the small and large message connections, started on
	// first use and replaced once failed; guarded by TCPTransport.mu.
	conns [2]*outConn
}

// ListenTCP starts a transport listening on opts.Addr.
func ListenTCP(opts Options) (*TCPTransport, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", opts.Addr.String())
	if err != nil {
		return nil, fmt.Errorf("messaging: listen on storage port: %w", err)
	}
	bound := ln.Addr().(*net.TCPAddr).AddrPort()
	bound = netip.AddrPortFrom(bound.Addr().Unmap(), bound.Port())
	addr := bound
	if opts.BroadcastAddr.IsValid() {
		addr = opts.BroadcastAddr
	}
	t := &TCPTransport{
		core:     newCore(opts, addr),
		ln:       ln,
		peers:    make(map[netip.AddrPort]*peer),
		accepted: make(map[net.Conn]struct{}),
	}
	if !bound.Addr().IsUnspecified() {
		t.localIP = bound.Addr().AsSlice()
	}
	t.wg.Add(1)
	go t.acceptLoop()
	return t, nil
}

// Request implements Transport.
func (t *TCPTransport) Request(ctx context.Context, to netip.AddrPort, verb Verb, payload []byte) ([]byte, error) {
	return t.request(ctx, to, verb, payload, t.enqueue)
}

// RequestAsync implements AsyncRequester.
func (t *TCPTransport) RequestAsync(ctx context.Context, to netip.AddrPort, verb Verb, payload []byte, done func([]byte, error)) error {
	return t.requestAsync(ctx, to, verb, payload, done, t.enqueue)
}

// Send implements Transport.
func (t *TCPTransport) Send(ctx context.Context, to netip.AddrPort, verb Verb, payload []byte) error {
	return t.send(ctx, to, verb, payload, t.enqueue)
}

// Close implements Transport.
func (t *TCPTransport) Close() error {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return nil
	}
	t.closed = true
	var out []*outConn
	for _, p := range t.peers {
		for _, c := range p.conns {
			if c != nil {
				out = append(out, c)
			}
		}
	}
	var in []net.Conn
	for nc := range t.accepted {
		in = append(in, nc)
	}
	t.mu.Unlock()

	t.ln.Close()
	for _, c := range out {
		c.fail(ErrClosed)
	}
	// Their readers fail and close the rest.
	for _, nc := range in {
		nc.Close()
	}
	t.cancel()
	t.wg.Wait()
	return nil
}

func (t *TCPTransport) enqueue(to netip.AddrPort, m *outMsg) error {
	t.mu.Lock()
	p := t.peers[to]
	if p == nil {
		p = &peer{addr: to, label: to.String(), budget: budget{limit: int64(t.opts.MaxQueueBytes)}}
		p.counters = t.metrics.forPeer(p.label)
		t.peers[to] = p
	}
	t.mu.Unlock()
	if err := t.reserve(&p.budget, m, p.label); err != nil {
		return err
	}
	large := len(m.env) > t.opts.LargeMessageThreshold
	// A connection may break between conn and push; the second try gets a
	// new one. One that failed to connect at all gives its error: dialing
	// again would most likely fail the same way (a foreign cluster, a
	// refused handshake) and cost the peer a second refusal.
	var err error
	for range 2 {
		var c *outConn
		if c, err = t.conn(p, large); err != nil {
			break
		}
		var retry bool
		if retry, err = c.push(m); err == nil || !retry || !c.established.Load() {
			break
		}
	}
	if err == nil {
		return nil
	}
	m.release()
	return err
}

// conn returns p's live connection for small or large messages, starting
// one if there is none.
func (t *TCPTransport) conn(p *peer, large bool) (*outConn, error) {
	i := 0
	if large {
		i = 1
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return nil, ErrClosed
	}
	if c := p.conns[i]; c != nil && !c.failed.Load() {
		return c, nil
	}
	c := &outConn{t: t, p: p, large: large, q: newOutQueue(), stop: make(chan struct{})}
	p.conns[i] = c
	t.wg.Add(1)
	go c.run()
	return c, nil
}

func (t *TCPTransport) acceptLoop() {
	defer t.wg.Done()
	var backoff time.Duration
	for {
		nc, err := t.ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			// Out of file descriptors, say: wait, as net/http does.
			backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
			t.log.Warn("messaging: accept failed", "err", err, "retry_in", backoff)
			select {
			case <-time.After(backoff):
			case <-t.ctx.Done():
				return
			}
			continue
		}
		backoff = 0
		t.mu.Lock()
		if t.closed {
			t.mu.Unlock()
			nc.Close()
			return
		}
		t.accepted[nc] = struct{}{}
		t.wg.Add(1)
		t.mu.Unlock()
		go t.serveConn(nc)
	}
}

// dial connects to addr.
func (t *TCPTransport) dial(addr netip.AddrPort) (net.Conn, error) {
	d := net.Dialer{Timeout: t.opts.DialTimeout}
	if t.localIP != nil {
		d.LocalAddr = &net.TCPAddr{IP: t.localIP}
	}
	nc, err := d.DialContext(t.ctx, "tcp", addr.String())
	if err != nil {
		if t.ctx.Err() != nil {
			return nil, ErrClosed
		}
		t.metrics.ConnectionErrors.WithLabelValues("dial").Inc()
		return nil, fmt.Errorf("%w: %s: %w", ErrUnreachable, addr, err)
	}
	if t.opts.TLS == nil || t.opts.TLS.Client == nil {
		return nc, nil
	}
	cfg := t.opts.TLS.Client(addr)
	if cfg == nil {
		return nc, nil
	}
	tc := tls.Client(nc, cfg)
	ctx, cancel := context.WithTimeout(t.ctx, t.opts.HandshakeTimeout)
	defer cancel()
	if err := tc.HandshakeContext(ctx); err != nil {
		nc.Close()
		if t.ctx.Err() != nil {
			return nil, ErrClosed
		}
		t.metrics.ConnectionErrors.WithLabelValues("tls").Inc()
		t.log.Warn("messaging: TLS handshake with a peer failed", "peer", addr, "err", err)
		return nil, fmt.Errorf("%w: TLS handshake with %s: %w", ErrHandshake, addr, err)
	}
	return tlsconf.CloseAbruptly(tc, nc), nil
}

// secure runs the accepting side's TLS, when the transport has it: it
// returns the connection to serve (nc itself for a plaintext peer that
// may stay so), or an error once it has logged and refused the peer.
func (t *TCPTransport) secure(nc net.Conn) (net.Conn, error) {
	tc := t.opts.TLS
	if tc == nil || tc.Server == nil {
		return nc, nil
	}
	nc.SetDeadline(time.Now().Add(t.opts.HandshakeTimeout))
	first, err := tlsconf.PeekFirstByte(nc)
	if err != nil {
		return nil, err
	}
	if first != tlsconf.RecordHandshake {
		if tc.Optional {
			return nc, nc.SetDeadline(time.Time{})
		}
		// Tell the peer why, in a hello it can read, then close.
		h, err := readHello(nc)
		detail := "this node requires TLS on its storage port (server_encryption_options)"
		t.metrics.ConnectionErrors.WithLabelValues("tls").Inc()
		t.log.Warn("messaging: refusing a plaintext connection on the TLS storage port", "remote", nc.RemoteAddr(), "peer", h.addr, "err", err)
		if err == nil {
			r := hello{version: wireVersion, kind: helloRefuse, reason: refuseBad, cluster: t.opts.ClusterName, hostID: t.opts.HostID, addr: t.addr, detail: detail}
			nc.Write(appendHello(nil, &r)) // best effort: the connection closes anyway
		}
		return nil, fmt.Errorf("%w: %s: plaintext on a TLS storage port", ErrHandshake, nc.RemoteAddr())
	}
	s := tls.Server(nc, tc.Server)
	ctx, cancel := context.WithTimeout(t.ctx, t.opts.HandshakeTimeout)
	defer cancel()
	if err := s.HandshakeContext(ctx); err != nil {
		if t.ctx.Err() == nil {
			t.metrics.ConnectionErrors.WithLabelValues("tls").Inc()
			t.log.Warn("messaging: refusing a connection on the storage port: TLS handshake failed", "remote", nc.RemoteAddr(), "err", err)
		}
		return nil, err
	}
	return tlsconf.CloseAbruptly(s, nc), nc.SetDeadline(time.Time{})
}

func (t *TCPTransport) initiate(nc net.Conn, addr netip.AddrPort, large bool) error {
	nc.SetDeadline(time.Now().Add(t.opts.HandshakeTimeout))
	h := hello{version: wireVersion, kind: helloInitiate, cluster: t.opts.ClusterName, hostID: t.opts.HostID, addr: t.addr}
	if t.opts.LZ4 {
		h.flags |= helloLZ4
	}
	if large {
		h.flags |= helloLarge
	}
	if _, err := nc.Write(appendHello(nil, &h)); err != nil {
		t.metrics.ConnectionErrors.WithLabelValues("handshake").Inc()
		return fmt.Errorf("%w: %s: %w", ErrUnreachable, addr, err)
	}
	r, err := readHello(nc)
	if err != nil {
		t.metrics.ConnectionErrors.WithLabelValues("handshake").Inc()
		return fmt.Errorf("%w: handshake with %s: %w", ErrUnreachable, addr, err)
	}
	switch {
	case r.kind == helloRefuse && r.reason == refuseCluster, r.kind == helloAccept && r.cluster != t.opts.ClusterName:
		t.metrics.ConnectionErrors.WithLabelValues("refused").Inc()
		err := t.clusterMismatch(addr, r.cluster)
		t.log.Warn("messaging: peer belongs to another cluster", "peer", addr, "peer_cluster", r.cluster,
			"cluster", t.opts.ClusterName)
		return err
	case r.kind == helloRefuse:
		t.metrics.ConnectionErrors.WithLabelValues("refused").Inc()
		return fmt.Errorf("%w: %s refused the connection: %s", ErrHandshake, addr, r.detail)
	case r.kind != helloAccept || r.version != wireVersion:
		t.metrics.ConnectionErrors.WithLabelValues("handshake").Inc()
		return fmt.Errorf("%w: %s answered hello kind %d version %d", ErrHandshake, addr, r.kind, r.version)
	}
	return nc.SetDeadline(time.Time{})
}

func (t *TCPTransport) clusterMismatch(peer netip.AddrPort, theirs string) error {
	return fmt.Errorf("%w: %s is in cluster %q, this node (%s) is in cluster %q",
		ErrClusterMismatch, peer, theirs, t.addr, t.opts.ClusterName)
}

// accept runs the acceptor's side of the handshake: it refuses a peer of
// another cluster or version and returns the peer's hello.
func (t *TCPTransport) accept(nc net.Conn) (hello, error) {
	nc.SetDeadline(time.Now().Add(t.opts.HandshakeTimeout))
	h, err := readHello(nc)
	if err == nil && h.kind != helloInitiate {
		err = fmt.Errorf("%w: hello kind %d before the handshake", ErrHandshake, h.kind)
	}
	if err != nil {
		t.metrics.ConnectionErrors.WithLabelValues("handshake").Inc()
		t.log.Warn("messaging: closing connection on the storage port", "remote", nc.RemoteAddr(), "err", err)
		return h, err
	}
	refuse := func(reason byte, detail string) {
		r := hello{version: wireVersion, kind: helloRefuse, reason: reason, cluster: t.opts.ClusterName,
			hostID: t.opts.HostID, addr: t.addr, detail: truncateUTF8(detail, maxHelloBody/2)}
		nc.Write(appendHello(nil, &r)) // best effort: the connection closes anyway
	}
	if h.cluster != t.opts.ClusterName {
		err := fmt.Errorf("%w: %s is in cluster %q, this node (%s) is in cluster %q",
			ErrClusterMismatch, h.addr, h.cluster, t.addr, t.opts.ClusterName)
		t.metrics.ConnectionErrors.WithLabelValues("foreign").Inc()
		t.log.Warn("messaging: refusing a node of another cluster", "peer", h.addr, "remote", nc.RemoteAddr(),
			"peer_cluster", h.cluster, "cluster", t.opts.ClusterName)
		refuse(refuseCluster, err.Error())
		return h, err
	}
	if h.version != wireVersion {
		err := fmt.Errorf("%w: %s speaks internode version %d, this node %d", ErrHandshake, h.addr, h.version, wireVersion)
		t.metrics.ConnectionErrors.WithLabelValues("handshake").Inc()
		t.log.Warn("messaging: refusing a node of another version", "peer", h.addr, "err", err)
		refuse(refuseVersion, err.Error())
		return h, err
	}
	a := hello{version: wireVersion, kind: helloAccept, cluster: t.opts.ClusterName, hostID: t.opts.HostID, addr: t.addr}
	if _, err := nc.Write(appendHello(nil, &a)); err != nil {
		return h, err
	}
	return h, nc.SetDeadline(time.Time{})
}

// outConn is a connection this node dialed: it carries this node's
// requests and one-way messages to the peer, and their responses back.
type outConn struct {
	t     *TCPTransport
	p     *peer
	large bool
	q     *outQueue
	calls callTable
	// stop closes when the connection fails; failed is set just before.
	stop   chan struct{}
	failed atomic.Bool
	// established is set once the handshake succeeded.
	established atomic.Bool

	mu  sync.Mutex
	nc  net.Conn // nil until dialed
	err error    // why it failed
}

// push registers m's call and queues m. On an error, retry says m may go
// on another connection: not when this one, failing, took its call first
// and gave the caller its error (sent anyway, the request would run for
// a caller told it failed, which may send it again).
func (c *outConn) push(m *outMsg) (retry bool, err error) {
	if m.call != nil {
		if err := c.calls.add(m.call); err != nil {
			return true, err
		}
	}
	if err := c.q.push(m); err != nil {
		return m.call == nil || c.calls.take(m.call.id) != nil, err
	}
	return false, nil
}

// fail closes the connection: queued messages are dropped and waiting
// requests fail with err. Only the first call does anything.
func (c *outConn) fail(err error) {
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return
	}
	c.err = err
	nc := c.nc
	c.mu.Unlock()
	c.failed.Store(true)
	close(c.stop)
	if nc != nil {
		nc.Close()
	}
	c.t.abandon(c.q.close(err), c.p.label)
	c.calls.failAll(err, true)
}

// broken fails the connection after its stream ended with err.
func (c *outConn) broken(err error) {
	if err == nil {
		return
	}
	if c.t.ctx.Err() != nil {
		c.fail(ErrClosed)
		return
	}
	c.t.logBroken(err, c.p.addr)
	c.fail(fmt.Errorf("%w: %s: %w", ErrConnectionLost, c.p.addr, err))
}

func (c *outConn) run() {
	defer c.t.wg.Done()
	nc, err := c.t.dial(c.p.addr)
	if err != nil {
		c.fail(err)
		return
	}
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		nc.Close()
		return
	}
	c.nc = nc // from here fail closes it, which ends a handshake in progress
	c.mu.Unlock()
	if err := c.t.initiate(nc, c.p.addr, c.large); err != nil {
		if c.t.ctx.Err() != nil {
			err = ErrClosed
		}
		c.fail(err)
		return
	}
	c.established.Store(true)

	w := &wire{nc: nc, lz4: c.t.opts.LZ4, counters: c.p.counters}
	readerDone := make(chan struct{})
	go func() {
		defer close(readerDone)
		dec := newStreamDecoder(c.t.opts.LZ4, c.t.opts.MaxMessageSize)
		c.broken(readLoop(nc, dec, func(m message) error {
			if !m.isResponse() {
				return fmt.Errorf("%w: %s request on a connection this node dialed", ErrBadMessage, m.verb)
			}
			if c.t.cutRead(c.p.addr, c.p.label, m) {
				return nil
			}
			c.p.counters.count(dirReceived, m.verb, messageHeaderLen+len(m.payload))
			c.t.finishCall(&c.calls, c.p.addr, c.p.label, m)
			return nil
		}))
	}()
	c.broken(c.t.drain(c.q, c.stop, c.p.label, c.t.cutWrite(c.p.addr, c.p.label, w.write)))
	<-readerDone
}

// logBroken logs why a connection's stream ended, unless the peer simply
// closed it.
func (t *TCPTransport) logBroken(err error, peer netip.AddrPort) {
	if errors.Is(err, ErrBadMessage) {
		t.metrics.ConnectionErrors.WithLabelValues("stream").Inc()
		t.log.Warn("messaging: closing connection with a broken stream", "peer", peer, "err", err)
		return
	}
	if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
		t.log.Info("messaging: connection failed", "peer", peer, "err", err)
	}
}

// inConn is a connection a peer dialed: it carries the peer's requests and
// one-way messages to this node, and this node's responses back.
type inConn struct {
	t      *TCPTransport
	from   peerInfo
	nc     net.Conn
	q      *outQueue
	budget budget
	stop   chan struct{}
	once   sync.Once
}

func (c *inConn) reply(m *outMsg) {
	if c.t.reserve(&c.budget, m, c.from.label) != nil {
		return
	}
	if c.q.push(m) != nil {
		m.release()
		c.t.metrics.dropped(m.verb, c.from.label, DropClosed)
	}
}

func (c *inConn) close() {
	c.once.Do(func() {
		close(c.stop)
		c.nc.Close()
		c.t.abandon(c.q.close(ErrClosed), c.from.label)
	})
}

func (t *TCPTransport) serveConn(nc net.Conn) {
	defer t.wg.Done()
	defer func() {
		nc.Close()
		t.mu.Lock()
		delete(t.accepted, nc)
		t.mu.Unlock()
	}()
	conn, err := t.secure(nc)
	if err != nil {
		return
	}
	h, err := t.accept(conn)
	if err != nil {
		return
	}
	lz4 := h.flags&helloLZ4 != 0
	c := &inConn{
		t:      t,
		from:   peerInfo{addr: h.addr, hostID: h.hostID, label: h.addr.String(), counters: t.metrics.forPeer(h.addr.String())},
		nc:     conn,
		q:      newOutQueue(),
		budget: budget{limit: int64(t.opts.MaxQueueBytes)},
		stop:   make(chan struct{}),
	}

	w := &wire{nc: conn, lz4: lz4, counters: c.from.counters}
	writerDone := make(chan struct{})
	go func() {
		defer close(writerDone)
		if err := t.drain(c.q, c.stop, c.from.label, t.cutWrite(h.addr, c.from.label, w.write)); err != nil && t.ctx.Err() == nil {
			t.logBroken(err, h.addr)
		}
		c.close()
	}()
	err = readLoop(conn, newStreamDecoder(lz4, t.opts.MaxMessageSize), func(m message) error {
		if m.isResponse() {
			return fmt.Errorf("%w: %s response on a connection this node accepted", ErrBadMessage, m.verb)
		}
		if t.cutRead(h.addr, c.from.label, m) {
			return nil
		}
		c.from.counters.count(dirReceived, m.verb, messageHeaderLen+len(m.payload))
		t.serve(&c.from, m, c.reply, c.stop)
		return nil
	})
	if t.ctx.Err() == nil {
		t.logBroken(err, h.addr)
	}
	c.close()
	<-writerDone
}
