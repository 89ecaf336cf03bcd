package frontend

import (
	"crypto/tls"
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/panjf2000/gnet/v2"

	"github.com/cqld/cqld/tlsconf"
)

// TLS. gnet has no TLS, so a TLS connection is served by goroutines of its
// own, which drive the same connection state machine (conn.go) through a
// tlsSock, the subset of gnet.Conn the machine uses (sock.go). A plaintext
// connection is untouched: it stays on the event loops.
//
// Per TLS connection there are two goroutines. The reader does the TLS
// handshake, then reads and decrypts into the inbound buffer, and writes
// the answers made while it ran onTraffic (those answered inline) itself,
// once onTraffic is done. The writer encrypts and writes the rest: the
// answers of workers, and those the reader found a write under way for. onTraffic, the machine's one
// entry point, runs under the sock's mutex on whichever goroutine has work
// for it first: the reader after it read, a worker whose answer is ready
// (Wake), the writer once a paused connection's answers drained, the
// housekeeper. A goroutine that finds the mutex taken leaves a wake flag
// the holder sees before it lets go, so no work is lost and none waits:
// an answer made inline while onTraffic runs (Inliner's later.Answer
// before Inline returns) only sets the flag. onTraffic itself never
// blocks, as on an event loop: Write only appends to the outbound buffer.
//
// Everything the event loops bound is bounded the same way, since the
// same machine decides: request data, paused connections and the receive
// queue, requests in flight, frame and idle deadlines. The handshake
// deadline runs from the moment the connection is accepted, so it covers
// the TLS handshake: a client that stalls in it is closed like one that
// never sends STARTUP. The connection caps are applied at accept, before
// any TLS work.
//
// Optional TLS (a listener taking both) reads nothing to decide: it peeks
// at the first byte (MSG_PEEK), as Netty's OptionalSslHandler looks at
// the first record. A TLS connection starts with a handshake record
// (0x16); a CQL frame starts with its version, never 0x16. Plaintext
// connections then go to the event loops with the byte still unread.

// closeFlush bounds the last write of answers already made when a TLS
// connection closes (a PROTOCOL_ERROR before the close, say).
const closeFlush = time.Second

// Reasons a TLS connection closes: the Closed metric's label.
const (
	reasonTLS   = "tls_handshake" // the TLS handshake failed
	reasonSniff = "tls_sniff"     // closed before its first byte came
)

// listenMode is how a listener treats the connections it accepts.
type listenMode int

const (
	modePlain    listenMode = iota
	modeTLS                 // TLS only: a plaintext client fails the handshake
	modeOptional            // TLS or plaintext, by the first byte
)

// tlsSock is a TLS connection served by goroutines. See the top of the
// file.
type tlsSock struct {
	s  *Server
	nc net.Conn
	tc *tls.Conn
	cn *conn

	mu   sync.Mutex  // held while onTraffic runs
	wake atomic.Bool // onTraffic has work
	dead bool        // under mu: forgotten; onTraffic runs no more

	inMu sync.Mutex
	in   []byte // received and not discarded: in[r:]
	r    int

	outMu   sync.Mutex
	out     []byte // answers not yet taken by a writer
	spare   []byte
	writing int           // bytes being written
	signal  chan struct{} // wakes the writer
	// wmu is held while the outbound buffer is written, by the writer
	// goroutine or by the reader (direct).
	wmu sync.Mutex
	// direct (under mu) says onTraffic runs on the reader, which writes
	// the answers itself once it lets go of mu: Write need not wake the
	// writer.
	direct bool

	closing   atomic.Bool
	closeOnce sync.Once
}

var _ sock = (*tlsSock)(nil)

// Peek implements sock.
func (t *tlsSock) Peek(n int) ([]byte, error) {
	t.inMu.Lock()
	defer t.inMu.Unlock()
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
	t.inMu.Lock()
	defer t.inMu.Unlock()
	n = min(n, len(t.in)-t.r)
	t.r += n
	switch {
	case t.r == len(t.in):
		t.in, t.r = t.in[:0], 0
	case t.r > cap(t.in)/2:
		k := copy(t.in, t.in[t.r:])
		t.in, t.r = t.in[:k], 0
	}
	return n, nil
}

// InboundBuffered implements sock.
func (t *tlsSock) InboundBuffered() int {
	t.inMu.Lock()
	defer t.inMu.Unlock()
	return len(t.in) - t.r
}

// OutboundBuffered implements sock: answers not yet written to the socket.
func (t *tlsSock) OutboundBuffered() int {
	t.outMu.Lock()
	defer t.outMu.Unlock()
	return len(t.out) + t.writing
}

// Write implements sock: it queues b for the writer.
func (t *tlsSock) Write(b []byte) (int, error) {
	t.outMu.Lock()
	t.out = append(t.out, b...)
	t.outMu.Unlock()
	if !t.direct {
		t.poke()
	}
	return len(b), nil
}

// Writev implements sock.
func (t *tlsSock) Writev(bs [][]byte) (int, error) {
	t.outMu.Lock()
	n := 0
	for _, b := range bs {
		t.out = append(t.out, b...)
		n += len(b)
	}
	t.outMu.Unlock()
	if !t.direct {
		t.poke()
	}
	return n, nil
}

func (t *tlsSock) poke() {
	select {
	case t.signal <- struct{}{}:
	default:
	}
}

// Wake implements sock: onTraffic runs soon, on this goroutine or the one
// running it now.
func (t *tlsSock) Wake(gnet.AsyncCallback) error {
	t.kick()
	return nil
}

// Close implements sock: reading stops at once; the answers already made
// get closeFlush to leave.
func (t *tlsSock) Close() error {
	t.closeOnce.Do(func() {
		t.closing.Store(true)
		_ = t.nc.SetReadDeadline(time.Unix(1, 0))
		_ = t.nc.SetWriteDeadline(time.Now().Add(closeFlush))
		t.poke()
	})
	return nil
}

// RemoteAddr implements sock.
func (t *tlsSock) RemoteAddr() net.Addr { return t.nc.RemoteAddr() }

// kick runs onTraffic until no goroutine has asked for it again.
func (t *tlsSock) kick() { t.run(false) }

// run is kick; on the reader (direct) the answers onTraffic makes are
// written by the caller, sparing the writer goroutine a wake-up for
// every request answered inline.
func (t *tlsSock) run(direct bool) {
	t.wake.Store(true)
	for t.wake.Load() && t.mu.TryLock() {
		t.direct = direct
		for t.wake.Swap(false) {
			if t.dead {
				break
			}
			if t.cn.onTraffic() == gnet.Close {
				t.Close()
			}
		}
		t.direct = false
		t.mu.Unlock()
	}
}

// drain writes the outbound buffer until it is empty.
// REQUIRES: wmu held.
func (t *tlsSock) drain() error { return t.drainTo(t.tc) }

func (t *tlsSock) drainTo(w io.Writer) error {
	for {
		t.outMu.Lock()
		if len(t.out) == 0 {
			t.outMu.Unlock()
			return nil
		}
		// NB: buf leaves the pair of buffers while it is written, so
		// Write never appends to the bytes being written.
		buf := t.out
		t.out, t.spare, t.writing = t.spare[:0], nil, len(buf)
		t.outMu.Unlock()
		_, err := w.Write(buf)
		t.outMu.Lock()
		t.spare, t.writing = buf[:0], 0
		t.outMu.Unlock()
		if err != nil {
			return err
		}
		if t.cn.paused.Load() {
			t.kick() // its answers drained: it may resume
		}
	}
}

// serveTLS serves one TLS connection until it closes; it owns the
// connection's goroutines and returns once they have.
func (s *Server) serveTLS(nc net.Conn, a *admission) {
	t := &tlsSock{s: s, nc: nc, signal: make(chan struct{}, 1)}
	t.cn = s.open(t, a)
	if s.draining.Load() {
		t.Close()
	}
	t.tc = tls.Server(nc, s.opts.TLS)
	err := t.tc.Handshake()
	if err != nil {
		if !t.closing.Load() { // not closed by a deadline or shutdown, which said why
			s.tlsRefused(t.cn, err)
		}
	} else {
		writerDone := make(chan struct{})
		go func() {
			defer close(writerDone)
			t.writeLoop()
		}()
		t.readLoop()
		t.Close()
		<-writerDone
	}
	t.mu.Lock()
	t.dead = true
	s.forget(t.cn)
	t.mu.Unlock()
	_ = nc.Close()
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

func (t *tlsSock) readLoop() {
	buf := make([]byte, 16<<10) // one TLS record's plaintext
	for {
		n, err := t.tc.Read(buf)
		if n > 0 {
			t.inMu.Lock()
			t.in = append(t.in, buf[:n]...)
			t.inMu.Unlock()
			t.run(true)
			// Write what the reader answered, unless a write is under
			// way: then the writer is told, since it may be past its
			// last look at the buffer.
			if t.wmu.TryLock() {
				werr := t.drain()
				t.wmu.Unlock()
				if werr != nil {
					t.Close()
				}
			} else {
				t.poke()
			}
		}
		if err != nil {
			if !t.closing.Load() && !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
				t.s.log.Debug("TLS client connection failed", "remote", t.cn.remote, "err", err)
			}
			return
		}
	}
}

// writeLoop writes the outbound buffer until the connection closes, then
// what is left, within closeFlush.
func (t *tlsSock) writeLoop() {
	for {
		<-t.signal
		t.wmu.Lock()
		err := t.drain()
		t.wmu.Unlock()
		if err != nil {
			t.Close()
			return
		}
		if t.closing.Load() {
			return
		}
	}
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

// closeTLS closes every TLS connection and every connection still being
// sniffed, and waits for their goroutines.
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
