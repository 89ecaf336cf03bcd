package messaging

import (
	"encoding/binary"
	"fmt"
	"time"
	"unicode/utf8"
)

// A message is one envelope inside the v5 segment stream (the layout is
// drawn in doc.go): the 9-byte legacy frame header protocol.SegmentDecoder
// cuts envelopes by, then the message id and the time left to its
// deadline, then the payload.
const (
	wireVersion = 1

	envelopeHeaderLen = 9
	messageHeaderLen  = envelopeHeaderLen + 8 + 8 // + id + timeout

	offVersion = 0
	offFlags   = 1
	offVerb    = 2 // uint16
	offReserve = 4
	offLength  = 5 // uint32: bytes after the 9-byte header
	offID      = 9
	offTimeout = 17

	flagResponse = 1 << 0 // a response to the request with the same id
	flagFailure  = 1 << 1 // a response whose payload is a failure
	flagOneWay   = 1 << 2 // a request that expects no response
	// flagTraced: a request of a traced client request; its payload
	// starts with the tracing session's 16-byte id.
	flagTraced = 1 << 3
	knownFlags = flagResponse | flagFailure | flagOneWay | flagTraced

	// maxWireTimeout rejects a time-to-deadline no sender would set.
	maxWireTimeout = 24 * time.Hour
	// failureHeaderLen is a failure payload's code before its text.
	failureHeaderLen = 2
)

// message is a decoded envelope. Its payload aliases the envelope.
type message struct {
	id    uint64
	verb  Verb
	flags byte
	// timeout is the time that was left to the deadline when the sender
	// wrote the message. Relative, so the peers' clocks need not agree.
	timeout time.Duration
	payload []byte
	// trace is the tracing session's id when flags has flagTraced.
	trace [16]byte
}

func (m *message) isResponse() bool { return m.flags&flagResponse != 0 }
func (m *message) isOneWay() bool   { return m.flags&flagOneWay != 0 }

// appendMessage appends m encoded as an envelope to dst. The timeout field
// is written later, by setTimeout, when the message leaves its queue.
func appendMessage(dst []byte, id uint64, verb Verb, flags byte, payload []byte) []byte {
	dst = append(dst, wireVersion, flags, byte(verb>>8), byte(verb), 0)
	dst = binary.BigEndian.AppendUint32(dst, uint32(messageHeaderLen-envelopeHeaderLen+len(payload)))
	dst = binary.BigEndian.AppendUint64(dst, id)
	dst = binary.BigEndian.AppendUint64(dst, 0)
	return append(dst, payload...)
}

// appendFailure appends a failure response's payload: the code and text.
func appendFailure(dst []byte, code uint16, text string) []byte {
	dst = binary.BigEndian.AppendUint16(dst, code)
	return append(dst, text...)
}

// setTimeout writes the time left to the deadline into envelope env.
// REQUIRES: d > 0 and env was made by appendMessage.
func setTimeout(env []byte, d time.Duration) {
	binary.BigEndian.PutUint64(env[offTimeout:], uint64(min(d, maxWireTimeout)))
}

// decodeMessage decodes one envelope. It never panics, and the message's
// payload aliases env.
func decodeMessage(env []byte) (message, error) {
	if len(env) < messageHeaderLen {
		return message{}, fmt.Errorf("%w: %d-byte message, header is %d", ErrBadMessage, len(env), messageHeaderLen)
	}
	if v := env[offVersion]; v != wireVersion {
		return message{}, fmt.Errorf("%w: version %d, want %d", ErrBadMessage, v, wireVersion)
	}
	m := message{
		flags:   env[offFlags],
		verb:    Verb(binary.BigEndian.Uint16(env[offVerb:])),
		id:      binary.BigEndian.Uint64(env[offID:]),
		payload: env[messageHeaderLen:],
	}
	switch {
	case m.flags&^knownFlags != 0:
		return message{}, fmt.Errorf("%w: unknown flags %#02x", ErrBadMessage, m.flags)
	case m.flags&flagFailure != 0 && m.flags&flagResponse == 0,
		m.flags&flagOneWay != 0 && m.flags&flagResponse != 0:
		return message{}, fmt.Errorf("%w: contradictory flags %#02x", ErrBadMessage, m.flags)
	case env[offReserve] != 0:
		return message{}, fmt.Errorf("%w: reserved byte %#02x", ErrBadMessage, env[offReserve])
	case uint64(binary.BigEndian.Uint32(env[offLength:])) != uint64(len(env)-envelopeHeaderLen):
		return message{}, fmt.Errorf("%w: length field %d for %d bytes", ErrBadMessage,
			binary.BigEndian.Uint32(env[offLength:]), len(env)-envelopeHeaderLen)
	}
	t := binary.BigEndian.Uint64(env[offTimeout:])
	if t > uint64(maxWireTimeout) {
		return message{}, fmt.Errorf("%w: timeout of %d ns", ErrBadMessage, t)
	}
	if m.flags&flagTraced != 0 {
		if m.flags&flagResponse != 0 || len(m.payload) < len(m.trace) {
			return message{}, fmt.Errorf("%w: traced message of flags %#02x with a %d-byte payload", ErrBadMessage, m.flags, len(m.payload))
		}
		copy(m.trace[:], m.payload)
		m.payload = m.payload[len(m.trace):]
	}
	m.timeout = time.Duration(t)
	return m, nil
}

// decodeFailure splits a failure response's payload into code and text.
func decodeFailure(p []byte) (uint16, string, error) {
	if len(p) < failureHeaderLen {
		return 0, "", fmt.Errorf("%w: failure payload of %d bytes", ErrBadMessage, len(p))
	}
	text := p[failureHeaderLen:]
	if !utf8.Valid(text) {
		return 0, "", fmt.Errorf("%w: failure text is not UTF-8", ErrBadMessage)
	}
	return binary.BigEndian.Uint16(p), string(text), nil
}
