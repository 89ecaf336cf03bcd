package cqlclient

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"

	"github.com/cqld/cqld/protocol"
)

// Options configures a connection. The zero value is usable.
type Options struct {
	// Version is the protocol version, 4 or 5; 0 means 4.
	Version primitive.ProtocolVersion
	// DisablePrepareBatch leaves the batch PREPARE extension off even when
	// the server offers it; PrepareBatch then sends one PREPARE per
	// statement.
	DisablePrepareBatch bool
	// MaxFrameSize is the largest request body sent (the server's
	// native_transport_max_frame_size); 0 means 16 MiB, Cassandra's and
	// cqld's default. Responses may be up to maxResponse.
	MaxFrameSize int
	// DialTimeout bounds the TCP connect and the handshake when ctx has no
	// earlier deadline; 0 means 10 s.
	DialTimeout time.Duration
	// Serial carries one request at a time: the goroutine that sent a
	// request reads its answer from the socket itself, with no reader
	// goroutine and no hand-off between goroutines, which costs the
	// client the least CPU per request (a load generator with one request
	// in flight per connection). Concurrent requests wait for each other.
	// A request then observes its context's deadline but not its
	// cancellation; closing the Conn ends a request waiting for its
	// answer.
	Serial bool
}

func (o *Options) setDefaults() {
	if o.Version == 0 {
		o.Version = primitive.ProtocolVersion4
	}
	if o.MaxFrameSize <= 0 {
		o.MaxFrameSize = 16 << 20
	}
	if o.DialTimeout <= 0 {
		o.DialTimeout = 10 * time.Second
	}
}

// maxResponse bounds a response body: the largest frame Cassandra allows.
const maxResponse = 256 << 20

// ErrClosed is returned for requests on a closed connection.
var ErrClosed = errors.New("cqlclient: connection closed")

// ServerError is an ERROR the server answered.
type ServerError struct {
	Code    primitive.ErrorCode
	Message string
	// Msg is the decoded error with its code-specific fields (the id of an
	// UNPREPARED, the keyspace of an ALREADY_EXISTS, ...).
	Msg message.Error
}

func (e *ServerError) Error() string {
	return fmt.Sprintf("cqlclient: server error 0x%04x: %s", uint32(e.Code), e.Message)
}

func serverError(m message.Error) *ServerError {
	return &ServerError{Code: m.GetErrorCode(), Message: m.GetErrorMessage(), Msg: m}
}

// Conn is one client connection. Its methods are safe for concurrent use;
// requests on one Conn are multiplexed by stream id.
type Conn struct {
	nc        net.Conn
	opts      Options
	supported map[string][]string
	batchOn   bool

	wmu sync.Mutex // serialises writes

	// serial holds the connection for the request in flight in Serial
	// mode; its fields are what that request reuses.
	serial struct {
		sync.Mutex
		fr   *frameReader
		wbuf []byte
		err  error // set once the connection broke
	}

	mu      sync.Mutex
	waiting map[int16]chan response
	next    int16
	err     error // set once the reader stops
}

type response struct {
	msg message.Message
	err error
}

// Dial connects to addr (host:port), asks for the server's options and
// starts the connection, turning on the batch PREPARE extension when the
// server offers it and o allows it.
func Dial(ctx context.Context, addr string, o Options) (*Conn, error) {
	o.setDefaults()
	if o.Version != primitive.ProtocolVersion4 && o.Version != primitive.ProtocolVersion5 {
		return nil, fmt.Errorf("cqlclient: protocol version %d is not supported (4 or 5)", o.Version)
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.DialTimeout)
		defer cancel()
	}
	var d net.Dialer
	nc, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("cqlclient: dial %s: %w", addr, err)
	}
	c := &Conn{nc: nc, opts: o, waiting: map[int16]chan response{}}
	br := bufio.NewReader(nc)
	if err := c.handshake(ctx, br); err != nil {
		nc.Close()
		return nil, fmt.Errorf("cqlclient: handshake with %s: %w", addr, err)
	}
	fr := &frameReader{br: br, v5: o.Version >= primitive.ProtocolVersion5}
	if o.Serial {
		c.serial.fr = fr
		c.waiting = nil
		return c, nil
	}
	go c.read(fr)
	return c, nil
}

// handshake runs OPTIONS and STARTUP in lock step, before the reader runs.
func (c *Conn) handshake(ctx context.Context, br *bufio.Reader) error {
	if dl, ok := ctx.Deadline(); ok {
		c.nc.SetDeadline(dl)
		defer c.nc.SetDeadline(time.Time{})
	}
	ask := func(m message.Message) (message.Message, error) {
		out, err := protocol.AppendRequest(nil, c.opts.Version, 0, m)
		if err != nil {
			return nil, err
		}
		if _, err := c.nc.Write(out); err != nil {
			return nil, err
		}
		h, body, err := readFrame(br)
		if err != nil {
			return nil, err
		}
		msg, err := protocol.DecodeResponse(h, body)
		if e, ok := msg.(message.Error); ok {
			return nil, serverError(e)
		}
		return msg, err
	}
	msg, err := ask(&message.Options{})
	if err != nil {
		return err
	}
	sup, ok := msg.(*message.Supported)
	if !ok {
		return fmt.Errorf("OPTIONS answered %v", msg)
	}
	c.supported = sup.Options
	startup := map[string]string{"CQL_VERSION": "3.0.0", "DRIVER_NAME": "cqld cqlclient"}
	if !c.opts.DisablePrepareBatch && offers(sup.Options[protocol.PrepareBatchExtension], protocol.PrepareBatchVersion) {
		startup[protocol.PrepareBatchExtension] = protocol.PrepareBatchVersion
		c.batchOn = true
	}
	if msg, err = ask(&message.Startup{Options: startup}); err != nil {
		return err
	}
	if _, ok := msg.(*message.Ready); !ok {
		return fmt.Errorf("STARTUP answered %v", msg)
	}
	return nil
}

func offers(versions []string, v string) bool {
	for _, s := range versions {
		if s == v {
			return true
		}
	}
	return false
}

// readFrame reads one legacy frame from br.
func readFrame(br *bufio.Reader) (protocol.Header, []byte, error) {
	var head [protocol.HeaderLen]byte
	if _, err := io.ReadFull(br, head[:]); err != nil {
		return protocol.Header{}, nil, err
	}
	h, _ := protocol.ParseHeader(head[:])
	if h.BodyLen < 0 || h.BodyLen > maxResponse {
		return h, nil, fmt.Errorf("response body of %d bytes exceeds %d", uint32(h.BodyLen), maxResponse)
	}
	h.Version &^= 0x80
	if h.BodyLen <= 64<<10 {
		body := make([]byte, h.BodyLen)
		_, err := io.ReadFull(br, body)
		return h, body, err
	}
	// A large body is allocated as it arrives, so that a header alone
	// cannot make the client allocate maxResponse bytes.
	body, err := io.ReadAll(io.LimitReader(br, int64(h.BodyLen)))
	if err == nil && len(body) != h.BodyLen {
		err = io.ErrUnexpectedEOF
	}
	return h, body, err
}

// frameReader yields a connection's response frames one at a time: legacy
// frames before v5, envelopes cut from v5 segments from v5 on. Not safe for
// concurrent use.
type frameReader struct {
	br      *bufio.Reader
	v5      bool
	dec     *protocol.SegmentDecoder
	pending []byte   // bytes read, not yet decoded (v5)
	envs    [][]byte // envelopes decoded, not yet returned (v5)
	buf     []byte
}

// next returns the next frame's header (its direction bit cleared) and
// body.
func (fr *frameReader) next() (protocol.Header, []byte, error) {
	if !fr.v5 {
		return readFrame(fr.br)
	}
	if fr.dec == nil {
		fr.dec = protocol.NewSegmentDecoder(false, protocol.HeaderLen+maxResponse)
		fr.buf = make([]byte, 16<<10)
	}
	for len(fr.envs) == 0 {
		n, err := fr.br.Read(fr.buf)
		if err != nil {
			return protocol.Header{}, nil, err
		}
		fr.pending = append(fr.pending, fr.buf[:n]...)
		used, envs, derr := fr.dec.Decode(fr.pending) // envs do not alias pending
		fr.envs = append(fr.envs, envs...)
		if derr != nil && len(fr.envs) == 0 {
			return protocol.Header{}, nil, derr
		}
		fr.pending = append(fr.pending[:0], fr.pending[used:]...)
	}
	env := fr.envs[0]
	fr.envs = fr.envs[1:]
	h, ok := protocol.ParseHeader(env)
	if !ok || len(env) != protocol.HeaderLen+h.BodyLen {
		return h, nil, errors.New("cqlclient: malformed envelope")
	}
	h.Version &^= 0x80
	return h, env[protocol.HeaderLen:], nil
}

// read delivers responses to the requests waiting for them until the
// connection breaks.
func (c *Conn) read(fr *frameReader) {
	err := c.readLoop(fr)
	c.mu.Lock()
	c.err = err
	waiting := c.waiting
	c.waiting = nil
	c.mu.Unlock()
	for _, ch := range waiting {
		ch <- response{err: err}
	}
}

func (c *Conn) readLoop(fr *frameReader) error {
	for {
		h, body, err := fr.next()
		if err != nil {
			return err
		}
		msg, err := decodeLazily(h, body)
		c.mu.Lock()
		ch := c.waiting[h.Stream]
		delete(c.waiting, h.Stream)
		c.mu.Unlock()
		if ch != nil { // events (stream -1) and late answers are dropped
			ch <- response{msg: msg, err: err}
		}
	}
}

// roundTrip sends msg on a free stream and waits for its answer. An ERROR
// answer is returned as a *ServerError.
func (c *Conn) roundTrip(ctx context.Context, msg message.Message) (message.Message, error) {
	if c.opts.Serial {
		return c.serialTrip(ctx, msg)
	}
	ch := make(chan response, 1)
	c.mu.Lock()
	if c.waiting == nil {
		err := c.err
		c.mu.Unlock()
		return nil, fmt.Errorf("%w: %v", ErrClosed, err)
	}
	stream := c.next
	for i := 0; ; i++ {
		if i == 32767 {
			c.mu.Unlock()
			return nil, errors.New("cqlclient: all 32767 streams are in use")
		}
		stream = stream%32767 + 1
		if _, busy := c.waiting[stream]; !busy {
			break
		}
	}
	c.next = stream
	c.waiting[stream] = ch
	c.mu.Unlock()

	out, err := c.encode(nil, stream, msg)
	if err == nil {
		c.wmu.Lock()
		_, err = c.nc.Write(out)
		c.wmu.Unlock()
		if err != nil {
			err = fmt.Errorf("%w: %v", ErrClosed, err)
		}
	}
	if err != nil {
		c.forget(stream)
		return nil, err
	}
	select {
	case r := <-ch:
		if e, ok := r.msg.(message.Error); ok && r.err == nil {
			return nil, serverError(e)
		}
		return r.msg, r.err
	case <-ctx.Done():
		// NB: the stream stays taken until its answer arrives (into ch's
		// buffer), so a late answer never reaches a later request.
		return nil, ctx.Err()
	}
}

// encode encodes msg as a request frame on stream, in segments from v5
// on, into buf's capacity where it can.
func (c *Conn) encode(buf []byte, stream int16, msg message.Message) ([]byte, error) {
	out, err := protocol.AppendRequest(buf[:0], c.opts.Version, stream, msg)
	if err != nil {
		return nil, err
	}
	if n := len(out) - protocol.HeaderLen; n > c.opts.MaxFrameSize {
		return nil, fmt.Errorf("cqlclient: request of %d bytes exceeds the frame limit of %d", n, c.opts.MaxFrameSize)
	}
	if c.opts.Version >= primitive.ProtocolVersion5 {
		return protocol.AppendSegments(nil, false, out)
	}
	return out, nil
}

// serialStream is the stream of every request in Serial mode.
const serialStream = 1

// serialTrip is roundTrip in Serial mode: it writes msg and reads frames
// until the answer. A failed write or read (a passed deadline included)
// breaks the connection, since an answer could still be on its way.
func (c *Conn) serialTrip(ctx context.Context, msg message.Message) (message.Message, error) {
	s := &c.serial
	s.Lock()
	defer s.Unlock()
	if s.err != nil {
		return nil, fmt.Errorf("%w: %v", ErrClosed, s.err)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out, err := c.encode(s.wbuf, serialStream, msg)
	if err != nil {
		return nil, err
	}
	if c.opts.Version < primitive.ProtocolVersion5 {
		s.wbuf = out // reused by the next request
	}
	if dl, ok := ctx.Deadline(); ok {
		c.nc.SetDeadline(dl)
		defer c.nc.SetDeadline(time.Time{})
	}
	if _, err := c.nc.Write(out); err != nil {
		return nil, c.breakSerial(err)
	}
	for {
		h, body, err := s.fr.next()
		if err != nil {
			return nil, c.breakSerial(err)
		}
		if h.Stream != serialStream {
			continue // an event
		}
		msg, err := decodeLazily(h, body)
		if e, ok := msg.(message.Error); ok && err == nil {
			return nil, serverError(e)
		}
		return msg, err
	}
}

// breakSerial records why a Serial connection broke and closes it.
// REQUIRES: c.serial is locked.
func (c *Conn) breakSerial(err error) error {
	c.serial.err = err
	c.nc.Close()
	return fmt.Errorf("%w: %v", ErrClosed, err)
}

func (c *Conn) forget(stream int16) {
	c.mu.Lock()
	if c.waiting != nil {
		delete(c.waiting, stream)
	}
	c.mu.Unlock()
}

// Supported is the server's answer to OPTIONS. The caller must not modify
// it.
func (c *Conn) Supported() map[string][]string { return c.supported }

// CanPrepareBatch reports whether the connection turned the batch PREPARE
// extension on.
func (c *Conn) CanPrepareBatch() bool { return c.batchOn }

// Version is the connection's protocol version.
func (c *Conn) Version() primitive.ProtocolVersion { return c.opts.Version }

// Close closes the connection; requests waiting fail.
func (c *Conn) Close() error { return c.nc.Close() }

// decodeLazily decodes a response, except PREPARED results, which stay
// *protocol.RawResult (alone, or in a PREPARED_BATCH) for Prepared to read
// its ids from and decode the rest on demand.
func decodeLazily(h protocol.Header, body []byte) (message.Message, error) {
	if h.Flags == 0 {
		switch {
		case h.OpCode == primitive.OpCodeResult && len(body) >= 4 &&
			binary.BigEndian.Uint32(body) == uint32(primitive.ResultTypePrepared):
			return &protocol.RawResult{OpCode: h.OpCode, Body: body}, nil
		case h.OpCode == protocol.OpCodePreparedBatch:
			raws, err := protocol.SplitPreparedBatch(body)
			if err != nil {
				return nil, err
			}
			m := &protocol.PreparedBatch{Results: make([]message.Message, len(raws))}
			for i, r := range raws {
				m.Results[i] = r
			}
			return m, nil
		}
	}
	return protocol.DecodeResponse(h, body)
}
