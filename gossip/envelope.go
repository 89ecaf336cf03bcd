package gossip

import (
	"errors"
	"fmt"
)

// Envelope kinds: the first byte of every VerbGossip payload.
const (
	// kindPacket carries one memberlist packet, sent one-way.
	kindPacket byte = 1
	// kindStream carries the bytes a memberlist stream's dialer wrote: a
	// request, whose response is what the acceptor wrote, or a one-way
	// message when the dialer closed without reading.
	kindStream byte = 2
)

// memberlistTypes marks the first bytes a memberlist packet or stream can
// start with: its message types (pingMsg … errMsg) and hasLabelMsg. Bytes
// starting otherwise are not memberlist's and are dropped before it sees
// them.
var memberlistTypes = func() (t [256]bool) {
	for i := 0; i <= 13; i++ {
		t[i] = true
	}
	t[244] = true
	return t
}()

var errMalformed = errors.New("gossip: malformed message")

// appendEnvelope appends the envelope of kind around body to dst.
func appendEnvelope(dst []byte, kind byte, body []byte) []byte {
	dst = append(dst, kind)
	return append(dst, body...)
}

// decodeEnvelope splits a VerbGossip payload into its kind and body,
// which aliases payload. A body longer than limit, of an unknown kind or
// not starting as a memberlist message is an error.
func decodeEnvelope(payload []byte, limit int) (kind byte, body []byte, err error) {
	if len(payload) < 2 {
		return 0, nil, fmt.Errorf("%w: %d bytes", errMalformed, len(payload))
	}
	kind, body = payload[0], payload[1:]
	if kind != kindPacket && kind != kindStream {
		return 0, nil, fmt.Errorf("%w: unknown kind %d", errMalformed, kind)
	}
	if len(body) > limit {
		return 0, nil, fmt.Errorf("%w: %d bytes, over the limit of %d", errMalformed, len(body), limit)
	}
	if !memberlistTypes[body[0]] {
		return 0, nil, fmt.Errorf("%w: unknown memberlist message type %d", errMalformed, body[0])
	}
	return kind, body, nil
}
