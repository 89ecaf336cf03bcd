package frontend

import (
	"encoding/binary"
	"fmt"
	"runtime"
	"runtime/metrics"
	"strings"
	"testing"

	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// heapBytes is the Go heap in use after collections (two: the first moves
// sync.Pool contents to their victim caches, the second frees them).
func heapBytes() int64 {
	runtime.GC()
	runtime.GC()
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return int64(s[0].Value.Uint64())
}

// Clients that pipeline requests and never read the answers: each
// connection stops being read once its answers back up, so the node holds
// a bounded amount, and a client that starts reading gets every answer.
// The answers are made on the event loop, as single-row reads are, so
// nothing but the pause stops them.
func TestUnreadAnswersPauseTheConnection(t *testing.T) {
	const (
		conns    = 16
		requests = 1000
		answer   = 64 << 10
		perConn  = 256 << 10
		node     = 2 << 20
	)
	h := &fakeInliner{fakeHandler: newFakeHandler()}
	s := startServer(t, h, func(o *Options) {
		o.SendQueueCapacity = perConn
		o.MaxResponseData = node
	})
	cs := make([]*client, conns)
	for i := range cs {
		cs[i] = s.ready(t)
	}
	before := heapBytes()
	// Unbounded, the node would hold conns*requests*answer = 1GiB.
	var frames []byte
	for i := range requests {
		frames = append(frames, cs[0].frame(int16(i+1), &message.Query{Query: fmt.Sprint("inline-rows ", answer), Options: &message.QueryOptions{}})...)
	}
	for _, c := range cs {
		c.write(frames)
	}
	eventually(t, "every connection paused", func() bool { return s.pausedConns.Load() == conns })
	grown := heapBytes() - before
	queued := s.outBytes.Load()
	t.Logf("heap grew %d KiB; %d KiB of answers queued", grown>>10, queued>>10)
	// Each connection: its capacity, and the batch of answers (64KiB and
	// one answer) written when it went past it.
	if bound := int64(node + conns*(perConn+maxPendingOut+answer)); queued > bound {
		t.Errorf("%d bytes of answers queued, bound %d", queued, bound)
	}
	if grown > 64<<20 {
		t.Errorf("heap grew %d MiB with %d connections not reading", grown>>20, conns)
	}
	s.sweep(s.opts.Now(), nil)
	if got := int(testutil.ToFloat64(s.m.Paused)); got != conns {
		t.Errorf("connections_paused = %d, want %d", got, conns)
	}
	if got := int64(testutil.ToFloat64(s.m.ResponseData)); got != queued {
		t.Errorf("response_data_bytes = %d, want %d", got, queued)
	}

	// A client that reads gets every answer, in order of completion.
	streams := make([]int16, requests)
	for i := range streams {
		streams[i] = int16(i + 1)
	}
	for stream, rows := range expectAll[*message.RowsResult](cs[0], streams...) {
		if len(rows.Data[0][0]) != answer {
			t.Fatalf("stream %d: %d bytes", stream, len(rows.Data[0][0]))
		}
	}
	for _, c := range cs {
		c.nc.Close()
	}
	eventually(t, "nothing held once the connections closed", func() bool {
		n, _ := s.Stats()
		return n == 0 && s.outBytes.Load() == 0 && s.pausedConns.Load() == 0 && s.data.used.Load() == 0
	})
}

// A paused connection that keeps sending is closed once its receive queue
// is full: gnet cannot stop reading a socket, so this is where a client
// that never reads is cut off.
func TestPausedConnectionThatKeepsSending(t *testing.T) {
	const capacity = 64 << 10
	s := startServer(t, newFakeHandler(), func(o *Options) {
		o.SendQueueCapacity = 64 << 10
		o.ReceiveQueueCapacity = capacity
	})
	c := s.ready(t)
	smallReceiveBuffer(t, c)
	big := &message.Query{Query: "rows 1000000", Options: &message.QueryOptions{}}
	var frames []byte
	for i := range 100 {
		frames = append(frames, c.frame(int16(i+1), big)...)
	}
	c.write(frames)
	// Paused for good: the requests running when its queue was held (one
	// per worker, 1MB each) answered more than the sockets' kernel
	// buffers take, and the rest wait.
	eventually(t, "paused, its requests waiting", func() bool {
		return s.pausedConns.Load() == 1 && heldConns(s.Server) == 1 &&
			s.inflight.Load() == int64(testutil.ToFloat64(s.m.QueueDepth))
	})
	filler := c.frame(200, &message.Query{Query: "echo " + strings.Repeat("x", 8<<10), Options: &message.QueryOptions{}})
	for i := 0; i < 2*capacity/len(filler)+1; i++ {
		if _, err := c.nc.Write(filler); err != nil {
			break // closed already
		}
	}
	eventually(t, "closed for its receive queue", func() bool { return counter(t, s.m.Closed, reasonReceive) == 1 })
}

// Frames whose headers promise more than the request data budgets allow
// are answered OVERLOADED at once and their bodies skipped, so connections
// that each hold most of a large frame cannot make the node hold them
// all; the connections stay usable, and other clients are served.
func TestPartialFramesBounded(t *testing.T) {
	const (
		maxFrame = 4 << 20
		perIP    = maxFrame + 1<<20 // room for one frame per address
		global   = 3 * perIP
	)
	s := startServer(t, newFakeHandler(), func(o *Options) {
		// Room for the echo of a maxFrame-long query, a few bytes longer.
		o.MaxFrameSize = maxFrame + 64
		o.MaxRequestDataPerIP = perIP
		o.MaxRequestData = global
	})
	// Four addresses, four connections each: each sends all of a
	// maxFrame-long query but its last byte.
	body := make([]byte, maxFrame)
	binary.BigEndian.PutUint32(body, uint32(maxFrame-4-2-1))
	copy(body[4:], "echo ")
	frame := append(rawFrame(4, 0, 7, primitive.OpCodeQuery, nil), body...)
	binary.BigEndian.PutUint32(frame[5:], uint32(len(body)))
	body = nil
	before := heapBytes()
	var held, refused []*client
	for ip := 1; ip <= 4; ip++ {
		for range 4 {
			c := dialFrom(t, fmt.Sprintf("127.0.0.%d", ip), s.Addr())
			c.startup(primitive.ProtocolVersion4, nil)
			used, overloaded := s.data.used.Load(), counter(t, s.m.Overloaded, "request_data")
			c.write(frame[:len(frame)-1])
			// The frame is taken in full when its header is read, or
			// refused.
			eventually(t, "the frame taken or refused", func() bool {
				return s.data.used.Load() >= used+maxFrame || counter(t, s.m.Overloaded, "request_data") > overloaded
			})
			if s.data.used.Load() >= used+maxFrame {
				held = append(held, c)
				continue
			}
			e := expect[*message.Overloaded](c, 7)
			if !strings.Contains(e.ErrorMessage, "native_transport_max_request_data_in_flight") {
				t.Errorf("127.0.0.%d: OVERLOADED %q", ip, e.ErrorMessage)
			}
			refused = append(refused, c)
		}
	}
	grown := heapBytes() - before
	t.Logf("%d frames held, %d refused; heap grew %d MiB", len(held), len(refused), grown>>20)
	// The first connection of each of the first three addresses.
	if len(held) != 3 {
		t.Errorf("%d partial frames held, want 3", len(held))
	}
	if used := s.data.used.Load(); used > global {
		t.Errorf("%d bytes of request data held, limit %d", used, global)
	}
	// gnet's inbound buffers grow by doubling, so a frame may take twice
	// its size.
	if grown > 2*global+4<<20 {
		t.Errorf("heap grew %d MiB holding partial frames, request data limit %d MiB", grown>>20, global>>20)
	}
	// Every connection is usable: held frames complete, refused ones had
	// their bodies skipped.
	for _, c := range held {
		c.write(frame[len(frame)-1:])
		if rows := expect[*message.RowsResult](c, 7); len(rows.Data[0][0]) != maxFrame-4-2-1-len("echo ") {
			t.Errorf("echo of %d bytes", len(rows.Data[0][0]))
		}
	}
	for _, c := range refused {
		c.write(frame[len(frame)-1:])
		c.query(8, "void")
		expect[*message.VoidResult](c, 8)
	}
	if got := counter(t, s.m.Overloaded, "request_data"); int(got) != len(refused) {
		t.Errorf("overloaded{limit=request_data} = %v, want %d", got, len(refused))
	}
}

// A v5 envelope spread over segments is counted as it is reassembled; one
// that does not fit closes its connection, since segments, unlike a legacy
// frame's body, cannot be skipped.
func TestPartialEnvelopeOverBudget(t *testing.T) {
	const maxFrame = 1 << 20
	s := startServer(t, newFakeHandler(), func(o *Options) {
		o.MaxFrameSize = maxFrame
		o.MaxRequestDataPerIP = maxFrame + 64<<10
	})
	big := &message.Query{Query: "echo " + randomText(maxFrame-64), Options: &message.QueryOptions{}}
	first := dialClient(t, s.Addr())
	first.startup(primitive.ProtocolVersion5, nil)
	frame := first.frame(1, big)
	first.write(frame[:len(frame)/2])
	eventually(t, "the first envelope counted", func() bool { return s.data.used.Load() >= maxFrame/2 })

	second := dialClient(t, s.Addr())
	second.startup(primitive.ProtocolVersion5, nil)
	second.write(frame[:len(frame)/2])
	s.expectClosedFor(t, second, reasonReceive, 1)

	first.write(frame[len(frame)/2:])
	if rows := expect[*message.RowsResult](first, 1); len(rows.Data[0][0]) != maxFrame-64 {
		t.Errorf("echo of %d bytes", len(rows.Data[0][0]))
	}
}
