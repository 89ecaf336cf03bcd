package frontend

import (
	"fmt"
	"time"
)

// The housekeeper is one goroutine that, every sweep, closes connections
// past their deadlines, wakes connections whose outbound must be looked at
// again (write.go) and the first connection waiting for the node's
// capacity (admit.go), and samples the byte gauges. Deadlines are read from
// Options.Now, so tests move a fake clock instead of sleeping.
//
// The deadlines, each off when its option is 0:
//   - HandshakeTimeout: STARTUP must have been answered this long after
//     the connection opened.
//   - FrameTimeout: a frame whose first byte has arrived must be whole
//     this long after; a paused or stalled connection, whose frames wait
//     for the server, is exempt.
//   - IdleTimeout: a connection with nothing in flight (and no request
//     waiting for the server's capacity) must have sent a
//     whole frame, or been sent an answer, this recently. Single bytes do
//     not count, so trickling a frame a byte at a time keeps nothing open.

// sweepEvery is the housekeeper's period when no outbound waits: a
// quarter of the shortest deadline, within [minWake, 100ms].
func (s *Server) sweepEvery() time.Duration {
	d := 100 * time.Millisecond
	for _, t := range []time.Duration{s.opts.IdleTimeout, s.opts.FrameTimeout, s.opts.HandshakeTimeout} {
		if t > 0 {
			d = min(d, t/4)
		}
	}
	return max(d, minWake)
}

// housekeep sweeps until stopHouse closes.
func (s *Server) housekeep() {
	defer s.houseDone.Done()
	every := s.sweepEvery()
	t := time.NewTimer(every)
	defer t.Stop()
	var conns []*conn
	for {
		select {
		case <-s.stopHouse:
			return
		case <-t.C:
		}
		conns = s.sweep(s.opts.Now(), conns[:0])
		next := every
		if s.waiting.Load() > 0 {
			next = min(next, minWake)
		}
		t.Reset(next)
	}
}

// sweep runs one pass at now; conns is scratch space, returned for reuse.
func (s *Server) sweep(now time.Time, conns []*conn) []*conn {
	s.mu.Lock()
	for cn := range s.conns {
		conns = append(conns, cn)
	}
	s.mu.Unlock()
	sweep := s.sweeps.Add(1)
	at := now.UnixNano()
	past := func(since int64, d time.Duration) bool { return d > 0 && since != 0 && at-since > int64(d) }
	held := 0
	for _, cn := range conns {
		if cn.run.held.Load() {
			held++
		}
		switch {
		case !cn.ready.Load() && past(cn.openedAt, s.opts.HandshakeTimeout):
			s.expire(cn, reasonHandshake, s.opts.HandshakeTimeout)
		case !cn.paused.Load() && !cn.stalled.Load() && past(cn.frameStart.Load(), s.opts.FrameTimeout):
			s.expire(cn, reasonFrame, s.opts.FrameTimeout)
		case cn.inflight.Load() == 0 && !cn.stalled.Load() && past(cn.lastActive.Load(), s.opts.IdleTimeout):
			s.expire(cn, reasonIdle, s.opts.IdleTimeout)
		default:
			if w := cn.wakeAt.Load(); w != 0 && sweep >= w {
				_ = cn.gc.Wake(nil) // onTraffic looks at the outbound
			}
		}
	}
	// A wake lost to a connection that closed or was paused for its
	// answers would leave the next in line stalled with room free.
	s.wakeWaiter()
	s.m.RequestData.Set(float64(s.data.used.Load()))
	s.m.ResponseData.Set(float64(s.outBytes.Load()))
	s.m.Paused.Set(float64(s.pausedConns.Load()))
	s.m.Held.Set(float64(held))
	clear(conns)
	return conns
}

// expire closes a connection past a deadline, once.
func (s *Server) expire(cn *conn, reason string, after time.Duration) {
	if cn.closing.CompareAndSwap(false, true) {
		s.closing(cn, reason, fmt.Errorf("after %v", after))
		_ = cn.gc.Close()
	}
}
