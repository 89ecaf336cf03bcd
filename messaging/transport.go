package messaging

import (
	"context"
	"net/netip"
	"time"
)

// Transport carries messages between this node and its peers, each named by
// its internode address (broadcast_address:storage_port). TCPTransport and
// InmemTransport implement it.
//
// Every method is safe for concurrent use. Request and Send copy payload
// before they return, so the caller may reuse it at once.
type Transport interface {
	// Request sends payload to the peer under verb and returns the
	// response's payload, which the caller owns. The request's deadline is
	// ctx's, or Options.RequestTimeout from now when ctx has none; the
	// receiver sees it too and drops the request if it expires before its
	// handler starts. A full queue toward the peer fails at once with
	// ErrQueueFull, a deadline with ErrTimeout, a broken connection with
	// ErrConnectionLost, a handler's error as a *RemoteError.
	Request(ctx context.Context, to netip.AddrPort, verb Verb, payload []byte) ([]byte, error)
	// Send queues a one-way message and returns without waiting for it to
	// be written. It fails only when the message cannot be queued; a
	// message lost later (connection failure, deadline) is counted in
	// Metrics.Dropped.
	Send(ctx context.Context, to netip.AddrPort, verb Verb, payload []byte) error
	// Handle registers h for messages of verb, replacing any handler
	// before; a nil h removes it. Register before peers send: a request
	// for a verb without a handler gets a FailureNoHandler response.
	Handle(verb Verb, h Handler)
	// Addr is the address this node gives its peers.
	Addr() netip.AddrPort
	// Close stops the transport: pending requests fail with ErrClosed,
	// connections close, handler contexts are cancelled, and Close
	// returns once every goroutine of the transport (handlers included)
	// has returned.
	Close() error
}

// AsyncRequester is a Transport that can send a request without a
// goroutine waiting for its response (both TCPTransport and
// InmemTransport are).
type AsyncRequester interface {
	// RequestAsync is Request with the result handed to done instead of
	// returned: done is called exactly once, on one of the transport's
	// goroutines, unless RequestAsync returns an error (then the request
	// was not sent and done is never called). done must not block.
	RequestAsync(ctx context.Context, to netip.AddrPort, verb Verb, payload []byte, done func(resp []byte, err error)) error
}

// AsyncServer is a Transport that can serve a verb's requests without a
// handler worker (both TCPTransport and InmemTransport can).
type AsyncServer interface {
	// HandleAsync registers h for the requests of verb, before its
	// Handler: h runs on the goroutine that read the request and answers
	// through reply, then or later, or leaves the request to the Handler.
	// One-way messages of verb go to the Handler. A nil h removes it.
	HandleAsync(verb Verb, h AsyncHandler)
}

// AsyncHandler serves one inbound request on the goroutine that read it,
// so it must not block: work that waits answers later, from another
// goroutine. It calls reply exactly once; reply does not block. deadline
// is the request's, already checked once. It owns m.Payload. It may
// decline a request, returning false without calling reply: the verb's
// Handler then serves it on a worker.
type AsyncHandler func(deadline time.Time, m Inbound, reply func(payload []byte, err error)) bool

var (
	_ AsyncRequester = (*TCPTransport)(nil)
	_ AsyncRequester = (*InmemTransport)(nil)
	_ AsyncServer    = (*TCPTransport)(nil)
	_ AsyncServer    = (*InmemTransport)(nil)
)

// Handler serves one inbound message. Handlers run concurrently on the
// transport's worker goroutines, at most Options.MaxConcurrentHandlers at
// a time; while all are busy the transport stops reading from peers, which
// pushes back on their queues. ctx carries the message's
// deadline and is cancelled when the transport closes. The returned
// payload is the response of a request (ignored for a one-way message); an
// error becomes a failure response (see RemoteError). A Handler owns
// m.Payload and may keep it; the transport does not keep the returned
// slice after the response is queued.
type Handler func(ctx context.Context, m Inbound) ([]byte, error)

// Inbound is a message as its handler receives it.
type Inbound struct {
	// From is the sender's internode address and HostID its host id, as
	// its handshake named them.
	From    netip.AddrPort
	HostID  [16]byte
	Verb    Verb
	OneWay  bool
	Payload []byte
	// Trace is the tracing session of the client request the message
	// serves, when Traced (WithTrace).
	Trace  [16]byte
	Traced bool
}

type traceKey struct{}

// WithTrace returns ctx whose requests carry the tracing session id: the
// peer's handler sees it in Inbound.Trace and records its events there.
func WithTrace(ctx context.Context, id [16]byte) context.Context {
	return context.WithValue(ctx, traceKey{}, id)
}

// traceOf is the tracing session ctx's requests carry.
func traceOf(ctx context.Context) ([16]byte, bool) {
	id, ok := ctx.Value(traceKey{}).([16]byte)
	return id, ok
}
