package protocol

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/datastax/go-cassandra-native-protocol/crc"
	"github.com/datastax/go-cassandra-native-protocol/segment"
)

// v5 framing (native_protocol_v5.spec §2). All framing integers are
// little-endian; envelopes inside payloads keep their big-endian headers.
//
//	uncompressed: [3: len(17) | selfContained<<17] [3: CRC24] [payload] [4: CRC32]
//	lz4:          [5: clen(17) | ulen(17)<<17 | selfContained<<34] [3: CRC24]
//	              [clen bytes] [4: CRC32 of those bytes]
//
// With lz4, ulen == 0 means the clen payload bytes are stored raw.
//
// The library's segment codec reads from an io.Reader and guesses LZ4 output
// sizes, so this file decodes from byte slices with its CRC helpers instead.

// MaxSegmentPayload is the largest (uncompressed) payload of one segment.
const MaxSegmentPayload = segment.MaxPayloadLength // 2^17-1

const (
	segHeaderLen           = segment.UncompressedHeaderLength + segment.Crc24Length // 6
	segLZ4HeaderLen        = segment.CompressedHeaderLength + segment.Crc24Length   // 8
	segTrailerLen          = segment.Crc32Length
	segSelfContainedBit    = 1 << 17
	segLZ4SelfContainedBit = 1 << 34
	segLenMask             = MaxSegmentPayload

	// segEnvHeaderLen is the legacy 9-byte frame header that starts every
	// envelope; its body length is the big-endian uint32 at segEnvLenOffset.
	segEnvHeaderLen = 9
	segEnvLenOffset = 5

	segDefaultMaxEnvelope = 16 << 20
)

var (
	// ErrSegmentHeaderCRC means a segment header failed its CRC24 check.
	ErrSegmentHeaderCRC = errors.New("protocol: segment header CRC24 mismatch")
	// ErrSegmentPayloadCRC means a segment payload failed its CRC32 check.
	ErrSegmentPayloadCRC = errors.New("protocol: segment payload CRC32 mismatch")
	// ErrSegmentCompression means an LZ4 segment payload is malformed or does
	// not decompress to the length its header declares.
	ErrSegmentCompression = errors.New("protocol: malformed compressed segment payload")
	// ErrSegmentInterleaved means a self-contained segment arrived while a
	// multi-segment envelope was still incomplete.
	ErrSegmentInterleaved = errors.New("protocol: self-contained segment inside a multi-segment envelope")
	// ErrSegmentEnvelopeBoundary means envelopes do not exactly fill a
	// self-contained payload, or a multi-segment envelope's segments carry
	// more bytes than the envelope.
	ErrSegmentEnvelopeBoundary = errors.New("protocol: segment payload does not match envelope boundaries")
	// ErrSegmentEnvelopeTooLarge means an envelope exceeds the decoder's
	// maxEnvelope.
	ErrSegmentEnvelopeTooLarge = errors.New("protocol: envelope exceeds maximum size")
	// ErrSegmentBadEnvelope is returned by AppendSegments for an envelope
	// shorter than its header or whose length field disagrees with its size.
	ErrSegmentBadEnvelope = errors.New("protocol: malformed envelope")
)

// SegmentDecoder cuts a v5 byte stream into envelopes. It keeps the partial
// envelope of a multi-segment sequence between calls. One per connection; not
// safe for concurrent use.
type SegmentDecoder struct {
	lz4         bool
	maxEnvelope int

	// partial accumulates a multi-segment envelope; want is its total size
	// once its header has arrived (0 before).
	partial []byte
	want    int
	// skipOversized: an envelope over maxEnvelope is dropped, not an
	// error (SkipOversized). skipping: the multi-segment envelope being
	// received is such a one; partial then holds its header alone and
	// got counts its bytes received.
	skipOversized bool
	skipping      bool
	got           int
	// err is sticky: once the stream is broken every later call returns it.
	err error
}

// NewSegmentDecoder returns a decoder for segments compressed with LZ4 (lz4)
// or not. maxEnvelope bounds the size of one envelope, header included;
// maxEnvelope <= 0 means 16 MiB (Cassandra's native_transport_max_frame_size).
func NewSegmentDecoder(lz4 bool, maxEnvelope int) *SegmentDecoder {
	if maxEnvelope <= 0 {
		maxEnvelope = segDefaultMaxEnvelope
	}
	return &SegmentDecoder{lz4: lz4, maxEnvelope: maxEnvelope}
}

// SkipOversized makes an envelope over maxEnvelope whose header is
// otherwise sound (its length fits a signed 32-bit integer) no longer
// break the stream, as Cassandra does for v5 requests: its segments are
// checked and dropped as they arrive, never kept, and once the last of
// them is in, Decode returns in its place the envelope's header alone
// (Oversized reports such an envelope), so the caller can answer it. The
// bytes it is dropping are not Pending. Call it before the first Decode.
func (d *SegmentDecoder) SkipOversized() { d.skipOversized = true }

// Oversized reports whether env, returned by Decode, stands for an
// envelope that was over the limit and skipped: its header alone.
func Oversized(env []byte) bool {
	return len(env) == segEnvHeaderLen && binary.BigEndian.Uint32(env[segEnvLenOffset:]) != 0
}

// Decode consumes as many whole segments as buf holds and returns how many
// bytes it consumed and the complete envelopes (each a legacy frame: 9-byte
// header + body) those segments finished. Returned envelopes never alias buf
// nor each other. A partial segment at the end of buf is left unconsumed.
//
// err != nil means the byte stream is broken (the error wraps one of the
// ErrSegment* sentinels); consumed and envelopes then describe the whole
// segments before the broken one, and every later call returns the same error.
func (d *SegmentDecoder) Decode(buf []byte) (consumed int, envelopes [][]byte, err error) {
	if d.err != nil {
		return 0, nil, d.err
	}
	for {
		n, envs, err := d.decodeOne(buf[consumed:], envelopes)
		if err != nil {
			d.err = fmt.Errorf("segment at offset %d of buf: %w", consumed, err)
			d.partial, d.want = nil, 0
			return consumed, envelopes, d.err
		}
		if n == 0 {
			return consumed, envs, nil
		}
		consumed += n
		envelopes = envs
	}
}

// Pending reports the multi-segment envelope being reassembled: how many of
// its bytes have arrived, and its whole size once its header has (0
// before). The frontend counts them against its memory budgets.
func (d *SegmentDecoder) Pending() (have, want int) {
	if d.skipping {
		return 0, 0
	}
	return len(d.partial), d.want
}

// Mid reports whether an envelope has begun and not ended, kept or being
// skipped: the frontend's frame deadline runs meanwhile.
func (d *SegmentDecoder) Mid() bool { return d.want != 0 || len(d.partial) != 0 }

// decodeOne decodes the segment at the start of b, if b holds all of it, and
// appends the envelopes it completes to envs. It returns n == 0 when b holds
// only part of a segment.
func (d *SegmentDecoder) decodeOne(b []byte, envs [][]byte) (n int, _ [][]byte, _ error) {
	var (
		wireLen, rawLen int // payload bytes on the wire; uncompressed length (0: stored raw)
		selfContained   bool
		hdrLen          int
	)
	if d.lz4 {
		hdrLen = segLZ4HeaderLen
		if len(b) < hdrLen {
			return 0, envs, nil
		}
		h := uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 | uint64(b[4])<<32
		if err := segCheckHeaderCRC(h, segment.CompressedHeaderLength, b[5:8]); err != nil {
			return 0, envs, err
		}
		wireLen = int(h & segLenMask)
		rawLen = int(h >> 17 & segLenMask)
		selfContained = h&segLZ4SelfContainedBit != 0
	} else {
		hdrLen = segHeaderLen
		if len(b) < hdrLen {
			return 0, envs, nil
		}
		h := uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16
		if err := segCheckHeaderCRC(h, segment.UncompressedHeaderLength, b[3:6]); err != nil {
			return 0, envs, err
		}
		wireLen = int(h & segLenMask)
		selfContained = h&segSelfContainedBit != 0
	}
	total := hdrLen + wireLen + segTrailerLen
	if len(b) < total {
		return 0, envs, nil
	}
	wire := b[hdrLen : hdrLen+wireLen]
	if got, want := crc.ChecksumIEEE(wire), binary.LittleEndian.Uint32(b[hdrLen+wireLen:]); got != want {
		return 0, envs, fmt.Errorf("%w: computed %08x, received %08x", ErrSegmentPayloadCRC, got, want)
	}
	payloadLen := wireLen
	if rawLen != 0 {
		payloadLen = rawLen
	}

	if selfContained {
		if d.want != 0 || len(d.partial) != 0 {
			return 0, envs, ErrSegmentInterleaved
		}
		// One allocation holds every envelope of the payload.
		payload, err := segAppendPayload(make([]byte, 0, payloadLen), wire, rawLen)
		if err != nil {
			return 0, envs, err
		}
		envs, err = d.splitSelfContained(payload, envs)
		if err != nil {
			return 0, envs, err
		}
		return total, envs, nil
	}

	if d.skipping {
		// The payload's CRC is checked; it need not be decompressed.
		if d.got+payloadLen > d.want {
			return 0, envs, fmt.Errorf("%w: multi-segment envelope of %d bytes given %d",
				ErrSegmentEnvelopeBoundary, d.want, d.got+payloadLen)
		}
		d.got += payloadLen
		return total, d.skipped(envs), nil
	}
	if d.want != 0 && len(d.partial)+payloadLen > d.want {
		return 0, envs, fmt.Errorf("%w: multi-segment envelope of %d bytes given %d",
			ErrSegmentEnvelopeBoundary, d.want, len(d.partial)+payloadLen)
	}
	// NB: partial grows with the bytes received, not with the size the
	// envelope header claims, so a lying header costs the sender as much
	// memory as it costs us.
	partial, err := segAppendPayload(d.partial, wire, rawLen)
	if err != nil {
		return 0, envs, err
	}
	d.partial = partial
	if d.want == 0 && len(d.partial) >= segEnvHeaderLen {
		size, skip, err := d.envelopeSize(d.partial)
		if err != nil {
			return 0, envs, err
		}
		if len(d.partial) > size {
			return 0, envs, fmt.Errorf("%w: multi-segment envelope of %d bytes given %d",
				ErrSegmentEnvelopeBoundary, size, len(d.partial))
		}
		d.want = size
		if skip {
			d.skipping, d.got = true, len(d.partial)
			d.partial = bytes.Clone(d.partial[:segEnvHeaderLen])
		}
	}
	if d.skipping {
		return total, d.skipped(envs), nil
	}
	if d.want != 0 && len(d.partial) == d.want {
		envs = append(envs, d.partial)
		d.partial, d.want = nil, 0
	}
	return total, envs, nil
}

// skipped ends the envelope being skipped once all of it is in, giving
// its header in its place.
func (d *SegmentDecoder) skipped(envs [][]byte) [][]byte {
	if d.got == d.want {
		envs = append(envs, d.partial)
		d.partial, d.want, d.got, d.skipping = nil, 0, 0, false
	}
	return envs
}

func segCheckHeaderCRC(h uint64, n int, wire []byte) error {
	got := crc.ChecksumKoopman(h, n)
	want := uint32(wire[0]) | uint32(wire[1])<<8 | uint32(wire[2])<<16
	if got != want {
		return fmt.Errorf("%w: header %0*x, computed %06x, received %06x", ErrSegmentHeaderCRC, 2*n, h, got, want)
	}
	return nil
}

// segAppendPayload appends a segment payload, decompressing it when rawLen != 0.
func segAppendPayload(dst, wire []byte, rawLen int) ([]byte, error) {
	if rawLen == 0 {
		return append(dst, wire...), nil
	}
	out, err := decompressLZ4Block(dst, wire, rawLen)
	if err != nil {
		return out, fmt.Errorf("%w: %w", ErrSegmentCompression, err)
	}
	return out, nil
}

// envelopeSize returns the total size of the envelope whose header starts
// b, and whether it is over the limit and to be skipped.
func (d *SegmentDecoder) envelopeSize(b []byte) (size int, skip bool, _ error) {
	body := binary.BigEndian.Uint32(b[segEnvLenOffset:])
	n := segEnvHeaderLen + uint64(body)
	if n <= uint64(d.maxEnvelope) {
		return int(n), false, nil
	}
	// Cassandra reads the length as a signed int and fails the stream
	// when it is negative.
	if d.skipOversized && body <= math.MaxInt32 {
		return int(n), true, nil
	}
	return 0, false, fmt.Errorf("%w: %d bytes, limit %d", ErrSegmentEnvelopeTooLarge, n, d.maxEnvelope)
}

func (d *SegmentDecoder) splitSelfContained(p []byte, envs [][]byte) ([][]byte, error) {
	for len(p) > 0 {
		if len(p) < segEnvHeaderLen {
			return envs, fmt.Errorf("%w: %d trailing bytes", ErrSegmentEnvelopeBoundary, len(p))
		}
		size, skip, err := d.envelopeSize(p)
		if err != nil {
			return envs, err
		}
		if size > len(p) {
			return envs, fmt.Errorf("%w: envelope of %d bytes, %d left in payload", ErrSegmentEnvelopeBoundary, size, len(p))
		}
		if skip {
			envs = append(envs, p[:segEnvHeaderLen:segEnvHeaderLen]) // Oversized: its header alone
		} else {
			envs = append(envs, p[:size:size])
		}
		p = p[size:]
	}
	return envs, nil
}

// AppendSegments appends envelope(s) framed as segments to dst: envelopes
// that together fit in one payload go into one self-contained segment; an
// envelope longer than MaxSegmentPayload is split across non-self-contained
// segments. With lz4, payloads are compressed, but stored raw (uncompressed
// length field 0) when compression does not make them smaller, as Cassandra
// does. Each envelope must be a whole legacy frame (9-byte header + body).
// It does not keep the envelopes and is safe for concurrent use. On error it
// returns dst unchanged.
func AppendSegments(dst []byte, lz4 bool, envelopes ...[]byte) ([]byte, error) {
	orig := len(dst)
	for i, env := range envelopes {
		if len(env) < segEnvHeaderLen || uint64(len(env)-segEnvHeaderLen) != uint64(binary.BigEndian.Uint32(env[segEnvLenOffset:])) {
			return dst, fmt.Errorf("%w: envelope %d is %d bytes", ErrSegmentBadEnvelope, i, len(env))
		}
	}
	var (
		err     error
		group   [][]byte // envelopes of the pending self-contained segment
		size    int
		scratch []byte
	)
	flush := func() {
		if len(group) == 0 || err != nil {
			return
		}
		payload := group[0]
		if len(group) > 1 {
			scratch = scratch[:0]
			for _, env := range group {
				scratch = append(scratch, env...)
			}
			payload = scratch
		}
		dst, err = appendSegment(dst, payload, true, lz4)
		group, size = group[:0], 0
	}
	for _, env := range envelopes {
		if len(env) > MaxSegmentPayload {
			flush()
			for p := env; len(p) > 0 && err == nil; {
				n := min(len(p), MaxSegmentPayload)
				dst, err = appendSegment(dst, p[:n], false, lz4)
				p = p[n:]
			}
			continue
		}
		if size+len(env) > MaxSegmentPayload {
			flush()
		}
		group = append(group, env)
		size += len(env)
	}
	flush()
	if err != nil {
		return dst[:orig], err
	}
	return dst, nil
}

// appendSegment appends one segment carrying payload (at most
// MaxSegmentPayload bytes) to dst.
func appendSegment(dst, payload []byte, selfContained, lz4 bool) ([]byte, error) {
	if !lz4 {
		h := uint64(len(payload))
		if selfContained {
			h |= segSelfContainedBit
		}
		dst = appendSegmentHeader(dst, h, segment.UncompressedHeaderLength)
		start := len(dst)
		dst = append(dst, payload...)
		return binary.LittleEndian.AppendUint32(dst, crc.ChecksumIEEE(dst[start:])), nil
	}
	hdr := len(dst)
	dst = growBytes(dst, segLZ4HeaderLen)
	start := len(dst)
	wireLen, rawLen := len(payload), 0
	if len(payload) > 0 {
		var err error
		if dst, err = appendLZ4Block(dst, payload); err != nil {
			return dst[:hdr], err
		}
		if n := len(dst) - start; n < len(payload) {
			wireLen, rawLen = n, len(payload)
		} else {
			dst = append(dst[:start], payload...)
		}
	}
	h := uint64(wireLen) | uint64(rawLen)<<17
	if selfContained {
		h |= segLZ4SelfContainedBit
	}
	// Fill in the header reserved above, in place.
	appendSegmentHeader(dst[:hdr], h, segment.CompressedHeaderLength)
	return binary.LittleEndian.AppendUint32(dst, crc.ChecksumIEEE(dst[start:])), nil
}

// appendSegmentHeader appends the n little-endian bytes of h and their CRC24.
func appendSegmentHeader(dst []byte, h uint64, n int) []byte {
	c := crc.ChecksumKoopman(h, n)
	for i := 0; i < n; i++ {
		dst = append(dst, byte(h>>(8*i)))
	}
	return append(dst, byte(c), byte(c>>8), byte(c>>16))
}
