package protocol

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"
)

// The batch PREPARE extension (docs/prepare_batch.spec): one request
// prepares many statements. A server lists it in SUPPORTED under
// PrepareBatchExtension; a client that sends that key with a version it
// supports in STARTUP may then send PREPARE_BATCH. Connections that did not
// opt in get the PROTOCOL_ERROR any unknown opcode gets.
const (
	PrepareBatchExtension = "CQLD_PREPARE_BATCH"
	// PrepareBatchVersion is the version of the extension described here.
	PrepareBatchVersion = "1"

	OpCodePrepareBatch  = primitive.OpCode(0x20) // request
	OpCodePreparedBatch = primitive.OpCode(0x21) // response

	// MaxPrepareBatch is the most statements one request may carry.
	MaxPrepareBatch = 65535
)

// minBatchStatement is the fewest bytes a statement takes on the wire: an
// empty [long string] and an empty [string].
const minBatchStatement = 4 + 2

// BatchStatement is one statement of a PREPARE_BATCH: a query and the
// keyspace to prepare it in ("" for the connection's).
type BatchStatement struct {
	Query    string
	Keyspace string
}

// PrepareBatch is the PREPARE_BATCH request.
type PrepareBatch struct {
	Statements []BatchStatement
}

func (m *PrepareBatch) IsResponse() bool            { return false }
func (m *PrepareBatch) GetOpCode() primitive.OpCode { return OpCodePrepareBatch }
func (m *PrepareBatch) DeepCopyMessage() message.Message {
	return &PrepareBatch{Statements: append([]BatchStatement(nil), m.Statements...)}
}

func (m *PrepareBatch) String() string { return fmt.Sprintf("PREPARE_BATCH (%d)", len(m.Statements)) }

// PreparedBatch is the PREPARED_BATCH response: one result per statement of
// the request, in its order. Each is a *message.PreparedResult or the
// message.Error the statement would have got alone.
type PreparedBatch struct {
	Results []message.Message
}

func (m *PreparedBatch) IsResponse() bool            { return true }
func (m *PreparedBatch) GetOpCode() primitive.OpCode { return OpCodePreparedBatch }
func (m *PreparedBatch) DeepCopyMessage() message.Message {
	out := &PreparedBatch{Results: make([]message.Message, len(m.Results))}
	for i, r := range m.Results {
		out.Results[i] = r.DeepCopyMessage()
	}
	return out
}

func (m *PreparedBatch) String() string { return fmt.Sprintf("PREPARED_BATCH (%d)", len(m.Results)) }

// RawResult is a RESULT or ERROR message already encoded: OpCode and the
// message's body for one protocol version. A server that answers the same
// statement many times encodes it once and hands the bytes to
// PreparedBatch. It is immutable.
type RawResult struct {
	OpCode primitive.OpCode
	Body   []byte
}

func (m *RawResult) IsResponse() bool            { return true }
func (m *RawResult) GetOpCode() primitive.OpCode { return m.OpCode }
func (m *RawResult) DeepCopyMessage() message.Message {
	return &RawResult{OpCode: m.OpCode, Body: append([]byte(nil), m.Body...)}
}

// EncodeResult encodes a PREPARED result or an error as a RawResult for
// protocol version v.
func EncodeResult(msg message.Message, v primitive.ProtocolVersion) (*RawResult, error) {
	op, err := resultOpCode(msg)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := resultCodecs[op].Encode(msg, &buf, v); err != nil {
		return nil, fmt.Errorf("protocol: encode %T: %w", msg, err)
	}
	return &RawResult{OpCode: op, Body: buf.Bytes()}, nil
}

// Errors of a PREPARE_BATCH body that is well formed but out of bounds.
var (
	ErrNoStatements       = errors.New("PREPARE_BATCH must carry at least one statement")
	ErrTooManyStatements  = fmt.Errorf("PREPARE_BATCH carries more than %d statements", MaxPrepareBatch)
	ErrUnexpectedResponse = errors.New("unexpected result in PREPARED_BATCH")
)

// PrepareBatchCodec and PreparedBatchCodec plug the two messages into
// go-cassandra-native-protocol: pass them to frame.NewCodec or
// frame.NewRawCodec. The layouts are the same in v4 and v5.
//
// Their decoders take untrusted bytes: counts and lengths are checked
// against the bytes left when the source tells (a *bytes.Reader or a
// *bytes.Buffer, as in ConvertFromRawFrame), and otherwise memory grows
// only as bytes arrive, so no input makes them allocate much more than its
// own size.
var (
	PrepareBatchCodec  message.Codec = prepareBatchCodec{}
	PreparedBatchCodec message.Codec = preparedBatchCodec{}
)

type prepareBatchCodec struct{}

func (prepareBatchCodec) GetOpCode() primitive.OpCode { return OpCodePrepareBatch }

func (prepareBatchCodec) Encode(msg message.Message, dest io.Writer, _ primitive.ProtocolVersion) error {
	m, ok := msg.(*PrepareBatch)
	if !ok {
		return fmt.Errorf("expected *protocol.PrepareBatch, got %T", msg)
	}
	if err := checkCount(len(m.Statements)); err != nil {
		return err
	}
	b := binary.BigEndian.AppendUint32(nil, uint32(len(m.Statements)))
	for _, s := range m.Statements {
		if len(s.Keyspace) > 0xffff {
			return fmt.Errorf("keyspace of %d bytes does not fit a [string]", len(s.Keyspace))
		}
		b = binary.BigEndian.AppendUint32(b, uint32(len(s.Query)))
		b = append(b, s.Query...)
		b = binary.BigEndian.AppendUint16(b, uint16(len(s.Keyspace)))
		b = append(b, s.Keyspace...)
	}
	_, err := dest.Write(b)
	return err
}

func (prepareBatchCodec) EncodedLength(msg message.Message, _ primitive.ProtocolVersion) (int, error) {
	m, ok := msg.(*PrepareBatch)
	if !ok {
		return 0, fmt.Errorf("expected *protocol.PrepareBatch, got %T", msg)
	}
	n := 4
	for _, s := range m.Statements {
		n += minBatchStatement + len(s.Query) + len(s.Keyspace)
	}
	return n, nil
}

func (prepareBatchCodec) Decode(source io.Reader, _ primitive.ProtocolVersion) (message.Message, error) {
	r := newBoundedReader(source)
	n, err := r.count(minBatchStatement, "statements")
	if err != nil {
		return nil, err
	}
	m := &PrepareBatch{Statements: make([]BatchStatement, n)}
	for i := range m.Statements {
		s := &m.Statements[i]
		q, err := r.chunk(int64(r.int32()), "query")
		if err == nil {
			s.Query = string(q)
			var ks []byte
			ks, err = r.chunk(int64(r.uint16()), "keyspace")
			s.Keyspace = string(ks)
		}
		if err != nil {
			return nil, fmt.Errorf("statement %d of %d: %w", i+1, n, err)
		}
	}
	return m, nil
}

type preparedBatchCodec struct{}

func (preparedBatchCodec) GetOpCode() primitive.OpCode { return OpCodePreparedBatch }

// resultCodecs encode and decode each result's body.
var resultCodecs = func() map[primitive.OpCode]message.Codec {
	m := map[primitive.OpCode]message.Codec{}
	for _, c := range message.DefaultMessageCodecs {
		if op := c.GetOpCode(); op == primitive.OpCodeResult || op == primitive.OpCodeError {
			m[op] = c
		}
	}
	return m
}()

// resultOpCode is the opcode whose body encodes r: RESULT for a PREPARED
// result, ERROR for an error.
func resultOpCode(r message.Message) (primitive.OpCode, error) {
	switch r := r.(type) {
	case *RawResult:
		if r.OpCode == primitive.OpCodeResult || r.OpCode == primitive.OpCodeError {
			return r.OpCode, nil
		}
	case *message.PreparedResult:
		return primitive.OpCodeResult, nil
	case message.Error:
		return primitive.OpCodeError, nil
	}
	return 0, fmt.Errorf("%w: %T", ErrUnexpectedResponse, r)
}

func (preparedBatchCodec) Encode(msg message.Message, dest io.Writer, v primitive.ProtocolVersion) error {
	m, ok := msg.(*PreparedBatch)
	if !ok {
		return fmt.Errorf("expected *protocol.PreparedBatch, got %T", msg)
	}
	var buf bytes.Buffer
	buf.Write(binary.BigEndian.AppendUint32(nil, uint32(len(m.Results))))
	for i, r := range m.Results {
		op, err := resultOpCode(r)
		if err != nil {
			return fmt.Errorf("result %d: %w", i+1, err)
		}
		start := buf.Len()
		buf.Write([]byte{byte(op), 0, 0, 0, 0})
		if raw, ok := r.(*RawResult); ok {
			buf.Write(raw.Body)
		} else if err := resultCodecs[op].Encode(r, &buf, v); err != nil {
			return fmt.Errorf("result %d: %w", i+1, err)
		}
		binary.BigEndian.PutUint32(buf.Bytes()[start+1:], uint32(buf.Len()-start-5))
	}
	_, err := dest.Write(buf.Bytes())
	return err
}

func (preparedBatchCodec) EncodedLength(msg message.Message, v primitive.ProtocolVersion) (int, error) {
	m, ok := msg.(*PreparedBatch)
	if !ok {
		return 0, fmt.Errorf("expected *protocol.PreparedBatch, got %T", msg)
	}
	n := 4
	for i, r := range m.Results {
		op, err := resultOpCode(r)
		if err != nil {
			return 0, fmt.Errorf("result %d: %w", i+1, err)
		}
		l := 0
		if raw, ok := r.(*RawResult); ok {
			l = len(raw.Body)
		} else if l, err = resultCodecs[op].EncodedLength(r, v); err != nil {
			return 0, fmt.Errorf("result %d: %w", i+1, err)
		}
		n += 5 + l
	}
	return n, nil
}

func (preparedBatchCodec) Decode(source io.Reader, v primitive.ProtocolVersion) (message.Message, error) {
	raws, err := splitResults(newBoundedReader(source))
	if err != nil {
		return nil, err
	}
	m := &PreparedBatch{Results: make([]message.Message, len(raws))}
	for i, r := range raws {
		if m.Results[i], err = DecodeResult(r, v); err != nil {
			return nil, fmt.Errorf("result %d of %d: %w", i+1, len(raws), err)
		}
	}
	return m, nil
}

// SplitPreparedBatch cuts a PREPARED_BATCH body into its results without
// decoding them, for clients that decode lazily. The results alias body.
func SplitPreparedBatch(body []byte) ([]*RawResult, error) {
	return splitResults(newBoundedReader(bytes.NewReader(body)))
}

func splitResults(r *boundedReader) ([]*RawResult, error) {
	n, err := r.count(5, "results")
	if err != nil {
		return nil, err
	}
	out := make([]*RawResult, n)
	for i := range out {
		op := primitive.OpCode(r.byte())
		body, err := r.chunk(int64(r.int32()), "result")
		if err == nil {
			out[i] = &RawResult{OpCode: op, Body: body}
			_, err = resultOpCode(out[i])
		}
		if err != nil {
			return nil, fmt.Errorf("result %d of %d: %w", i+1, n, err)
		}
	}
	return out, nil
}

// DecodeResult decodes a RESULT (PREPARED) or ERROR body.
func DecodeResult(r *RawResult, v primitive.ProtocolVersion) (message.Message, error) {
	return decodeResult(r.OpCode, r.Body, v)
}

func decodeResult(op primitive.OpCode, body []byte, v primitive.ProtocolVersion) (message.Message, error) {
	c, ok := resultCodecs[op]
	if !ok {
		return nil, fmt.Errorf("%w: opcode 0x%02x", ErrUnexpectedResponse, byte(op))
	}
	if err := checkResponseBody(op, v, 0, body); err != nil {
		return nil, err
	}
	msg, err := c.Decode(bytes.NewReader(body), v)
	if err != nil {
		return nil, err
	}
	if _, err := resultOpCode(msg); err != nil {
		return nil, err
	}
	return msg, nil
}

func checkCount(n int) error {
	switch {
	case n == 0:
		return ErrNoStatements
	case n > MaxPrepareBatch || n < 0:
		return fmt.Errorf("%w: %d", ErrTooManyStatements, uint32(n))
	}
	return nil
}

// boundedReader reads a body from a stream, remembering the first error.
// left is the bytes the source still holds, or -1 when it cannot tell.
type boundedReader struct {
	r    io.Reader
	left int64
	err  error
	tmp  [4]byte
}

func newBoundedReader(source io.Reader) *boundedReader {
	r := &boundedReader{r: source, left: -1}
	if l, ok := source.(interface{ Len() int }); ok {
		r.left = int64(l.Len())
	}
	return r
}

func (r *boundedReader) fixed(n int) []byte {
	if r.err != nil {
		return r.tmp[:n]
	}
	if _, err := io.ReadFull(r.r, r.tmp[:n]); err != nil {
		r.err = fmt.Errorf("body too short: %w", err)
	} else if r.left >= 0 {
		r.left -= int64(n)
	}
	return r.tmp[:n]
}

func (r *boundedReader) byte() byte     { return r.fixed(1)[0] }
func (r *boundedReader) uint16() uint16 { return binary.BigEndian.Uint16(r.fixed(2)) }
func (r *boundedReader) int32() int32   { return int32(binary.BigEndian.Uint32(r.fixed(4))) }

// count reads an [int] count of items that take at least min bytes each,
// and checks it against the bounds and the bytes left.
func (r *boundedReader) count(min int64, what string) (int, error) {
	n := r.int32()
	if r.err != nil {
		return 0, r.err
	}
	if err := checkCount(int(n)); err != nil {
		return 0, err
	}
	if r.left >= 0 && int64(n)*min > r.left {
		return 0, fmt.Errorf("body too short: %d %s need at least %d bytes, %d are left", n, what, int64(n)*min, r.left)
	}
	return int(n), nil
}

// chunk reads n bytes; n is checked against the bytes left first.
func (r *boundedReader) chunk(n int64, what string) ([]byte, error) {
	if r.err != nil {
		return nil, r.err
	}
	if n < 0 {
		return nil, fmt.Errorf("negative %s length %d", what, n)
	}
	if r.left >= 0 {
		if n > r.left {
			return nil, fmt.Errorf("body too short: %s of %d bytes, %d are left", what, n, r.left)
		}
		b := make([]byte, n)
		if _, err := io.ReadFull(r.r, b); err != nil {
			return nil, fmt.Errorf("body too short: %w", err)
		}
		r.left -= n
		return b, nil
	}
	// Unknown length: grow with the bytes that actually arrive.
	var buf bytes.Buffer
	if _, err := io.CopyN(&buf, r.r, n); err != nil {
		return nil, fmt.Errorf("body too short: %s of %d bytes: %w", what, n, err)
	}
	return buf.Bytes(), nil
}

// prepareBatch checks a PREPARE_BATCH body before the codec reads it, with
// an error that names what is wrong: the count, the statement that runs
// past the body, or one longer than any frame may be.
func (c *cursor) prepareBatch(maxBody int) {
	n := int(c.int())
	if !c.ok() {
		return
	}
	if err := checkCount(n); err != nil {
		c.err = err
		return
	}
	if left := len(c.b) - c.pos; n*minBatchStatement > left {
		c.err = fmt.Errorf("PREPARE_BATCH declares %d statements but its body has room for at most %d", n, left/minBatchStatement)
		return
	}
	for i := 1; i <= n && c.ok(); i++ {
		l := int(c.int())
		left := len(c.b) - c.pos
		switch {
		case !c.ok():
		case l < 0:
			c.err = fmt.Errorf("statement %d of %d: negative query length %d", i, n, l)
		case l > maxBody:
			c.err = fmt.Errorf("statement %d of %d: a query of %d bytes is longer than the frame limit of %d bytes", i, n, l, maxBody)
		case l > left:
			c.err = fmt.Errorf("statement %d of %d: the body ends %d bytes into its query of %d bytes", i, n, left, l)
		default:
			c.pos += l
			c.string()
		}
	}
}

// decodePrepareBatch decodes a PREPARE_BATCH body that checkBody accepted,
// with one allocation for all the text: the queries and keyspaces are
// substrings of one copy of the body. It agrees with PrepareBatchCodec
// (the fuzz test checks it) and is the server's path.
// REQUIRES: body passed cursor.prepareBatch.
func decodePrepareBatch(body []byte) *PrepareBatch {
	text := string(body)
	n := int(binary.BigEndian.Uint32(body))
	m := &PrepareBatch{Statements: make([]BatchStatement, n)}
	pos := 4
	for i := range m.Statements {
		l := int(binary.BigEndian.Uint32(body[pos:]))
		pos += 4
		m.Statements[i].Query = text[pos : pos+l]
		pos += l
		l = int(binary.BigEndian.Uint16(body[pos:]))
		pos += 2
		m.Statements[i].Keyspace = text[pos : pos+l]
		pos += l
	}
	return m
}
