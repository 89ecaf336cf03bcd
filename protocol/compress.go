package protocol

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/golang/snappy"
	"github.com/pierrec/lz4/v4"
)

// Compression names as they appear in STARTUP's COMPRESSION option.
const (
	CompressionLZ4    = "lz4"
	CompressionSnappy = "snappy"
)

var (
	// ErrUnknownCompression is returned by NewCompressor for a name other than
	// "lz4" or "snappy".
	ErrUnknownCompression = errors.New("protocol: unknown compression algorithm")
	// ErrDecompressedTooLarge means a compressed body declares (or would
	// produce) more bytes than the caller allows.
	ErrDecompressedTooLarge = errors.New("protocol: decompressed size exceeds limit")
	// ErrCompressedCorrupt means a compressed body is malformed.
	ErrCompressedCorrupt = errors.New("protocol: malformed compressed data")
)

// Compressor compresses and decompresses v3/v4 frame bodies. The
// implementations returned by NewCompressor are stateless and safe for
// concurrent use; they never keep the slices they are given.
type Compressor interface {
	// Compress appends the compressed form of src to dst and returns it.
	Compress(dst, src []byte) ([]byte, error)
	// Decompress appends the decompressed form of src to dst; fails (never
	// panics) when the result would exceed max bytes or src is malformed.
	// src and the grown dst must not overlap.
	Decompress(dst, src []byte, max int) ([]byte, error)
}

// NewCompressor returns the body compressor for a STARTUP COMPRESSION value,
// compared case-insensitively.
func NewCompressor(name string) (Compressor, error) {
	switch strings.ToLower(name) {
	case CompressionLZ4:
		return lz4BodyCompressor{}, nil
	case CompressionSnappy:
		return snappyBodyCompressor{}, nil
	}
	return nil, fmt.Errorf("%w: %q", ErrUnknownCompression, name)
}

var (
	_ Compressor = lz4BodyCompressor{}
	_ Compressor = snappyBodyCompressor{}
)

// Upper bounds on the expansion ratio of each block format, used to reject a
// declared length that the compressed input cannot possibly produce before
// allocating for it. LZ4 emits at most 255 bytes per input byte (a match
// length extension byte); Snappy at most 64 bytes per 3-byte copy tag.
const (
	lz4MaxRatio        = 256
	snappyMaxRatio     = 32
	compressRatioSlack = 64
)

// lz4BodyCompressor is Cassandra's v3/v4 LZ4 body format: a 4-byte big-endian
// uncompressed length followed by one LZ4 block.
type lz4BodyCompressor struct{}

const lz4BodyLengthSize = 4

func (lz4BodyCompressor) Compress(dst, src []byte) ([]byte, error) {
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(src)))
	return appendLZ4Block(dst, src)
}

func (lz4BodyCompressor) Decompress(dst, src []byte, limit int) ([]byte, error) {
	if len(src) < lz4BodyLengthSize {
		return dst, fmt.Errorf("%w: lz4 body of %d bytes has no length prefix", ErrCompressedCorrupt, len(src))
	}
	n := binary.BigEndian.Uint32(src)
	if int64(n) > int64(limit) {
		return dst, fmt.Errorf("%w: lz4 body declares %d bytes, limit %d", ErrDecompressedTooLarge, n, limit)
	}
	if n == 0 {
		// Cassandra sends a lone zero token after a zero length; nothing to do.
		return dst, nil
	}
	return decompressLZ4Block(dst, src[lz4BodyLengthSize:], int(n))
}

// snappyBodyCompressor is the Snappy block format (not the framed stream
// format), whose varint preamble carries the uncompressed length.
type snappyBodyCompressor struct{}

func (snappyBodyCompressor) Compress(dst, src []byte) ([]byte, error) {
	bound := snappy.MaxEncodedLen(len(src))
	if bound < 0 {
		return dst, fmt.Errorf("protocol: snappy: %d bytes too large to compress", len(src))
	}
	start := len(dst)
	dst = growBytes(dst, bound)
	out := snappy.Encode(dst[start:start+bound], src)
	return dst[:start+len(out)], nil
}

func (snappyBodyCompressor) Decompress(dst, src []byte, limit int) ([]byte, error) {
	n, err := snappy.DecodedLen(src)
	if err != nil {
		return dst, fmt.Errorf("%w: snappy: %w", ErrCompressedCorrupt, err)
	}
	if n > limit {
		return dst, fmt.Errorf("%w: snappy body declares %d bytes, limit %d", ErrDecompressedTooLarge, n, limit)
	}
	if n > snappyMaxRatio*len(src)+compressRatioSlack {
		return dst, fmt.Errorf("%w: snappy body of %d bytes cannot expand to %d", ErrCompressedCorrupt, len(src), n)
	}
	start := len(dst)
	dst = growBytes(dst, n)
	// snappy.Decode decodes into its dst argument when it has room for
	// exactly n bytes, and checks the output fills it.
	if _, err := snappy.Decode(dst[start:start+n], src); err != nil {
		return dst[:start], fmt.Errorf("%w: snappy: %w", ErrCompressedCorrupt, err)
	}
	return dst, nil
}

// lz4Compressors pools LZ4 hash tables (tens of KiB each) across calls.
var lz4Compressors = sync.Pool{New: func() any { return new(lz4.Compressor) }}

// appendLZ4Block appends src compressed as one raw LZ4 block (no length
// prefix) to dst. Its output is deterministic.
func appendLZ4Block(dst, src []byte) ([]byte, error) {
	bound := lz4.CompressBlockBound(len(src))
	start := len(dst)
	dst = growBytes(dst, bound)
	c := lz4Compressors.Get().(*lz4.Compressor)
	n, err := c.CompressBlock(src, dst[start:start+bound])
	lz4Compressors.Put(c)
	if err != nil {
		return dst[:start], fmt.Errorf("protocol: lz4 compress: %w", err)
	}
	return dst[:start+n], nil
}

// decompressLZ4Block appends the decompressed form of the raw LZ4 block src to
// dst, which must be exactly n bytes long. It never allocates more than n
// bytes, and fails on an implausible n before allocating.
func decompressLZ4Block(dst, src []byte, n int) ([]byte, error) {
	if n < 0 || n > lz4MaxRatio*len(src)+compressRatioSlack {
		return dst, fmt.Errorf("%w: lz4 block of %d bytes cannot expand to %d", ErrCompressedCorrupt, len(src), n)
	}
	if n == 0 {
		// NB: never hand lz4 a nil dst: its amd64 decoder (v4.1.33) writes
		// through it when src is long enough. The only encodings of nothing
		// are no bytes and a lone zero token.
		if len(src) == 0 || len(src) == 1 && src[0] == 0 {
			return dst, nil
		}
		return dst, fmt.Errorf("%w: lz4 block of %d bytes, expected empty", ErrCompressedCorrupt, len(src))
	}
	start := len(dst)
	dst = growBytes(dst, n)
	got, err := lz4.UncompressBlock(src, dst[start:start+n])
	if err != nil {
		return dst[:start], fmt.Errorf("%w: lz4: %w", ErrCompressedCorrupt, err)
	}
	if got != n {
		return dst[:start], fmt.Errorf("%w: lz4 block decoded to %d bytes, expected %d", ErrCompressedCorrupt, got, n)
	}
	return dst, nil
}

// growBytes extends b by n bytes (contents of the new bytes unspecified),
// reallocating at most once and to no more than the needed size class.
func growBytes(b []byte, n int) []byte {
	l := len(b)
	if cap(b)-l >= n {
		return b[:l+n]
	}
	nb := make([]byte, l+n)
	copy(nb, b)
	return nb
}
