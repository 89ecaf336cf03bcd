package frontend

import (
	"errors"
	"net"
	"net/netip"
	"os"
	"sync/atomic"
	"time"
)

// The server owns its listening socket instead of letting gnet accept:
// gnet v2.9.7's acceptor treats every accept(2) error but EAGAIN, EINTR,
// ECONNRESET and ECONNABORTED as fatal and shuts the whole engine down, so
// a single EMFILE would end the transport for good while the process
// lived on. Here one goroutine accepts, backs off while accept fails (as
// Netty stops accepting for a while and Cassandra keeps serving), applies
// the connection caps, and hands each socket to gnet's event loops with
// Client.EnrollContext, which serves it exactly as a listening engine
// would.

const (
	minAcceptBackoff = 5 * time.Millisecond
	maxAcceptBackoff = time.Second
)

// Reasons a connection is refused as soon as it is accepted: the Refused
// metric's label.
const (
	refusedMax   = "max_connections"
	refusedPerIP = "max_connections_per_ip"
	refusedError = "error" // the socket could not be handed to an event loop
)

// admission travels with an accepted socket into OnOpen.
type admission struct {
	ip   netip.Addr
	peer *peer
	// opened is set by OnOpen: from then on OnClose releases the slot.
	opened bool
	// tls is a TLS connection past its handshake, opened already.
	tls *tlsSock
}

// listener is one listening socket and how it treats what it accepts.
type listener struct {
	addr string
	ln   net.Listener
	mode listenMode
}

// acceptLoop accepts until the listener closes.
func (s *Server) acceptLoop(l listener) {
	defer s.acceptDone.Done()
	// The spare descriptor is held open so that a socket accepted at the
	// descriptor limit can still be handed to gnet, which duplicates it:
	// it is closed just before and opened again just after. Without it the
	// last socket accepted would be closed at once, not served.
	spare, _ := os.Open(os.DevNull)
	defer func() {
		if spare != nil {
			spare.Close()
		}
	}()
	var delay time.Duration
	for {
		nc, err := l.ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			delay = nextBackoff(delay)
			s.m.AcceptErrors.Inc()
			if s.acceptWarn.allow(s.opts.Now()) {
				s.log.Error("cannot accept client connections; retrying", "err", err, "retry_in", delay)
			}
			t := time.NewTimer(delay)
			select {
			case <-t.C:
			case <-s.stopAccept:
				t.Stop()
				return
			}
			continue
		}
		delay = 0
		if spare != nil {
			spare.Close()
		}
		s.serveAccepted(nc, l.mode)
		spare, _ = os.Open(os.DevNull) // nil while descriptors run out
	}
}

func nextBackoff(d time.Duration) time.Duration {
	if d == 0 {
		return minAcceptBackoff
	}
	return min(2*d, maxAcceptBackoff)
}

// serveAccepted applies the connection caps to an accepted socket and
// hands it to an event loop. A connection over a cap is closed at once, before it is
// read, as Cassandra does, with an error logged (at most once a minute)
// naming the setting.
func (s *Server) serveAccepted(nc net.Conn, mode listenMode) {
	ip := remoteIP(nc)
	p, reason, limit := s.takeSlot(ip)
	if reason != "" {
		nc.Close()
		s.m.Refused.WithLabelValues(reason).Inc()
		key, guard := "native_transport_max_concurrent_connections", &s.refuseWarn
		if reason == refusedPerIP {
			key, guard = key+"_per_ip", &s.refuseIPWarn
		}
		if guard.allow(s.opts.Now()) {
			s.log.Error("refusing client connection: connection limit reached", "remote", nc.RemoteAddr(), "limit", limit, "setting", key)
		}
		return
	}
	a := &admission{ip: ip, peer: p}
	switch mode {
	case modeTLS:
		s.tlsDone.Add(1)
		go func() {
			defer s.tlsDone.Done()
			s.serveTLS(nc, a)
		}()
	case modeOptional:
		s.tlsDone.Add(1)
		go func() {
			defer s.tlsDone.Done()
			s.sniff(nc, a)
		}()
	default:
		s.enroll(nc, a)
	}
}

// enroll hands an admitted plaintext connection to an event loop.
func (s *Server) enroll(nc net.Conn, a *admission) {
	s.enrollMu.Lock()
	defer s.enrollMu.Unlock()
	if s.enrollStopped {
		// Shutdown got here first: the connection is closed unserved.
		nc.Close()
		if !a.opened {
			s.releaseSlot(a.ip, a.peer)
		}
		return
	}
	// NB: EnrollContext closes nc (gnet serves a duplicate of its
	// descriptor) and returns after OnOpen ran, if it ran.
	// EnrollContext also returns no error when the loop could not register
	// the socket and OnOpen never ran.
	_, err := s.cli.EnrollContext(nc, a)
	opened := a.opened && (a.tls == nil || a.tls.gc.Load() != nil)
	if err == nil && opened {
		return
	}
	if !a.opened {
		s.releaseSlot(a.ip, a.peer) // a TLS connection's is released by its forget
	}
	s.m.Refused.WithLabelValues(refusedError).Inc()
	if err == nil {
		err = errors.New("the event loop did not take the socket")
	}
	if s.acceptWarn.allow(s.opts.Now()) {
		s.log.Error("cannot serve client connection", "remote", nc.RemoteAddr(), "err", err)
	}
}

func remoteIP(nc net.Conn) netip.Addr {
	if a, ok := nc.RemoteAddr().(*net.TCPAddr); ok {
		return a.AddrPort().Addr().Unmap()
	}
	return netip.Addr{}
}

// takeSlot counts a new connection against the caps and returns its
// address's peer, or says which cap refuses it.
func (s *Server) takeSlot(ip netip.Addr) (p *peer, reason string, limit int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if m := s.opts.MaxConnections; m > 0 && s.admitted >= m {
		return nil, refusedMax, m
	}
	if m := s.opts.MaxConnectionsPerIP; m > 0 && s.peers[ip] != nil && s.peers[ip].conns >= m {
		return nil, refusedPerIP, m
	}
	p = s.peerFor(ip)
	s.admitted++
	p.conns++
	return p, "", 0
}

func (s *Server) releaseSlot(ip netip.Addr, p *peer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.admitted--
	if p.conns--; p.conns <= 0 && s.peers[ip] == p {
		delete(s.peers, ip)
	}
}

// stopAccepting closes the listener and waits for the accept loop.
func (s *Server) stopAccepting() {
	s.stopOnce.Do(func() {
		close(s.stopAccept)
		for _, l := range s.lns {
			l.ln.Close()
		}
	})
	s.acceptDone.Wait()
}

// logGuard lets a repeated log line out at most once a minute, as
// Cassandra's NoSpamLogger does for the same conditions.
type logGuard struct{ last atomic.Int64 }

func (g *logGuard) allow(now time.Time) bool {
	last := g.last.Load()
	if last != 0 && now.UnixNano()-last < int64(time.Minute) {
		return false
	}
	return g.last.CompareAndSwap(last, now.UnixNano())
}
