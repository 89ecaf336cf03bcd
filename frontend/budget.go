package frontend

import (
	"fmt"
	"net/netip"
	"sync/atomic"
)

// Request data is every byte of a request the server holds: a frame whose
// header has arrived (its whole declared length is taken when the header
// is read, before the body comes), frames left in a paused connection's
// inbound buffer, and requests read and not yet answered. It is bounded
// per client address and node-wide, like Cassandra's
// native_transport_max_request_data_in_flight_per_ip and
// native_transport_max_request_data_in_flight. A frame that does not fit
// is answered OVERLOADED on its stream and its body skipped as it arrives,
// so the connection stays usable and the bytes are never held.

// budget counts bytes against a limit. Its methods are safe for concurrent
// use.
type budget struct {
	used  atomic.Int64
	limit int64 // <= 0: no limit
}

// take adds n if the result stays within the limit.
func (b *budget) take(n int64) bool {
	for {
		u := b.used.Load()
		if b.limit > 0 && u+n > b.limit {
			return false
		}
		if b.used.CompareAndSwap(u, u+n) {
			return true
		}
	}
}

func (b *budget) give(n int64) { b.used.Add(-n) }

// peer is what the server keeps per client address: the connections open
// from it and its share of the request data. Connections hold a pointer,
// so requests answered after their address was forgotten still give back
// to the budget they took from.
type peer struct {
	conns int // guarded by Server.mu
	data  budget
}

// takeData takes n bytes of request data for a connection from p, from
// both p's budget and the node's; on failure it says why, in words for an
// OVERLOADED message.
func (s *Server) takeData(p *peer, n int64) (ok bool, why string) {
	if !p.data.take(n) {
		return false, s.dataUse(p, n)
	}
	if !s.data.take(n) {
		p.data.give(n)
		return false, s.dataUse(p, n)
	}
	return true, ""
}

func (s *Server) giveData(p *peer, n int64) {
	if n != 0 {
		p.data.give(n)
		s.data.give(n)
	}
}

// dataUse words the state of the budgets after a request of n bytes did
// not fit, after Cassandra's OVERLOADED message for the same condition.
func (s *Server) dataUse(p *peer, n int64) string {
	return fmt.Sprintf("Server is in overloaded state. Cannot accept a request of %d bytes at this point: "+
		"using %d/%d bytes of endpoint limit and %d/%d bytes of global limit "+
		"(native_transport_max_request_data_in_flight_per_ip, native_transport_max_request_data_in_flight)",
		n, p.data.used.Load(), p.data.limit, s.data.used.Load(), s.data.limit)
}

// peerFor returns the peer of ip, creating it.
// REQUIRES: s.mu held.
func (s *Server) peerFor(ip netip.Addr) *peer {
	p := s.peers[ip]
	if p == nil {
		p = &peer{data: budget{limit: int64(s.opts.MaxRequestDataPerIP)}}
		s.peers[ip] = p
	}
	return p
}
