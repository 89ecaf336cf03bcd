package frontend

import (
	"context"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/cqld/cqld/protocol"
)

func TestHandshake(t *testing.T) {
	s := startServer(t, newFakeHandler(), nil)
	c := dialClient(t, s.Addr())

	c.send(1, &message.Options{})
	sup := expect[*message.Supported](c, 1)
	for key, want := range map[string]string{
		"CQL_VERSION":                  CQLVersion,
		"PROTOCOL_VERSIONS":            "3/v3,4/v4,5/v5",
		"COMPRESSION":                  "lz4,snappy",
		protocol.PrepareBatchExtension: protocol.PrepareBatchVersion,
	} {
		if got := strings.Join(sup.Options[key], ","); got != want {
			t.Errorf("SUPPORTED %s = %q, want %q", key, got, want)
		}
	}

	// Before STARTUP only OPTIONS and STARTUP are allowed; the connection
	// stays open.
	c.query(2, "void")
	if e := expect[*message.ProtocolError](c, 2); !strings.Contains(e.ErrorMessage, "expecting STARTUP or OPTIONS") {
		t.Errorf("QUERY before STARTUP: %q", e.ErrorMessage)
	}
	c.send(3, &message.Register{EventTypes: []primitive.EventType{primitive.EventTypeSchemaChange}})
	expect[*message.ProtocolError](c, 3)
	c.send(4, &message.Startup{Options: map[string]string{}})
	if e := expect[*message.ProtocolError](c, 4); !strings.Contains(e.ErrorMessage, "CQL_VERSION") {
		t.Errorf("STARTUP without CQL_VERSION: %q", e.ErrorMessage)
	}
	c.send(5, &message.Startup{Options: map[string]string{"CQL_VERSION": "2.0.0"}})
	expect[*message.ProtocolError](c, 5)
	c.send(6, &message.Startup{Options: map[string]string{"CQL_VERSION": "3.0.0", "COMPRESSION": "zstd"}})
	if e := expect[*message.ProtocolError](c, 6); !strings.Contains(e.ErrorMessage, "zstd") {
		t.Errorf("unknown compression: %q", e.ErrorMessage)
	}

	c.startup(primitive.ProtocolVersion4, nil)
	c.send(7, &message.Startup{Options: map[string]string{"CQL_VERSION": "3.0.0"}})
	if e := expect[*message.ProtocolError](c, 7); !strings.Contains(e.ErrorMessage, "already initialized") {
		t.Errorf("second STARTUP: %q", e.ErrorMessage)
	}
	c.send(8, &message.Register{EventTypes: []primitive.EventType{primitive.EventTypeSchemaChange, primitive.EventTypeStatusChange}})
	expect[*message.Ready](c, 8)
	c.write(rawFrame(4, 0, 9, primitive.OpCodeRegister, []byte{0, 1, 0, 3, 'B', 'A', 'D'}))
	if e := expect[*message.ProtocolError](c, 9); !strings.Contains(e.ErrorMessage, "BAD") {
		t.Errorf("REGISTER of an unknown event: %q", e.ErrorMessage)
	}
	c.query(10, "echo hello")
	if rows := expect[*message.RowsResult](c, 10); string(rows.Data[0][0]) != "hello" {
		t.Errorf("echo: %q", rows.Data[0][0])
	}

	// Events reach the connections that registered for their type only.
	other := s.ready(t)
	s.Publish(&message.SchemaChangeEvent{ChangeType: primitive.SchemaChangeTypeCreated, Target: primitive.SchemaChangeTargetKeyspace, Keyspace: "ks"})
	s.Publish(&message.TopologyChangeEvent{ChangeType: primitive.TopologyChangeTypeNewNode, Address: &primitive.Inet{Addr: []byte{127, 0, 0, 1}, Port: 9042}})
	if ev := expect[*message.SchemaChangeEvent](c, -1); ev.Keyspace != "ks" {
		t.Errorf("event: %v", ev)
	}
	c.send(11, &message.Options{})
	expect[*message.Supported](c, 11) // the topology event did not come first
	other.send(1, &message.Options{})
	expect[*message.Supported](other, 1)
}

func TestUseSetsKeyspace(t *testing.T) {
	s := startServer(t, newFakeHandler(), nil)
	c := s.ready(t)
	c.query(1, "use ks1")
	expect[*message.SetKeyspaceResult](c, 1)
	c.query(2, "keyspace")
	if rows := expect[*message.RowsResult](c, 2); string(rows.Data[0][0]) != "ks1" {
		t.Fatalf("keyspace after USE: %q", rows.Data[0][0])
	}
	other := s.ready(t)
	other.query(1, "keyspace")
	if rows := expect[*message.RowsResult](other, 1); len(rows.Data[0][0]) != 0 {
		t.Fatalf("another connection's keyspace: %q", rows.Data[0][0])
	}
}

// Each case breaks the byte stream: the server answers PROTOCOL_ERROR
// (Cassandra's message where drivers parse it) and closes the connection.
func TestBadInputClosesConnection(t *testing.T) {
	const maxFrame = 64 << 10
	s := startServer(t, newFakeHandler(), func(o *Options) { o.MaxFrameSize = maxFrame })
	// Over the limit and naming no request: not a frame at all. (A
	// request over the limit is skipped and answered: TestTooBigRequest.)
	tooBig := rawFrame(4, 0, 9, 0x30, nil)
	binary.BigEndian.PutUint32(tooBig[5:], maxFrame+1)
	for _, tc := range []struct {
		name       string
		v5         bool   // after a v5 handshake
		ready      bool   // after a v4 handshake
		send       []byte // raw bytes
		stream     int16
		version    byte // of the answer, response bit included
		wantSubstr string
	}{
		{name: "garbage", send: []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"), version: 0x85, wantSubstr: "Invalid or unsupported protocol version"},
		{name: "version 2", send: rawFrame(2, 0, 3, primitive.OpCodeOptions, nil), version: 0x85, wantSubstr: "Invalid or unsupported protocol version (2)"},
		{name: "version 6", send: rawFrame(6, 0, 3, primitive.OpCodeOptions, nil), version: 0x85, wantSubstr: "supported versions are (3/v3, 4/v4, 5/v5)"},
		{name: "response bit", send: rawFrame(0x84, 0, 3, primitive.OpCodeOptions, nil), version: 0x85, wantSubstr: "direction"},
		{name: "version switch", ready: true, send: rawFrame(3, 0, 3, primitive.OpCodeOptions, nil), version: 0x84, wantSubstr: "version"},
		{name: "oversized non-request", ready: true, send: tooBig, version: 0x84, wantSubstr: "unknown opcode 48 in a frame of 65546 bytes"},
		{name: "bad v5 CRC", v5: true, send: badCRCSegment(t), version: 0x85, wantSubstr: "CRC"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := counter(t, s.m.Closed, reasonProtocol)
			c := dialClient(t, s.Addr())
			switch {
			case tc.ready:
				c.startup(primitive.ProtocolVersion4, nil)
			case tc.v5:
				c.startup(primitive.ProtocolVersion5, nil)
			}
			c.write(tc.send)
			h, msg := c.mustRecv()
			e, ok := msg.(*message.ProtocolError)
			if !ok || h.Stream != tc.stream || byte(h.Version)|0x80 != tc.version || !strings.Contains(e.ErrorMessage, tc.wantSubstr) {
				t.Fatalf("got %T %v on stream %d version %#x; want PROTOCOL_ERROR %q on stream %d version %#x",
					msg, msg, h.Stream, byte(h.Version)|0x80, tc.wantSubstr, tc.stream, tc.version)
			}
			c.expectClosed()
			eventually(t, "counted", func() bool { return counter(t, s.m.Closed, reasonProtocol) == before+1 })
		})
	}
	// The server still serves.
	c := s.ready(t)
	c.query(1, "void")
	expect[*message.VoidResult](c, 1)
}

// badCRCSegment is a v5 segment carrying an OPTIONS envelope whose payload
// CRC32 is off by one bit.
func badCRCSegment(t *testing.T) []byte {
	env, err := protocol.AppendRequest(nil, primitive.ProtocolVersion5, 1, &message.Options{})
	if err != nil {
		t.Fatal(err)
	}
	seg, err := protocol.AppendSegments(nil, false, env)
	if err != nil {
		t.Fatal(err)
	}
	seg[len(seg)-1] ^= 1
	return seg
}

// A bad request is answered on its own stream and the connection stays
// open.
func TestBadRequestKeepsConnection(t *testing.T) {
	s := startServer(t, newFakeHandler(), nil)
	c := s.ready(t)
	c.write(rawFrame(4, 0, 5, primitive.OpCode(0x42), []byte{1, 2, 3}))
	if e := expect[*message.ProtocolError](c, 5); !strings.Contains(e.ErrorMessage, "Unknown opcode") {
		t.Errorf("unknown opcode: %q", e.ErrorMessage)
	}
	c.write(rawFrame(4, 0, 6, primitive.OpCodeQuery, []byte{0, 0, 0, 9, 'x'}))
	expect[*message.ProtocolError](c, 6)
	c.write(rawFrame(4, byte(primitive.HeaderFlagCompressed), 7, primitive.OpCodeQuery, []byte{1, 2, 3, 4}))
	if e := expect[*message.ProtocolError](c, 7); !strings.Contains(e.ErrorMessage, "compress") {
		t.Errorf("compressed frame without compression: %q", e.ErrorMessage)
	}
	c.send(8, &message.AuthResponse{Token: []byte("x")})
	expect[*message.ProtocolError](c, 8)
	// PREPARE_BATCH is an unknown opcode to a connection that did not opt in.
	c.send(9, &protocol.PrepareBatch{Statements: []protocol.BatchStatement{{Query: "void"}}})
	if e := expect[*message.ProtocolError](c, 9); !strings.Contains(e.ErrorMessage, "Unknown opcode") {
		t.Errorf("PREPARE_BATCH without opting in: %q", e.ErrorMessage)
	}
	c.query(10, "void")
	expect[*message.VoidResult](c, 10)
}

func TestOverloadedOnTheStream(t *testing.T) {
	h := newFakeHandler()
	s := startServer(t, h, func(o *Options) { o.MaxRequestsPerConn = 2; o.MaxQueued = 4 })
	a := s.throwing(t)
	a.query(1, "block")
	a.query(2, "block")
	h.waitBlocked(t, 2)
	a.query(3, "void")
	if e := expect[*message.Overloaded](a, 3); !strings.Contains(e.ErrorMessage, "on this connection (limit 2)") {
		t.Errorf("per-connection limit: %q", e.ErrorMessage)
	}
	// Two more connections fill the node's four; a fourth is refused.
	b, c, d := s.ready(t), s.ready(t), s.throwing(t)
	b.query(1, "block")
	c.query(1, "block")
	h.waitBlocked(t, 2)
	d.query(1, "void")
	if e := expect[*message.Overloaded](d, 1); !strings.Contains(e.ErrorMessage, "at this point") {
		t.Errorf("server limit: %q", e.ErrorMessage)
	}
	if got := counter(t, s.m.Overloaded, "connection"); got != 1 {
		t.Errorf("overloaded{limit=connection} = %v, want 1", got)
	}
	if got := counter(t, s.m.Overloaded, "server"); got != 1 {
		t.Errorf("overloaded{limit=server} = %v, want 1", got)
	}
	h.unblock()
	expectAll[*message.VoidResult](a, 1, 2)
	expect[*message.VoidResult](b, 1)
	expect[*message.VoidResult](c, 1)
	a.query(4, "void")
	expect[*message.VoidResult](a, 4)
}

func TestIdleTimeout(t *testing.T) {
	h := newFakeHandler()
	s := startServer(t, h, func(o *Options) { o.IdleTimeout = 100 * time.Millisecond })
	idle := s.ready(t)
	busy := s.ready(t)
	busy.query(1, "block") // a request in flight keeps it open
	h.waitBlocked(t, 1)
	idle.expectClosed()
	if got := counter(t, s.m.Closed, reasonIdle); got < 1 {
		t.Errorf("closed{reason=idle_timeout} = %v", got)
	}
	h.unblock()
	expect[*message.VoidResult](busy, 1)
	busy.query(2, "void")
	expect[*message.VoidResult](busy, 2)
}

func TestV5Framing(t *testing.T) {
	for _, lz4 := range []bool{false, true} {
		name := "uncompressed"
		opts := map[string]string{}
		if lz4 {
			name = "lz4"
			opts["COMPRESSION"] = protocol.CompressionLZ4
		}
		t.Run(name, func(t *testing.T) {
			s := startServer(t, newFakeHandler(), nil)
			c := dialClient(t, s.Addr())
			c.startup(primitive.ProtocolVersion5, opts)

			// Several envelopes in one segment.
			var envs [][]byte
			for i := int16(1); i <= 3; i++ {
				env, err := protocol.AppendRequest(nil, primitive.ProtocolVersion5, i, &message.Query{
					Query: "echo " + strings.Repeat("x", int(i)), Options: &message.QueryOptions{}})
				if err != nil {
					t.Fatal(err)
				}
				envs = append(envs, env)
			}
			seg, err := protocol.AppendSegments(nil, c.lz4, envs...)
			if err != nil {
				t.Fatal(err)
			}
			c.write(seg)
			for i, rows := range expectAll[*message.RowsResult](c, 1, 2, 3) {
				if len(rows.Data[0][0]) != int(i) {
					t.Errorf("stream %d: %q", i, rows.Data[0][0])
				}
			}

			// A request bigger than one segment, written a byte at a time
			// near the segment boundaries, and an answer bigger than one.
			big := randomText(3 * protocol.MaxSegmentPayload)
			frame := c.frame(4, &message.Query{Query: "echo " + big, Options: &message.QueryOptions{}})
			cut := min(protocol.MaxSegmentPayload, len(frame)/2)
			c.write(frame[:cut])
			for _, b := range frame[cut : cut+16] {
				c.write([]byte{b})
			}
			c.write(frame[cut+16:])
			if rows := expect[*message.RowsResult](c, 4); string(rows.Data[0][0]) != big {
				t.Errorf("big echo: %d bytes back, want %d", len(rows.Data[0][0]), len(big))
			}
			c.query(5, "rows 300000")
			if rows := expect[*message.RowsResult](c, 5); len(rows.Data[0][0]) != 300000 {
				t.Errorf("big answer: %d bytes", len(rows.Data[0][0]))
			}
			// OPTIONS, answered from a pre-encoded frame, in a segment too.
			c.send(6, &message.Options{})
			expect[*message.Supported](c, 6)
		})
	}
}

// randomText is n letters that compress poorly, from a fixed seed.
func randomText(n int) string {
	r := rand.New(rand.NewPCG(1, 2))
	b := make([]byte, n)
	for i := range b {
		b[i] = 'a' + byte(r.IntN(26))
	}
	return string(b)
}

func TestCompressionV4(t *testing.T) {
	for _, name := range []string{protocol.CompressionLZ4, protocol.CompressionSnappy} {
		t.Run(name, func(t *testing.T) {
			s := startServer(t, newFakeHandler(), nil)
			c := dialClient(t, s.Addr())
			c.startup(primitive.ProtocolVersion4, map[string]string{"COMPRESSION": name})
			text := strings.Repeat("compressible ", 1000)
			c.query(1, "echo "+text)
			if rows := expect[*message.RowsResult](c, 1); string(rows.Data[0][0]) != text {
				t.Errorf("echo: %d bytes back, want %d", len(rows.Data[0][0]), len(text))
			}
			c.query(2, "void")
			expect[*message.VoidResult](c, 2)
			// A body that does not decompress is a bad request, not a
			// broken stream.
			c.write(rawFrame(4, byte(primitive.HeaderFlagCompressed), 3, primitive.OpCodeQuery, []byte{0xff, 0xff, 0xff, 0xff, 1, 2}))
			expect[*message.ProtocolError](c, 3)
			c.query(4, "void")
			expect[*message.VoidResult](c, 4)
		})
	}
}

func TestInline(t *testing.T) {
	h := &fakeInliner{fakeHandler: newFakeHandler()}
	t.Cleanup(h.wg.Wait)
	s := startServer(t, h, nil)
	c := s.ready(t)
	c.query(1, "inline")
	if rows := expect[*message.RowsResult](c, 1); string(rows.Data[0][0]) != "inline" {
		t.Errorf("inline: %q", rows.Data[0][0])
	}
	c.query(2, "inline-later")
	if rows := expect[*message.RowsResult](c, 2); string(rows.Data[0][0]) != "later" {
		t.Errorf("inline-later: %q", rows.Data[0][0])
	}
	c.query(3, "echo worker")
	expect[*message.RowsResult](c, 3)
	if got := testutil.ToFloat64(s.m.Inline); got != 2 {
		t.Errorf("inline requests = %v, want 2", got)
	}
	eventually(t, "nothing in flight", func() bool { _, n := s.Stats(); return n == 0 })
}

// An answer that cannot be encoded is answered SERVER_ERROR; one for which
// not even that can be framed closes the connection, so its client does
// not wait for it forever.
func TestAnswerThatCannotBeFramed(t *testing.T) {
	h := &fakeInliner{fakeHandler: newFakeHandler()}
	t.Cleanup(h.wg.Wait)
	// A warning "fail-once" makes the answer fail to encode; "fail-fatal"
	// makes the SERVER_ERROR standing in for it fail too.
	inject := func(s *Server) {
		s.appendResponse = func(dst []byte, v primitive.ProtocolVersion, stream int16, resp *protocol.Response, comp protocol.Compressor) ([]byte, error) {
			if len(resp.Warnings) > 0 && strings.HasPrefix(resp.Warnings[0], "fail-") {
				return dst, errors.New("injected encode failure: " + resp.Warnings[0])
			}
			if e, ok := resp.Message.(*message.ServerError); ok && strings.Contains(e.ErrorMessage, "fail-fatal") {
				return dst, errors.New("injected encode failure of SERVER_ERROR")
			}
			return protocol.AppendResponse(dst, v, stream, resp, comp)
		}
	}
	s := startServer(t, h, nil, inject)
	for _, v := range []primitive.ProtocolVersion{primitive.ProtocolVersion4, primitive.ProtocolVersion5} {
		// Answered by a worker.
		c := dialClient(t, s.Addr())
		c.startup(v, nil)
		c.query(1, "warn fail-once")
		if e := expect[*message.ServerError](c, 1); !strings.Contains(e.ErrorMessage, "injected") {
			t.Errorf("v%d: SERVER_ERROR message %q", v, e.ErrorMessage)
		}
		c.query(2, "void")
		expect[*message.VoidResult](c, 2)
		before := counter(t, s.m.Closed, reasonEncode)
		c.query(3, "warn fail-fatal")
		c.expectClosed()
		if got := counter(t, s.m.Closed, reasonEncode); got != before+1 {
			t.Errorf("v%d: closed{reason=encode_error} went from %v to %v", v, before, got)
		}

		// Answered on the event loop: the answers before the broken one
		// still leave.
		c = dialClient(t, s.Addr())
		c.startup(v, nil)
		c.write(append(c.frame(4, &message.Query{Query: "inline", Options: &message.QueryOptions{}}),
			c.frame(5, &message.Query{Query: "inline-warn fail-fatal", Options: &message.QueryOptions{}})...))
		expect[*message.RowsResult](c, 4)
		c.expectClosed()
		if got := counter(t, s.m.Closed, reasonEncode); got != before+2 {
			t.Errorf("v%d: closed{reason=encode_error} went from %v to %v", v, before, got)
		}
	}
}

// Shutdown may be called twice, the second time concurrently with the
// first: both return, with the first's result.
func TestShutdownTwice(t *testing.T) {
	s := startServer(t, newFakeHandler(), nil)
	c := s.ready(t)
	c.query(1, "echo before")
	expect[*message.RowsResult](c, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	errs := make(chan error, 2)
	for range 2 {
		go func() { errs <- s.Shutdown(ctx) }()
	}
	for range 2 {
		if err := <-errs; err != nil {
			t.Errorf("shutdown: %v", err)
		}
	}
	if err := s.Shutdown(ctx); err != nil {
		t.Errorf("a third shutdown: %v", err)
	}
}
