package frontend

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"
	"github.com/panjf2000/gnet/v2"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/cqld/cqld/metrics"
	"github.com/cqld/cqld/protocol"
)

// Options configures a Server.
type Options struct {
	// Addr is host:port to listen on; port 0 picks a free port (see Addr).
	Addr string
	// MaxFrameSize bounds a frame's body, compressed or not (Cassandra's
	// native_transport_max_frame_size).
	MaxFrameSize int
	// Workers is the size of the worker pool (native_transport_max_threads).
	Workers int
	// MaxRunningPerConn is how many requests of one connection the
	// workers run at once; its other requests wait their turn. Default
	// half the workers, at most Workers.
	MaxRunningPerConn int
	// MaxRequestsPerConn and MaxQueued bound requests in flight on one
	// connection and in the whole server; past them a request waits
	// unread, or gets OVERLOADED when its client set THROW_ON_OVERLOAD
	// (admit.go).
	MaxRequestsPerConn int
	MaxQueued          int
	// EventLoops is the number of gnet event loops; 0 means half the CPUs
	// (GOMAXPROCS), at least one. The loops answer most reads and writes
	// themselves (Inliner); the other half of the CPUs is left to workers,
	// the commit log, flushes and compactions, the garbage collector and,
	// on a shared machine, the clients.
	EventLoops int
	// IdleTimeout closes connections that have sent nothing and have no
	// request in flight for this long (native_transport_idle_timeout); 0
	// keeps them forever.
	IdleTimeout time.Duration
	// MaxConnections and MaxConnectionsPerIP cap the connections open at
	// once, in all and from one client address
	// (native_transport_max_concurrent_connections and _per_ip); 0 or
	// less is no cap. A connection past a cap is closed as soon as it is
	// accepted.
	MaxConnections      int
	MaxConnectionsPerIP int
	// MaxRequestData and MaxRequestDataPerIP bound the bytes of requests
	// held, node-wide and per client address: frames being read (counted
	// in full from their header), frames waiting on a paused connection,
	// requests in flight (native_transport_max_request_data_in_flight and
	// _per_ip). A frame past them is answered OVERLOADED. Defaults 256MiB
	// and 64MiB; either is at least one frame of MaxFrameSize.
	MaxRequestData      int
	MaxRequestDataPerIP int
	// ReceiveQueueCapacity is how many bytes of requests a paused
	// connection may have waiting, past the frame it was reading, before
	// it is closed (native_transport_receive_queue_capacity; default
	// 1MiB).
	ReceiveQueueCapacity int
	// SendQueueCapacity and MaxResponseData are the outbound bounds: a
	// connection with more answers than SendQueueCapacity not yet taken by
	// its socket, or with any while the node has more than
	// MaxResponseData, is paused (reads no requests) until they drain.
	// Defaults 256KiB and 256MiB.
	SendQueueCapacity int
	MaxResponseData   int
	// SocketSendBuffer is each client socket's kernel send buffer
	// (SO_SNDBUF); 0 leaves the kernel's, which it grows up to
	// net.ipv4.tcp_wmem's maximum. What the kernel holds of a client's
	// answers is beyond SendQueueCapacity's reach: a client that reads
	// nothing gets that much written for it before it is paused, by the
	// event loop that serves other clients too.
	SocketSendBuffer int
	// HandshakeTimeout closes a connection that has not completed STARTUP
	// this long after it opened; FrameTimeout one that began a frame and
	// did not finish it in this long. 0 turns either off.
	HandshakeTimeout time.Duration
	FrameTimeout     time.Duration
	// TLS, when set, makes clients speak TLS: on Addr, or only on TLSAddr
	// when that is set, Addr then staying plaintext (Cassandra's
	// native_transport_port_ssl). TLSOptional lets plaintext clients in
	// on the TLS listener too, told apart by their first byte. Handshakes
	// take the certificate of the moment (tls.Config.GetConfigForClient),
	// so reloaded certificates reach new connections.
	TLS         *tls.Config
	TLSAddr     string
	TLSOptional bool
	// Authenticator, when set, makes every connection log in after
	// STARTUP; nil lets every client in (AllowAllAuthenticator).
	Authenticator Authenticator
	Metrics       *metrics.Native
	Logger        *slog.Logger
	// Bursts, when set, is told when an event loop begins reading a
	// connection's requests (Hold) and when it is done (Release): the
	// commit log, which then wakes its flusher once per burst, or syncs a
	// lone writer on the loop itself.
	Bursts Bursts
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

func (o *Options) setDefaults() {
	if o.MaxFrameSize <= 0 {
		o.MaxFrameSize = 16 << 20
	}
	if o.Workers <= 0 {
		o.Workers = 128
	}
	if o.MaxRunningPerConn <= 0 {
		o.MaxRunningPerConn = max(1, o.Workers/2)
	}
	o.MaxRunningPerConn = min(o.MaxRunningPerConn, o.Workers)
	if o.MaxRequestsPerConn <= 0 {
		o.MaxRequestsPerConn = 1024
	}
	if o.MaxQueued <= 0 {
		o.MaxQueued = 8192
	}
	if o.EventLoops <= 0 {
		o.EventLoops = max(1, runtime.GOMAXPROCS(0)/2)
	}
	if o.MaxRequestData <= 0 {
		o.MaxRequestData = 256 << 20
	}
	if o.MaxRequestDataPerIP <= 0 {
		o.MaxRequestDataPerIP = 64 << 20
	}
	// One frame of the largest size always fits.
	o.MaxRequestData = max(o.MaxRequestData, protocol.HeaderLen+o.MaxFrameSize)
	o.MaxRequestDataPerIP = max(o.MaxRequestDataPerIP, protocol.HeaderLen+o.MaxFrameSize)
	if o.ReceiveQueueCapacity <= 0 {
		o.ReceiveQueueCapacity = 1 << 20
	}
	if o.SendQueueCapacity <= 0 {
		o.SendQueueCapacity = 256 << 10
	}
	if o.MaxResponseData <= 0 {
		o.MaxResponseData = 256 << 20
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
}

// Server is a CQL native protocol server. Its methods are safe for
// concurrent use.
type Server struct {
	gnet.BuiltinEventEngine
	connIDs atomic.Uint64 // the last connection's id

	opts    Options
	handler Handler
	inliner Inliner // handler, when it can answer some requests inline
	m       *metrics.Native
	log     *slog.Logger
	pool    *pool

	// lns are the listening sockets, each served by an acceptLoop; cli
	// runs the event loops that serve the accepted plaintext connections
	// (listener.go), enrollMu serialises handing them over (gnet's
	// EnrollContext is not safe for concurrent use).
	lns      []listener
	cli      *gnet.Client
	enrollMu sync.Mutex
	// enrollStopped, under enrollMu, refuses enrolls once Shutdown stops
	// the event loops: a socket handed to a stopped loop is never
	// registered, and gnet's EnrollContext would wait for it forever.
	enrollStopped bool
	addr          string
	tlsAddr       string
	stopAccept    chan struct{}
	stopOnce      sync.Once
	acceptDone    sync.WaitGroup
	acceptWarn    logGuard
	refuseWarn    logGuard
	refuseIPWarn  logGuard
	tlsWarn       logGuard

	// tlsDone counts the goroutines serving TLS connections (tls.go) and
	// sniffing optional ones; sniffing holds the connections whose first
	// byte has not come yet, under mu.
	tlsDone  sync.WaitGroup
	sniffing map[net.Conn]struct{}

	stopHouse chan struct{}
	houseDone sync.WaitGroup

	// shutdownOnce runs Shutdown's work once; shutdownErr is its result.
	shutdownOnce sync.Once
	shutdownErr  error

	draining atomic.Bool
	// inflight counts requests read and not yet answered, activeConns the
	// connections with any (for the fair share, admit.go).
	inflight    atomic.Int64
	activeConns atomic.Int64
	// requests counts the requests read (system_views.thread_pools).
	requests atomic.Int64
	// data is the node's request data budget (budget.go); outBytes the
	// answers queued and not yet taken by sockets, pausedConns the
	// connections paused for them, waiting those the housekeeper wakes
	// (write.go).
	data        budget
	outBytes    atomic.Int64
	pausedConns atomic.Int64
	waiting     atomic.Int64
	sweeps      atomic.Int64 // the housekeeper's, counted
	// waitQ is the line of connections stalled for node capacity,
	// waiters its length (admit.go).
	waitMu  sync.Mutex
	waitQ   fifo[*conn]
	waiters atomic.Int64

	mu    sync.Mutex
	conns map[*conn]struct{}
	// admitted counts the connections accepted and not yet closed, peers
	// them and their request data per client address.
	admitted int
	peers    map[netip.Addr]*peer

	// okRequests and latency are the metric series of each known opcode,
	// looked up once rather than by label on every request.
	okRequests [256]prometheus.Counter
	latency    [256]prometheus.Observer

	// supported holds the SUPPORTED frame per protocol version, encoded
	// once: OPTIONS is the drivers' heartbeat.
	supported [protocol.MaxVersion + 1][]byte
	// appendResponse is protocol.AppendResponse; tests inject failures.
	appendResponse func(dst []byte, v primitive.ProtocolVersion, stream int16, resp *protocol.Response, comp protocol.Compressor) ([]byte, error)

	baseCtx context.Context
	cancel  context.CancelFunc
}

var _ gnet.EventHandler = (*Server)(nil)

// New returns a server that sends requests to h. Call Start to listen.
func New(h Handler, opts Options) *Server {
	opts.setDefaults()
	m := opts.Metrics
	if m == nil {
		m = metrics.NewNative(prometheus.NewRegistry())
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{
		opts:     opts,
		handler:  h,
		m:        m,
		log:      opts.Logger,
		conns:    make(map[*conn]struct{}),
		peers:    make(map[netip.Addr]*peer),
		sniffing: make(map[net.Conn]struct{}),
		data:     budget{limit: int64(opts.MaxRequestData)},
		baseCtx:  ctx,
		cancel:   cancel,

		stopAccept: make(chan struct{}),
		stopHouse:  make(chan struct{}),

		appendResponse: protocol.AppendResponse,
	}
	s.inliner, _ = h.(Inliner)
	s.pool = newPool(opts.Workers, opts.MaxQueued, opts.MaxRunningPerConn, m)
	for op, name := range opNames {
		s.okRequests[op] = m.Requests.WithLabelValues(name, "ok")
		s.latency[op] = m.Latency.WithLabelValues(name)
	}
	for v := protocol.MinVersion; v <= protocol.MaxVersion; v++ {
		f, err := protocol.AppendResponse(nil, v, 0, &protocol.Response{Message: &message.Supported{Options: supportedOptions()}}, nil)
		if err != nil {
			panic(fmt.Sprintf("frontend: encode SUPPORTED: %v", err)) // a bug, not input
		}
		s.supported[v] = f
	}
	return s
}

// Start listens and serves in the background. It returns once the listener
// is bound, or with the error that prevented it.
func (s *Server) Start() error {
	mode := modePlain
	if s.opts.TLS != nil {
		mode = modeTLS
		if s.opts.TLSOptional {
			mode = modeOptional
		}
	}
	lns := []listener{{addr: s.opts.Addr, mode: mode}}
	if s.opts.TLS != nil && s.opts.TLSAddr != "" {
		lns = []listener{{addr: s.opts.Addr, mode: modePlain}, {addr: s.opts.TLSAddr, mode: mode}}
	}
	for i := range lns {
		ln, err := net.Listen("tcp", lns[i].addr)
		if err != nil {
			for _, l := range lns[:i] {
				l.ln.Close()
			}
			s.pool.close()
			return fmt.Errorf("frontend: listen %s: %w", lns[i].addr, err)
		}
		lns[i].ln = ln
	}
	cli, err := gnet.NewClient(s,
		gnet.WithMulticore(true),
		gnet.WithNumEventLoop(s.opts.EventLoops),
		gnet.WithTCPNoDelay(gnet.TCPNoDelay),
		gnet.WithSocketSendBuffer(s.opts.SocketSendBuffer),
		gnet.WithLogger(gnetLogger{s.log}),
	)
	if err == nil {
		err = cli.Start()
	}
	if err != nil {
		for _, l := range lns {
			l.ln.Close()
		}
		s.pool.close()
		return fmt.Errorf("frontend: start event loops: %w", err)
	}
	s.lns, s.cli, s.addr = lns, cli, lns[0].ln.Addr().String()
	if len(lns) > 1 {
		s.tlsAddr = lns[1].ln.Addr().String()
	}
	s.houseDone.Add(1)
	go s.housekeep()
	for _, l := range lns {
		s.acceptDone.Add(1)
		go s.acceptLoop(l)
	}
	return nil
}

// Addr is the address the server listens on, with the real port when
// Options.Addr asked for port 0.
func (s *Server) Addr() string { return s.addr }

// TLSAddr is the address of the TLS listener when Options.TLSAddr asked
// for one, "" otherwise.
func (s *Server) TLSAddr() string { return s.tlsAddr }

// OnOpen sets up a connection's state; while draining, new connections are
// closed at once.
func (s *Server) OnOpen(c gnet.Conn) ([]byte, gnet.Action) {
	a, ok := c.Context().(*admission)
	if !ok {
		return nil, gnet.Close // not accepted by acceptLoop
	}
	if a.tls != nil {
		return nil, s.openTLS(c, a.tls)
	}
	cn := s.open(c, a)
	c.SetContext(cn)
	if s.draining.Load() {
		return nil, gnet.Close
	}
	return nil, gnet.None
}

// open sets up the state of an admitted connection, whatever serves it.
func (s *Server) open(c sock, a *admission) *conn {
	a.opened = true
	cn := newConn(s, c, a)
	s.mu.Lock()
	s.conns[cn] = struct{}{}
	s.mu.Unlock()
	s.m.ConnectionsOpen.Inc()
	s.m.ConnectionsTotal.Inc()
	return cn
}

// OnClose forgets the connection. Requests still running finish; their
// responses are dropped by the closed connection.
func (s *Server) OnClose(c gnet.Conn, err error) gnet.Action {
	switch x := c.Context().(type) {
	case *conn:
		s.forget(x)
	case *tlsSock:
		s.forget(x.cn)
	}
	return gnet.None
}

// forget releases what a closed connection held.
// REQUIRES: called once, by the goroutine that runs its onTraffic.
func (s *Server) forget(cn *conn) {
	cn.release()
	s.mu.Lock()
	delete(s.conns, cn)
	s.mu.Unlock()
	s.releaseSlot(cn.ip, cn.peer)
	s.m.ConnectionsOpen.Dec()
}

// Bursts is told where an event loop's bursts of one connection's
// requests begin and end (Options.Bursts); Release names the connection.
type Bursts interface {
	Hold()
	Release(conn uint64)
}

// OnTraffic cuts whole frames out of the inbound buffer.
func (s *Server) OnTraffic(c gnet.Conn) gnet.Action {
	switch x := c.Context().(type) {
	case *conn:
		return x.onTraffic()
	case *tlsSock:
		return s.trafficTLS(c, x)
	}
	return gnet.Close
}

// Publish pushes an event (a *message.SchemaChangeEvent, TopologyChangeEvent
// or StatusChangeEvent) on stream -1 to every connection that registered for
// its type.
func (s *Server) Publish(ev message.Message) {
	var typ primitive.EventType
	switch ev.(type) {
	case *message.SchemaChangeEvent:
		typ = primitive.EventTypeSchemaChange
	case *message.TopologyChangeEvent:
		typ = primitive.EventTypeTopologyChange
	case *message.StatusChangeEvent:
		typ = primitive.EventTypeStatusChange
	default:
		return
	}
	s.mu.Lock()
	targets := make([]*conn, 0, len(s.conns))
	for cn := range s.conns {
		if cn.registered(typ) {
			targets = append(targets, cn)
		}
	}
	s.mu.Unlock()
	for _, cn := range targets {
		cn.send(-1, &protocol.Response{Message: ev})
	}
}

// Shutdown stops taking new connections and new requests (they get
// OVERLOADED, those waiting unread included), waits for requests in flight to finish or ctx to end, then
// closes every connection and stops the event loops and the workers. It
// may be called more than once, from any goroutine: the calls after the
// first wait for it and return what it returned.
func (s *Server) Shutdown(ctx context.Context) error {
	s.shutdownOnce.Do(func() { s.shutdownErr = s.shutdown(ctx) })
	return s.shutdownErr
}

func (s *Server) shutdown(ctx context.Context) error {
	s.draining.Store(true)
	s.wakeAll()
	s.stopAccepting()
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	var err error
wait:
	for s.inflight.Load() > 0 {
		select {
		case <-ctx.Done():
			err = fmt.Errorf("frontend: %d requests still in flight: %w", s.inflight.Load(), ctx.Err())
			break wait
		case <-tick.C:
		}
	}
	s.cancel()
	s.enrollMu.Lock()
	s.enrollStopped = true
	s.enrollMu.Unlock()
	if e := s.cli.Stop(); e != nil && err == nil {
		err = fmt.Errorf("frontend: stop event loops: %w", e)
	}
	s.closeTLS()
	close(s.stopHouse)
	s.houseDone.Wait()
	s.pool.close()
	return err
}

// closing logs and counts a connection the server is closing. A failure
// to frame an answer is the server's fault and logged as an error; the
// other reasons are the client's and logged at debug level.
func (s *Server) closing(cn *conn, reason string, err error) {
	s.m.Closed.WithLabelValues(reason).Inc()
	level := slog.LevelDebug
	if reason == reasonEncode {
		level = slog.LevelError
	}
	s.log.Log(context.Background(), level, "closing client connection", "remote", cn.remote, "reason", reason, "err", err)
}

// Stats reports the server's live counters, for tests and diagnostics.
func (s *Server) Stats() (conns int, inflight int64) {
	s.mu.Lock()
	conns = len(s.conns)
	s.mu.Unlock()
	return conns, s.inflight.Load()
}

// observe counts a finished request and its latency.
func (s *Server) observe(op primitive.OpCode, resp message.Message, start time.Time) {
	if _, failed := resp.(message.Error); failed || s.okRequests[op] == nil {
		s.m.Requests.WithLabelValues(opName(op), outcome(resp)).Inc()
	} else {
		s.okRequests[op].Inc()
	}
	if l := s.latency[op]; l != nil {
		l.Observe(time.Since(start).Seconds())
	} else {
		s.m.Latency.WithLabelValues(opName(op)).Observe(time.Since(start).Seconds())
	}
}
