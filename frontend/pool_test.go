package frontend

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/cqld/cqld/protocol"
)

// stepHandler runs "step TAG" queries one step at a time: each records
// TAG in the order the workers started them, then waits for a step.
type stepHandler struct {
	*fakeHandler
	steps chan struct{}
	mu    sync.Mutex
	order []string
}

func newStepHandler() *stepHandler {
	return &stepHandler{fakeHandler: newFakeHandler(), steps: make(chan struct{}, 1<<16)}
}

func (h *stepHandler) Handle(ctx context.Context, req *protocol.Request) *protocol.Response {
	q, ok := req.Message.(*message.Query)
	if tag, step := strings.CutPrefix(q.Query, "step "); ok && step {
		h.mu.Lock()
		h.order = append(h.order, tag)
		h.mu.Unlock()
		select {
		case <-h.steps:
		case <-ctx.Done():
		}
		return rowOf([]byte(tag))
	}
	return h.fakeHandler.Handle(ctx, req)
}

func (h *stepHandler) started() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.order)
}

// unblock lets every step run (startServer's cleanup calls it).
func (h *stepHandler) unblock() {
	for range cap(h.steps) - len(h.steps) {
		h.steps <- struct{}{}
	}
}

// startGreedy starts a server of workers that runs at most running
// requests of one connection at once, and a connection that sends it n
// step queries at once.
func startGreedy(t *testing.T, workers, running, n int) (*stepHandler, *testServer, *client) {
	h := newStepHandler()
	s := startServer(t, h, func(o *Options) { o.Workers = workers; o.MaxRunningPerConn = running })
	g := s.ready(t)
	var frames []byte
	for i := range n {
		frames = append(frames, g.frame(int16(i+1), &message.Query{Query: fmt.Sprint("step greedy-", i), Options: &message.QueryOptions{}})...)
	}
	g.write(frames)
	return h, s, g
}

// Workers go round-robin across connections: a request on a connection
// with nothing queued runs after at most one request of each connection
// ahead of it, however many those have queued. Checked on the order the
// workers start requests, not on timings.
func TestWorkersTakeConnectionsInTurn(t *testing.T) {
	const (
		workers = 2
		greedy  = 1000
	)
	h, s, g := startGreedy(t, workers, workers, greedy)
	queued := func(n int) func() bool {
		return func() bool { return int(testutil.ToFloat64(s.m.QueueDepth)) == n }
	}
	eventually(t, "the greedy connection's requests queued", queued(greedy-workers))

	c := s.ready(t)
	c.query(1, "step good")
	eventually(t, "the good request queued", queued(greedy-workers+1))
	h.unblock()
	if rows := expect[*message.RowsResult](c, 1); string(rows.Data[0][0]) != "good" {
		t.Fatalf("good request answered %q", rows.Data[0][0])
	}
	order := h.started()
	at := slices.Index(order, "good")
	t.Logf("the good request ran %dth, %d greedy ones queued before it", at+1, greedy-workers)
	// The workers were busy with greedy ones when it came; then the
	// greedy connection's turn was first in line, and the good one next.
	if at < 0 || at > workers+1 {
		t.Fatalf("the good request ran %dth of %d started: %v", at+1, len(order), order[:min(len(order), 10)])
	}
	streams := make([]int16, greedy)
	for i := range streams {
		streams[i] = int16(i + 1)
	}
	expectAll[*message.RowsResult](g, streams...)
}

// The requests of a connection whose answers back up wait before they run:
// a client that pipelines large reads and never reads the answers makes
// the node run only as many as fill its send queue (and those running when
// it filled), not every request it sent. Once the client reads, the rest
// run and every answer arrives; a connection that closes instead drops the
// requests it had waiting and gives back what they held.
func TestBackedUpConnectionWaitsBeforeRunning(t *testing.T) {
	const (
		workers  = 4
		requests = 2000
		answer   = 64 << 10
		perConn  = 256 << 10
	)
	h := newFakeHandler()
	s := startServer(t, h, func(o *Options) {
		o.Workers = workers
		o.SendQueueCapacity = perConn
		o.MaxRequestsPerConn = requests
	})
	before := heapBytes()
	c := s.ready(t)
	smallReceiveBuffer(t, c)
	var frames []byte
	for i := range requests {
		frames = append(frames, c.frame(int16(i+1), &message.Query{Query: fmt.Sprint("rows ", answer), Options: &message.QueryOptions{}})...)
	}
	// Unbounded, the node would hold requests*answer = 125MiB of answers.
	c.write(frames)
	eventually(t, "the connection's queue held, none of its requests running", func() bool {
		return heldConns(s.Server) == 1 && s.inflight.Load() == int64(testutil.ToFloat64(s.m.QueueDepth))
	})
	answers, waiting := s.outBytes.Load(), int(testutil.ToFloat64(s.m.QueueDepth))
	grown := heapBytes() - before
	t.Logf("%d KiB of answers held, %d requests waiting, heap grew %d KiB", answers>>10, waiting, grown>>10)
	// Its send queue, and the answers of the requests running when it
	// filled (at most one per worker); gnet's buffers may hold twice.
	if bound := int64(perConn + workers*(answer+protocol.HeaderLen+64)); answers > bound {
		t.Errorf("%d bytes of answers held, bound %d", answers, bound)
	}
	// The sockets' kernel buffers take what they will (tens of MiB on
	// loopback), but not all: run all, the requests would hold 125MiB.
	if waiting == 0 {
		t.Errorf("all %d requests ran", requests)
	}
	if grown > 8<<20 {
		t.Errorf("heap grew %d MiB", grown>>20)
	}
	eventually(t, "connections_held 1", func() bool {
		s.sweep(s.opts.Now(), nil)
		return testutil.ToFloat64(s.m.Held) == 1
	})

	// Reading, the client gets every answer.
	streams := make([]int16, requests)
	for i := range streams {
		streams[i] = int16(i + 1)
	}
	for stream, rows := range expectAll[*message.RowsResult](c, streams...) {
		if len(rows.Data[0][0]) != answer {
			t.Fatalf("stream %d: %d bytes", stream, len(rows.Data[0][0]))
		}
	}

	// Again, closing instead: the requests waiting are dropped.
	c.write(frames)
	eventually(t, "the connection's queue held again", func() bool { return heldConns(s.Server) == 1 })
	c.nc.Close()
	var state string
	eventually(t, "nothing held once the connection closed", func() bool {
		n, _ := s.Stats()
		state = fmt.Sprintf("%d connections, %d in flight, %d bytes of answers, %d of request data, %d held, %v queued",
			n, s.inflight.Load(), s.outBytes.Load(), s.data.used.Load(), heldConns(s.Server), testutil.ToFloat64(s.m.QueueDepth))
		return state == "0 connections, 0 in flight, 0 bytes of answers, 0 of request data, 0 held, 0 queued"
	}, func() string { return state })
	// The pool still serves.
	d := s.ready(t)
	d.query(1, "echo after")
	expect[*message.RowsResult](d, 1)
}

// smallReceiveBuffer keeps c's socket receive buffer small, so that what
// the kernel takes of answers c does not read stays well under what the
// tests send (Linux grows a loopback receive buffer to tens of MiB).
func smallReceiveBuffer(t testing.TB, c *client) {
	t.Helper()
	if err := c.nc.(*net.TCPConn).SetReadBuffer(64 << 10); err != nil {
		t.Fatal(err)
	}
}

// One connection runs at most MaxRunningPerConn of its requests at once:
// with a greedy connection's requests running and a thousand more queued,
// a worker is still free for another connection's request, which starts
// before any of the greedy ones ends. Checked on the requests started.
func TestConnectionRunsAtMostItsShareOfWorkers(t *testing.T) {
	const (
		workers = 4
		running = workers / 2 // the default
		greedy  = 1000
	)
	h, s, g := startGreedy(t, workers, 0, greedy)
	eventually(t, "the greedy connection's requests queued", func() bool {
		return int(testutil.ToFloat64(s.m.QueueDepth)) == greedy-running && len(h.started()) == running
	}, func() string {
		return fmt.Sprintf("%v queued, %d started", testutil.ToFloat64(s.m.QueueDepth), len(h.started()))
	})
	if n := s.pool.active.Load(); n != running {
		t.Fatalf("%d requests running, want %d", n, running)
	}

	c := s.ready(t)
	c.query(1, "step good")
	// No step is given: the good request starts on a free worker.
	eventually(t, "the good request started", func() bool { return slices.Contains(h.started(), "good") },
		func() string { return fmt.Sprint(h.started()) })
	if order := h.started(); len(order) != running+1 {
		t.Fatalf("started %v, want %d greedy ones and the good one", order, running)
	}
	h.unblock()
	expect[*message.RowsResult](c, 1)
	streams := make([]int16, greedy)
	for i := range streams {
		streams[i] = int16(i + 1)
	}
	expectAll[*message.RowsResult](g, streams...)
	// A worker counts its request done just after the answer left.
	eventually(t, "no request running", func() bool { return s.pool.active.Load() == 0 },
		func() string { return fmt.Sprintf("%d requests still running", s.pool.active.Load()) })
}

// Connections that never read their answers cannot fill the node's
// request budget: their requests waiting for their answers to drain count
// against their own connection only, so a well-behaved connection's
// requests are never refused OVERLOADED because of them, however many
// such connections there are.
func TestHeldRequestsLeaveTheNodeBudget(t *testing.T) {
	const (
		workers   = 4
		limit     = 32
		attackers = 4
		requests  = 200
		answer    = 1 << 20
	)
	h := newFakeHandler()
	s := startServer(t, h, func(o *Options) {
		o.Workers = workers
		o.MaxQueued = limit
		o.MaxRequestsPerConn = requests
		o.SendQueueCapacity = 64 << 10
	})
	for i := range attackers {
		a := s.ready(t)
		smallReceiveBuffer(t, a)
		var frames []byte
		for j := range requests {
			frames = append(frames, a.frame(int16(j+1), &message.Query{Query: fmt.Sprint("rows ", answer), Options: &message.QueryOptions{}})...)
		}
		a.write(frames)
		// Held, with nothing of its own running.
		eventually(t, fmt.Sprintf("attacker %d held", i+1), func() bool {
			return heldConns(s.Server) == int64(i+1) && s.pool.active.Load() == 0
		}, func() string {
			return fmt.Sprintf("%d held, %d running, %d in flight", heldConns(s.Server), s.pool.active.Load(), s.inflight.Load())
		})
	}
	t.Logf("%d requests in flight, %d of them held; node limit %d", s.inflight.Load(), s.pool.heldTasks.Load(), limit)
	// Counted against the node, they would be past half its budget, where
	// a connection may have only its fair share in flight, and that
	// share counts each attacker.
	if s.inflight.Load() < limit/2 {
		t.Fatalf("the attackers hold %d requests, fewer than half the node's limit %d", s.inflight.Load(), limit)
	}
	c := s.ready(t)
	for i := range 2 * limit {
		c.query(int16(i+1), "echo good")
		if h, m := c.mustRecv(); h.Stream != int16(i+1) || !isRows(m) {
			t.Fatalf("good request %d answered on stream %d: %v", i+1, h.Stream, m)
		}
	}
	// Pipelined too, within its share.
	for i := range limit / 2 {
		c.query(int16(i+1), "echo good")
	}
	for i := range limit / 2 {
		if _, m := c.mustRecv(); !isRows(m) {
			t.Fatalf("pipelined good request %d answered %v", i+1, m)
		}
	}
}

func isRows(m message.Message) bool {
	_, ok := m.(*message.RowsResult)
	return ok
}

// The requests handed to the workers count against the request data
// budget at least queuedCost each, so the request data bounds, per client
// address and node-wide, bound how many the node holds, including those
// waiting on connections whose answers are backed up, which count against
// no request limit of the node.
func TestQueuedRequestsCountAgainstRequestData(t *testing.T) {
	const (
		requests = 100
		fit      = 16
	)
	h := newStepHandler()
	s := startServer(t, h, func(o *Options) {
		o.Workers = 1
		o.MaxFrameSize = 4 << 10
		o.MaxRequestDataPerIP = fit * queuedCost
		o.MaxRequestsPerConn = requests
	})
	c := s.ready(t)
	var frames []byte
	for i := range requests {
		frames = append(frames, c.frame(int16(i+1), &message.Query{Query: fmt.Sprint("step ", i), Options: &message.QueryOptions{}})...)
	}
	// Their frames alone are a fifth of the budget.
	c.write(frames)
	overloaded := 0
	for overloaded < requests-fit {
		_, m := c.mustRecv()
		if _, ok := m.(*message.Overloaded); !ok {
			t.Fatalf("answered %v before any request ran", m)
		}
		overloaded++
	}
	if n := s.inflight.Load(); n > fit {
		t.Fatalf("%d requests in flight, budget for %d", n, fit)
	}
	h.unblock()
	for range requests - overloaded {
		_, m := c.mustRecv()
		if _, ok := m.(*message.Overloaded); ok {
			overloaded++
		} else if !isRows(m) {
			t.Fatalf("answered %v", m)
		}
	}
	t.Logf("%d of %d requests OVERLOADED", overloaded, requests)
	if got := int(counter(t, s.m.Overloaded, "request_data")); got != overloaded {
		t.Errorf("request_data OVERLOADED counted %d, clients saw %d", got, overloaded)
	}
}

// heldConns is how many of s's connections have their queue held.
func heldConns(s *Server) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	var n int64
	for cn := range s.conns {
		if cn.run.held.Load() {
			n++
		}
	}
	return n
}
