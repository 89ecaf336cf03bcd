package frontend

import (
	"context"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/cqld/cqld/metrics"
	"github.com/cqld/cqld/protocol"
)

// fakeHandler answers QUERY by its text, with no storage behind it:
//
//	block        waits until release is closed (or the server stops)
//	rows N       one row of one N-byte cell
//	use KS       SET_KEYSPACE KS
//	keyspace     one row holding the connection's keyspace
//	role         one row holding the role the connection logged in as
//	echo TEXT    one row holding TEXT
//	warn TEXT    VOID with the warning TEXT
//	anything else: VOID
//
// PREPARE, EXECUTE and BATCH get VOID.
type fakeHandler struct {
	release chan struct{}
	// blocked receives one value per "block" query that started waiting.
	blocked chan struct{}
}

var _ Handler = (*fakeHandler)(nil)

func newFakeHandler() *fakeHandler {
	return &fakeHandler{release: make(chan struct{}), blocked: make(chan struct{}, 1<<16)}
}

func (h *fakeHandler) Handle(ctx context.Context, req *protocol.Request) *protocol.Response {
	q, ok := req.Message.(*message.Query)
	if !ok {
		return &protocol.Response{Message: &message.VoidResult{}}
	}
	return answer(ctx, h, req, q.Query)
}

func answer(ctx context.Context, h *fakeHandler, req *protocol.Request, q string) *protocol.Response {
	verb, arg, _ := strings.Cut(q, " ")
	switch verb {
	case "block":
		h.blocked <- struct{}{}
		select {
		case <-h.release:
		case <-ctx.Done():
		}
	case "rows":
		n, _ := strconv.Atoi(arg)
		return rowOf(make([]byte, n))
	case "use":
		return &protocol.Response{Message: &message.SetKeyspaceResult{Keyspace: arg}}
	case "keyspace":
		return rowOf([]byte(req.Keyspace))
	case "role":
		return rowOf([]byte(req.Role))
	case "echo":
		return rowOf([]byte(arg))
	case "warn":
		return &protocol.Response{Message: &message.VoidResult{}, Warnings: []string{arg}}
	}
	return &protocol.Response{Message: &message.VoidResult{}}
}

func rowOf(cell []byte) *protocol.Response {
	return &protocol.Response{Message: &message.RowsResult{
		Metadata: &message.RowsMetadata{ColumnCount: 1},
		Data:     message.RowSet{{cell}},
	}}
}

// fakeInliner is a fakeHandler that takes queries starting with "inline"
// on the event loop: "inline", "inline-rows N" and "inline-warn TEXT" (VOID
// with a warning) it answers at once, "inline-later" from another goroutine, after Inline
// returned.
type fakeInliner struct {
	*fakeHandler
	wg sync.WaitGroup
}

var _ Inliner = (*fakeInliner)(nil)

func (h *fakeInliner) Inline(ctx context.Context, req *protocol.Request, later protocol.Later) (*protocol.Response, bool) {
	q, ok := req.Message.(*message.Query)
	if !ok || !strings.HasPrefix(q.Query, "inline") {
		return nil, false
	}
	if n, ok := strings.CutPrefix(q.Query, "inline-rows "); ok {
		size, _ := strconv.Atoi(n)
		return rowOf(make([]byte, size)), true
	}
	if warning, ok := strings.CutPrefix(q.Query, "inline-warn "); ok {
		return &protocol.Response{Message: &message.VoidResult{}, Warnings: []string{warning}}, true
	}
	if q.Query == "inline-later" {
		h.wg.Add(1)
		go func() {
			defer h.wg.Done()
			later.Answer(req, rowOf([]byte("later")))
		}()
		return nil, true
	}
	return rowOf([]byte("inline")), true
}

// testServer is a started Server with its metrics registry.
type testServer struct {
	*Server
	reg  *prometheus.Registry
	stop func() error // Shutdown: a test may stop it before its end
}

// startServer starts a server for h on a free 127.0.0.1 port; edit, when
// not nil, adjusts the options first, and before runs on the new server
// before it starts. The server is shut down when the test ends.
func startServer(t testing.TB, h Handler, edit func(*Options), before ...func(*Server)) *testServer {
	t.Helper()
	reg := prometheus.NewRegistry()
	opts := Options{
		Addr:    "127.0.0.1:0",
		Workers: 8,
		Metrics: metrics.NewNative(reg),
		Logger:  slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
	if edit != nil {
		edit(&opts)
	}
	s := New(h, opts)
	for _, f := range before {
		f(s)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	// Shutdown may be called again: a later call returns the first's result.
	stop := func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		return s.Shutdown(ctx)
	}
	t.Cleanup(func() {
		if u, ok := h.(interface{ unblock() }); ok {
			u.unblock()
		}
		if err := stop(); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	})
	return &testServer{Server: s, reg: reg, stop: stop}
}

// waitBlocked waits for n "block" queries to start waiting.
func (h *fakeHandler) waitBlocked(t testing.TB, n int) {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for range n {
		select {
		case <-h.blocked:
		case <-timeout:
			t.Fatalf("fewer than %d block queries running after 10s", n)
		}
	}
}

// unblock releases every "block" query, once.
func (h *fakeHandler) unblock() {
	select {
	case <-h.release:
	default:
		close(h.release)
	}
}

// counter reads one series of a counter vector.
func counter(t testing.TB, v *prometheus.CounterVec, labels ...string) float64 {
	t.Helper()
	return testutil.ToFloat64(v.WithLabelValues(labels...))
}

// expectClosedFor expects the server to close c, having closed want
// connections in all for reason.
func (s *testServer) expectClosedFor(t testing.TB, c *client, reason string, want float64) {
	t.Helper()
	c.expectClosed()
	eventually(t, "the close counted", func() bool { return counter(t, s.m.Closed, reason) == want })
}

// ready connects and completes the v4 handshake.
func (s *testServer) ready(t testing.TB) *client {
	t.Helper()
	c := dialClient(t, s.Addr())
	c.startup(primitive.ProtocolVersion4, nil)
	return c
}

// throwing connects and completes the v4 handshake with
// THROW_ON_OVERLOAD set: requests over a limit get OVERLOADED rather than
// wait.
func (s *testServer) throwing(t testing.TB) *client {
	t.Helper()
	c := dialClient(t, s.Addr())
	c.startup(primitive.ProtocolVersion4, map[string]string{"THROW_ON_OVERLOAD": "1"})
	return c
}

// eventually polls cond every few milliseconds for up to ten seconds: for
// state the server reaches by itself, such as a connection it closed.
func eventually(t testing.TB, what string, cond func() bool, state ...func() string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			for _, f := range state {
				what += " (" + f() + ")"
			}
			t.Fatalf("still not %s after 10s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
