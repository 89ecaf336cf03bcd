package frontend

import (
	"fmt"

	"github.com/datastax/go-cassandra-native-protocol/message"
)

// Requests in flight are bounded per connection (MaxRequestsPerConn) and
// node-wide (MaxQueued), and the node-wide budget is shared fairly: once
// half of it is in use, a connection may start another request only while
// it has fewer than its fair share, MaxQueued/(n+2) with n the other
// connections that have requests in flight. A greedy connection alone
// tops out at half the budget; when others arrive, each is below its
// share and gets in, while the greedy one gets OVERLOADED until it is
// back under its own, so k greedy connections together leave room for
// more. Requests waiting on a connection whose answers are backed up
// (pool.heldTasks) count against their connection's bound only: they wait
// on their own client, not on the node.

// admitRequest returns the OVERLOADED answer for a request cn may not start
// now, or nil.
func (s *Server) admitRequest(cn *conn) message.Message {
	if s.draining.Load() {
		s.m.Overloaded.WithLabelValues("shutdown").Inc()
		return &message.Overloaded{ErrorMessage: "Server is shutting down"}
	}
	mine := int64(cn.inflight.Load())
	if mine >= int64(s.opts.MaxRequestsPerConn) {
		s.m.Overloaded.WithLabelValues("connection").Inc()
		return &message.Overloaded{ErrorMessage: fmt.Sprintf(
			"Server is in overloaded state. Cannot accept more requests on this connection (limit %d)", s.opts.MaxRequestsPerConn)}
	}
	total, limit := s.inflight.Load()-s.pool.heldTasks.Load(), int64(s.opts.MaxQueued)
	if total >= limit {
		s.m.Overloaded.WithLabelValues("server").Inc()
		return &message.Overloaded{ErrorMessage: "Server is in overloaded state. Cannot accept more requests at this point"}
	}
	if total >= limit/2 {
		others := s.activeConns.Load()
		if mine > 0 {
			others--
		}
		if share := limit / (others + 2); mine >= share {
			s.m.Overloaded.WithLabelValues("fair_share").Inc()
			return &message.Overloaded{ErrorMessage: fmt.Sprintf(
				"Server is in overloaded state. Cannot accept more requests on this connection at this point: "+
					"it has %d of the %d requests in flight, its fair share is %d", mine, total, share)}
		}
	}
	return nil
}

// begin counts a request of cn in flight; end counts it answered.
func (s *Server) begin(cn *conn) {
	cn.requests.Add(1)
	s.requests.Add(1)
	if cn.inflight.Add(1) == 1 {
		s.activeConns.Add(1)
	}
	s.inflight.Add(1)
	s.m.InFlight.Inc()
}

// NB: an answer is activity: lastActive is stored before the count drops,
// so the housekeeper, which reads the count first, never sees a
// connection idle from the moment its last request was answered.
func (s *Server) end(cn *conn) {
	if s.opts.IdleTimeout > 0 {
		cn.lastActive.Store(s.opts.Now().UnixNano())
	}
	if cn.inflight.Add(-1) == 0 {
		s.activeConns.Add(-1)
	}
	s.inflight.Add(-1)
	s.m.InFlight.Dec()
}
