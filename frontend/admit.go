package frontend

import (
	"fmt"

	"github.com/datastax/go-cassandra-native-protocol/message"
)

// Requests in flight are bounded per connection (MaxRequestsPerConn) and
// node-wide (MaxQueued).

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
	total, limit := s.inflight.Load(), int64(s.opts.MaxQueued)
	if total >= limit {
		s.m.Overloaded.WithLabelValues("server").Inc()
		return &message.Overloaded{ErrorMessage: "Server is in overloaded state. Cannot accept more requests at this point"}
	}
	return nil
}

// begin counts a request of cn in flight; end counts it answered.
func (s *Server) begin(cn *conn) {
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
