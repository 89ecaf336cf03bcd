package test

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"testing"
	"time"

	"github.com/datastax/go-cassandra-native-protocol/primitive"
)

// wire is a hand-driven client connection for tests of bad input.
type wire struct {
	t  testing.TB
	c  net.Conn
	br *bufio.Reader
}

func dial(t testing.TB, addr string) *wire {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &wire{t: t, c: c, br: bufio.NewReader(c)}
}

func frameBytes(version byte, flags byte, stream int16, op primitive.OpCode, body []byte) []byte {
	b := []byte{version, flags, 0, 0, byte(op), 0, 0, 0, 0}
	binary.BigEndian.PutUint16(b[2:], uint16(stream))
	binary.BigEndian.PutUint32(b[5:], uint32(len(body)))
	return append(b, body...)
}

func (w *wire) write(b []byte) {
	w.t.Helper()
	if _, err := w.c.Write(b); err != nil {
		w.t.Fatal(err)
	}
}

func (w *wire) send(version byte, stream int16, op primitive.OpCode, body []byte) {
	w.t.Helper()
	w.write(frameBytes(version, 0, stream, op, body))
}

type reply struct {
	version byte
	stream  int16
	op      primitive.OpCode
	body    []byte
}

// errorCode returns the ERROR code and message of an ERROR reply.
func (r reply) errorCode() (primitive.ErrorCode, string) {
	if r.op != primitive.OpCodeError || len(r.body) < 6 {
		return 0xffff, ""
	}
	code := primitive.ErrorCode(binary.BigEndian.Uint32(r.body))
	n := int(binary.BigEndian.Uint16(r.body[4:]))
	if 6+n > len(r.body) {
		return code, ""
	}
	return code, string(r.body[6 : 6+n])
}

// read reads one legacy (unframed) frame.
func (w *wire) read() (reply, error) {
	w.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	h := make([]byte, 9)
	if _, err := io.ReadFull(w.br, h); err != nil {
		return reply{}, err
	}
	body := make([]byte, binary.BigEndian.Uint32(h[5:]))
	if _, err := io.ReadFull(w.br, body); err != nil {
		return reply{}, err
	}
	return reply{version: h[0], stream: int16(binary.BigEndian.Uint16(h[2:])), op: primitive.OpCode(h[4]), body: body}, nil
}

func (w *wire) mustRead() reply {
	w.t.Helper()
	r, err := w.read()
	if err != nil {
		w.t.Fatalf("read: %v", err)
	}
	return r
}

// expectClosed checks the server closed the connection.
func (w *wire) expectClosed() {
	w.t.Helper()
	w.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := w.br.ReadByte(); err != io.EOF {
		w.t.Fatalf("connection still open (read: %v)", err)
	}
}

func stringMap(m map[string]string) []byte {
	b := binary.BigEndian.AppendUint16(nil, uint16(len(m)))
	for k, v := range m {
		b = appendString(b, k)
		b = appendString(b, v)
	}
	return b
}

func appendString(b []byte, s string) []byte {
	b = binary.BigEndian.AppendUint16(b, uint16(len(s)))
	return append(b, s...)
}

func startupBody() []byte { return stringMap(map[string]string{"CQL_VERSION": "3.0.0"}) }

// queryBody is a v4 QUERY body at consistency ONE with no flags.
func queryBody(q string) []byte {
	b := binary.BigEndian.AppendUint32(nil, uint32(len(q)))
	b = append(b, q...)
	b = binary.BigEndian.AppendUint16(b, uint16(primitive.ConsistencyLevelOne))
	return append(b, 0)
}

// handshake sends STARTUP at v4 and expects READY.
func (w *wire) handshake() {
	w.t.Helper()
	w.handshakeWith(nil)
}

// handshakeThrowing is handshake with THROW_ON_OVERLOAD set: requests
// over a limit get OVERLOADED instead of waiting unread.
func (w *wire) handshakeThrowing() {
	w.t.Helper()
	w.handshakeWith(map[string]string{"THROW_ON_OVERLOAD": "1"})
}

// handshakeWith is handshake with more STARTUP options.
func (w *wire) handshakeWith(opts map[string]string) {
	w.t.Helper()
	all := map[string]string{"CQL_VERSION": "3.0.0"}
	for k, v := range opts {
		all[k] = v
	}
	w.send(4, 1, primitive.OpCodeStartup, stringMap(all))
	if r := w.mustRead(); r.op != primitive.OpCodeReady {
		w.t.Fatalf("STARTUP answered with opcode %v", r.op)
	}
}

// alive checks a fresh connection still gets answers.
func alive(t *testing.T, addr string) {
	t.Helper()
	w := dial(t, addr)
	w.send(4, 7, primitive.OpCodeOptions, nil)
	if r := w.mustRead(); r.op != primitive.OpCodeSupported || r.stream != 7 {
		t.Fatalf("OPTIONS answered with %v on stream %d", r.op, r.stream)
	}
}

func fmtReply(r reply) string {
	code, msg := r.errorCode()
	return fmt.Sprintf("v=0x%02x stream=%d op=%v code=0x%04x msg=%q", r.version, r.stream, r.op, uint32(code), msg)
}
