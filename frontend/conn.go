package frontend

import (
	"context"
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
	stateAuth                   // after AUTHENTICATE: only OPTIONS and AUTH_RESPONSE
	stateReady                  // after READY or AUTH_SUCCESS: everything but STARTUP
)

// maxPendingOut bounds cn.out while a batch of frames is being answered.
const maxPendingOut = 64 << 10

// maxCutPerTurn is how many frames a connection cuts in one turn of its
// event loop before it lets the loop's other connections have theirs
// (yield). One read can bring a thousand small pipelined frames, and
// every connection of the loop, a quiet one's single request included,
// would otherwise wait for all of them to be decoded and handed on, or
// answered inline.
const maxCutPerTurn = 16

// Event type bits in conn.events.
const (
	evTopology uint32 = 1 << iota
	evStatus
	evSchema
)

// Reasons the server closes a connection: the Closed metric's label.
const (
	reasonProtocol  = "protocol_error" // the byte stream is not the protocol
	reasonEncode    = "encode_error"   // an answer could not be framed
	reasonIdle      = "idle_timeout"
	reasonHandshake = "handshake_timeout" // no STARTUP in time
	reasonFrame     = "frame_timeout"     // a frame begun and not finished in time
	// reasonReceive: a paused connection kept sending past its receive
	// queue, or a v5 envelope did not fit in the request data budget
	// (segments cannot be skipped the way a legacy frame's body is).
	reasonReceive = "receive_queue"
)

// conn is one client connection.
//
// NB: the event loop owns every field but the atomics and those under wmu.
// Workers read version, comp, framed and segLZ4 only for requests
// submitted after STARTUP set them, and the submission orders those writes
// before the reads.
type conn struct {
	// id tells the connection from the others (Bursts.Release).
	id     uint64
	s      *Server
	gc     sock
	remote net.Addr
	// ctx is the context of the connection's requests: it ends when the
	// connection closes, so work for a client that is gone stops.
	ctx    context.Context
	cancel context.CancelFunc
	ip     netip.Addr
	peer   *peer // the client address's share of the caps and budgets

	state   connState
	version primitive.ProtocolVersion // 0 until STARTUP
	comp    protocol.Compressor       // v3/v4 body compression, nil for none
	framed  bool                      // v5 segments in both directions
	segLZ4  bool                      // v5 segments are LZ4-compressed
	segDec  *protocol.SegmentDecoder
	envs    [][]byte // v5 envelopes decoded and not yet dispatched (paused)
	out     []byte   // answers made on the event loop, not yet written
	// broken is the first answer made on the event loop that could not be
	// framed; the connection closes once the answers before it are out.
	broken error
	// prepareBatch: the client turned on PREPARE_BATCH in STARTUP.
	prepareBatch bool
	// throwOnOverload: the client's STARTUP set THROW_ON_OVERLOAD to "1",
	// so a request over a limit is answered OVERLOADED instead of waiting
	// unread (admit.go).
	throwOnOverload bool
	// inWaitQ: the connection is in Server.waitQ; guarded by its waitMu.
	inWaitQ bool
	// cleared: mustWait let the request at the head of the input start
	// (admit.go); admit takes it instead of asking the limits again.
	cleared bool

	// held is the request data taken from the budgets for bytes not yet
	// dispatched: the frame being read (its whole declared length, taken
	// when its header arrived) and, while paused, the frames waiting in
	// the inbound buffer. A dispatched request carries its share away in
	// a ticket.
	held int64
	// reading is the declared length of the legacy frame being read, once
	// its header is in; 0 between frames.
	reading int64
	// skip is how many bytes of a refused frame's body are still to be
	// discarded as they arrive; skipped, when not nil, is the frame over
	// MaxFrameSize being discarded, answered once all of it is gone.
	skip    int64
	skipped *protocol.TooBigError
	skipHdr protocol.Header
	// outQueued is what gnet held of our answers when last looked at;
	// with the workers' pending answers it makes answers.
	outQueued int64
	// wakeBackoff is how many sweeps after a look at the outbound the
	// housekeeper wakes the connection to look again.
	wakeBackoff int64

	// Workers' answers wait in pending until the event loop writes them
	// all at once: the first answer into an empty buffer wakes the loop,
	// the others ride along. spare is the loop's other buffer. After
	// OnClose (wclosed) answers are dropped.
	wmu       sync.Mutex
	pending   []byte
	scheduled bool
	wclosed   bool
	spare     []byte

	// answers is the connection's answers not yet taken by its socket:
	// the workers' pending ones and gnet's outbound (outQueued), counted
	// in Server.outBytes too. Past SendQueueCapacity the connection is
	// neither read nor given workers (write.go).
	answers atomic.Int64
	// run is the connection's queue of requests for the workers (pool.go).
	run runq

	keyspace atomic.Pointer[string]
	// role is who the connection logged in as, set by the worker that
	// checked the credentials before it answers AUTH_SUCCESS; the event
	// loop moves from stateAuth to stateReady when it sees it.
	role     atomic.Pointer[string]
	events   atomic.Uint32
	inflight atomic.Int32
	// hello is what the client said in STARTUP, nil before; requests
	// counts its requests. Both are for system_views.clients.
	hello    atomic.Pointer[startupInfo]
	requests atomic.Int64
	closed   atomic.Bool
	// The housekeeper reads these (unix nanoseconds, 0 for none):
	// openedAt and ready for the handshake deadline, frameStart for the
	// frame deadline, lastActive (a whole frame in, or answers out) for
	// the idle timeout; wakeAt is the sweep (not a time) of the next look
	// at a backed-up outbound. paused (for its answers) and stalled (for
	// a request over a limit, admit.go) stop the loop cutting frames;
	// wakeMe is armed while stalled, for the first request that ends to
	// wake it.
	openedAt   int64
	ready      atomic.Bool
	frameStart atomic.Int64
	lastActive atomic.Int64
	wakeAt     atomic.Int64
	paused     atomic.Bool
	stalled    atomic.Bool
	wakeMe     atomic.Bool
	// closing makes the housekeeper count a connection it closes once.
	closing atomic.Bool
	// yielding: the connection ended a turn with frames left to cut and
	// a wake is on its way to give it the next (yield).
	yielding bool
}

func newConn(s *Server, gc sock, a *admission) *conn {
	now := s.opts.Now().UnixNano()
	cn := &conn{s: s, gc: gc, remote: gc.RemoteAddr(), ip: a.ip, peer: a.peer, openedAt: now, id: s.connIDs.Add(1)}
	cn.ctx, cn.cancel = context.WithCancel(s.baseCtx)
	cn.run.cn = cn
	cn.lastActive.Store(now)
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

// onTraffic cuts every whole frame out of the inbound buffer, unless the
// connection is paused. Answers made on the event loop are gathered in
// cn.out and written once at the end, one system call for a whole batch
// of pipelined requests.
func (cn *conn) onTraffic() gnet.Action {
	cn.yielding = false // this is the turn a wake was asked for
	cn.checkOutbound()  // pause or resume
	// Answers sent during this turn, from any goroutine, are written by
	// its flush: they need no wake-up of the loop.
	cn.wmu.Lock()
	cn.scheduled = true
	cn.wmu.Unlock()
	b := cn.s.opts.Bursts
	if b != nil {
		b.Hold()
	}
	act := cn.cut()
	if b != nil {
		b.Release(cn.id) // may answer a lone writer's write here, before the flush
	}
	cn.flush()
	if act == gnet.None && cn.broken != nil {
		cn.s.closing(cn, reasonEncode, cn.broken)
		return gnet.Close
	}
	if act == gnet.None {
		act = cn.settle()
	}
	return act
}

func (cn *conn) cut() gnet.Action {
	for cuts := 0; ; cuts++ {
		if cn.skip > 0 && !cn.discard() {
			return gnet.None
		}
		if cn.paused.Load() {
			return gnet.None // the requests wait in the inbound buffer
		}
		if cn.framed {
			return cn.readSegments()
		}
		if cuts >= maxCutPerTurn && cn.gc.InboundBuffered() >= protocol.HeaderLen && cn.yield() {
			return gnet.None
		}
		head, err := cn.gc.Peek(protocol.HeaderLen)
		if err != nil {
			return gnet.None // wait for the rest of the header
		}
		h, _ := protocol.ParseHeader(head)
		if err := h.Check(cn.version, cn.s.opts.MaxFrameSize); err != nil {
			var tb *protocol.TooBigError
			if !errors.As(err, &tb) {
				return cn.fatal(h, err)
			}
			// As Cassandra: the body is skipped as it comes, never held
			// nor counted, then answered INVALID on its stream; closing
			// now would reset the connection under the client's answer.
			cn.skip, cn.skipped, cn.skipHdr = tb.Length, tb, h
			continue
		}
		n := int64(protocol.HeaderLen + h.BodyLen)
		if !cn.reserve(n) {
			// Refused before its body is held: answered on its stream,
			// the body skipped as it comes.
			cn.overloadedData(h, n)
			cn.skip = n
			continue
		}
		cn.reading = n
		whole, err := cn.gc.Peek(int(n))
		if err != nil {
			return gnet.None // wait for the rest of the body
		}
		if cn.mustWait(h.OpCode) {
			return gnet.None // it stays in the inbound buffer, held
		}
		// NB: Peek's bytes die at Discard and must not reach a worker.
		body := make([]byte, h.BodyLen)
		copy(body, whole[protocol.HeaderLen:])
		_, _ = cn.gc.Discard(int(n))
		cn.s.m.BytesIn.Add(float64(n))
		cn.held -= n // now the request's
		cn.reading = 0
		cn.frameDone()
		if act := cn.dispatch(h, body, n); act != gnet.None || cn.broken != nil {
			return act
		}
		if len(cn.out) > maxPendingOut {
			cn.flush()
		}
	}
}

// discard drops the body of a refused frame as it arrives, and reports
// whether all of it is gone.
func (cn *conn) discard() bool {
	k := min(cn.skip, int64(cn.gc.InboundBuffered()))
	if k > 0 {
		_, _ = cn.gc.Discard(int(k))
		cn.s.m.BytesIn.Add(float64(k))
		cn.skip -= k
	}
	if cn.skip > 0 {
		return false
	}
	if tb := cn.skipped; tb != nil {
		cn.skipped = nil
		cn.tooBig(cn.skipHdr, tb.Error())
	}
	cn.frameDone()
	return true
}

// tooBig answers a request over MaxFrameSize, its body skipped.
func (cn *conn) tooBig(h protocol.Header, msg string) {
	cn.s.m.Requests.WithLabelValues(opName(h.OpCode), outcome(&message.Invalid{})).Inc()
	cn.reply(h, &message.Invalid{ErrorMessage: msg})
}

// frameDone restarts the frame deadline (the next frame starts when its
// first byte is seen) and marks the connection active: a whole frame is
// what counts, not single bytes.
func (cn *conn) frameDone() {
	cn.frameStart.Store(0)
	if cn.s.opts.IdleTimeout > 0 {
		cn.lastActive.Store(cn.s.opts.Now().UnixNano())
	}
}

// reserve makes sure held covers a frame of n bytes being read.
func (cn *conn) reserve(n int64) bool {
	if cn.held >= n {
		return true
	}
	if ok, _ := cn.s.takeData(cn.peer, n-cn.held); !ok {
		return false
	}
	cn.held = n
	return true
}

func (cn *conn) overloadedData(h protocol.Header, n int64) {
	cn.s.m.Overloaded.WithLabelValues("request_data").Inc()
	cn.reply(h, &message.Overloaded{ErrorMessage: cn.s.dataUse(cn.peer, n)})
}

// readSegments decodes v5 segments and dispatches the envelopes they
// finish, until the connection pauses.
func (cn *conn) readSegments() gnet.Action {
	cuts := 0
	for {
		for ; len(cn.envs) > 0; cuts++ {
			if cn.paused.Load() {
				return gnet.None
			}
			if cuts >= maxCutPerTurn && cn.yield() {
				return gnet.None
			}
			env := cn.envs[0]
			h, ok := protocol.ParseHeader(env)
			err := h.Check(cn.version, cn.s.opts.MaxFrameSize)
			var tb *protocol.TooBigError
			switch {
			case !ok:
				return cn.fatal(h, fmt.Errorf("malformed envelope in segment"))
			case protocol.Oversized(env) && errors.As(err, &tb):
				// The decoder skipped it (SkipOversized).
				cn.envs[0] = nil
				cn.envs = cn.envs[1:]
				cn.tooBig(h, protocol.EnvelopeTooBig(tb.Length, tb.Max))
				cn.frameDone()
				continue
			case err != nil:
				return cn.fatal(h, err)
			case len(env) != protocol.HeaderLen+h.BodyLen:
				return cn.fatal(h, fmt.Errorf("malformed envelope in segment"))
			}
			if cn.mustWait(h.OpCode) {
				return gnet.None // it stays in cn.envs, held
			}
			cn.envs[0] = nil
			cn.envs = cn.envs[1:]
			n := int64(len(env))
			if !cn.claim(n) {
				cn.overloadedData(h, n)
				continue
			}
			cn.frameDone()
			if act := cn.dispatch(h, env[protocol.HeaderLen:], n); act != gnet.None || cn.broken != nil {
				return act
			}
			if len(cn.out) > maxPendingOut {
				cn.flush()
			}
		}
		if cn.paused.Load() {
			return gnet.None
		}
		buf, _ := cn.gc.Peek(-1)
		consumed, envs, err := cn.segDec.Decode(buf)
		if consumed > 0 {
			_, _ = cn.gc.Discard(consumed)
			cn.s.m.BytesIn.Add(float64(consumed))
		}
		cn.envs = append(cn.envs[:0], envs...)
		if err != nil && len(cn.envs) == 0 {
			return cn.fatal(protocol.Header{}, err)
		}
		// NB: after an error the envelopes before the broken segment
		// are dispatched first; Decode then returns the error again.
		if err == nil && len(cn.envs) == 0 {
			return gnet.None
		}
	}
}

// yield ends the connection's turn with whole frames still in its input,
// so that the other connections of its event loop get theirs before it
// cuts more, and asks the loop for another turn (a wake, which gnet runs
// after the readiness it is handling, in order with the other wakes).
// What it leaves stays held as request data, as it would if the
// connection were paused; when the budgets cannot take it, the
// connection does not yield and cuts on, each frame then refused by the
// budgets as it comes.
func (cn *conn) yield() bool {
	buffered, frame := cn.unread()
	if !cn.reserve(max(buffered, frame)) {
		return false
	}
	if !cn.yielding {
		cn.yielding = true
		_ = cn.gc.Wake(nil)
	}
	return true
}

// unread is what the connection holds of requests not yet dispatched: the
// bytes in its inbound buffer (for v5, with the segments being decoded
// and the envelopes decoded and waiting), and the declared length of the
// frame being read.
func (cn *conn) unread() (buffered, frame int64) {
	buffered = int64(cn.gc.InboundBuffered())
	frame = cn.reading
	if cn.framed {
		have, want := cn.segDec.Pending()
		buffered += int64(have)
		for _, env := range cn.envs {
			buffered += int64(len(env))
		}
		frame = int64(want)
	}
	return buffered, frame
}

// claim moves n bytes of held to a request being dispatched, taking from
// the budgets what held does not cover.
func (cn *conn) claim(n int64) bool {
	if cn.held >= n {
		cn.held -= n
		return true
	}
	if ok, _ := cn.s.takeData(cn.peer, n-cn.held); !ok {
		return false
	}
	cn.held = 0
	return true
}

// settle squares the budgets with what the inbound buffer holds once
// cutting stopped, and starts the frame deadline of a frame begun. A
// connection that holds more than it may is closed: it is paused and kept
// sending past its receive queue, or (v5) its envelope does not fit.
func (cn *conn) settle() gnet.Action {
	s := cn.s
	buffered, frame := cn.unread()
	paused := cn.paused.Load() || cn.stalled.Load()
	if limit := int64(s.opts.ReceiveQueueCapacity); paused && buffered-frame > limit {
		s.closing(cn, reasonReceive, fmt.Errorf("paused with %d bytes received and not dispatched, past native_transport_receive_queue_capacity %d", buffered, limit))
		return gnet.Close
	}
	need := max(buffered, frame)
	if need > cn.held {
		if ok, why := s.takeData(cn.peer, need-cn.held); !ok {
			s.closing(cn, reasonReceive, errors.New(why))
			return gnet.Close
		}
	} else {
		s.giveData(cn.peer, cn.held-need)
	}
	cn.held = need
	begun := buffered > 0 || cn.skip > 0 || cn.framed && cn.segDec.Mid()
	if begun && !paused && cn.frameStart.Load() == 0 {
		cn.frameStart.Store(s.opts.Now().UnixNano())
	}
	return gnet.None
}

// admitted reports whether a request with opcode op goes through
// admission to a worker or an Inliner (submit, submitAuth) rather than
// being answered by the event loop.
func (cn *conn) admitted(op primitive.OpCode) bool {
	if cn.state == stateAuth && cn.role.Load() != nil {
		cn.state = stateReady // the worker that checked the login set the role
	}
	switch op {
	case primitive.OpCodeQuery, primitive.OpCodePrepare, primitive.OpCodeExecute, primitive.OpCodeBatch:
		return cn.state == stateReady
	case protocol.OpCodePrepareBatch:
		// Unknown to connections that did not opt in.
		return cn.state == stateReady && cn.prepareBatch
	case primitive.OpCodeAuthResponse:
		return cn.state == stateAuth
	}
	return false
}

// dispatch answers a handshake frame at once or hands a request to the
// pool; n is the request data the frame holds, given back once answered.
func (cn *conn) dispatch(h protocol.Header, body []byte, n int64) gnet.Action {
	if cn.admitted(h.OpCode) {
		if h.OpCode == primitive.OpCodeAuthResponse {
			cn.submitAuth(h, body, n)
		} else {
			cn.submit(h, body, n)
		}
		return gnet.None
	}
	defer cn.s.giveData(cn.peer, n)
	switch h.OpCode {
	case primitive.OpCodeOptions:
		cn.replyFrame(h, cn.s.supported[cn.versionFor(h)])
		cn.s.okRequests[h.OpCode].Inc()
		return gnet.None
	case primitive.OpCodeStartup:
		return cn.startup(h, body)
	case primitive.OpCodeRegister:
		return cn.register(h, body)
	case primitive.OpCodeQuery, primitive.OpCodePrepare, primitive.OpCodeExecute, primitive.OpCodeBatch, protocol.OpCodePrepareBatch:
		if h.OpCode == protocol.OpCodePrepareBatch && !cn.prepareBatch {
			break
		}
		cn.replyError(h, cn.unexpected(h.OpCode))
		return gnet.None
	case primitive.OpCodeAuthResponse:
		switch {
		case cn.state == stateNew:
			cn.replyError(h, cn.unexpected(h.OpCode))
		case cn.s.opts.Authenticator == nil:
			cn.replyError(h, "Unexpected message AUTH_RESPONSE, the server does not require authentication")
		default:
			cn.replyError(h, "Unexpected message AUTH_RESPONSE, the connection is already authenticated")
		}
		return gnet.None
	}
	cn.replyError(h, fmt.Sprintf("Unknown opcode %d", byte(h.OpCode)))
	return gnet.None
}

// submit hands a request to the worker pool, or answers OVERLOADED when a
// limit is reached (the client set THROW_ON_OVERLOAD, or it is a bound
// of request data or of the queue) or the server is draining. n is the request data the
// request holds until it is answered.
func (cn *conn) submit(h protocol.Header, body []byte, n int64) {
	s := cn.s
	req, t := cn.admit(h, body, n)
	if req == nil {
		return
	}
	if s.inliner != nil {
		resp, taken := s.inliner.Inline(cn.ctx, req, t)
		if taken {
			s.m.Inline.Inc()
			if resp != nil {
				s.observe(h.OpCode, resp.Message, req.Received)
				cn.emit(cn.version, h.Stream, resp)
				t.done()
			}
			return
		}
	}
	cn.toWorker(h, t, func() { t.execute(req) })
}

// admit decodes a request for a worker and counts it in flight, with the
// ticket that answers it; or answers it at once (OVERLOADED, or the error
// that it does not decode) and returns nil. n is the request data the
// request holds until it is answered.
func (cn *conn) admit(h protocol.Header, body []byte, n int64) (*protocol.Request, *ticket) {
	s := cn.s
	if cn.cleared {
		cn.cleared = false
	} else if msg := s.admitRequest(cn); msg != nil {
		s.giveData(cn.peer, n)
		cn.reply(h, msg)
		return nil, nil
	}
	start := time.Now()
	req, err := protocol.DecodeRequest(h, body, cn.comp, s.opts.MaxFrameSize)
	if err != nil {
		s.giveData(cn.peer, n)
		msg := &message.ProtocolError{ErrorMessage: err.Error()}
		s.observe(h.OpCode, msg, start)
		cn.reply(h, msg)
		return nil, nil
	}
	req.Keyspace = cn.currentKeyspace()
	req.Client = cn.ip
	if r := cn.role.Load(); r != nil {
		req.Role = *r
	}
	req.Received = start
	// In flight from here: an answer given later may come before Inline
	// returns.
	s.begin(cn)
	return req, &ticket{cn: cn, data: n}
}

// queuedCost is the request data counted for a request handed to the
// pool besides its frame: about what its decoded form, ticket and task
// hold. A request waiting on a connection whose answers are backed up
// counts against no request limit of the node (pool.go), so its bytes,
// counted at least this much, are what bounds how many such requests the
// node holds: at most native_transport_max_request_data_in_flight (and
// _per_ip) divided by this.
const queuedCost = 1 << 10

// toWorker runs work on the pool, or answers OVERLOADED when its queue is
// full or its request data does not fit.
func (cn *conn) toWorker(h protocol.Header, t *ticket, work func()) {
	s := cn.s
	if ok, _ := s.takeData(cn.peer, queuedCost); !ok {
		why := s.dataUse(cn.peer, t.data+queuedCost)
		t.done()
		s.m.Overloaded.WithLabelValues("request_data").Inc()
		cn.reply(h, &message.Overloaded{ErrorMessage: why})
		return
	}
	t.data += queuedCost
	if !cn.s.pool.submit(&cn.run, task{t: t, run: work}) {
		t.done()
		cn.s.m.Overloaded.WithLabelValues("queue").Inc()
		cn.reply(h, &message.Overloaded{ErrorMessage: "Server is in overloaded state. Cannot accept more requests at this point"})
	}
}

// submitAuth checks an AUTH_RESPONSE's credentials on a worker: bcrypt is
// too slow for an event loop. On success the worker records the role
// before it answers AUTH_SUCCESS, so the requests the client sends once it
// has the answer find the connection ready.
func (cn *conn) submitAuth(h protocol.Header, body []byte, n int64) {
	req, t := cn.admit(h, body, n)
	if req == nil {
		return
	}
	token := req.Message.(*message.AuthResponse).Token
	cn.toWorker(h, t, func() {
		role, err := cn.s.opts.Authenticator.Authenticate(cn.ip, token)
		if err != nil {
			t.Answer(req, &protocol.Response{Message: &message.AuthenticationError{ErrorMessage: err.Error()}})
			return
		}
		cn.role.Store(&role)
		cn.ready.Store(true)
		t.Answer(req, &protocol.Response{Message: &message.AuthSuccess{}})
	})
}

// unexpected is Cassandra's refusal of a request the connection's state
// does not allow.
func (cn *conn) unexpected(op primitive.OpCode) string {
	if cn.state == stateAuth {
		return fmt.Sprintf("Unexpected message %s, expecting SASL_RESPONSE", opName(op))
	}
	return fmt.Sprintf("Unexpected message %s, expecting STARTUP or OPTIONS", opName(op))
}

// A ticket is one request in flight: it answers the request once, and
// gives back what the request held.
type ticket struct {
	cn   *conn
	data int64
}

var _ protocol.Later = (*ticket)(nil)

// Answer sends the answer to a request handed to a worker or taken by an
// Inliner, from any goroutine. It is counted before it leaves, so a client
// that has its answer sees it counted.
func (t *ticket) Answer(req *protocol.Request, resp *protocol.Response) {
	t.cn.s.observe(req.Message.GetOpCode(), resp.Message, req.Received)
	t.cn.send(req.Stream, resp)
	t.done()
}

func (t *ticket) done() {
	t.cn.s.end(t.cn)
	t.cn.s.giveData(t.cn.peer, t.data)
}

// execute runs on a worker: handle, answer.
func (t *ticket) execute(req *protocol.Request) {
	resp := t.cn.s.handler.Handle(t.cn.ctx, req)
	if sk, ok := resp.Message.(*message.SetKeyspaceResult); ok {
		ks := sk.Keyspace
		t.cn.keyspace.Store(&ks)
	}
	t.Answer(req, resp)
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
