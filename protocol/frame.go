package protocol

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"time"

	"github.com/datastax/go-cassandra-native-protocol/frame"
	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"
)

// HeaderLen is the length of a legacy frame (v5: envelope) header.
const HeaderLen = 9

// The protocol versions cqld speaks.
const (
	MinVersion = primitive.ProtocolVersion3
	MaxVersion = primitive.ProtocolVersion5
)

// SupportedVersions lists the versions as Cassandra spells them in SUPPORTED
// and in version errors.
var SupportedVersions = []string{"3/v3", "4/v4", "5/v5"}

// Errors for a broken byte stream. After any of them, but for a TooBigError
// (whose body the frontend skips), the connection is unusable: the
// frontend answers PROTOCOL_ERROR and closes.
var (
	ErrUnsupportedVersion = errors.New("protocol: unsupported version")
	ErrFrameTooBig        = errors.New("protocol: frame too big")
	ErrNotRequest         = errors.New("protocol: response frame sent to server")
)

// Header is a decoded legacy frame header.
type Header struct {
	Version primitive.ProtocolVersion
	Flags   primitive.HeaderFlag
	Stream  int16
	OpCode  primitive.OpCode
	BodyLen int
}

// ParseHeader decodes the header at the start of b. ok is false when b is
// shorter than HeaderLen. ParseHeader does not validate the header: see Check.
func ParseHeader(b []byte) (h Header, ok bool) {
	if len(b) < HeaderLen {
		return h, false
	}
	return Header{
		Version: primitive.ProtocolVersion(b[0]),
		Flags:   primitive.HeaderFlag(b[1]),
		Stream:  int16(binary.BigEndian.Uint16(b[2:4])),
		OpCode:  primitive.OpCode(b[4]),
		BodyLen: int(binary.BigEndian.Uint32(b[5:9])),
	}, true
}

// Check validates a request header that opens a frame: the version must be
// one cqld speaks (want, when non-zero, is the version the connection has
// settled on), the direction bit must say request, and the body must not be
// longer than maxBody. The errors wrap the sentinels above.
func (h Header) Check(want primitive.ProtocolVersion, maxBody int) error {
	v := h.Version
	if v&0x80 != 0 {
		return fmt.Errorf("%w: direction bit set in version byte 0x%02x", ErrNotRequest, byte(v))
	}
	if v < MinVersion || v > MaxVersion {
		return &VersionError{Version: byte(v)}
	}
	if want != 0 && v != want {
		return fmt.Errorf("%w: connection is on version %d, frame says %d", ErrUnsupportedVersion, want, v)
	}
	if h.BodyLen < 0 || h.BodyLen > maxBody {
		length := int64(HeaderLen) + int64(uint32(h.BodyLen))
		if !isRequestOpCode(h.OpCode) {
			// Not a request at all: nothing says its length is one either.
			return fmt.Errorf("%w: unknown opcode %d in a frame of %d bytes", ErrFrameTooBig, byte(h.OpCode), length)
		}
		return &TooBigError{Length: length, Max: int64(maxBody)}
	}
	return nil
}

// VersionError is a frame in a protocol version cqld does not speak. Its
// message is the one Cassandra sends, which the drivers parse to downgrade.
type VersionError struct{ Version byte }

func (e *VersionError) Error() string {
	return fmt.Sprintf("Invalid or unsupported protocol version (%d); supported versions are (%s)",
		e.Version, "3/v3, 4/v4, 5/v5")
}

func (e *VersionError) Unwrap() error { return ErrUnsupportedVersion }

// TooBigError is a request frame whose declared body is longer than the
// limit: Length is the whole frame's, header included, Max the body's
// limit. The stream is sound, so the frontend skips the body as it
// arrives and answers INVALID with Error() on the frame's stream, as
// Cassandra's v4 frame decoder does (its message).
type TooBigError struct{ Length, Max int64 }

func (e *TooBigError) Error() string {
	return fmt.Sprintf("Request is too big: length %d exceeds maximum allowed length %d.", e.Length, e.Max)
}

// EnvelopeTooBig is the INVALID message Cassandra answers, on its stream,
// to a v5 envelope (size bytes, header included) over the limit max.
func EnvelopeTooBig(size, max int64) string {
	return fmt.Sprintf("CQL Message of size %d bytes exceeds allowed maximum of %d bytes", size, max)
}

func (e *TooBigError) Unwrap() error { return ErrFrameTooBig }

// Request is one decoded request frame with the connection state the
// executing layer needs.
type Request struct {
	Version       primitive.ProtocolVersion
	Stream        int16
	Message       message.Message
	CustomPayload map[string][]byte
	Tracing       bool
	// Keyspace is the connection's current keyspace ("" when none), set by
	// the frontend.
	Keyspace string
	// Role is the role the connection logged in as, "" when the server
	// authenticates no one (AllowAllAuthenticator); set by the frontend.
	Role string
	// Client is the address of the client that sent the request, set by
	// the frontend (what a trace records).
	Client netip.Addr
	// Received is when the frontend read the whole frame, for its latency
	// metric.
	Received time.Time
	// Prepared is the handler's own: the prepared statement an EXECUTE
	// names, once the handler has looked it up (Inline, which then left
	// the request to Handle), so that it is looked up, and counted in the
	// cache's figures, once. The frontend leaves it alone.
	Prepared any
}

// Later takes the answer to a request that is answered after the call that
// took it returned (a write waiting for its commit log sync). Answer may be
// called from any goroutine.
type Later interface {
	Answer(req *Request, resp *Response)
}

// Response is what the executing layer answers to a Request.
type Response struct {
	Message       message.Message
	CustomPayload map[string][]byte
	Warnings      []string
	TracingID     *primitive.UUID
}

// codec encodes and decodes message bodies, the batch PREPARE extension's
// included. It holds no mutable state, so one instance serves every
// connection.
var codec = frame.NewRawCodec(PrepareBatchCodec, PreparedBatchCodec, errorsCodec)

// DecodeRequest decodes a whole request frame, hdr having been read from
// frame[:HeaderLen]. comp decompresses bodies flagged compressed (nil when
// the connection negotiated none); maxBody bounds the decompressed body.
// The returned Request does not alias frame.
func DecodeRequest(hdr Header, body []byte, comp Compressor, maxBody int) (*Request, error) {
	if !isRequestOpCode(hdr.OpCode) {
		return nil, fmt.Errorf("Unknown opcode %d", byte(hdr.OpCode))
	}
	flags := hdr.Flags
	if flags.Contains(primitive.HeaderFlagCompressed) && hdr.Version < primitive.ProtocolVersion5 {
		if comp == nil {
			return nil, errors.New("Received compressed frame but no compression was negotiated")
		}
		plain, err := comp.Decompress(nil, body, maxBody)
		if err != nil {
			return nil, fmt.Errorf("cannot decompress frame body: %w", err)
		}
		body = plain
	}
	// v5 envelopes are never compressed themselves: the segment is.
	flags = flags.Remove(primitive.HeaderFlagCompressed)
	// The hand-written EXECUTE decoder checks its own lengths, so the
	// common request walks its body once.
	if hdr.OpCode == primitive.OpCodeExecute && flags&^(primitive.HeaderFlagTracing|primitive.HeaderFlagUseBeta) == 0 {
		blk := &executeBlock{}
		if m, ok := decodeExecute(hdr.Version, body, blk); ok {
			blk.req = Request{Version: hdr.Version, Stream: hdr.Stream, Message: m,
				Tracing: flags.Contains(primitive.HeaderFlagTracing)}
			return &blk.req, nil
		}
	}
	if err := checkBody(hdr.OpCode, hdr.Version, flags, body, maxBody); err != nil {
		return nil, err
	}
	if hdr.OpCode == OpCodePrepareBatch && flags&^(primitive.HeaderFlagTracing|primitive.HeaderFlagUseBeta) == 0 {
		return &Request{Version: hdr.Version, Stream: hdr.Stream, Message: decodePrepareBatch(body),
			Tracing: flags.Contains(primitive.HeaderFlagTracing)}, nil
	}
	raw := &frame.RawFrame{
		Header: &frame.Header{
			Version:    hdr.Version,
			Flags:      flags,
			StreamId:   hdr.Stream,
			OpCode:     hdr.OpCode,
			BodyLength: int32(len(body)),
		},
		Body: body,
	}
	f, err := codec.ConvertFromRawFrame(raw)
	if err != nil {
		return nil, err
	}
	return &Request{
		Version:       hdr.Version,
		Stream:        hdr.Stream,
		Message:       f.Body.Message,
		CustomPayload: f.Body.CustomPayload,
		Tracing:       flags.Contains(primitive.HeaderFlagTracing),
	}, nil
}

func isRequestOpCode(op primitive.OpCode) bool {
	switch op {
	case primitive.OpCodeStartup, primitive.OpCodeOptions, primitive.OpCodeQuery,
		primitive.OpCodePrepare, primitive.OpCodeExecute, primitive.OpCodeRegister,
		primitive.OpCodeBatch, primitive.OpCodeAuthResponse, OpCodePrepareBatch:
		return true
	}
	return false
}

// AppendResponse appends resp encoded as a frame of the given version and
// stream to dst. When comp is non-nil and the version is below 5, the body is
// compressed and flagged so.
func AppendResponse(dst []byte, version primitive.ProtocolVersion, stream int16, resp *Response, comp Compressor) ([]byte, error) {
	start := len(dst)
	if out, ok := appendFast(dst, version, stream, resp); ok {
		return compressBody(out, start, version, resp, comp)
	}
	f := frame.NewFrame(version, stream, resp.Message)
	if len(resp.CustomPayload) > 0 && version >= primitive.ProtocolVersion4 {
		f.SetCustomPayload(resp.CustomPayload)
	}
	if len(resp.Warnings) > 0 && version >= primitive.ProtocolVersion4 {
		f.SetWarnings(resp.Warnings)
	}
	if resp.TracingID != nil {
		f.SetTracingId(resp.TracingID)
	}
	buf := bytes.NewBuffer(dst)
	if err := codec.EncodeFrame(f, buf); err != nil {
		return dst, fmt.Errorf("protocol: encode %v: %w", resp.Message.GetOpCode(), err)
	}
	return compressBody(buf.Bytes(), start, version, resp, comp)
}

// compressBody compresses the body of the frame at out[start:] when the
// connection negotiated body compression (v3/v4).
func compressBody(out []byte, start int, version primitive.ProtocolVersion, resp *Response, comp Compressor) ([]byte, error) {
	dst := out[:start]
	if comp == nil || version >= primitive.ProtocolVersion5 {
		return out, nil
	}
	body := out[start+HeaderLen:]
	packed, err := comp.Compress(nil, body)
	if err != nil {
		return dst, fmt.Errorf("protocol: compress %v: %w", resp.Message.GetOpCode(), err)
	}
	out = append(out[:start+HeaderLen], packed...)
	out[start+1] |= byte(primitive.HeaderFlagCompressed)
	binary.BigEndian.PutUint32(out[start+5:start+9], uint32(len(packed)))
	return out, nil
}

// appendFast encodes the two answers a prepared statement usually gets,
// VOID and ROWS without metadata, without the generic codec. ok is false
// for everything else.
func appendFast(dst []byte, version primitive.ProtocolVersion, stream int16, resp *Response) ([]byte, bool) {
	if len(resp.CustomPayload) > 0 || len(resp.Warnings) > 0 || resp.TracingID != nil {
		return dst, false
	}
	header := func(op primitive.OpCode) []byte {
		dst = append(dst, byte(version)|0x80, 0, 0, 0, byte(op), 0, 0, 0, 0)
		binary.BigEndian.PutUint16(dst[len(dst)-7:], uint16(stream))
		return dst
	}
	switch m := resp.Message.(type) {
	case *message.VoidResult:
		start := len(dst)
		dst = header(primitive.OpCodeResult)
		dst = binary.BigEndian.AppendUint32(dst, uint32(primitive.ResultTypeVoid))
		binary.BigEndian.PutUint32(dst[start+5:], 4)
		return dst, true
	case *message.RowsResult:
		md := m.Metadata
		if md == nil || md.Columns != nil || md.NewResultMetadataId != nil || md.ContinuousPageNumber != 0 {
			return dst, false
		}
		start := len(dst)
		dst = header(primitive.OpCodeResult)
		dst = binary.BigEndian.AppendUint32(dst, uint32(primitive.ResultTypeRows))
		flags := primitive.RowsFlagNoMetadata
		if md.PagingState != nil {
			flags |= primitive.RowsFlagHasMorePages
		}
		dst = binary.BigEndian.AppendUint32(dst, uint32(flags))
		dst = binary.BigEndian.AppendUint32(dst, uint32(md.ColumnCount))
		if md.PagingState != nil {
			dst = binary.BigEndian.AppendUint32(dst, uint32(len(md.PagingState)))
			dst = append(dst, md.PagingState...)
		}
		dst = binary.BigEndian.AppendUint32(dst, uint32(len(m.Data)))
		for _, row := range m.Data {
			for _, cell := range row {
				if cell == nil {
					dst = binary.BigEndian.AppendUint32(dst, 0xffffffff)
					continue
				}
				dst = binary.BigEndian.AppendUint32(dst, uint32(len(cell)))
				dst = append(dst, cell...)
			}
		}
		binary.BigEndian.PutUint32(dst[start+5:], uint32(len(dst)-start-HeaderLen))
		return dst, true
	}
	return dst, false
}
