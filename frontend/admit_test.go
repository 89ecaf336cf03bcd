package frontend

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"

	"github.com/cqld/cqld/protocol"
)

// A greedy connection that pipelines more requests than the node takes,
// and asked for OVERLOADED, gets it before connections that ask for one at
// a time.
func TestFairShare(t *testing.T) {
	h := newFakeHandler()
	s := startServer(t, h, func(o *Options) { o.MaxQueued = 8; o.MaxRequestsPerConn = 100 })
	greedy := s.throwing(t)
	const burst = 20
	var frames []byte
	for i := int16(1); i <= burst; i++ {
		frames = append(frames, greedy.frame(i, &message.Query{Query: "block", Options: &message.QueryOptions{}})...)
	}
	greedy.write(frames)
	// Alone, it gets half the node: 4 run, 16 are refused.
	h.waitBlocked(t, 4)
	refused := 0
	for refused < burst-4 {
		h, msg := greedy.mustRecv()
		e, ok := msg.(*message.Overloaded)
		if !ok || !strings.Contains(e.ErrorMessage, "fair share") {
			t.Fatalf("greedy connection, stream %d: got %v", h.Stream, msg)
		}
		refused++
	}

	// Each newcomer is under its share and gets in, while the greedy one
	// stays refused.
	var innocents []*client
	for i := range 4 {
		c := s.ready(t)
		c.query(1, "block")
		h.waitBlocked(t, 1)
		innocents = append(innocents, c)
		if i == 2 {
			greedy.query(100, "void")
			expect[*message.Overloaded](greedy, 100)
		}
	}
	if got := counter(t, s.m.Overloaded, "fair_share"); got != burst-4+1 {
		t.Errorf("overloaded{limit=fair_share} = %v, want %d", got, burst-4+1)
	}
	h.unblock()
	for _, c := range innocents {
		expect[*message.VoidResult](c, 1)
	}
	expectAll[*message.VoidResult](greedy, 1, 2, 3, 4)
}

// countingHandler records the most requests it ran at once.
type countingHandler struct {
	*fakeHandler
	running, most atomic.Int32
}

func (h *countingHandler) Handle(ctx context.Context, req *protocol.Request) *protocol.Response {
	n := h.running.Add(1)
	for m := h.most.Load(); n > m && !h.most.CompareAndSwap(m, n); m = h.most.Load() {
	}
	defer h.running.Add(-1)
	return h.fakeHandler.Handle(ctx, req)
}

// By default a connection that pipelines past MaxRequestsPerConn is not
// answered OVERLOADED: the requests past the limit wait unread, in v4
// frames and in v5 segments alike, and each is started once one of the
// connection's own ends.
func TestBackpressurePerConnection(t *testing.T) {
	for _, v := range []primitive.ProtocolVersion{primitive.ProtocolVersion4, primitive.ProtocolVersion5} {
		t.Run(fmt.Sprintf("v%d", v), func(t *testing.T) {
			const limit, burst = 4, 40
			h := &countingHandler{fakeHandler: newFakeHandler()}
			s := startServer(t, h, func(o *Options) { o.MaxRequestsPerConn = limit; o.Workers = 16 })
			c := dialClient(t, s.Addr())
			c.startup(v, nil)
			var frames []byte
			streams := make([]int16, burst)
			for i := range burst {
				streams[i] = int16(1 + i)
				frames = append(frames, c.frame(streams[i], &message.Query{Query: "block", Options: &message.QueryOptions{}})...)
			}
			c.write(frames)
			h.waitBlocked(t, limit)
			eventually(t, "paused", func() bool { return counter(t, s.m.Backpressure, limitConnection) == 1 })
			// The others are left unread: not decoded, not counted.
			if _, inflight := s.Stats(); inflight != limit || s.requests.Load() != limit {
				t.Errorf("%d requests in flight and %d read, want %d", inflight, s.requests.Load(), limit)
			}
			h.unblock()
			expectAll[*message.VoidResult](c, streams...)
			if most := h.most.Load(); most > limit {
				t.Errorf("%d requests of the connection ran at once, limit %d", most, limit)
			}
			if got := counter(t, s.m.Overloaded, limitConnection); got != 0 {
				t.Errorf("overloaded{limit=connection} = %v, want 0", got)
			}
			c.query(100, "void")
			expect[*message.VoidResult](c, 100)
		})
	}
}

// Over the node's limit or its fair share, a connection waits too, and
// is woken by other connections' requests ending: one with nothing in
// flight of its own waits for the node, not for itself.
func TestBackpressureNodeWide(t *testing.T) {
	h := newFakeHandler()
	s := startServer(t, h, func(o *Options) { o.MaxQueued = 4; o.MaxRequestsPerConn = 100; o.Workers = 16 })
	greedy := s.ready(t)
	var frames []byte
	for i := int16(1); i <= 10; i++ {
		frames = append(frames, greedy.frame(i, &message.Query{Query: "block", Options: &message.QueryOptions{}})...)
	}
	greedy.write(frames)
	// Alone, it gets half the node, and waits for the rest.
	h.waitBlocked(t, 2)
	eventually(t, "paused at its fair share", func() bool { return counter(t, s.m.Backpressure, limitFairShare) == 1 })
	// Two newcomers are under their share and get in, filling the node.
	b, c := s.ready(t), s.ready(t)
	b.query(1, "block")
	h.waitBlocked(t, 1)
	c.query(1, "block")
	h.waitBlocked(t, 1)
	d := s.ready(t)
	d.query(1, "void")
	eventually(t, "paused at the node's limit", func() bool { return counter(t, s.m.Backpressure, limitServer) == 1 })
	if got := s.requests.Load(); got != 4 {
		t.Errorf("%d requests read, want 4", got)
	}
	h.unblock()
	expect[*message.VoidResult](d, 1)
	expect[*message.VoidResult](b, 1)
	expect[*message.VoidResult](c, 1)
	expectAll[*message.VoidResult](greedy, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10)
	for _, l := range []string{limitConnection, limitServer, limitFairShare} {
		if got := counter(t, s.m.Overloaded, l); got != 0 {
			t.Errorf("overloaded{limit=%s} = %v, want 0", l, got)
		}
	}
}

// A drain answers the requests left waiting OVERLOADED "shutting down",
// so that it ends.
func TestBackpressureDrain(t *testing.T) {
	h := newFakeHandler()
	s := startServer(t, h, func(o *Options) { o.MaxRequestsPerConn = 1 })
	c := s.ready(t)
	c.write(append(c.frame(1, &message.Query{Query: "block", Options: &message.QueryOptions{}}),
		c.frame(2, &message.Query{Query: "void", Options: &message.QueryOptions{}})...))
	h.waitBlocked(t, 1)
	eventually(t, "paused", func() bool { return counter(t, s.m.Backpressure, limitConnection) == 1 })
	stopped := make(chan error, 1)
	go func() { stopped <- s.stop() }()
	if e := expect[*message.Overloaded](c, 2); !strings.Contains(e.ErrorMessage, "shutting down") {
		t.Errorf("waiting request during a drain: %q", e.ErrorMessage)
	}
	h.unblock()
	expect[*message.VoidResult](c, 1)
	if err := <-stopped; err != nil {
		t.Fatal(err)
	}
}

// As in Cassandra, only THROW_ON_OVERLOAD "1" asks for OVERLOADED; any
// other value, or none, gets backpressure.
func TestThrowOnOverloadOption(t *testing.T) {
	h := newFakeHandler()
	s := startServer(t, h, func(o *Options) { o.MaxRequestsPerConn = 1 })
	var waiting []*client
	for i, v := range []string{"", "0", "true", "1"} {
		c := dialClient(t, s.Addr())
		opts := map[string]string{}
		if v != "" {
			opts["THROW_ON_OVERLOAD"] = v
		}
		c.startup(primitive.ProtocolVersion4, opts)
		c.write(append(c.frame(1, &message.Query{Query: "block", Options: &message.QueryOptions{}}),
			c.frame(2, &message.Query{Query: "void", Options: &message.QueryOptions{}})...))
		h.waitBlocked(t, 1)
		if v == "1" {
			expect[*message.Overloaded](c, 2)
			waiting = append(waiting, c)
			continue
		}
		eventually(t, "paused", func() bool { return counter(t, s.m.Backpressure, limitConnection) == float64(i+1) })
		waiting = append(waiting, c)
	}
	h.unblock()
	for _, c := range waiting[:3] {
		expectAll[*message.VoidResult](c, 1, 2)
	}
	expect[*message.VoidResult](waiting[3], 1)
}
