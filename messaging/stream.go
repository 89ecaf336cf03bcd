package messaging

import (
	"fmt"
	"net"

	"github.com/cqld/cqld/protocol"
)

// readBufSize is a connection's first read buffer. It doubles while a
// segment does not fit, so it never passes twice the largest segment.
const readBufSize = 64 << 10

// streamDecoder cuts a connection's bytes, after the handshake, into
// messages: v5 segments (protocol.SegmentDecoder) carrying one envelope per
// message. Not safe for concurrent use.
type streamDecoder struct {
	seg  *protocol.SegmentDecoder
	msgs []message
}

// newStreamDecoder returns a decoder of segments compressed with LZ4 or
// not, that fails on a message larger than maxMessage.
func newStreamDecoder(lz4 bool, maxMessage int) *streamDecoder {
	return &streamDecoder{seg: protocol.NewSegmentDecoder(lz4, maxMessage)}
}

// decode consumes the whole segments at the start of buf and returns how
// many bytes it consumed and the messages they completed. The messages are
// valid until the next call; their payloads never alias buf. err != nil
// means the stream is broken: the connection must close.
func (d *streamDecoder) decode(buf []byte) (int, []message, error) {
	n, envs, err := d.seg.Decode(buf)
	msgs := d.msgs[:0]
	for _, env := range envs {
		m, err := decodeMessage(env)
		if err != nil {
			return n, msgs, err
		}
		msgs = append(msgs, m)
	}
	clear(msgs[len(msgs):cap(msgs)])
	d.msgs = msgs
	if err != nil {
		return n, msgs, fmt.Errorf("%w: %w", ErrBadMessage, err)
	}
	return n, msgs, nil
}

// readLoop reads messages from nc and hands each to handle until the
// stream ends, breaks, or handle fails; it returns why.
func readLoop(nc net.Conn, d *streamDecoder, handle func(message) error) error {
	buf := make([]byte, 0, readBufSize)
	for {
		if len(buf) == cap(buf) {
			buf = append(make([]byte, 0, 2*cap(buf)), buf...)
		}
		n, rerr := nc.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		consumed, msgs, err := d.decode(buf)
		for _, m := range msgs {
			if herr := handle(m); herr != nil {
				return herr
			}
		}
		if err != nil {
			return err
		}
		buf = buf[:copy(buf, buf[consumed:])]
		if rerr != nil {
			return rerr
		}
	}
}

// maxKeptWriteBuf bounds the framing buffer a connection keeps between
// writes.
const maxKeptWriteBuf = 2 * maxBatchBytes

// wire writes batches of messages to a connection as v5 segments.
type wire struct {
	nc       net.Conn
	lz4      bool
	counters *peerCounters
	envs     [][]byte
	buf      []byte
}

func (w *wire) write(batch []*outMsg) error {
	envs := w.envs[:0]
	for _, m := range batch {
		envs = append(envs, m.env)
	}
	buf, err := protocol.AppendSegments(w.buf[:0], w.lz4, envs...)
	clear(envs)
	w.envs = envs[:0]
	if err != nil {
		return fmt.Errorf("messaging: framing %d messages: %w", len(batch), err)
	}
	if cap(buf) <= maxKeptWriteBuf {
		w.buf = buf
	}
	if _, err := w.nc.Write(buf); err != nil {
		return err
	}
	for _, m := range batch {
		w.counters.count(dirSent, m.verb, len(m.env))
	}
	return nil
}
