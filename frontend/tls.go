package frontend

import (
	"crypto/tls"
	"errors"
	"io"
	"net"
	"slices"
	"sync/atomic"
	"time"

	"github.com/panjf2000/gnet/v2"

	"github.com/cqld/cqld/tlsconf"
)

// TLS. gnet has no TLS; crypto/tls has no interface for feeding it bytes
// from an event loop, but it resumes cleanly after its connection's Read
// returns a temporary error, keeping a partial record for the next call.
// So a TLS connection lives in two phases:
//
//  1. The handshake, on a goroutine of its own, over the socket as Go's
//     net package has it: crypto/tls's handshake cannot be resumed, so it
//     must be able to block.
//  2. Then the socket is handed to an event loop like a plaintext one
//     (EnrollContext), and the same tls.Conn carries on over a bio whose
//     Read takes the ciphertext gnet read (and says "would block" when it
//     runs out) and whose Write hands ciphertext to gnet. On each
//     OnTraffic the loop decrypts what arrived into a plaintext buffer,
//     and the connection state machine (conn.go) runs on that buffer
//     through a tlsSock, the subset of gnet.Conn it uses (sock.go);
//     answers are encrypted on the loop as they are written.
//
// Everything the event loops bound is bounded the same way, since the
// same machine decides: request data, paused connections and the receive
// queue, requests in flight, frame and idle deadlines. The connection is
// counted open from accept, so the handshake deadline covers the TLS
// handshake: a client that stalls in it is closed like one that never
// sends STARTUP. The connection caps are applied at accept, before any TLS
// work.
//
// Optional TLS (a listener taking both) reads nothing to decide: it peeks
// at the first byte (MSG_PEEK), as Netty's OptionalSslHandler looks at the
// first record. A TLS connection starts with a handshake record (0x16); a
// CQL frame starts with its version, never 0x16. Plaintext connections
// then go to the event loops with the byte still unread.

// Reasons a TLS connection closes: the Closed metric's label.
const (
	reasonTLS   = "tls_handshake" // the TLS handshake failed
	reasonSniff = "tls_sniff"     // closed before its first byte came
	reasonCrypt = "tls_record"    // a record after the handshake did not decrypt
)

// listenMode is how a listener treats the connections it accepts.
type listenMode int

const (
	modePlain    listenMode = iota
	modeTLS                 // TLS only: a plaintext client fails the handshake
	modeOptional            // TLS or plaintext, by the first byte
)

// errWouldBlock is the bio's Read when the loop has no more ciphertext:
// temporary, so crypto/tls keeps what it has and reads on next time.
var errWouldBlock net.Error = wouldBlock{}

type wouldBlock struct{}

func (wouldBlock) Error() string   { return "frontend: no more TLS input for now" }
func (wouldBlock) Timeout() bool   { return true }
func (wouldBlock) Temporary() bool { return true }

// bio is the tls.Conn's connection: the socket during the handshake, the
// event loop's buffers after it.
type bio struct {
	net.Conn // the socket: the handshake's I/O, deadlines, addresses
	onLoop   bool
	in       []byte // ciphertext offered to Read, on the loop
	out      []byte // ciphertext written, on the loop, until flushed to gnet
}

func (b *bio) Read(p []byte) (int, error) {
	if !b.onLoop {
		return b.Conn.Read(p)
	}
	if len(b.in) == 0 {
		return 0, errWouldBlock
	}
	n := copy(p, b.in)
	b.in = b.in[n:]
	return n, nil
}

func (b *bio) Write(p []byte) (int, error) {
	if !b.onLoop {
		return b.Conn.Write(p)
	}
	b.out = append(b.out, p...)
	return len(p), nil
}

// tlsSock is a TLS connection's socket as its state machine sees it:
// plaintext. See the top of the file.
type tlsSock struct {
	cn     *conn
	nc     net.Conn
	remote net.Addr
	b      *bio
	tc     *tls.Conn
	// gc is the event loop's connection once the handshake is done; nil
	// before.
	gc      atomic.Pointer[gnet.Conn]
	closing atomic.Bool

	// On the loop only:
	in []byte // decrypted and not discarded: in[r:]
	r  int
}

var _ sock = (*tlsSock)(nil)

// pump decrypts the ciphertext gnet has read into the plaintext buffer.
// REQUIRES: on the event loop.
func (t *tlsSock) pump(gc gnet.Conn) error {
	// NB: Read runs even when gnet has nothing new: records read from
	// the socket with the end of the handshake wait inside the tls.Conn,
	// and no read event will announce them.
	raw, _ := gc.Peek(-1)
	t.b.in = raw
	var err error
	for {
		if cap(t.in)-len(t.in) < minDecryptRoom {
			t.in = slices.Grow(t.in, maxPlaintextRecord)
		}
		var n int
		n, err = t.tc.Read(t.in[len(t.in):cap(t.in)])
		t.in = t.in[:len(t.in)+n]
		if err != nil {
			break
		}
	}
	// NB: what Read took is in the tls.Conn now (a partial record
	// included); raw dies at Discard.
	_, _ = gc.Discard(len(raw) - len(t.b.in))
	t.b.in = nil
	if t.flush(gc) != nil || errors.Is(err, errWouldBlock) {
		return nil // a failed flush shows as the socket closing
	}
	return err
}

// Decryption goes straight into the plaintext buffer, given room for a
// good part of a record (crypto/tls keeps what does not fit for the next
// Read).
const (
	minDecryptRoom     = 4 << 10
	maxPlaintextRecord = 16 << 10
)

// flush hands the ciphertext written since the last flush to gnet.
func (t *tlsSock) flush(gc gnet.Conn) error {
	if len(t.b.out) == 0 {
		return nil
	}
	_, err := gc.Write(t.b.out) // gnet keeps what the socket does not take
	t.b.out = shrink(t.b.out)
	return err
}

// keepBuffer is the most a connection's emptied plaintext or ciphertext
// buffer keeps: one large answer or request must not pin its size for the
// connection's life.
const keepBuffer = 256 << 10

// shrink empties b, keeping its array unless it is past keepBuffer.
func shrink(b []byte) []byte {
	if cap(b) > keepBuffer {
		return nil
	}
	return b[:0]
}

// Peek implements sock.
func (t *tlsSock) Peek(n int) ([]byte, error) {
	avail := t.in[t.r:]
	if n < 0 {
		return avail, nil
	}
	if len(avail) < n {
		return nil, io.ErrShortBuffer
	}
	return avail[:n], nil
}

// Discard implements sock. The bytes Peek returned die here, as in gnet:
// the buffer is compacted once most of it is consumed.
func (t *tlsSock) Discard(n int) (int, error) {
	n = min(n, len(t.in)-t.r)
	t.r += n
	switch {
	case t.r == len(t.in):
		t.in, t.r = shrink(t.in), 0
	case t.r > cap(t.in)/2:
		k := copy(t.in, t.in[t.r:])
		t.in, t.r = t.in[:k], 0
	}
	return n, nil
}

// InboundBuffered implements sock: plaintext not yet consumed, and the
// ciphertext not yet decrypted.
func (t *tlsSock) InboundBuffered() int {
	n := len(t.in) - t.r
	if gc := t.gc.Load(); gc != nil {
		n += (*gc).InboundBuffered()
	}
	return n
}

// OutboundBuffered implements sock, in ciphertext bytes.
func (t *tlsSock) OutboundBuffered() int {
	if gc := t.gc.Load(); gc != nil {
		return (*gc).OutboundBuffered()
	}
	return 0
}

// Write implements sock: it encrypts b into records for gnet.
func (t *tlsSock) Write(b []byte) (int, error) {
	gc := t.gc.Load()
	if gc == nil {
		return 0, net.ErrClosed
	}
	n, err := t.tc.Write(b)
	if ferr := t.flush(*gc); err == nil {
		err = ferr
	}
	return n, err
}

// Writev implements sock. Small pieces are joined first, so that they
// travel in one record.
func (t *tlsSock) Writev(bs [][]byte) (int, error) {
	total := 0
	for _, b := range bs {
		total += len(b)
	}
	if total <= 16<<10 {
		joined := make([]byte, 0, total)
		for _, b := range bs {
			joined = append(joined, b...)
		}
		return t.Write(joined)
	}
	n := 0
	for _, b := range bs {
		k, err := t.Write(b)
		n += k
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// Wake implements sock.
func (t *tlsSock) Wake(cb gnet.AsyncCallback) error {
	if gc := t.gc.Load(); gc != nil {
		return (*gc).Wake(cb)
	}
	return nil // still in its handshake: nothing to look at
}

// Close implements sock: it closes the event loop's connection, or ends
// the handshake in progress.
func (t *tlsSock) Close() error {
	t.closing.Store(true)
	if gc := t.gc.Load(); gc != nil {
		return (*gc).Close()
	}
	return t.nc.SetDeadline(time.Unix(1, 0))
}

// RemoteAddr implements sock.
func (t *tlsSock) RemoteAddr() net.Addr { return t.remote }

// serveTLS runs a TLS connection's handshake and hands it to an event
// loop; on a failed handshake it forgets the connection.
func (s *Server) serveTLS(nc net.Conn, a *admission) {
	b := &bio{Conn: nc}
	t := &tlsSock{nc: nc, remote: nc.RemoteAddr(), b: b}
	t.tc = tls.Server(b, s.opts.TLS)
	cn := s.open(t, a)
	t.cn = cn
	if s.draining.Load() {
		t.Close()
	}
	if err := t.tc.Handshake(); err != nil {
		if !t.closing.Load() { // not closed by a deadline or shutdown, which said why
			s.tlsRefused(cn, err)
		}
		s.forget(cn)
		_ = nc.Close()
		return
	}
	_ = nc.SetDeadline(time.Time{})
	b.onLoop = true
	a.tls = t
	s.enroll(nc, a)
	if t.gc.Load() == nil { // no event loop took it
		s.forget(cn)
	}
}

// tlsRefused counts and logs a failed TLS handshake. The reason is Go's
// words (an unknown CA, an expired certificate, a client speaking
// plaintext), with nothing secret in them.
func (s *Server) tlsRefused(cn *conn, err error) {
	s.m.Closed.WithLabelValues(reasonTLS).Inc()
	if s.tlsWarn.allow(s.opts.Now()) {
		s.log.Warn("TLS handshake with a client failed; closing the connection (logged at most once a minute)", "remote", cn.remote, "err", err)
	} else {
		s.log.Debug("TLS handshake with a client failed", "remote", cn.remote, "err", err)
	}
}

// openTLS is OnOpen for a TLS connection past its handshake: its state
// exists already.
func (s *Server) openTLS(c gnet.Conn, t *tlsSock) gnet.Action {
	t.gc.Store(&c)
	c.SetContext(t)
	if t.closing.Load() || s.draining.Load() {
		return gnet.Close
	}
	// Records may have come with the end of the handshake: take them now.
	return s.trafficTLS(c, t)
}

// trafficTLS is OnTraffic for a TLS connection.
func (s *Server) trafficTLS(c gnet.Conn, t *tlsSock) gnet.Action {
	if err := t.pump(c); err != nil {
		if errors.Is(err, io.EOF) { // close_notify: what came before it is served
			t.cn.onTraffic()
		} else {
			s.closing(t.cn, reasonCrypt, err)
		}
		return gnet.Close
	}
	return t.cn.onTraffic()
}

// sniff serves a connection of an optional-TLS listener: TLS or
// plaintext, as its first byte says. It waits for that byte at most
// HandshakeTimeout.
func (s *Server) sniff(nc net.Conn, a *admission) {
	s.mu.Lock()
	s.sniffing[nc] = struct{}{}
	s.mu.Unlock()
	if d := s.opts.HandshakeTimeout; d > 0 {
		_ = nc.SetReadDeadline(time.Now().Add(d))
	}
	first, err := tlsconf.PeekFirstByte(nc)
	_ = nc.SetReadDeadline(time.Time{})
	s.mu.Lock()
	delete(s.sniffing, nc)
	s.mu.Unlock()
	switch {
	case err != nil || s.draining.Load():
		_ = nc.Close()
		s.releaseSlot(a.ip, a.peer)
		s.m.Closed.WithLabelValues(reasonSniff).Inc()
	case first == tlsconf.RecordHandshake:
		s.serveTLS(nc, a)
	default:
		s.enroll(nc, a)
	}
}

// closeTLS ends every TLS handshake in progress and every sniff, and
// waits for their goroutines. The event loops close the rest.
func (s *Server) closeTLS() {
	s.mu.Lock()
	var socks []*tlsSock
	for cn := range s.conns {
		if t, ok := cn.gc.(*tlsSock); ok {
			socks = append(socks, t)
		}
	}
	for nc := range s.sniffing {
		_ = nc.SetReadDeadline(time.Unix(1, 0))
	}
	s.mu.Unlock()
	for _, t := range socks {
		t.Close()
	}
	s.tlsDone.Wait()
}
