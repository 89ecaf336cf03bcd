package test

import (
	"strings"
	"testing"
	"time"

	"github.com/datastax/go-cassandra-native-protocol/primitive"

	"github.com/cqld/cqld/protocol"
)

// Each case sends bad input on one connection and checks what comes back
// and whether the connection stays open; every case ends by checking that
// the server still serves a fresh connection.
func TestBadInput(t *testing.T) {
	node, cfg := newNode(t)
	addr := node.Addr()
	maxFrame := int(cfg.NativeTransportMaxFrameSize)

	t.Run("garbage bytes", func(t *testing.T) {
		w := dial(t, addr)
		w.write([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"))
		r := w.mustRead()
		code, msg := r.errorCode()
		if code != primitive.ErrorCodeProtocolError || r.stream != 0 || !strings.Contains(msg, "Invalid or unsupported protocol version") {
			t.Fatalf("got %s", fmtReply(r))
		}
		w.expectClosed()
	})

	t.Run("wrong protocol version", func(t *testing.T) {
		for _, v := range []byte{0x01, 0x02, 0x06, 0x42} {
			w := dial(t, addr)
			w.send(v, 3, primitive.OpCodeStartup, startupBody())
			r := w.mustRead()
			code, msg := r.errorCode()
			// The reply drivers downgrade from: stream 0, our highest version.
			if code != primitive.ErrorCodeProtocolError || r.stream != 0 || r.version != 0x85 ||
				!strings.Contains(msg, "Invalid or unsupported protocol version") {
				t.Fatalf("version 0x%02x: got %s", v, fmtReply(r))
			}
			w.expectClosed()
		}
	})

	t.Run("truncated header", func(t *testing.T) {
		w := dial(t, addr)
		w.write([]byte{0x04, 0x00, 0x00})
		// The server waits for the rest; nothing comes back.
		w.c.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
		if _, err := w.br.ReadByte(); err == nil {
			t.Fatal("server answered a partial header")
		}
		w.c.Close()
	})

	t.Run("body length past the maximum", func(t *testing.T) {
		// A request: its body is read and thrown away, then it is
		// answered INVALID on its stream and the connection stays open,
		// as Cassandra does.
		w := dial(t, addr)
		w.handshake()
		h := frameBytes(4, 0, 9, primitive.OpCodeQuery, nil)
		h[5], h[6], h[7], h[8] = byte((maxFrame+1)>>24), byte((maxFrame+1)>>16), byte((maxFrame+1)>>8), byte(maxFrame+1)
		w.write(h)
		w.write(make([]byte, maxFrame+1))
		r := w.mustRead()
		code, msg := r.errorCode()
		if code != primitive.ErrorCodeInvalid || r.stream != 9 || !strings.Contains(msg, "Request is too big") {
			t.Fatalf("got %s", fmtReply(r))
		}
		w.send(4, 10, primitive.OpCodeOptions, nil) // still open
		if r := w.mustRead(); r.op != primitive.OpCodeSupported || r.stream != 10 {
			t.Fatalf("after the oversized request: %s", fmtReply(r))
		}
		// Not a request: the stream is broken.
		w = dial(t, addr)
		w.handshake()
		h[4] = 0x42
		w.write(h)
		r = w.mustRead()
		if code, msg := r.errorCode(); code != primitive.ErrorCodeProtocolError || !strings.Contains(msg, "unknown opcode 66") {
			t.Fatalf("got %s", fmtReply(r))
		}
		w.expectClosed()
	})

	t.Run("unknown opcode", func(t *testing.T) {
		w := dial(t, addr)
		w.handshake()
		w.send(4, 5, primitive.OpCode(0x42), []byte{1, 2, 3})
		r := w.mustRead()
		if code, msg := r.errorCode(); code != primitive.ErrorCodeProtocolError || r.stream != 5 || !strings.Contains(msg, "Unknown opcode") {
			t.Fatalf("got %s", fmtReply(r))
		}
		w.send(4, 6, primitive.OpCodeOptions, nil) // still open
		if r := w.mustRead(); r.op != primitive.OpCodeSupported || r.stream != 6 {
			t.Fatalf("after unknown opcode: %s", fmtReply(r))
		}
	})

	t.Run("malformed body", func(t *testing.T) {
		w := dial(t, addr)
		w.handshake()
		w.send(4, 8, primitive.OpCodeQuery, []byte{0, 0, 0, 50, 'x'}) // string longer than the body
		r := w.mustRead()
		if code, _ := r.errorCode(); code != primitive.ErrorCodeProtocolError || r.stream != 8 {
			t.Fatalf("got %s", fmtReply(r))
		}
		w.send(4, 9, primitive.OpCodeQuery, queryBody("SELECT key FROM system.local"))
		if r := w.mustRead(); r.op != primitive.OpCodeResult || r.stream != 9 {
			t.Fatalf("after malformed body: %s", fmtReply(r))
		}
	})

	t.Run("request before STARTUP", func(t *testing.T) {
		w := dial(t, addr)
		w.send(4, 2, primitive.OpCodeQuery, queryBody("SELECT * FROM system.local"))
		r := w.mustRead()
		if code, msg := r.errorCode(); code != primitive.ErrorCodeProtocolError || r.stream != 2 || !strings.Contains(msg, "expecting STARTUP or OPTIONS") {
			t.Fatalf("got %s", fmtReply(r))
		}
		w.handshake() // the connection is still usable
	})

	t.Run("second STARTUP", func(t *testing.T) {
		w := dial(t, addr)
		w.handshake()
		w.send(4, 4, primitive.OpCodeStartup, startupBody())
		if code, _ := w.mustRead().errorCode(); code != primitive.ErrorCodeProtocolError {
			t.Fatalf("second STARTUP gave code 0x%x", uint32(code))
		}
	})

	t.Run("bad v5 CRC", func(t *testing.T) {
		for _, part := range []string{"header", "payload"} {
			w := dial(t, addr)
			w.send(5, 1, primitive.OpCodeStartup, startupBody())
			if r := w.mustRead(); r.op != primitive.OpCodeReady {
				t.Fatalf("v5 STARTUP: %s", fmtReply(r))
			}
			seg, err := protocol.AppendSegments(nil, false, frameBytes(5, 0, 2, primitive.OpCodeOptions, nil))
			if err != nil {
				t.Fatal(err)
			}
			if part == "header" {
				seg[4] ^= 0xff // inside the CRC24
			} else {
				seg[len(seg)-1] ^= 0xff // inside the CRC32
			}
			w.write(seg)
			// The answer is framed; read until the server closes.
			w.c.SetReadDeadline(time.Now().Add(5 * time.Second))
			var got []byte
			buf := make([]byte, 4096)
			for {
				n, err := w.br.Read(buf)
				got = append(got, buf[:n]...)
				if err != nil {
					break
				}
			}
			dec := protocol.NewSegmentDecoder(false, 1<<20)
			_, envs, err := dec.Decode(got)
			if err != nil || len(envs) != 1 {
				t.Fatalf("%s: reply is not one framed envelope: %v (%d bytes)", part, err, len(got))
			}
			r := reply{version: envs[0][0], stream: int16(envs[0][2])<<8 | int16(envs[0][3]), op: primitive.OpCode(envs[0][4]), body: envs[0][9:]}
			if code, msg := r.errorCode(); code != primitive.ErrorCodeProtocolError || r.stream != 0 || !strings.Contains(strings.ToLower(msg), "crc") {
				t.Fatalf("%s: got %s", part, fmtReply(r))
			}
		}
	})

	t.Run("disconnect with requests in flight", func(t *testing.T) {
		w := dial(t, addr)
		w.handshake()
		var burst []byte
		for i := 0; i < 200; i++ {
			burst = append(burst, frameBytes(4, 0, int16(i+10), primitive.OpCodeQuery, queryBody("SELECT * FROM system_schema.columns"))...)
		}
		w.write(burst)
		w.c.Close()
		deadline := time.Now().Add(10 * time.Second)
		for {
			if _, inflight := node.Frontend().Stats(); inflight == 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("requests of a closed connection never finished")
			}
			time.Sleep(5 * time.Millisecond)
		}
	})

	t.Run("1000 idle connections", func(t *testing.T) {
		var ws []*wire
		for i := 0; i < 1000; i++ {
			w := dial(t, addr)
			w.send(4, 1, primitive.OpCodeOptions, nil)
			ws = append(ws, w)
		}
		for _, w := range ws {
			if r := w.mustRead(); r.op != primitive.OpCodeSupported {
				t.Fatalf("idle connection got %s", fmtReply(r))
			}
		}
		if n, _ := node.Frontend().Stats(); n < 1000 {
			t.Fatalf("server holds %d connections, want at least 1000", n)
		}
		s, err := gocqlCluster(addr).CreateSession()
		if err != nil {
			t.Fatalf("a driver cannot connect beside 1000 idle connections: %v", err)
		}
		var key string
		if err := s.Query(`SELECT key FROM system.local`).Scan(&key); err != nil || key != "local" {
			t.Fatalf("query beside idle connections: %q %v", key, err)
		}
		s.Close()
		for _, w := range ws {
			w.c.Close()
		}
	})

	alive(t, addr)
}
