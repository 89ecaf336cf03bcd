package protocol

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"

	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"
)

// ErrorCodeCasWriteUnknown is protocol v5's CAS_WRITE_UNKNOWN: a
// lightweight transaction's proposal some replicas accepted, but not a
// quorum, so a later round may or may not complete it.
const ErrorCodeCasWriteUnknown primitive.ErrorCode = 0x1700

// CasWriteUnknown is the CAS_WRITE_UNKNOWN error, which
// go-cassandra-native-protocol does not know. Encoded for a client of a
// protocol before v5 it becomes a WRITE_TIMEOUT of write type CAS, as
// Cassandra's ErrorMessage sends it.
type CasWriteUnknown struct {
	ErrorMessage       string
	Consistency        primitive.ConsistencyLevel
	Received, BlockFor int32
}

var _ message.Error = (*CasWriteUnknown)(nil)

func (m *CasWriteUnknown) IsResponse() bool                  { return true }
func (m *CasWriteUnknown) GetOpCode() primitive.OpCode       { return primitive.OpCodeError }
func (m *CasWriteUnknown) GetErrorCode() primitive.ErrorCode { return ErrorCodeCasWriteUnknown }
func (m *CasWriteUnknown) GetErrorMessage() string           { return m.ErrorMessage }
func (m *CasWriteUnknown) DeepCopyMessage() message.Message  { c := *m; return &c }
func (m *CasWriteUnknown) String() string {
	return fmt.Sprintf("ERROR CAS WRITE UNKNOWN (code=%v, msg=%v, cl=%v, received=%v, blockfor=%v)",
		ErrorCodeCasWriteUnknown, m.ErrorMessage, m.Consistency, m.Received, m.BlockFor)
}

// writeTimeout is m as a client before v5 gets it.
func (m *CasWriteUnknown) writeTimeout() *message.WriteTimeout {
	return &message.WriteTimeout{ErrorMessage: m.ErrorMessage, Consistency: m.Consistency,
		Received: m.Received, BlockFor: m.BlockFor, WriteType: primitive.WriteTypeCas}
}

// errorCodec is the library's ERROR codec with CAS_WRITE_UNKNOWN added.
type errorCodec struct{ std message.Codec }

var errorsCodec message.Codec = errorCodec{std: resultCodecs[primitive.OpCodeError]}

func (errorCodec) GetOpCode() primitive.OpCode { return primitive.OpCodeError }

func (c errorCodec) Encode(msg message.Message, dest io.Writer, v primitive.ProtocolVersion) error {
	m, ok := msg.(*CasWriteUnknown)
	if !ok {
		return c.std.Encode(msg, dest, v)
	}
	if v < primitive.ProtocolVersion5 {
		return c.std.Encode(m.writeTimeout(), dest, v)
	}
	if len(m.ErrorMessage) > 0xffff {
		return fmt.Errorf("CAS_WRITE_UNKNOWN message of %d bytes does not fit a [string]", len(m.ErrorMessage))
	}
	b := binary.BigEndian.AppendUint32(nil, uint32(ErrorCodeCasWriteUnknown))
	b = binary.BigEndian.AppendUint16(b, uint16(len(m.ErrorMessage)))
	b = append(b, m.ErrorMessage...)
	b = binary.BigEndian.AppendUint16(b, uint16(m.Consistency))
	b = binary.BigEndian.AppendUint32(b, uint32(m.Received))
	b = binary.BigEndian.AppendUint32(b, uint32(m.BlockFor))
	_, err := dest.Write(b)
	return err
}

func (c errorCodec) EncodedLength(msg message.Message, v primitive.ProtocolVersion) (int, error) {
	m, ok := msg.(*CasWriteUnknown)
	if !ok {
		return c.std.EncodedLength(msg, v)
	}
	if v < primitive.ProtocolVersion5 {
		return c.std.EncodedLength(m.writeTimeout(), v)
	}
	return 4 + 2 + len(m.ErrorMessage) + 2 + 4 + 4, nil
}

// Decode reads a CAS_WRITE_UNKNOWN itself and leaves every other error to
// the library's codec. The body is whole in memory by then (a
// *bytes.Reader from ConvertFromRawFrame, already checked by
// checkResponseBody on the client).
func (c errorCodec) Decode(source io.Reader, v primitive.ProtocolVersion) (message.Message, error) {
	body, err := io.ReadAll(source)
	if err != nil {
		return nil, fmt.Errorf("cannot read ERROR body: %w", err)
	}
	if len(body) < 4 || primitive.ErrorCode(binary.BigEndian.Uint32(body)) != ErrorCodeCasWriteUnknown {
		return c.std.Decode(bytes.NewReader(body), v)
	}
	b := body[4:]
	if len(b) < 2 || len(b) < 2+int(binary.BigEndian.Uint16(b))+2+4+4 {
		return nil, fmt.Errorf("cannot read ERROR CAS_WRITE_UNKNOWN: %d bytes are too few", len(body))
	}
	n := int(binary.BigEndian.Uint16(b))
	msg, b := string(b[2:2+n]), b[2+n:]
	return &CasWriteUnknown{ErrorMessage: msg, Consistency: primitive.ConsistencyLevel(binary.BigEndian.Uint16(b)),
		Received: int32(binary.BigEndian.Uint32(b[2:])), BlockFor: int32(binary.BigEndian.Uint32(b[6:]))}, nil
}
