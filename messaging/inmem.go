package messaging

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"sync"
	"time"
)

// InmemNetwork connects InmemTransports in one process, for tests of
// clusters that must not depend on sockets or timing. All its transports
// are connected to each other until a test cuts links, and its fault seams
// act per message:
//
//   - Disconnect cuts a link as a refused connection does: sends fail at
//     once with ErrUnreachable and requests in flight with
//     ErrConnectionLost.
//   - Partition drops every message between two groups, silently, as a
//     network partition does: requests time out.
//   - SetFault drops or delays chosen messages.
//
// Safe for concurrent use.
type InmemNetwork struct {
	mu    sync.Mutex
	nodes map[netip.AddrPort]*InmemTransport
	cut   map[[2]netip.AddrPort]bool // both orders of each disconnected pair
	drop  map[[2]netip.AddrPort]bool // both orders of each partitioned pair
	fault FaultFunc
}

// Fault is what a FaultFunc does to one message.
type Fault struct {
	// Drop loses the message.
	Drop bool
	// Delay holds the message this much longer (on the sender's clock),
	// on top of the sender's InjectedDelay.
	Delay time.Duration
}

// FaultFunc chooses the fault of each message as it is sent. It is called
// concurrently, and must not call the network's methods.
type FaultFunc func(from, to netip.AddrPort, verb Verb, response bool) Fault

// NewInmemNetwork returns a network with no transports.
func NewInmemNetwork() *InmemNetwork {
	return &InmemNetwork{
		nodes: make(map[netip.AddrPort]*InmemTransport),
		cut:   make(map[[2]netip.AddrPort]bool),
		drop:  make(map[[2]netip.AddrPort]bool),
	}
}

// NewTransport adds a transport at opts.Addr, which no other transport of
// the network may have. The TCP-only options are ignored.
func (n *InmemNetwork) NewTransport(opts Options) (*InmemTransport, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	t := &InmemTransport{
		core:  newCore(opts, opts.Addr),
		net:   n,
		info:  peerInfo{addr: opts.Addr, hostID: opts.HostID, label: opts.Addr.String()},
		links: make(map[linkKey]*inmemLink),
		from:  make(map[netip.AddrPort]*peerCounters),
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.nodes[opts.Addr] != nil {
		return nil, fmt.Errorf("messaging: address %s is already in use on the network", opts.Addr)
	}
	n.nodes[opts.Addr] = t
	return t, nil
}

// Disconnect cuts the link between a and b, both ways.
func (n *InmemNetwork) Disconnect(a, b netip.AddrPort) {
	n.mu.Lock()
	n.cut[[2]netip.AddrPort{a, b}] = true
	n.cut[[2]netip.AddrPort{b, a}] = true
	ta, tb := n.nodes[a], n.nodes[b]
	n.mu.Unlock()
	failCallsTo(ta, b)
	failCallsTo(tb, a)
}

func failCallsTo(t *InmemTransport, peer netip.AddrPort) {
	if t == nil {
		return
	}
	t.calls.failWhere(func(c *call) bool { return c.peer == peer },
		fmt.Errorf("%w: %s: link cut", ErrConnectionLost, peer))
}

// Connect restores the link between a and b that Disconnect cut.
func (n *InmemNetwork) Connect(a, b netip.AddrPort) {
	n.mu.Lock()
	defer n.mu.Unlock()
	delete(n.cut, [2]netip.AddrPort{a, b})
	delete(n.cut, [2]netip.AddrPort{b, a})
}

// Partition drops every message between a node of side1 and a node of
// side2, both ways, until Heal.
func (n *InmemNetwork) Partition(side1, side2 []netip.AddrPort) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, a := range side1 {
		for _, b := range side2 {
			n.drop[[2]netip.AddrPort{a, b}] = true
			n.drop[[2]netip.AddrPort{b, a}] = true
		}
	}
}

// Heal ends every partition and restores every cut link.
func (n *InmemNetwork) Heal() {
	n.mu.Lock()
	defer n.mu.Unlock()
	clear(n.drop)
	clear(n.cut)
}

// SetFault makes f choose the fault of every message sent from now on; nil
// removes it.
func (n *InmemNetwork) SetFault(f FaultFunc) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.fault = f
}

// route returns the transport at to, if from reaches it, and the fault of
// a message from from to it: a partition's drop and, when askFault, what
// the FaultFunc chooses.
func (n *InmemNetwork) route(from, to netip.AddrPort, verb Verb, response, askFault bool) (*InmemTransport, Fault, error) {
	n.mu.Lock()
	dst, fault := n.nodes[to], n.fault
	var cut, drop bool
	if len(n.cut) > 0 {
		cut = n.cut[[2]netip.AddrPort{from, to}]
	}
	if len(n.drop) > 0 {
		drop = n.drop[[2]netip.AddrPort{from, to}]
	}
	n.mu.Unlock()
	switch {
	case dst == nil:
		return nil, Fault{}, fmt.Errorf("%w: %s: no transport at that address", ErrUnreachable, to)
	case cut:
		return nil, Fault{}, fmt.Errorf("%w: %s: link cut", ErrUnreachable, to)
	}
	var f Fault
	if fault != nil && askFault {
		f = fault(from, to, verb, response)
	}
	f.Drop = f.Drop || drop
	return dst, f, nil
}

func (n *InmemNetwork) remove(t *InmemTransport) {
	n.mu.Lock()
	delete(n.nodes, t.addr)
	var others []*InmemTransport
	for _, o := range n.nodes {
		others = append(others, o)
	}
	n.mu.Unlock()
	for _, o := range others {
		o.calls.failWhere(func(c *call) bool { return c.peer == t.addr },
			fmt.Errorf("%w: %s: transport closed", ErrConnectionLost, t.addr))
	}
}

// InmemTransport is a Transport to the other transports of its
// InmemNetwork. Messages are encoded and decoded as over TCP (without the
// segment framing), delayed by InjectedDelay and the network's faults, and
// held in bounded queues, one per peer for requests and one for
// responses, so a busy peer pushes back as over TCP.
type InmemTransport struct {
	*core
	net    *InmemNetwork
	info   peerInfo   // this node, as receivers see it
	calls  callTable  // requests sent, waiting for responses
	mu     sync.Mutex // guards closed, links and from
	closed bool
	links  map[linkKey]*inmemLink
	from   map[netip.AddrPort]*peerCounters // counters of messages received, by sender
}

var _ Transport = (*InmemTransport)(nil)

type linkKey struct {
	to        netip.AddrPort
	responses bool
}

// inmemLink is the queue of messages toward one peer, and its goroutine.
type inmemLink struct {
	q        *outQueue
	budget   budget
	stop     chan struct{}
	label    string
	counters *peerCounters
}

// Request implements Transport.
func (t *InmemTransport) Request(ctx context.Context, to netip.AddrPort, verb Verb, payload []byte) ([]byte, error) {
	return t.request(ctx, to, verb, payload, func(to netip.AddrPort, m *outMsg) error { return t.route(to, m, false) })
}

// RequestAsync implements AsyncRequester.
func (t *InmemTransport) RequestAsync(ctx context.Context, to netip.AddrPort, verb Verb, payload []byte, done func([]byte, error)) error {
	return t.requestAsync(ctx, to, verb, payload, done, func(to netip.AddrPort, m *outMsg) error { return t.route(to, m, false) })
}

// Send implements Transport.
func (t *InmemTransport) Send(ctx context.Context, to netip.AddrPort, verb Verb, payload []byte) error {
	return t.send(ctx, to, verb, payload, func(to netip.AddrPort, m *outMsg) error { return t.route(to, m, false) })
}

// Close implements Transport.
func (t *InmemTransport) Close() error {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return nil
	}
	t.closed = true
	links := t.links
	t.links = nil
	t.mu.Unlock()

	t.net.remove(t)
	for _, l := range links {
		close(l.stop)
		t.abandon(l.q.close(ErrClosed), l.label)
	}
	t.calls.failAll(ErrClosed, true)
	t.cancel()
	t.wg.Wait()
	return nil
}

// route queues m toward to, on the link for responses or the other.
func (t *InmemTransport) route(to netip.AddrPort, m *outMsg, response bool) error {
	_, fault, err := t.net.route(t.addr, to, m.verb, response, true)
	if err != nil {
		return err
	}
	l, err := t.link(to, response)
	if err != nil {
		return err
	}
	if err := t.reserve(&l.budget, m, l.label); err != nil {
		return err
	}
	if m.call != nil {
		if err := t.calls.add(m.call); err != nil {
			m.release()
			return err
		}
	}
	if fault.Drop {
		// Lost on the way: a request waits for its deadline.
		m.release()
		t.metrics.dropped(m.verb, l.label, DropFault)
		return nil
	}
	m.due = m.due.Add(fault.Delay)
	if err := l.q.push(m); err != nil {
		m.release()
		if m.call != nil {
			t.calls.take(m.call.id)
		}
		return err
	}
	return nil
}

// link returns the queue toward to, starting its goroutine if new.
func (t *InmemTransport) link(to netip.AddrPort, responses bool) (*inmemLink, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return nil, ErrClosed
	}
	k := linkKey{to, responses}
	if l := t.links[k]; l != nil {
		return l, nil
	}
	l := &inmemLink{q: newOutQueue(), budget: budget{limit: int64(t.opts.MaxQueueBytes)}, stop: make(chan struct{}),
		label: to.String(), counters: t.metrics.forPeer(to.String())}
	t.links[k] = l
	t.wg.Add(1)
	go func() {
		defer t.wg.Done()
		t.drain(l.q, l.stop, l.label, func(batch []*outMsg) error {
			for _, m := range batch {
				t.deliver(to, l, m)
			}
			return nil
		})
	}()
	return l, nil
}

// deliver hands m to the transport at to, if it is still reachable.
func (t *InmemTransport) deliver(to netip.AddrPort, l *inmemLink, m *outMsg) {
	dst, fault, err := t.net.route(t.addr, to, m.verb, m.env[offFlags]&flagResponse != 0, false)
	if err != nil || fault.Drop {
		// Cut or partitioned while it waited.
		reason := DropClosed
		if err == nil {
			reason = DropFault
		}
		t.metrics.dropped(m.verb, l.label, reason)
		return
	}
	l.counters.count(dirSent, m.verb, len(m.env))
	dst.receive(&t.info, m.env, l.stop)
}

// receive decodes and serves one message from a peer's link. It blocks
// while every handler slot is busy, until abort (the link's stop) closes.
func (t *InmemTransport) receive(from *peerInfo, env []byte, abort <-chan struct{}) {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return
	}
	t.wg.Add(1)
	counters := t.from[from.addr]
	if counters == nil {
		counters = t.metrics.forPeer(from.label)
		t.from[from.addr] = counters
	}
	t.mu.Unlock()
	defer t.wg.Done()

	m, err := decodeMessage(env)
	if err != nil {
		t.log.Error("messaging: in-memory message does not decode", "from", from.addr, "err", err)
		return
	}
	counters.count(dirReceived, m.verb, len(env))
	if m.isResponse() {
		t.finishCall(&t.calls, from.addr, from.label, m)
		return
	}
	t.serve(from, m, func(resp *outMsg) {
		if err := t.route(from.addr, resp, true); err != nil && !errors.Is(err, ErrQueueFull) {
			t.metrics.dropped(resp.verb, from.label, DropClosed)
		}
	}, abort)
}
