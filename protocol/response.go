package protocol

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/datastax/go-cassandra-native-protocol/frame"
	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"
)

// DecodeResponse decodes the body of an uncompressed response frame whose
// header is h, PREPARED_BATCH included: the client side of DecodeRequest.
// The message does not alias body. Every count and length in body is
// checked against the bytes there before the codec reads it, so a hostile
// or broken server cannot make the client allocate much more than body.
func DecodeResponse(h Header, body []byte) (message.Message, error) {
	if h.Flags.Contains(primitive.HeaderFlagCompressed) && h.Version < primitive.ProtocolVersion5 {
		return nil, errors.New("protocol: compressed response without negotiated compression")
	}
	h.Version &^= 0x80 // the direction bit, if the caller left it
	// v5 envelopes are never compressed themselves: the segment is.
	flags := h.Flags.Remove(primitive.HeaderFlagCompressed)
	if err := checkResponseBody(h.OpCode, h.Version, flags, body); err != nil {
		return nil, fmt.Errorf("protocol: response opcode 0x%02x: %w", byte(h.OpCode), err)
	}
	f, err := codec.ConvertFromRawFrame(&frame.RawFrame{
		Header: &frame.Header{IsResponse: true, Version: h.Version, Flags: flags, StreamId: h.Stream,
			OpCode: h.OpCode, BodyLength: int32(len(body))},
		Body: body,
	})
	if err != nil {
		return nil, err
	}
	return f.Body.Message, nil
}

// ResponseTooBig is the INVALID message of a request whose answer would
// not fit in a frame of maxBody bytes (native_transport_max_frame_size),
// worded as Cassandra refuses a request over that limit.
func ResponseTooBig(maxBody int) string {
	return fmt.Sprintf("Response is too big: it would exceed the maximum allowed length %d "+
		"(native_transport_max_frame_size); page the query or select less.", maxBody)
}

// AppendRequest appends msg encoded as an uncompressed request frame of the
// given version and stream to dst, PREPARE_BATCH included.
func AppendRequest(dst []byte, version primitive.ProtocolVersion, stream int16, msg message.Message) ([]byte, error) {
	buf := bytes.NewBuffer(dst)
	if err := codec.EncodeFrame(frame.NewFrame(version, stream, msg), buf); err != nil {
		return dst, err
	}
	return buf.Bytes(), nil
}
