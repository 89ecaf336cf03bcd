package frontend

import (
	"encoding/binary"
	"fmt"
	"time"

	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"

	"github.com/cqld/cqld/protocol"
)

// Outbound backpressure. Whatever the socket does not take at once gnet
// keeps in the connection's outbound buffer, without bound, so a client
// that sends requests and does not read the answers would make the node
// hold them all. A connection's answers are counted from when a worker
// makes them (conn.answers: the workers' pending answers and gnet's
// outbound). Once they pass SendQueueCapacity, or while the node's pass
// MaxResponseData and the connection has any, its requests already read
// lose their turn at the workers (pool.go), so they wait before they run
// rather than answer into memory, until its answers are below half the
// capacity. Once the part gnet holds (what the socket did not take) passes
// the same bounds, the connection is paused too: its event loop stops
// cutting frames, as Cassandra's channel stops reading when it is not
// writable, until that part is below half the capacity. The requests
// wait in the inbound buffer, within the receive queue (conn.settle), and
// in the connection's queue, within MaxRequestsPerConn.
//
// So a connection holds at most SendQueueCapacity of answers, plus the
// answers of its requests running when it passed it (at most
// MaxRunningPerConn of them, each within MaxFrameSize; pipelined inline answers add at most
// maxPendingOut and one answer), and the node MaxResponseData plus those
// of the requests running.
//
// gnet tells nobody when an outbound buffer drains, so the housekeeper
// wakes a connection that has answers queued to look again: at the next
// sweep after a look that saw them drain, then backing off, to one sweep
// in maxWakeSweeps, while they do not. Sweeps come every minWake while any
// connection waits; counting sweeps rather than reading the clock keeps
// this working under a test's fake clock.
const (
	minWake       = 5 * time.Millisecond
	maxWakeSweeps = 200
)

// flush writes the event loop's answers and the workers' pending ones in
// one system call. gnet copies whatever the socket does not take, so both
// buffers are reused.
func (cn *conn) flush() {
	cn.wmu.Lock()
	worker := cn.pending
	cn.pending = cn.spare[:0]
	cn.scheduled = false
	cn.wmu.Unlock()
	switch {
	case len(cn.out) > 0 && len(worker) > 0:
		_, _ = cn.gc.Writev([][]byte{cn.out, worker})
	case len(cn.out) > 0:
		_, _ = cn.gc.Write(cn.out)
	case len(worker) > 0:
		_, _ = cn.gc.Write(worker)
	}
	if wrote := len(cn.out) + len(worker); wrote > 0 {
		cn.s.m.BytesOut.Add(float64(wrote))
		if cn.closed.Load() {
			// The write failed and gnet closed the connection then
			// and there: OnClose gave back all its answers, these too.
			cn.out = cn.out[:0]
			return
		}
		cn.addAnswers(-int64(len(worker))) // now in gnet's buffer or sent
		if cn.s.opts.IdleTimeout > 0 {
			cn.lastActive.Store(cn.s.opts.Now().UnixNano())
		}
	}
	cn.out = cn.out[:0]
	cn.spare = worker[:0]
	cn.checkOutbound()
}

// checkOutbound accounts for the answers gnet holds, pauses or resumes
// the connection and gives its queue its turn back once it may run again.
func (cn *conn) checkOutbound() {
	s := cn.s
	q := int64(cn.gc.OutboundBuffered())
	drained := q < cn.outQueued
	if q != cn.outQueued {
		cn.addAnswers(q - cn.outQueued)
		cn.outQueued = q
	}
	limit := int64(s.opts.SendQueueCapacity)
	was := cn.paused.Load()
	if was {
		limit /= 2
	}
	pause := q > limit || (q > 0 && s.outBytes.Load() > int64(s.opts.MaxResponseData))
	if pause != was {
		cn.paused.Store(pause)
		if pause {
			s.pausedConns.Add(1)
		} else {
			s.pausedConns.Add(-1)
		}
	}
	if cn.run.held.Load() && (!cn.backedPast(int64(s.opts.SendQueueCapacity)/2) || s.draining.Load()) {
		s.pool.resume(&cn.run)
	}
	if q == 0 {
		cn.setWake(0)
		cn.wakeBackoff = 0
		return
	}
	if drained || cn.wakeBackoff == 0 {
		cn.wakeBackoff = 1
	} else {
		cn.wakeBackoff = min(2*cn.wakeBackoff, maxWakeSweeps)
	}
	cn.setWake(s.sweeps.Load() + cn.wakeBackoff)
}

// backedPast reports whether the connection's answers are past limit, or
// it has any while the node's are past MaxResponseData.
func (cn *conn) backedPast(limit int64) bool {
	a := cn.answers.Load()
	return a > limit || (a > 0 && cn.s.outBytes.Load() > int64(cn.s.opts.MaxResponseData))
}

// answersBacked is what a worker asks before it runs one of the
// connection's requests: whether its answers are backed up. A draining
// server runs every request it took, so that the drain ends.
func (cn *conn) answersBacked() bool {
	return cn.backedPast(int64(cn.s.opts.SendQueueCapacity)) && !cn.s.draining.Load()
}

// addAnswers counts n more bytes of the connection's answers (fewer, when
// negative) in its count and the node's.
func (cn *conn) addAnswers(n int64) {
	cn.answers.Add(n)
	cn.s.outBytes.Add(n)
}

// setWake asks the housekeeper to wake the connection at sweep t, or not
// (0).
func (cn *conn) setWake(t int64) {
	old := cn.wakeAt.Swap(t)
	switch {
	case old == 0 && t != 0:
		cn.s.waiting.Add(1)
	case old != 0 && t == 0:
		cn.s.waiting.Add(-1)
	}
}

// encode appends a response to dst as bytes ready for the socket: a frame,
// wrapped in segments once the connection is framed. An answer that cannot
// be encoded is answered SERVER_ERROR on its stream instead. err != nil
// means not even that could be framed: dst comes back as it was, and the
// connection must close, or its client would wait on the stream forever.
func (cn *conn) encode(dst []byte, version primitive.ProtocolVersion, stream int16, resp *protocol.Response) ([]byte, error) {
	frameDst := dst
	if cn.framed {
		frameDst = nil // the frame goes into segments appended to dst
	}
	out, err := cn.s.appendResponse(frameDst, version, stream, resp, cn.comp)
	var instead message.Message
	switch {
	case err != nil:
		cn.s.log.Error("cannot encode response", "stream", stream, "err", err)
		instead = &message.ServerError{ErrorMessage: err.Error()}
	case len(out)-len(frameDst)-protocol.HeaderLen > cn.s.opts.MaxFrameSize && resp.Message.GetOpCode() != protocol.OpCodePreparedBatch:
		// A frame a client with the same limit would refuse: the
		// coordinator keeps the reads it builds within it, and this
		// catches any other answer. A PREPARED_BATCH is bounded by its
		// request (at most MaxPrepareBatch statements of a request that
		// fit the limit), not by the frame: docs/prepare_batch.spec.
		instead = &message.Invalid{ErrorMessage: protocol.ResponseTooBig(cn.s.opts.MaxFrameSize)}
	}
	if instead != nil {
		out, err = cn.s.appendResponse(frameDst[:len(frameDst):len(frameDst)], version, stream, &protocol.Response{Message: instead}, cn.comp)
		if err != nil {
			return dst, fmt.Errorf("frontend: encode %v for stream %d: %w", instead.GetOpCode(), stream, err)
		}
	}
	if !cn.framed {
		return out, nil
	}
	framed, err := protocol.AppendSegments(dst, cn.segLZ4, out)
	if err != nil {
		return dst, fmt.Errorf("frontend: frame response on stream %d: %w", stream, err)
	}
	return framed, nil
}

// emit encodes an answer made on the event loop into cn.out. A failure
// breaks the connection, which onTraffic then closes.
func (cn *conn) emit(version primitive.ProtocolVersion, stream int16, resp *protocol.Response) {
	out, err := cn.encode(cn.out, version, stream, resp)
	if err != nil {
		if cn.broken == nil {
			cn.broken = err
		}
		return
	}
	cn.out = out
}

// send writes a response from any goroutine; one that cannot be framed
// closes the connection.
func (cn *conn) send(stream int16, resp *protocol.Response) {
	if cn.closed.Load() {
		return
	}
	out, err := cn.encode(nil, cn.version, stream, resp)
	if err != nil {
		cn.s.closing(cn, reasonEncode, err)
		_ = cn.gc.Close()
		return
	}
	cn.wmu.Lock()
	if cn.wclosed {
		cn.wmu.Unlock()
		return
	}
	cn.pending = append(cn.pending, out...)
	cn.addAnswers(int64(len(out)))
	wake := !cn.scheduled
	cn.scheduled = true
	cn.wmu.Unlock()
	if wake {
		_ = cn.gc.Wake(nil) // OnTraffic runs and flushes
	}
}

// versionFor is the version to answer h in: the connection's once STARTUP
// settled it, the frame's own before.
func (cn *conn) versionFor(h protocol.Header) primitive.ProtocolVersion {
	if cn.version != 0 {
		return cn.version
	}
	return h.Version
}

// reply answers a frame from the event loop.
func (cn *conn) reply(h protocol.Header, msg message.Message) {
	cn.emit(cn.versionFor(h), h.Stream, &protocol.Response{Message: msg})
}

// replyFrame answers h with a pre-encoded, uncompressed frame, stream id
// patched in.
func (cn *conn) replyFrame(h protocol.Header, frame []byte) {
	if !cn.framed {
		start := len(cn.out)
		cn.out = append(cn.out, frame...)
		binary.BigEndian.PutUint16(cn.out[start+2:], uint16(h.Stream))
		return
	}
	env := append([]byte(nil), frame...)
	binary.BigEndian.PutUint16(env[2:], uint16(h.Stream))
	out, err := protocol.AppendSegments(cn.out, cn.segLZ4, env)
	if err != nil && cn.broken == nil {
		cn.broken = fmt.Errorf("frontend: frame answer on stream %d: %w", h.Stream, err)
		return
	}
	cn.out = out
}

func (cn *conn) replyError(h protocol.Header, msg string) {
	cn.s.m.Requests.WithLabelValues(opName(h.OpCode), "protocol_error").Inc()
	cn.reply(h, &message.ProtocolError{ErrorMessage: msg})
}

// release accounts for everything the connection held once gnet closed it.
// REQUIRES: on the event loop, from OnClose.
func (cn *conn) release() {
	s := cn.s
	cn.closed.Store(true)
	cn.cancel()
	cn.wmu.Lock()
	cn.wclosed = true
	cn.pending = nil
	cn.wmu.Unlock()
	cn.addAnswers(-cn.answers.Load()) // no answer is added once wclosed
	cn.outQueued = 0
	s.pool.drop(&cn.run)
	s.giveData(cn.peer, cn.held)
	cn.held = 0
	if cn.paused.Swap(false) {
		s.pausedConns.Add(-1)
	}
	cn.setWake(0)
	cn.wakeMe.Store(false)
	if cn.stalled.Swap(false) {
		s.wakeWaiter() // it may have been woken: the next in line gets the wake
	}
}
