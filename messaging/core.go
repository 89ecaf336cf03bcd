package messaging

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"
)

const (
	// maxBatchBytes is about how much a writer takes from its queue for
	// one write.
	maxBatchBytes = 1 << 20
	// maxFailureText bounds the error text of a failure response.
	maxFailureText = 4 << 10
)

// core is what TCPTransport and InmemTransport share: message ids, the
// handlers, the bounded handler slots, request/response matching and the
// writer loop. The transports differ only in how an outMsg reaches a peer.
type core struct {
	opts    Options
	addr    netip.AddrPort // given to peers
	clock   Clock
	metrics *Metrics
	log     *slog.Logger
	nextID  atomic.Uint64

	hmu      sync.RWMutex
	handlers map[Verb]Handler
	// async are the verbs served on the reader's goroutine.
	async map[Verb]AsyncHandler

	// work hands a handler task to an idle worker; workers counts the
	// workers started, at most MaxConcurrentHandlers.
	work    chan func()
	workers atomic.Int32
	// ctx is cancelled by Close: it stops dials, handler slot waits and
	// handlers.
	ctx    context.Context
	cancel context.CancelFunc
	// wg counts every goroutine of the transport. NB: Add only from a
	// goroutine wg already counts, or under the transport's lock after
	// checking it is not closed.
	wg sync.WaitGroup
}

func newCore(opts Options, addr netip.AddrPort) *core {
	ctx, cancel := context.WithCancel(context.Background())
	return &core{
		opts:     opts,
		addr:     addr,
		clock:    opts.Clock,
		metrics:  opts.Metrics,
		log:      opts.Logger,
		handlers: make(map[Verb]Handler),
		async:    make(map[Verb]AsyncHandler),
		work:     make(chan func()),
		ctx:      ctx,
		cancel:   cancel,
	}
}

// Handle implements Transport.
func (c *core) Handle(verb Verb, h Handler) {
	c.hmu.Lock()
	defer c.hmu.Unlock()
	if h == nil {
		delete(c.handlers, verb)
		return
	}
	c.handlers[verb] = h
}

func (c *core) handler(verb Verb) Handler {
	c.hmu.RLock()
	defer c.hmu.RUnlock()
	return c.handlers[verb]
}

// HandleAsync implements AsyncServer.
func (c *core) HandleAsync(verb Verb, h AsyncHandler) {
	c.hmu.Lock()
	defer c.hmu.Unlock()
	if h == nil {
		delete(c.async, verb)
		return
	}
	c.async[verb] = h
}

func (c *core) asyncHandler(verb Verb) AsyncHandler {
	c.hmu.RLock()
	defer c.hmu.RUnlock()
	return c.async[verb]
}

// Addr implements Transport.
func (c *core) Addr() netip.AddrPort { return c.addr }

// enqueueFunc queues m toward peer to, registering m.call (if any) in the
// call table of the connection m goes on before m can be written.
type enqueueFunc func(to netip.AddrPort, m *outMsg) error

// newMessage encodes a request or one-way message, deadline from ctx.
func (c *core) newMessage(ctx context.Context, to netip.AddrPort, verb Verb, flags byte, payload []byte) (*outMsg, uint64, error) {
	if c.ctx.Err() != nil {
		return nil, 0, ErrClosed
	}
	now := c.clock.Now()
	timeout := c.opts.RequestTimeout
	if d, ok := ctx.Deadline(); ok {
		timeout = time.Until(d)
	}
	if err := ctx.Err(); errors.Is(err, context.Canceled) {
		return nil, 0, fmt.Errorf("messaging: %s to %s: %w", verb, to, err)
	}
	if timeout <= 0 {
		c.metrics.Timeouts.WithLabelValues(verb.String(), to.String()).Inc()
		return nil, 0, fmt.Errorf("%w: %s to %s: deadline passed before sending: %w", ErrTimeout, verb, to, context.DeadlineExceeded)
	}
	if tid, ok := traceOf(ctx); ok {
		flags |= flagTraced
		payload = append(tid[:len(tid):len(tid)], payload...)
	}
	if size := messageHeaderLen + len(payload); size > c.opts.MaxMessageSize {
		return nil, 0, fmt.Errorf("%w: %s to %s of %d bytes, limit %d", ErrTooLarge, verb, to, size, c.opts.MaxMessageSize)
	}
	id := c.nextID.Add(1)
	m := &outMsg{
		env:      appendMessage(make([]byte, 0, messageHeaderLen+len(payload)), id, verb, flags, payload),
		verb:     verb,
		deadline: now.Add(timeout),
		due:      now.Add(c.opts.InjectedDelay),
	}
	return m, id, nil
}

// request implements Transport.Request over enqueue.
func (c *core) request(ctx context.Context, to netip.AddrPort, verb Verb, payload []byte, enqueue enqueueFunc) ([]byte, error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.opts.RequestTimeout)
		defer cancel()
	}
	m, id, err := c.newMessage(ctx, to, verb, 0, payload)
	if err != nil {
		return nil, err
	}
	cl := &call{id: id, verb: verb, peer: to, done: make(chan result, 1)}
	m.call = cl
	if err := enqueue(to, m); err != nil {
		return nil, err
	}
	select {
	case r := <-cl.done:
		return r.payload, r.err
	case <-ctx.Done():
	}
	cl.abandoned.Store(true)
	if cl.table.take(id) == nil {
		// The result won the race and is on its way.
		r := <-cl.done
		return r.payload, r.err
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		c.metrics.Timeouts.WithLabelValues(verb.String(), to.String()).Inc()
		return nil, fmt.Errorf("%w: %s to %s: %w", ErrTimeout, verb, to, ctx.Err())
	}
	return nil, fmt.Errorf("messaging: %s to %s: %w", verb, to, ctx.Err())
}

// requestAsync implements AsyncRequester.RequestAsync over enqueue: the
// call's result goes to done from whichever goroutine takes the call out
// of its table (the connection's reader, a failing connection, or the
// end of ctx).
func (c *core) requestAsync(ctx context.Context, to netip.AddrPort, verb Verb, payload []byte, done func([]byte, error), enqueue enqueueFunc) error {
	cancel := context.CancelFunc(func() {})
	if _, ok := ctx.Deadline(); !ok {
		ctx, cancel = context.WithTimeout(ctx, c.opts.RequestTimeout)
	}
	m, id, err := c.newMessage(ctx, to, verb, 0, payload)
	if err != nil {
		cancel()
		return err
	}
	cl := &call{id: id, verb: verb, peer: to}
	cl.then = func(r result) {
		cancel()
		done(r.payload, r.err)
	}
	m.call = cl
	if err := enqueue(to, m); err != nil {
		if cl.delivered.Swap(true) {
			// A connection that failed meanwhile delivered its error: done
			// has its result.
			return nil
		}
		cancel()
		return err
	}
	// Registered once the call is in its table, so that the end of ctx
	// finds it there, or finds it gone because its result came first.
	// NB: it stays registered until ctx ends even then; the take below
	// makes it a no-op.
	context.AfterFunc(ctx, func() {
		cl.abandoned.Store(true)
		if cl.table.take(id) == nil {
			return
		}
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			c.metrics.Timeouts.WithLabelValues(verb.String(), to.String()).Inc()
			cl.deliver(result{err: fmt.Errorf("%w: %s to %s: %w", ErrTimeout, verb, to, ctx.Err())})
			return
		}
		cl.deliver(result{err: fmt.Errorf("messaging: %s to %s: %w", verb, to, ctx.Err())})
	})
	return nil
}

// send implements Transport.Send over enqueue.
func (c *core) send(ctx context.Context, to netip.AddrPort, verb Verb, payload []byte, enqueue enqueueFunc) error {
	m, _, err := c.newMessage(ctx, to, verb, flagOneWay, payload)
	if err != nil {
		return err
	}
	return enqueue(to, m)
}

// reserve takes m's bytes from b, or counts the drop and says why not.
func (c *core) reserve(b *budget, m *outMsg, peer string) error {
	if !b.reserve(len(m.env)) {
		c.metrics.dropped(m.verb, peer, DropQueueFull)
		return fmt.Errorf("%w: %s of %d bytes to %s, %d of %d bytes queued", ErrQueueFull,
			m.verb, len(m.env), peer, b.used.Load(), b.limit)
	}
	m.budget = b
	return nil
}

// abandon gives up messages that were queued but will never be written.
func (c *core) abandon(msgs []*outMsg, peer string) {
	for _, m := range msgs {
		m.release()
		if m.call == nil {
			c.metrics.dropped(m.verb, peer, DropClosed)
		}
	}
}

// finishCall completes the request that response m answers.
func (c *core) finishCall(t *callTable, from netip.AddrPort, peer string, m message) {
	r := result{payload: m.payload}
	if m.flags&flagFailure != 0 {
		code, text, err := decodeFailure(m.payload)
		if err != nil {
			r = result{err: fmt.Errorf("messaging: %s from %s: %w", m.verb, from, err)}
		} else {
			r = result{err: &RemoteError{Peer: from, Verb: m.verb, Code: code, Message: text}}
		}
	}
	if !t.finish(m.id, r) {
		c.metrics.dropped(m.verb, peer, DropLate)
	}
}

// peerInfo names the sender of inbound messages.
type peerInfo struct {
	addr     netip.AddrPort
	hostID   [hostIDLen]byte
	label    string // addr as a metrics label
	counters *peerCounters
}

// serve hands inbound request or one-way message m to a handler worker.
// When MaxConcurrentHandlers are busy it waits for one, so the connection
// reader calling it stops reading meanwhile; it gives up if the transport
// closes or abort closes. reply queues a response toward the sender.
func (c *core) serve(from *peerInfo, m message, reply func(*outMsg), abort <-chan struct{}) {
	if m.timeout <= 0 {
		c.metrics.dropped(m.verb, from.label, DropExpired)
		return
	}
	deadline := c.clock.Now().Add(m.timeout)
	if h := c.asyncHandler(m.verb); h != nil && !m.isOneWay() {
		if h(deadline, Inbound{From: from.addr, HostID: from.hostID, Verb: m.verb, Payload: m.payload}, func(payload []byte, err error) {
			reply(c.response(m, deadline, payload, err))
		}) {
			return
		}
	}
	task := func() { c.handle(from, m, deadline, reply) }
	select {
	case c.work <- task:
		return
	default:
	}
	if c.workers.Add(1) <= int32(c.opts.MaxConcurrentHandlers) {
		c.wg.Add(1)
		go c.worker(task)
		return
	}
	c.workers.Add(-1)
	select {
	case c.work <- task:
	case <-c.ctx.Done():
		c.metrics.dropped(m.verb, from.label, DropClosed)
	case <-abort:
		c.metrics.dropped(m.verb, from.label, DropClosed)
	}
}

// worker runs handler tasks until the transport closes. Workers are
// started as needed and kept: a request's handler neither starts a
// goroutine nor grows a fresh stack.
func (c *core) worker(task func()) {
	defer c.wg.Done()
	for {
		task()
		select {
		case task = <-c.work:
		case <-c.ctx.Done():
			return
		}
	}
}

// handle runs m's handler, unless m expired while it waited for a worker,
// and queues the response to a request.
func (c *core) handle(from *peerInfo, m message, deadline time.Time, reply func(*outMsg)) {
	now := c.clock.Now()
	if !now.Before(deadline) {
		c.metrics.dropped(m.verb, from.label, DropExpired)
		return
	}
	h := c.handler(m.verb)
	if h == nil {
		if m.isOneWay() {
			c.metrics.dropped(m.verb, from.label, DropNoHandler)
			c.log.Warn("messaging: one-way message for a verb without a handler", "verb", m.verb, "from", from.addr)
			return
		}
		reply(c.response(m, deadline, nil, &RemoteError{Code: FailureNoHandler,
			Message: fmt.Sprintf("no handler for verb %s on %s", m.verb, c.addr)}))
		return
	}
	ctx, cancel := context.WithTimeout(c.ctx, deadline.Sub(now))
	resp, err := h(ctx, Inbound{From: from.addr, HostID: from.hostID, Verb: m.verb, OneWay: m.isOneWay(), Payload: m.payload,
		Trace: m.trace, Traced: m.flags&flagTraced != 0})
	cancel()
	if m.isOneWay() {
		if err != nil {
			c.log.Debug("messaging: one-way handler failed", "verb", m.verb, "from", from.addr, "err", err)
		}
		return
	}
	reply(c.response(m, deadline, resp, err))
}

// response encodes the response to request req: payload, or herr as a
// failure.
func (c *core) response(req message, deadline time.Time, payload []byte, herr error) *outMsg {
	if herr == nil && messageHeaderLen+len(payload) > c.opts.MaxMessageSize {
		herr = fmt.Errorf("messaging: response to %s of %d bytes exceeds the maximum of %d",
			req.verb, messageHeaderLen+len(payload), c.opts.MaxMessageSize)
	}
	flags := byte(flagResponse)
	if herr != nil {
		flags |= flagFailure
		code, text := FailureUnknown, herr.Error()
		if re, ok := errors.AsType[*RemoteError](herr); ok {
			code, text = re.Code, re.Message
		}
		payload = appendFailure(nil, code, truncateUTF8(text, maxFailureText))
	}
	now := c.clock.Now()
	return &outMsg{
		env:      appendMessage(make([]byte, 0, messageHeaderLen+len(payload)), req.id, req.verb, flags, payload),
		verb:     req.verb,
		deadline: deadline,
		due:      now.Add(c.opts.InjectedDelay),
	}
}

// drain is a connection's writer loop: it takes the messages due from q,
// drops the expired and abandoned ones, and hands the rest to write (which
// must not keep the slice), until stop closes or write fails.
func (c *core) drain(q *outQueue, stop <-chan struct{}, peer string, write func([]*outMsg) error) error {
	var (
		batch []*outMsg
		timer Timer
	)
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		select {
		case <-stop:
			return nil
		default:
		}
		now := c.clock.Now()
		var next time.Time
		batch, next = q.take(now, maxBatchBytes, batch[:0])
		if len(batch) > 0 {
			// Let goroutines about to queue do so, so that one write
			// carries them all. Costs nothing when no one else is
			// runnable.
			runtime.Gosched()
			batch, next = q.take(now, maxBatchBytes, batch)
		}
		live := batch[:0]
		for _, m := range batch {
			switch {
			case m.call != nil && m.call.abandoned.Load():
				m.release()
			case !now.Before(m.deadline):
				m.release()
				c.metrics.dropped(m.verb, peer, DropExpired)
			default:
				setTimeout(m.env, m.deadline.Sub(now))
				live = append(live, m)
			}
		}
		if len(live) > 0 {
			err := write(live)
			for _, m := range live {
				m.release()
			}
			if err != nil {
				// Requests among them fail with the connection.
				c.abandon(live, peer)
				return err
			}
			clear(batch)
			continue
		}
		if len(batch) > 0 {
			continue
		}
		var fire <-chan time.Time
		if !next.IsZero() {
			timer = c.clock.NewTimer(next.Sub(now))
			fire = timer.C()
		}
		select {
		case <-q.wake:
		case <-fire:
		case <-stop:
			return nil
		}
		if timer != nil {
			timer.Stop()
			timer = nil
		}
	}
}

// truncateUTF8 cuts s to at most n bytes on a rune boundary.
func truncateUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
