package frontend

import (
	"context"
	"net"
	"slices"
	"sync"
	"testing"

	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/cqld/cqld/protocol"
)

// orderInliner answers every QUERY inline, on the event loop, and records
// the queries in the order the loop took them. "hold" holds the loop
// until release is closed.
type orderInliner struct {
	mu      sync.Mutex
	seen    []string
	holding chan struct{} // receives once "hold" holds the loop
	release chan struct{}
}

var _ Inliner = (*orderInliner)(nil)

func (h *orderInliner) Handle(context.Context, *protocol.Request) *protocol.Response {
	return &protocol.Response{Message: &message.VoidResult{}}
}

func (h *orderInliner) Inline(_ context.Context, req *protocol.Request, _ protocol.Later) (*protocol.Response, bool) {
	q, ok := req.Message.(*message.Query)
	if !ok {
		return nil, false
	}
	h.mu.Lock()
	h.seen = append(h.seen, q.Query)
	h.mu.Unlock()
	if q.Query == "hold" {
		h.holding <- struct{}{}
		<-h.release
	}
	return &protocol.Response{Message: &message.VoidResult{}}, true
}

// A quiet connection's request is not kept waiting behind everything a
// few pipelining connections of its event loop sent at once: a
// connection cuts at most maxCutPerTurn frames a turn, so the loop gets
// back to its sockets after one round of turns, not after every frame
// each pipeliner's read brought in.
func TestQuietConnectionNotBehindPipeliners(t *testing.T) {
	for _, v := range []primitive.ProtocolVersion{primitive.ProtocolVersion4, primitive.ProtocolVersion5} {
		t.Run(v.String(), func(t *testing.T) {
			const (
				pipeliners = 8
				frames     = 2000 // about 44 KB of QUERY frames: one read each
			)
			h := &orderInliner{holding: make(chan struct{}, 1), release: make(chan struct{})}
			s := startServer(t, h, func(o *Options) { o.EventLoops = 1 })
			greedy := make([]*client, pipeliners)
			for i := range greedy {
				greedy[i] = dialClient(t, s.Addr())
				greedy[i].startup(v, nil)
			}
			quiet := dialClient(t, s.Addr())
			quiet.startup(v, nil)

			batches := make([][]byte, pipeliners)
			for i, c := range greedy {
				for j := range frames {
					q := "greedy"
					if i == 0 && j == 0 {
						q = "hold"
					}
					batches[i] = append(batches[i], c.frame(int16(j+1), queryMsg(q))...)
				}
			}
			// The loop is held on the first pipeliner's first request
			// until every request is in the sockets, the quiet one's
			// last, so that the order the loop takes them in is its
			// own, not the test's.
			greedy[0].write(batches[0])
			<-h.holding
			for i, c := range greedy[1:] {
				c.write(batches[i+1])
			}
			quiet.send(1, queryMsg("quiet"))
			close(h.release)
			expect[*message.VoidResult](quiet, 1)

			h.mu.Lock()
			before := slices.Index(h.seen, "quiet")
			h.mu.Unlock()
			// After one turn of each pipeliner (one round of wakes,
			// gnet's 256 at most, for slack); without the cap, after
			// all of the pipeliners' 16,000.
			if limit := 256*maxCutPerTurn + pipeliners*maxCutPerTurn; before > limit {
				t.Errorf("the quiet connection's request was taken after %d of the pipeliners' requests, want at most %d", before, limit)
			}
			t.Logf("the quiet connection's request was taken after %d of the pipeliners' %d requests", before, pipeliners*frames)
			for _, c := range greedy {
				streams := make([]int16, frames)
				for j := range streams {
					streams[j] = int16(j + 1)
				}
				expectAll[*message.VoidResult](c, streams...)
			}
			eventually(t, "no request data held", func() bool { return s.data.used.Load() == 0 })
		})
	}
}

// With SocketSendBuffer set, the kernel holds at most about that much
// (doubled, as Linux does) of a client's answers beside what the client's
// own receive buffer took, before the connection's send queue sees them
// and pauses it; the rest of the answers wait, counted, in the node. Left
// to the kernel, its send buffer grows to megabytes for a client that
// reads nothing, all written by the event loop that serves the others.
func TestSocketSendBufferBoundsWhatTheKernelTakes(t *testing.T) {
	const (
		sndbuf  = 64 << 10
		rcvbuf  = 64 << 10
		answer  = 64 << 10
		answers = 200
	)
	h := newFakeHandler()
	s := startServer(t, h, func(o *Options) {
		o.SocketSendBuffer = sndbuf
		o.SendQueueCapacity = 256 << 10
	})
	c := dialClient(t, s.Addr())
	if err := c.nc.(*net.TCPConn).SetReadBuffer(rcvbuf); err != nil {
		t.Fatal(err)
	}
	c.startup(primitive.ProtocolVersion4, nil)
	var frames []byte
	for i := range answers {
		frames = append(frames, c.frame(int16(i+1), queryMsg("rows 65536"))...)
	}
	c.write(frames)
	eventually(t, "the connection paused", func() bool { return s.pausedConns.Load() == 1 })
	eventually(t, "no request running", func() bool { return s.pool.active.Load() == 0 })
	// The last answers may still be on their way from the node's queue
	// to the socket when the connection pauses: wait until the kernel
	// holds some (the upper bound below is what the test is about).
	var written, held, kernel int64
	eventually(t, "the kernel took some of the answers", func() bool {
		written = int64(testutil.ToFloat64(s.m.BytesOut))
		held = s.outBytes.Load()
		kernel = written - held
		return kernel > 0
	})
	t.Logf("%d KiB written to the socket, %d KiB of it held by the node: the kernel took %d KiB", written>>10, held>>10, kernel>>10)
	// Linux doubles both buffers; each answer is a little over 64 KiB.
	if bound := int64(2*sndbuf + 2*rcvbuf + 2*answer); kernel > bound {
		t.Errorf("the kernel took %d KiB of answers, want at most %d KiB", kernel>>10, bound>>10)
	}
}
