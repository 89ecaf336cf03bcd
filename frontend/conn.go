package frontend

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"
	"github.com/panjf2000/gnet/v2"

	"github.com/cqld/cqld/protocol"
)

// connState is where a connection is in the handshake.
type connState int

const (
	stateNew   connState = iota // before STARTUP: only OPTIONS and STARTUP
	stateReady                  // after READY: everything but STARTUP
)

// maxPendingOut bounds cn.out while a batch of frames is being answered.
const maxPendingOut = 64 << 10

// Event type bits in conn.events.
const (
	evTopology uint32 = 1 << iota
	evStatus
	evSchema
)

var _ protocol.Later = (*conn)(nil)

// Reasons the server closes a connection: the Closed metric's label.
const (
	reasonProtocol = "protocol_error" // the byte stream is not the protocol
	reasonEncode   = "encode_error"   // an answer could not be framed
	reasonIdle     = "idle_timeout"
)

// conn is one client connection.
//
// NB: the event loop owns every field but the atomics. Workers read
// version, comp, framed and segLZ4 only for requests submitted after
// STARTUP set them, and the submission orders those writes before the reads.
type conn struct {
	s      *Server
	gc     gnet.Conn
	remote net.Addr
	ip     netip.Addr // the client's, for the per-address caps

	state   connState
	version primitive.ProtocolVersion // 0 until STARTUP
	comp    protocol.Compressor       // v3/v4 body compression, nil for none
	framed  bool                      // v5 segments in both directions
	segLZ4  bool                      // v5 segments are LZ4-compressed
	segDec  *protocol.SegmentDecoder
	out     []byte // answers made on the event loop, not yet written
	// broken is the first answer made on the event loop that could not be
	// framed; the connection closes once the answers before it are out.
	broken error
	// prepareBatch: the client turned on PREPARE_BATCH in STARTUP.
	prepareBatch bool

	// Workers' answers wait in pending until the event loop writes them
	// all at once: the first answer into an empty buffer wakes the loop,
	// the others ride along. spare is the loop's other buffer.
	wmu       sync.Mutex
	pending   []byte
	scheduled bool
	spare     []byte

	keyspace   atomic.Pointer[string]
	lastActive atomic.Int64 // unix nanoseconds of the last read or write
	events     atomic.Uint32
	inflight   atomic.Int32
	closed     atomic.Bool
}

func newConn(s *Server, gc gnet.Conn, ip netip.Addr) *conn {
	cn := &conn{s: s, gc: gc, remote: gc.RemoteAddr(), ip: ip}
	cn.lastActive.Store(time.Now().UnixNano())
	return cn
}

func (cn *conn) registered(t primitive.EventType) bool {
	return cn.events.Load()&eventBit(t) != 0
}

func eventBit(t primitive.EventType) uint32 {
	switch t {
	case primitive.EventTypeTopologyChange:
		return evTopology
	case primitive.EventTypeStatusChange:
		return evStatus
	case primitive.EventTypeSchemaChange:
		return evSchema
	}
	return 0
}

func (cn *conn) currentKeyspace() string {
	if ks := cn.keyspace.Load(); ks != nil {
		return *ks
	}
	return ""
}

// onTraffic cuts every whole frame out of the inbound buffer. Answers
// made on the event loop are gathered in cn.out and written once at the
// end, one system call for a whole batch of pipelined requests.
func (cn *conn) onTraffic() gnet.Action {
	if cn.s.opts.IdleTimeout > 0 {
		cn.lastActive.Store(time.Now().UnixNano())
	}
	act := cn.cut()
	cn.flush()
	if cn.broken != nil && act == gnet.None {
		cn.s.closing(cn, reasonEncode, cn.broken)
		return gnet.Close
	}
	return act
}

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
	cn.s.m.BytesOut.Add(float64(len(cn.out) + len(worker)))
	cn.out = cn.out[:0]
	cn.spare = worker[:0]
}

func (cn *conn) cut() gnet.Action {
	for {
		if cn.framed {
			return cn.readSegments()
		}
		head, err := cn.gc.Peek(protocol.HeaderLen)
		if err != nil {
			return gnet.None // wait for the rest of the header
		}
		h, _ := protocol.ParseHeader(head)
		if err := h.Check(cn.version, cn.s.opts.MaxFrameSize); err != nil {
			return cn.fatal(h, err)
		}
		n := protocol.HeaderLen + h.BodyLen
		whole, err := cn.gc.Peek(n)
		if err != nil {
			return gnet.None // wait for the rest of the body
		}
		// NB: Peek's bytes die at Discard and must not reach a worker.
		body := make([]byte, h.BodyLen)
		copy(body, whole[protocol.HeaderLen:])
		_, _ = cn.gc.Discard(n)
		cn.s.m.BytesIn.Add(float64(n))
		if act := cn.dispatch(h, body); act != gnet.None || cn.broken != nil {
			return act
		}
		if len(cn.out) > maxPendingOut {
			cn.flush()
		}
	}
}

// readSegments decodes v5 segments and dispatches the envelopes they finish.
func (cn *conn) readSegments() gnet.Action {
	buf, _ := cn.gc.Peek(-1)
	consumed, envs, err := cn.segDec.Decode(buf)
	if consumed > 0 {
		_, _ = cn.gc.Discard(consumed)
		cn.s.m.BytesIn.Add(float64(consumed))
	}
	for _, env := range envs {
		h, ok := protocol.ParseHeader(env)
		if !ok || len(env) != protocol.HeaderLen+h.BodyLen {
			return cn.fatal(h, fmt.Errorf("malformed envelope in segment"))
		}
		if err := h.Check(cn.version, cn.s.opts.MaxFrameSize); err != nil {
			return cn.fatal(h, err)
		}
		if act := cn.dispatch(h, env[protocol.HeaderLen:]); act != gnet.None || cn.broken != nil {
			return act
		}
	}
	if err != nil {
		return cn.fatal(protocol.Header{}, err)
	}
	return gnet.None
}

// dispatch answers a handshake frame at once or hands a request to the pool.
func (cn *conn) dispatch(h protocol.Header, body []byte) gnet.Action {
	switch h.OpCode {
	case primitive.OpCodeOptions:
		cn.replyFrame(h, cn.s.supported[cn.versionFor(h)])
		return gnet.None
	case primitive.OpCodeStartup:
		return cn.startup(h, body)
	case primitive.OpCodeRegister:
		return cn.register(h, body)
	case primitive.OpCodeQuery, primitive.OpCodePrepare, primitive.OpCodeExecute, primitive.OpCodeBatch, protocol.OpCodePrepareBatch:
		if h.OpCode == protocol.OpCodePrepareBatch && !cn.prepareBatch {
			break // unknown to connections that did not opt in
		}
		if cn.state != stateReady {
			cn.replyError(h, fmt.Sprintf("Unexpected message %s, expecting STARTUP or OPTIONS", opName(h.OpCode)))
			return gnet.None
		}
		cn.submit(h, body)
		return gnet.None
	case primitive.OpCodeAuthResponse:
		cn.replyError(h, "Unexpected message AUTH_RESPONSE, the server does not require authentication")
		return gnet.None
	}
	cn.replyError(h, fmt.Sprintf("Unknown opcode %d", byte(h.OpCode)))
	return gnet.None
}

// submit hands a request to the worker pool, or answers OVERLOADED when a
// limit is reached or the server is draining.
func (cn *conn) submit(h protocol.Header, body []byte) {
	s := cn.s
	if s.draining.Load() {
		s.m.Overloaded.WithLabelValues("shutdown").Inc()
		cn.reply(h, &message.Overloaded{ErrorMessage: "Server is shutting down"})
		return
	}
	if int(cn.inflight.Load()) >= s.opts.MaxRequestsPerConn {
		s.m.Overloaded.WithLabelValues("connection").Inc()
		cn.reply(h, &message.Overloaded{ErrorMessage: fmt.Sprintf(
			"Server is in overloaded state. Cannot accept more requests on this connection (limit %d)", s.opts.MaxRequestsPerConn)})
		return
	}
	if s.inflight.Load() >= int64(s.opts.MaxQueued) {
		s.m.Overloaded.WithLabelValues("server").Inc()
		cn.reply(h, &message.Overloaded{ErrorMessage: "Server is in overloaded state. Cannot accept more requests at this point"})
		return
	}
	start := time.Now()
	req, err := protocol.DecodeRequest(h, body, cn.comp, s.opts.MaxFrameSize)
	if err != nil {
		msg := &message.ProtocolError{ErrorMessage: err.Error()}
		s.observe(h.OpCode, msg, start)
		cn.reply(h, msg)
		return
	}
	req.Keyspace = cn.currentKeyspace()
	req.Received = start
	// In flight from here: an answer given later may come before Inline
	// returns.
	cn.inflight.Add(1)
	s.inflight.Add(1)
	s.m.InFlight.Inc()
	if s.inliner != nil {
		resp, taken := s.inliner.Inline(s.baseCtx, req, cn)
		if taken {
			s.m.Inline.Inc()
			if resp != nil {
				s.observe(h.OpCode, resp.Message, start)
				cn.emit(cn.version, h.Stream, resp)
				cn.done()
			}
			return
		}
	}
	if !s.pool.submit(func() { cn.execute(req) }) {
		cn.done()
		s.m.Overloaded.WithLabelValues("queue").Inc()
		cn.reply(h, &message.Overloaded{ErrorMessage: "Server is in overloaded state. Cannot accept more requests at this point"})
	}
}

// Answer sends the answer to a request handed to a worker or taken by an
// Inliner, from any goroutine. It is counted before it leaves, so a client
// that has its answer sees it counted.
func (cn *conn) Answer(req *protocol.Request, resp *protocol.Response) {
	cn.s.observe(req.Message.GetOpCode(), resp.Message, req.Received)
	cn.send(req.Stream, resp)
	cn.done()
}

func (cn *conn) done() {
	cn.inflight.Add(-1)
	cn.s.inflight.Add(-1)
	cn.s.m.InFlight.Dec()
}

// execute runs on a worker: handle, answer.
func (cn *conn) execute(req *protocol.Request) {
	resp := cn.s.handler.Handle(cn.s.baseCtx, req)
	if sk, ok := resp.Message.(*message.SetKeyspaceResult); ok {
		ks := sk.Keyspace
		cn.keyspace.Store(&ks)
	}
	cn.Answer(req, resp)
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
	if err != nil {
		cn.s.log.Error("cannot encode response", "stream", stream, "err", err)
		out, err = cn.s.appendResponse(frameDst, version, stream,
			&protocol.Response{Message: &message.ServerError{ErrorMessage: err.Error()}}, cn.comp)
		if err != nil {
			return dst, fmt.Errorf("frontend: encode SERVER_ERROR for stream %d: %w", stream, err)
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
	cn.pending = append(cn.pending, out...)
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

// fatal answers a broken byte stream on stream 0 and closes the connection.
func (cn *conn) fatal(h protocol.Header, err error) gnet.Action {
	cn.s.m.ProtocolErrors.Inc()
	v := cn.version
	var ve *protocol.VersionError
	var tb *protocol.TooBigError
	stream := int16(0)
	switch {
	case errors.As(err, &ve):
		// Drivers downgrade on this reply: stream 0, our highest version.
		v = protocol.MaxVersion
	case errors.As(err, &tb):
		stream = h.Stream // the header was sound; tell the request that failed
	}
	if v == 0 {
		v = h.Version
		if v < protocol.MinVersion || v > protocol.MaxVersion {
			v = protocol.MaxVersion
		}
	}
	msg := err.Error()
	if ve == nil && tb == nil {
		msg = strings.TrimPrefix(msg, "protocol: ")
	}
	cn.emit(v, stream, &protocol.Response{Message: &message.ProtocolError{ErrorMessage: msg}})
	cn.s.closing(cn, reasonProtocol, err)
	return gnet.Close
}
