package frontend

import (
	"fmt"

	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"
)

// Requests in flight are bounded per connection (MaxRequestsPerConn) and
// node-wide (MaxQueued), and the node-wide budget is shared fairly: once
// half of it is in use, a connection may start another request only while
// it has fewer than its fair share, MaxQueued/(n+2) with n the other
// connections that have requests in flight. A greedy connection alone
// tops out at half the budget; when others arrive, each is below its
// share and gets in, while the greedy one waits until it is back under
// its own, so k greedy connections together leave room for more.
// Requests waiting on a connection whose answers are backed up
// (pool.heldTasks) count against their connection's bound only: they wait
// on their own client, not on the node.
//
// What a request over a limit gets depends on its client, as in
// Cassandra. By default, backpressure: the request is left unread in the
// connection's input and the connection is no longer read (it stalls), as
// Cassandra's channel stops reading, until the request may start; then it
// is decoded and admitted like any other. A client whose STARTUP set
// THROW_ON_OVERLOAD to "1" asked to be told instead: its request is
// answered OVERLOADED on its stream at once. A draining server answers
// OVERLOADED "shutting down" to both, so that a drain ends.
//
// A stalled connection must be woken when the request may start. Over its
// own bound, its own requests ending wake it (end). Over the node's bound
// or its fair share, any request ending may make room: such connections
// queue in Server.waitQ and each request that ends wakes the first one
// still stalled, which looks again and, when it still may not start,
// queues again at the back. The housekeeper wakes one more every sweep,
// so a wake lost to a connection that closed, or found itself paused for
// its answers, delays the next in line by a sweep at most; and Shutdown
// wakes them all.

// Limits a request can be over: the label of the Overloaded and
// Backpressure metrics.
const (
	limitShutdown   = "shutdown"
	limitConnection = "connection"
	limitServer     = "server"
	limitFairShare  = "fair_share"
)

// refusal is why a connection may not start a request now, limit "" for
// none; mine, total and share word the fair share's message.
type refusal struct {
	limit              string
	mine, total, share int64
}

// refuse says whether cn may start a request now, and if not why. It
// changes nothing.
func (s *Server) refuse(cn *conn) refusal {
	if s.draining.Load() {
		return refusal{limit: limitShutdown}
	}
	mine := int64(cn.inflight.Load())
	if mine >= int64(s.opts.MaxRequestsPerConn) {
		return refusal{limit: limitConnection}
	}
	total, limit := s.inflight.Load()-s.pool.heldTasks.Load(), int64(s.opts.MaxQueued)
	if total >= limit {
		return refusal{limit: limitServer}
	}
	if total >= limit/2 {
		others := s.activeConns.Load()
		if mine > 0 {
			others--
		}
		if share := limit / (others + 2); mine >= share {
			return refusal{limit: limitFairShare, mine: mine, total: total, share: share}
		}
	}
	return refusal{}
}

// overloaded is Cassandra's answer to a request refused for r.
func (r refusal) overloaded(perConn int) message.Message {
	switch r.limit {
	case limitShutdown:
		return &message.Overloaded{ErrorMessage: "Server is shutting down"}
	case limitConnection:
		return &message.Overloaded{ErrorMessage: fmt.Sprintf(
			"Server is in overloaded state. Cannot accept more requests on this connection (limit %d)", perConn)}
	case limitFairShare:
		return &message.Overloaded{ErrorMessage: fmt.Sprintf(
			"Server is in overloaded state. Cannot accept more requests on this connection at this point: "+
				"it has %d of the %d requests in flight, its fair share is %d", r.mine, r.total, r.share)}
	}
	return &message.Overloaded{ErrorMessage: "Server is in overloaded state. Cannot accept more requests at this point"}
}

// admitRequest returns the OVERLOADED answer for a request cn may not start
// now, or nil.
func (s *Server) admitRequest(cn *conn) message.Message {
	r := s.refuse(cn)
	if r.limit == "" {
		return nil
	}
	s.m.Overloaded.WithLabelValues(r.limit).Inc()
	return r.overloaded(s.opts.MaxRequestsPerConn)
}

// mustWait reports whether the request with opcode op, whole at the head
// of cn's input, must stay there unread: it goes through admission, is
// over a limit, and the client did not ask for OVERLOADED. cn is then
// stalled until woken (see above). A request it lets start is marked
// cleared, so that admit does not ask the limits again: the answer is
// the one the client waited for, and a client that did not ask for
// OVERLOADED is not given one by a second look.
// REQUIRES: on cn's event loop.
func (cn *conn) mustWait(op primitive.OpCode) bool {
	cn.cleared = false
	if cn.throwOnOverload || !cn.admitted(op) {
		return false
	}
	s := cn.s
	if r := s.refuse(cn); r.limit == "" || r.limit == limitShutdown {
		cn.cleared = r.limit == ""
		cn.stall(false, "")
		return false
	}
	// Armed before looking again: a request that ends after that look
	// finds cn armed and wakes it. NB: over its own bound cn has requests
	// in flight, whose ends wake it; over the node's, it queues first.
	cn.wakeMe.Store(true)
	queued := false
	for {
		r := s.refuse(cn)
		switch {
		case r.limit == "" || r.limit == limitShutdown:
			cn.cleared = r.limit == ""
			cn.stall(false, "") // a queued entry is skipped when popped
			return false
		case r.limit != limitConnection && !queued:
			s.enqueue(cn)
			queued = true
			continue
		}
		cn.stall(true, r.limit)
		return true
	}
}

// stall records whether cn stopped reading for a request that must wait,
// counting each stop in the Backpressure metric. A connection that reads
// again is disarmed, so that no wake is spent on it.
func (cn *conn) stall(on bool, limit string) {
	if !on && cn.wakeMe.Load() {
		cn.wakeMe.Store(false)
	}
	if cn.stalled.Load() == on {
		return
	}
	if on {
		// The frame is whole: from now it waits on the server, and no
		// frame deadline runs (settle starts one again once it is read).
		cn.frameStart.Store(0)
		cn.s.m.Backpressure.WithLabelValues(limit).Inc()
	}
	cn.stalled.Store(on)
}

// wake makes a stalled connection look at its input again, once per
// arming; it reports whether it did.
func (cn *conn) wake() bool {
	if !cn.wakeMe.CompareAndSwap(true, false) {
		return false
	}
	_ = cn.gc.Wake(nil)
	return true
}

// enqueue puts cn in line for node capacity, unless it is in line.
func (s *Server) enqueue(cn *conn) {
	s.waitMu.Lock()
	if !cn.inWaitQ {
		cn.inWaitQ = true
		s.waitQ.push(cn)
		s.waiters.Add(1)
	}
	s.waitMu.Unlock()
}

// wakeWaiter wakes the first connection in line that is still stalled,
// dropping from the line those that are not.
func (s *Server) wakeWaiter() {
	if s.waiters.Load() == 0 {
		return
	}
	s.waitMu.Lock()
	defer s.waitMu.Unlock()
	for {
		cn, ok := s.waitQ.pop()
		if !ok {
			return
		}
		s.waiters.Add(-1)
		cn.inWaitQ = false
		if cn.wake() {
			return
		}
	}
}

// wakeAll wakes every stalled connection: a draining server answers what
// they wait with.
func (s *Server) wakeAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for cn := range s.conns {
		cn.wake()
	}
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
// connection idle from the moment its last request was answered. The
// counts drop before the stalled connections are woken, so that what a
// woken connection looks at has room. The gauge rises after the counts
// (begin) and drops before them, so that it never shows more than the
// limits let in: a request admitted in the moment between would
// otherwise be seen beside the one whose place it took.
func (s *Server) end(cn *conn) {
	if s.opts.IdleTimeout > 0 {
		cn.lastActive.Store(s.opts.Now().UnixNano())
	}
	s.m.InFlight.Dec()
	if cn.inflight.Add(-1) == 0 {
		s.activeConns.Add(-1)
	}
	s.inflight.Add(-1)
	cn.wake()
	s.wakeWaiter()
}
