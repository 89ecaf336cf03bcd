package frontend

import (
	"bufio"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"

	"github.com/cqld/cqld/protocol"
)

// client is a hand-driven connection for the tests: it writes frames (or
// raw bytes) and reads answers, in whatever framing the handshake settled.
type client struct {
	t  testing.TB
	nc net.Conn
	br *bufio.Reader

	v      primitive.ProtocolVersion
	comp   protocol.Compressor // v3/v4 body compression, nil for none
	framed bool                // v5 segments, after READY
	lz4    bool                // v5 segments are LZ4-compressed
	dec    *protocol.SegmentDecoder
	buf    []byte   // v5 bytes read and not yet decoded
	envs   [][]byte // v5 envelopes decoded and not yet returned

	// deadline, when set, bounds reads instead of readTimeout.
	deadline time.Time
}

// readTimeout bounds every read, so a test that waits for an answer that
// never comes fails instead of hanging.
const readTimeout = 10 * time.Second

func dialClient(t testing.TB, addr string) *client {
	t.Helper()
	return dialFrom(t, "", addr)
}

// dialFrom connects from a local address on 127.0.0.0/8 ("" picks one).
func dialFrom(t testing.TB, local, addr string) *client {
	t.Helper()
	d := net.Dialer{Timeout: 5 * time.Second}
	if local != "" {
		d.LocalAddr = &net.TCPAddr{IP: net.ParseIP(local)}
	}
	nc, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	return &client{t: t, nc: nc, br: bufio.NewReader(nc), v: primitive.ProtocolVersion4}
}

func (c *client) write(b []byte) {
	c.t.Helper()
	if _, err := c.nc.Write(b); err != nil {
		c.t.Fatal(err)
	}
}

// frame encodes msg as the connection sends requests now: compressed
// (v3/v4) or in segments (v5) once STARTUP settled that.
func (c *client) frame(stream int16, msg message.Message) []byte {
	c.t.Helper()
	out, err := protocol.AppendRequest(nil, c.v, stream, msg)
	if err != nil {
		c.t.Fatal(err)
	}
	if c.comp != nil {
		packed, err := c.comp.Compress(nil, out[protocol.HeaderLen:])
		if err != nil {
			c.t.Fatal(err)
		}
		out = append(out[:protocol.HeaderLen], packed...)
		out[1] |= byte(primitive.HeaderFlagCompressed)
		binary.BigEndian.PutUint32(out[5:], uint32(len(packed)))
	}
	if c.framed {
		if out, err = protocol.AppendSegments(nil, c.lz4, out); err != nil {
			c.t.Fatal(err)
		}
	}
	return out
}

func (c *client) send(stream int16, msg message.Message) {
	c.t.Helper()
	c.write(c.frame(stream, msg))
}

func (c *client) query(stream int16, q string) {
	c.t.Helper()
	c.send(stream, queryMsg(q))
}

// queryMsg is the QUERY the tests send: q at ONE.
func queryMsg(q string) *message.Query {
	return &message.Query{Query: q, Options: &message.QueryOptions{Consistency: primitive.ConsistencyLevelOne}}
}

// recv reads the next answer.
func (c *client) recv() (protocol.Header, message.Message, error) {
	if c.deadline.IsZero() {
		c.nc.SetReadDeadline(time.Now().Add(readTimeout))
	} else {
		c.nc.SetReadDeadline(c.deadline)
	}
	var (
		h    protocol.Header
		body []byte
	)
	if c.framed {
		env, err := c.envelope()
		if err != nil {
			return h, nil, err
		}
		h, _ = protocol.ParseHeader(env)
		body = env[protocol.HeaderLen:]
	} else {
		var head [protocol.HeaderLen]byte
		if _, err := io.ReadFull(c.br, head[:]); err != nil {
			return h, nil, err
		}
		h, _ = protocol.ParseHeader(head[:])
		body = make([]byte, h.BodyLen)
		if _, err := io.ReadFull(c.br, body); err != nil {
			return h, nil, err
		}
	}
	if h.Version&0x80 == 0 {
		return h, nil, errors.New("answer without the response bit")
	}
	h.Version &^= 0x80
	if h.Flags.Contains(primitive.HeaderFlagCompressed) && h.Version < primitive.ProtocolVersion5 {
		if c.comp == nil {
			return h, nil, errors.New("compressed answer on an uncompressed connection")
		}
		plain, err := c.comp.Decompress(nil, body, 256<<20)
		if err != nil {
			return h, nil, err
		}
		body = plain
		h.Flags = h.Flags.Remove(primitive.HeaderFlagCompressed)
	}
	msg, err := protocol.DecodeResponse(h, body)
	return h, msg, err
}

// envelope returns the next v5 envelope, reading segments as needed.
func (c *client) envelope() ([]byte, error) {
	chunk := make([]byte, 64<<10)
	for len(c.envs) == 0 {
		n, err := c.br.Read(chunk)
		if err != nil {
			return nil, err
		}
		c.buf = append(c.buf, chunk[:n]...)
		used, envs, err := c.dec.Decode(c.buf)
		c.envs = append(c.envs, envs...)
		c.buf = append(c.buf[:0], c.buf[used:]...)
		if err != nil {
			return nil, err
		}
	}
	env := c.envs[0]
	c.envs = c.envs[1:]
	return env, nil
}

func (c *client) mustRecv() (protocol.Header, message.Message) {
	c.t.Helper()
	h, msg, err := c.recv()
	if err != nil {
		c.t.Fatalf("reading an answer: %v", err)
	}
	return h, msg
}

// expect reads an answer and checks its stream and type.
func expect[M message.Message](c *client, stream int16) M {
	c.t.Helper()
	h, msg := c.mustRecv()
	m, ok := msg.(M)
	if !ok || h.Stream != stream {
		var want M
		c.t.Fatalf("got %T %v on stream %d, want %T on stream %d", msg, msg, h.Stream, want, stream)
	}
	return m
}

// expectAll reads one answer per stream, in any order (workers answer in
// completion order), and checks each is an M.
func expectAll[M message.Message](c *client, streams ...int16) map[int16]M {
	c.t.Helper()
	want := map[int16]bool{}
	for _, s := range streams {
		want[s] = true
	}
	got := map[int16]M{}
	for len(got) < len(streams) {
		h, msg := c.mustRecv()
		m, ok := msg.(M)
		if _, dup := got[h.Stream]; !ok || !want[h.Stream] || dup {
			var zero M
			c.t.Fatalf("got %T %v on stream %d, want %T on streams %v", msg, msg, h.Stream, zero, streams)
		}
		got[h.Stream] = m
	}
	return got
}

// startup sends STARTUP in version v with the given options (CQL_VERSION
// added) and expects READY; from then on the client frames requests as
// the server expects them.
func (c *client) startup(v primitive.ProtocolVersion, opts map[string]string) {
	c.t.Helper()
	if m := c.startupAnswer(v, opts); m == nil {
		c.t.Fatal("no answer to STARTUP")
	} else if _, ok := m.(*message.Ready); !ok {
		c.t.Fatalf("STARTUP answered %T %v, want READY", m, m)
	}
}

// startupAnswer sends STARTUP as startup does and returns the answer (READY
// or AUTHENTICATE), after which the client frames requests as the server
// expects them.
func (c *client) startupAnswer(v primitive.ProtocolVersion, opts map[string]string) message.Message {
	c.t.Helper()
	c.v = v
	all := map[string]string{"CQL_VERSION": "3.0.0"}
	for k, val := range opts {
		all[k] = val
	}
	c.send(0, &message.Startup{Options: all})
	h, m := c.mustRecv()
	if h.Stream != 0 {
		c.t.Fatalf("STARTUP answered on stream %d", h.Stream)
	}
	name := all["COMPRESSION"]
	switch {
	case v >= primitive.ProtocolVersion5:
		c.framed = true
		c.lz4 = name == protocol.CompressionLZ4
		c.dec = protocol.NewSegmentDecoder(c.lz4, 256<<20)
	case name != "":
		comp, err := protocol.NewCompressor(name)
		if err != nil {
			c.t.Fatal(err)
		}
		c.comp = comp
	}
	return m
}

// expectClosed reads until the server closes the connection, skipping any
// answers still on the way.
func (c *client) expectClosed() {
	c.t.Helper()
	for {
		if _, _, err := c.recv(); err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				c.t.Fatalf("connection still open after %v", readTimeout)
			}
			return
		}
	}
}

// rawFrame is a legacy frame with any header bytes, for bad input.
func rawFrame(version, flags byte, stream int16, op primitive.OpCode, body []byte) []byte {
	b := []byte{version, flags, 0, 0, byte(op), 0, 0, 0, 0}
	binary.BigEndian.PutUint16(b[2:], uint16(stream))
	binary.BigEndian.PutUint32(b[5:], uint32(len(body)))
	return append(b, body...)
}
