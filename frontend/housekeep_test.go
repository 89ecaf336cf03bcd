package frontend

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"
)

// fakeClock is a clock the test moves; the housekeeper reads it every
// sweep.
type fakeClock struct{ ns atomic.Int64 }

func newFakeClock() *fakeClock {
	c := &fakeClock{}
	c.ns.Store(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano())
	return c
}

func (c *fakeClock) Now() time.Time          { return time.Unix(0, c.ns.Load()) }
func (c *fakeClock) advance(d time.Duration) { c.ns.Add(int64(d)) }

// begunFrames counts the connections the server sees in the middle of a
// frame.
func (s *testServer) begunFrames() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for cn := range s.conns {
		if cn.frameStart.Load() != 0 {
			n++
		}
	}
	return n
}

func TestHandshakeTimeout(t *testing.T) {
	clock := newFakeClock()
	s := startServer(t, newFakeHandler(), func(o *Options) { o.HandshakeTimeout = 10 * time.Second; o.Now = clock.Now })
	lingering := dialClient(t, s.Addr())
	lingering.send(1, &message.Options{}) // OPTIONS does not count
	expect[*message.Supported](lingering, 1)
	ready := s.ready(t)
	clock.advance(9 * time.Second)
	lingering.send(2, &message.Options{})
	expect[*message.Supported](lingering, 2)
	clock.advance(2 * time.Second)
	s.expectClosedFor(t, lingering, reasonHandshake, 1)
	ready.query(1, "void")
	expect[*message.VoidResult](ready, 1)
}

// Slowloris: a frame sent a byte at a time is cut off once it has taken
// FrameTimeout, however steadily the bytes come.
func TestFrameTimeout(t *testing.T) {
	clock := newFakeClock()
	s := startServer(t, newFakeHandler(), func(o *Options) { o.FrameTimeout = 5 * time.Second; o.Now = clock.Now })
	slow := s.ready(t)
	quiet := s.ready(t) // between frames: no deadline
	frame := slow.frame(1, &message.Query{Query: "void", Options: &message.QueryOptions{}})
	slow.write(frame[:1])
	eventually(t, "the frame begun", func() bool { return s.begunFrames() == 1 })
	for i := 1; i <= 4; i++ {
		clock.advance(time.Second)
		slow.write(frame[i : i+1])
	}
	clock.advance(2 * time.Second)
	s.expectClosedFor(t, slow, reasonFrame, 1)
	quiet.query(1, "void")
	expect[*message.VoidResult](quiet, 1)

	// A frame finished in time restarts the deadline for the next.
	steady := s.ready(t)
	for i := range 4 {
		f := steady.frame(int16(i), &message.Query{Query: "void", Options: &message.QueryOptions{}})
		steady.write(f[:3])
		eventually(t, "the frame begun", func() bool { return s.begunFrames() == 1 })
		clock.advance(4 * time.Second)
		steady.write(f[3:])
		expect[*message.VoidResult](steady, int16(i))
	}
}

// The idle timeout is refreshed by whole frames and answers, not by the
// bytes of a frame trickling in.
func TestIdleTimeoutNotRefreshedByBytes(t *testing.T) {
	clock := newFakeClock()
	s := startServer(t, newFakeHandler(), func(o *Options) { o.IdleTimeout = 5 * time.Second; o.Now = clock.Now })
	trickle := s.ready(t)
	talker := s.ready(t)
	frame := trickle.frame(1, &message.Query{Query: "void", Options: &message.QueryOptions{}})
	trickle.write(frame[:1])
	eventually(t, "the frame begun", func() bool { return s.begunFrames() == 1 })
	for i := 1; i <= 3; i++ {
		clock.advance(2 * time.Second)
		trickle.write(frame[i : i+1])
		talker.send(int16(i), &message.Options{})
		expect[*message.Supported](talker, int16(i))
	}
	s.expectClosedFor(t, trickle, reasonIdle, 1)
	talker.send(9, &message.Options{})
	expect[*message.Supported](talker, 9)
}

// A paused connection's frames wait for the server, not the client: no
// frame deadline while paused.
func TestNoFrameTimeoutWhilePaused(t *testing.T) {
	clock := newFakeClock()
	h := &fakeInliner{fakeHandler: newFakeHandler()}
	s := startServer(t, h, func(o *Options) {
		o.FrameTimeout = 5 * time.Second
		o.Now = clock.Now
		o.SendQueueCapacity = 64 << 10
	})
	c := dialClient(t, s.Addr())
	c.startup(primitive.ProtocolVersion4, nil)
	var frames []byte
	for i := range 200 {
		frames = append(frames, c.frame(int16(i+1), &message.Query{Query: "inline-rows 100000", Options: &message.QueryOptions{}})...)
	}
	c.write(frames)
	eventually(t, "paused", func() bool { return s.pausedConns.Load() == 1 })
	clock.advance(time.Minute)
	// Sweeps run; the connection stays. Then the client reads everything.
	time.Sleep(50 * time.Millisecond)
	streams := make([]int16, 200)
	for i := range streams {
		streams[i] = int16(i + 1)
	}
	expectAll[*message.RowsResult](c, streams...)
	if got := counter(t, s.m.Closed, reasonFrame); got != 0 {
		t.Errorf("closed{reason=frame_timeout} = %v, want 0", got)
	}
}
