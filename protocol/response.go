package protocol

import (
	"bytes"
	"errors"

	"github.com/datastax/go-cassandra-native-protocol/frame"
	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"
)

// DecodeResponse decodes the body of an uncompressed response frame whose
// header is h, PREPARED_BATCH included: the client side of DecodeRequest.
// The message does not alias body.
func DecodeResponse(h Header, body []byte) (message.Message, error) {
	if h.Flags.Contains(primitive.HeaderFlagCompressed) && h.Version < primitive.ProtocolVersion5 {
		return nil, errors.New("protocol: compressed response without negotiated compression")
	}
	f, err := codec.ConvertFromRawFrame(&frame.RawFrame{
		Header: &frame.Header{IsResponse: true, Version: h.Version, Flags: h.Flags, StreamId: h.Stream,
			OpCode: h.OpCode, BodyLength: int32(len(body))},
		Body: body,
	})
	if err != nil {
		return nil, err
	}
	return f.Body.Message, nil
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
