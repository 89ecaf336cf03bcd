package protocol

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"testing"

	dslz4 "github.com/datastax/go-cassandra-native-protocol/compression/lz4"
	"github.com/datastax/go-cassandra-native-protocol/crc"
	"github.com/datastax/go-cassandra-native-protocol/segment"
)

// testEnvelope returns a v5 request envelope (9-byte header + body).
func testEnvelope(stream uint16, body []byte) []byte {
	env := make([]byte, segEnvHeaderLen, segEnvHeaderLen+len(body))
	env[0] = 0x05
	binary.BigEndian.PutUint16(env[2:], stream)
	env[4] = 0x07 // QUERY
	binary.BigEndian.PutUint32(env[5:], uint32(len(body)))
	return append(env, body...)
}

// randomBody is incompressible.
func randomBody(seed uint64, n int) []byte {
	r := rand.New(rand.NewPCG(seed, 1))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// textBody compresses with LZ4, but by less than 8x, so the library's LZ4
// decompressor (which tries 2x..8x output buffers) copes.
func textBody(seed uint64, n int) []byte {
	words := []string{"select", "from", "where", "keyspace", "table", "insert", "into", "values",
		"update", "set", "partition", "clustering", "token", "limit", "allow", "filtering"}
	r := rand.New(rand.NewPCG(seed, 2))
	b := make([]byte, 0, n+16)
	for len(b) < n {
		b = append(b, words[r.IntN(len(words))]...)
		b = append(b, ' ', byte('a'+r.IntN(26)), byte('0'+r.IntN(10)), ' ')
	}
	return b[:n]
}

type segInfo struct {
	selfContained bool
	wireLen       int // payload bytes on the wire
	rawLen        int // lz4 uncompressed length field (0: stored raw)
}

// walkSegments parses segment headers without decoding payloads.
func walkSegments(t *testing.T, b []byte, lz4 bool) []segInfo {
	t.Helper()
	var out []segInfo
	for len(b) > 0 {
		var s segInfo
		var hdr int
		if lz4 {
			h := uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 | uint64(b[4])<<32
			s = segInfo{h&segLZ4SelfContainedBit != 0, int(h & segLenMask), int(h >> 17 & segLenMask)}
			hdr = segLZ4HeaderLen
		} else {
			h := uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16
			s = segInfo{h&segSelfContainedBit != 0, int(h & segLenMask), 0}
			hdr = segHeaderLen
		}
		out = append(out, s)
		n := hdr + s.wireLen + segTrailerLen
		if n > len(b) {
			t.Fatalf("segment of %d bytes overruns %d", n, len(b))
		}
		b = b[n:]
	}
	return out
}

func decodeAll(t *testing.T, d *SegmentDecoder, b []byte) [][]byte {
	t.Helper()
	n, envs, err := d.Decode(b)
	if err != nil {
		t.Fatalf("Decode: %v", err)
	}
	if n != len(b) {
		t.Fatalf("Decode consumed %d of %d bytes", n, len(b))
	}
	return envs
}

func equalEnvelopes(t *testing.T, got, want [][]byte) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d envelopes, want %d", len(got), len(want))
	}
	for i := range want {
		if !bytes.Equal(got[i], want[i]) {
			t.Fatalf("envelope %d: got %d bytes, want %d bytes (contents differ)", i, len(got[i]), len(want[i]))
		}
	}
}

func repeat(n int, f func(i int) []byte) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		out[i] = f(i)
	}
	return out
}

type segCase struct {
	name      string
	envelopes [][]byte
	// segments is the expected self-contained flag of each segment.
	segments []bool
}

func segCases() []segCase {
	const kib = 1024
	return []segCase{
		{"no envelopes", nil, nil},
		{"empty body", [][]byte{testEnvelope(1, nil)}, []bool{true}},
		{"one envelope", [][]byte{testEnvelope(1, textBody(1, 500))}, []bool{true}},
		{"many small in one segment",
			repeat(100, func(i int) []byte { return testEnvelope(uint16(i), textBody(uint64(i), 1000)) }),
			[]bool{true}},
		{"many small over several segments",
			repeat(300, func(i int) []byte { return testEnvelope(uint16(i), textBody(uint64(i), 1000)) }),
			[]bool{true, true, true}},
		{"exactly one full payload",
			[][]byte{testEnvelope(1, textBody(1, MaxSegmentPayload-segEnvHeaderLen))}, []bool{true}},
		{"one byte over a payload",
			[][]byte{testEnvelope(1, textBody(1, MaxSegmentPayload-segEnvHeaderLen+1))}, []bool{false, false}},
		{"300 KiB text split", [][]byte{testEnvelope(7, textBody(3, 300*kib))}, []bool{false, false, false}},
		{"300 KiB random split", [][]byte{testEnvelope(7, randomBody(3, 300*kib))}, []bool{false, false, false}},
		{"small, large, small",
			[][]byte{
				testEnvelope(1, textBody(1, 100)),
				testEnvelope(2, randomBody(2, 200*kib)),
				testEnvelope(3, textBody(3, 100)),
				testEnvelope(4, nil),
			},
			[]bool{true, false, false, true}},
	}
}

func TestSegmentRoundTrip(t *testing.T) {
	for _, lz4 := range []bool{false, true} {
		for _, tc := range segCases() {
			t.Run(fmt.Sprintf("lz4=%v/%s", lz4, tc.name), func(t *testing.T) {
				prefix := []byte("keep")
				enc, err := AppendSegments(append([]byte(nil), prefix...), lz4, tc.envelopes...)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.HasPrefix(enc, prefix) {
					t.Fatal("AppendSegments clobbered dst")
				}
				enc = enc[len(prefix):]
				var flags []bool
				for _, s := range walkSegments(t, enc, lz4) {
					flags = append(flags, s.selfContained)
					if s.wireLen > MaxSegmentPayload || s.rawLen > MaxSegmentPayload {
						t.Errorf("segment %+v exceeds max payload", s)
					}
				}
				if fmt.Sprint(flags) != fmt.Sprint(tc.segments) {
					t.Fatalf("segments self-contained = %v, want %v", flags, tc.segments)
				}
				d := NewSegmentDecoder(lz4, 1<<20)
				equalEnvelopes(t, decodeAll(t, d, enc), tc.envelopes)
			})
		}
	}
}

func TestSegmentLZ4StoredRaw(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  []byte
		raw  bool
	}{
		{"random", testEnvelope(1, randomBody(1, 5000)), true},
		{"tiny", testEnvelope(1, []byte("x")), true},
		{"text", testEnvelope(1, textBody(1, 5000)), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			enc, err := AppendSegments(nil, true, tc.env)
			if err != nil {
				t.Fatal(err)
			}
			segs := walkSegments(t, enc, true)
			if len(segs) != 1 {
				t.Fatalf("%d segments", len(segs))
			}
			s := segs[0]
			if tc.raw {
				if s.rawLen != 0 || s.wireLen != len(tc.env) || !bytes.Equal(enc[segLZ4HeaderLen:len(enc)-segTrailerLen], tc.env) {
					t.Fatalf("want raw payload of %d bytes, got %+v", len(tc.env), s)
				}
			} else if s.rawLen != len(tc.env) || s.wireLen >= len(tc.env) {
				t.Fatalf("want compressed payload, got %+v", s)
			}
			equalEnvelopes(t, decodeAll(t, NewSegmentDecoder(true, 1<<20), enc), [][]byte{tc.env})
		})
	}
}

func TestSegmentEmptyPayload(t *testing.T) {
	for _, lz4 := range []bool{false, true} {
		enc, err := appendSegment(nil, nil, true, lz4)
		if err != nil {
			t.Fatal(err)
		}
		want := segHeaderLen + segTrailerLen
		if lz4 {
			want = segLZ4HeaderLen + segTrailerLen
		}
		if len(enc) != want {
			t.Fatalf("lz4=%v: empty segment is %d bytes, want %d", lz4, len(enc), want)
		}
		n, envs, err := NewSegmentDecoder(lz4, 100).Decode(enc)
		if err != nil || n != len(enc) || len(envs) != 0 {
			t.Fatalf("lz4=%v: Decode = %d, %d envelopes, %v", lz4, n, len(envs), err)
		}
	}
}

// libCodec returns the go-cassandra-native-protocol segment codec.
func libCodec(lz4 bool) segment.Codec {
	if lz4 {
		return segment.NewCodecWithCompression(dslz4.Compressor{})
	}
	return segment.NewCodec()
}

// libSegments frames envelopes with the library codec the way AppendSegments
// does (same grouping and splitting).
func libSegments(t *testing.T, lz4 bool, envelopes [][]byte) []byte {
	t.Helper()
	var out bytes.Buffer
	codec := libCodec(lz4)
	emit := func(payload []byte, selfContained bool) {
		s := &segment.Segment{
			Header:  &segment.Header{IsSelfContained: selfContained},
			Payload: &segment.Payload{UncompressedData: payload},
		}
		if err := codec.EncodeSegment(s, &out); err != nil {
			t.Fatal(err)
		}
	}
	var group []byte
	for _, env := range envelopes {
		if len(env) > MaxSegmentPayload {
			if len(group) > 0 {
				emit(group, true)
				group = nil
			}
			for p := env; len(p) > 0; {
				n := min(len(p), MaxSegmentPayload)
				emit(p[:n], false)
				p = p[n:]
			}
			continue
		}
		if len(group)+len(env) > MaxSegmentPayload {
			emit(group, true)
			group = nil
		}
		group = append(group, env...)
	}
	if len(group) > 0 {
		emit(group, true)
	}
	return out.Bytes()
}

func TestSegmentCrossCheckLibrary(t *testing.T) {
	for _, lz4 := range []bool{false, true} {
		for _, tc := range segCases() {
			t.Run(fmt.Sprintf("lz4=%v/%s", lz4, tc.name), func(t *testing.T) {
				mine, err := AppendSegments(nil, lz4, tc.envelopes...)
				if err != nil {
					t.Fatal(err)
				}
				theirs := libSegments(t, lz4, tc.envelopes)
				// Same compressor, and neither case hits the one place the
				// codecs differ (compressed size == uncompressed size).
				if !bytes.Equal(mine, theirs) {
					t.Fatalf("encodings differ: mine %d bytes, library %d bytes", len(mine), len(theirs))
				}

				// Ours -> library decoder.
				var payloads []byte
				var flags []bool
				codec := libCodec(lz4)
				for r := bytes.NewReader(mine); r.Len() > 0; {
					s, err := codec.DecodeSegment(r)
					if err != nil {
						t.Fatalf("library decode: %v", err)
					}
					payloads = append(payloads, s.Payload.UncompressedData...)
					flags = append(flags, s.Header.IsSelfContained)
				}
				if want := bytes.Join(tc.envelopes, nil); !bytes.Equal(payloads, want) {
					t.Fatalf("library decoded %d payload bytes, want %d", len(payloads), len(want))
				}
				if fmt.Sprint(flags) != fmt.Sprint(tc.segments) {
					t.Fatalf("library saw self-contained = %v, want %v", flags, tc.segments)
				}

				// Library -> ours.
				equalEnvelopes(t, decodeAll(t, NewSegmentDecoder(lz4, 1<<20), theirs), tc.envelopes)
			})
		}
	}
}

// TestSegmentDecodeCompressedNotSmaller decodes an LZ4 segment whose
// compressed form is not smaller than the payload (other encoders, like the
// library's and gocql's, may send that; we would store it raw).
func TestSegmentDecodeCompressedNotSmaller(t *testing.T) {
	env := testEnvelope(1, randomBody(9, 64))
	payload, err := appendLZ4Block(nil, env)
	if err != nil {
		t.Fatal(err)
	}
	if len(payload) < len(env) {
		t.Fatalf("random data compressed from %d to %d", len(env), len(payload))
	}
	h := uint64(len(payload)) | uint64(len(env))<<17 | segLZ4SelfContainedBit
	enc := appendSegmentHeader(nil, h, segment.CompressedHeaderLength)
	enc = append(enc, payload...)
	enc = binary.LittleEndian.AppendUint32(enc, crcIEEE(payload))
	equalEnvelopes(t, decodeAll(t, NewSegmentDecoder(true, 1<<20), enc), [][]byte{env})
}

// feed decodes enc in chunks of the sizes next returns, the way an event loop
// sees a socket, and returns all envelopes.
func feed(t *testing.T, d *SegmentDecoder, enc []byte, next func() int) [][]byte {
	t.Helper()
	var pending []byte
	var out [][]byte
	for off := 0; off < len(enc); {
		n := min(next(), len(enc)-off)
		pending = append(pending, enc[off:off+n]...)
		off += n
		c, envs, err := d.Decode(pending)
		if err != nil {
			t.Fatalf("Decode at offset %d: %v", off, err)
		}
		if c > len(pending) {
			t.Fatalf("consumed %d of %d", c, len(pending))
		}
		// Scribble over what was consumed: envelopes must not alias it.
		for i := range pending[:c] {
			pending[i] = 0xEE
		}
		pending = append(pending[:0], pending[c:]...)
		out = append(out, envs...)
	}
	if len(pending) != 0 {
		t.Fatalf("%d bytes left unconsumed", len(pending))
	}
	return out
}

func TestSegmentDecodeIncremental(t *testing.T) {
	envs := [][]byte{
		testEnvelope(1, textBody(1, 100)),
		testEnvelope(2, textBody(2, 300*1024)),
		testEnvelope(3, nil),
		testEnvelope(4, randomBody(4, 1000)),
	}
	for _, lz4 := range []bool{false, true} {
		enc, err := AppendSegments(nil, lz4, envs...)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(fmt.Sprintf("lz4=%v/byte at a time", lz4), func(t *testing.T) {
			if testing.Short() {
				t.Skip("quadratic in the segment size")
			}
			got := feed(t, NewSegmentDecoder(lz4, 1<<20), enc, func() int { return 1 })
			equalEnvelopes(t, got, envs)
		})
		t.Run(fmt.Sprintf("lz4=%v/random chunks", lz4), func(t *testing.T) {
			r := rand.New(rand.NewPCG(1, 2))
			got := feed(t, NewSegmentDecoder(lz4, 1<<20), enc, func() int { return 1 + r.IntN(20000) })
			equalEnvelopes(t, got, envs)
		})
	}
}

func TestSegmentEnvelopesDoNotAlias(t *testing.T) {
	for _, lz4 := range []bool{false, true} {
		envs := [][]byte{testEnvelope(1, []byte("first")), testEnvelope(2, []byte("second"))}
		enc, err := AppendSegments(nil, lz4, envs...)
		if err != nil {
			t.Fatal(err)
		}
		_, got, err := NewSegmentDecoder(lz4, 100).Decode(enc)
		if err != nil {
			t.Fatal(err)
		}
		for i := range enc {
			enc[i] = 0
		}
		_ = append(got[0], "XXXXXXXXXXXXXXXX"...)
		equalEnvelopes(t, got, envs)
	}
}

func TestSegmentTruncated(t *testing.T) {
	envs := [][]byte{testEnvelope(1, textBody(1, 1000)), testEnvelope(2, randomBody(2, 200*1024))}
	for _, lz4 := range []bool{false, true} {
		enc, err := AppendSegments(nil, lz4, envs...)
		if err != nil {
			t.Fatal(err)
		}
		// Segment boundaries.
		var ends []int
		end := 0
		hdr := segHeaderLen
		if lz4 {
			hdr = segLZ4HeaderLen
		}
		for _, s := range walkSegments(t, enc, lz4) {
			end += hdr + s.wireLen + segTrailerLen
			ends = append(ends, end)
		}
		for _, cut := range []int{0, 1, hdr - 1, hdr, hdr + 1, ends[0] - 1, ends[0], ends[0] + 3, ends[1] - 1, ends[1], ends[2] - 1} {
			d := NewSegmentDecoder(lz4, 1<<20)
			n, got, err := d.Decode(enc[:cut])
			if err != nil {
				t.Fatalf("lz4=%v cut=%d: %v", lz4, cut, err)
			}
			want := 0
			for _, e := range ends {
				if e <= cut {
					want = e
				}
			}
			if n != want {
				t.Fatalf("lz4=%v cut=%d: consumed %d, want %d", lz4, cut, n, want)
			}
			wantEnvs := 0
			if cut >= ends[0] {
				wantEnvs = 1
			}
			if len(got) != wantEnvs {
				t.Fatalf("lz4=%v cut=%d: %d envelopes, want %d", lz4, cut, len(got), wantEnvs)
			}
		}
	}
}

func TestSegmentCorruption(t *testing.T) {
	env := testEnvelope(1, textBody(1, 1000))
	for _, lz4 := range []bool{false, true} {
		enc, err := AppendSegments(nil, lz4, env)
		if err != nil {
			t.Fatal(err)
		}
		hdr := segHeaderLen
		if lz4 {
			hdr = segLZ4HeaderLen
		}
		for _, tc := range []struct {
			name string
			at   int
			only int // feed only this many bytes (0: all)
			want error
		}{
			{"header length bit", 0, 0, ErrSegmentHeaderCRC},
			{"header last byte", hdr - 4, 0, ErrSegmentHeaderCRC},
			{"header crc", hdr - 1, 0, ErrSegmentHeaderCRC},
			{"header crc before payload arrives", hdr - 2, hdr, ErrSegmentHeaderCRC},
			{"payload", hdr + 10, 0, ErrSegmentPayloadCRC},
			{"payload crc", len(enc) - 1, 0, ErrSegmentPayloadCRC},
		} {
			t.Run(fmt.Sprintf("lz4=%v/%s", lz4, tc.name), func(t *testing.T) {
				bad := bytes.Clone(enc)
				bad[tc.at] ^= 0x01
				if tc.only > 0 {
					bad = bad[:tc.only]
				}
				// A good segment first: it is returned with the error.
				in := append(bytes.Clone(enc), bad...)
				d := NewSegmentDecoder(lz4, 1<<20)
				n, envs, err := d.Decode(in)
				if !errors.Is(err, tc.want) {
					t.Fatalf("err = %v, want %v", err, tc.want)
				}
				if n != len(enc) || len(envs) != 1 {
					t.Fatalf("consumed %d, %d envelopes; want %d, 1", n, len(envs), len(enc))
				}
				// Sticky.
				if _, _, err2 := d.Decode(enc); !errors.Is(err2, tc.want) {
					t.Fatalf("second Decode err = %v, want %v", err2, tc.want)
				}
			})
		}
	}
}

// craftSegment builds one segment around an arbitrary payload (valid CRCs).
func craftSegment(t *testing.T, payload []byte, selfContained, lz4 bool) []byte {
	t.Helper()
	b, err := appendSegment(nil, payload, selfContained, lz4)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestSegmentMalformedStreams(t *testing.T) {
	big := testEnvelope(1, textBody(1, 200*1024))
	small := testEnvelope(2, []byte("hello"))
	cases := []struct {
		name  string
		build func(lz4 bool) []byte
		want  error
	}{
		{"self-contained inside multi-segment envelope", func(lz4 bool) []byte {
			b := craftSegment(t, big[:MaxSegmentPayload], false, lz4)
			return append(b, craftSegment(t, small, true, lz4)...)
		}, ErrSegmentInterleaved},
		{"trailing bytes after envelopes", func(lz4 bool) []byte {
			return craftSegment(t, append(bytes.Clone(small), 1, 2, 3), true, lz4)
		}, ErrSegmentEnvelopeBoundary},
		{"envelope overruns payload", func(lz4 bool) []byte {
			return craftSegment(t, small[:len(small)-1], true, lz4)
		}, ErrSegmentEnvelopeBoundary},
		{"multi-segment envelope overrun", func(lz4 bool) []byte {
			b := craftSegment(t, big[:MaxSegmentPayload], false, lz4)
			return append(b, craftSegment(t, append(bytes.Clone(big[MaxSegmentPayload:]), 0), false, lz4)...)
		}, ErrSegmentEnvelopeBoundary},
		{"multi-segment envelope overrun in first segment", func(lz4 bool) []byte {
			return craftSegment(t, append(bytes.Clone(small), 0), false, lz4)
		}, ErrSegmentEnvelopeBoundary},
	}
	for _, lz4 := range []bool{false, true} {
		for _, tc := range cases {
			t.Run(fmt.Sprintf("lz4=%v/%s", lz4, tc.name), func(t *testing.T) {
				_, _, err := NewSegmentDecoder(lz4, 1<<20).Decode(tc.build(lz4))
				if !errors.Is(err, tc.want) {
					t.Fatalf("err = %v, want %v", err, tc.want)
				}
			})
		}
	}
}

func TestSegmentMalformedLZ4(t *testing.T) {
	env := testEnvelope(1, textBody(1, 2000))
	block, err := appendLZ4Block(nil, env)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		payload []byte
		rawLen  int
	}{
		{"garbage", bytes.Repeat([]byte{0xFF}, 100), 1000},
		{"declared longer", block, len(env) + 1},
		{"declared shorter", block, len(env) - 1},
		{"empty block, nonzero length", nil, 10},
		{"truncated block", block[:len(block)/2], len(env)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := uint64(len(tc.payload)) | uint64(tc.rawLen)<<17 | segLZ4SelfContainedBit
			enc := appendSegmentHeader(nil, h, segment.CompressedHeaderLength)
			enc = append(enc, tc.payload...)
			enc = binary.LittleEndian.AppendUint32(enc, crcIEEE(tc.payload))
			_, _, err := NewSegmentDecoder(true, 1<<20).Decode(enc)
			if !errors.Is(err, ErrSegmentCompression) {
				t.Fatalf("err = %v, want ErrSegmentCompression", err)
			}
		})
	}
}

func TestSegmentEnvelopeTooLarge(t *testing.T) {
	const limit = 150 * 1024
	for _, lz4 := range []bool{false, true} {
		t.Run(fmt.Sprintf("lz4=%v", lz4), func(t *testing.T) {
			atMax := testEnvelope(1, textBody(1, limit-segEnvHeaderLen))
			enc, err := AppendSegments(nil, lz4, atMax)
			if err != nil {
				t.Fatal(err)
			}
			equalEnvelopes(t, decodeAll(t, NewSegmentDecoder(lz4, limit), enc), [][]byte{atMax})

			// Self-contained.
			small := testEnvelope(1, textBody(1, 1001-segEnvHeaderLen))
			enc, _ = AppendSegments(nil, lz4, small)
			if _, _, err := NewSegmentDecoder(lz4, 1000).Decode(enc); !errors.Is(err, ErrSegmentEnvelopeTooLarge) {
				t.Fatalf("self-contained: err = %v", err)
			}

			// Multi-segment: detected from the first segment alone.
			over := testEnvelope(1, textBody(1, limit-segEnvHeaderLen+1))
			enc, _ = AppendSegments(nil, lz4, over)
			segs := walkSegments(t, enc, lz4)
			hdr := segHeaderLen
			if lz4 {
				hdr = segLZ4HeaderLen
			}
			firstLen := hdr + segs[0].wireLen + segTrailerLen
			if _, _, err := NewSegmentDecoder(lz4, limit).Decode(enc[:firstLen]); !errors.Is(err, ErrSegmentEnvelopeTooLarge) {
				t.Fatalf("multi-segment: err = %v", err)
			}
		})
	}
}

func TestNewSegmentDecoderDefaultLimit(t *testing.T) {
	for _, limit := range []int{0, -1} {
		if d := NewSegmentDecoder(false, limit); d.maxEnvelope != 16<<20 {
			t.Fatalf("NewSegmentDecoder(false, %d) limit = %d", limit, d.maxEnvelope)
		}
	}
}

func TestAppendSegmentsBadEnvelope(t *testing.T) {
	good := testEnvelope(1, []byte("ok"))
	for _, bad := range [][]byte{
		nil,
		good[:8],
		good[:len(good)-1],
		append(bytes.Clone(good), 0),
	} {
		dst := []byte("prefix")
		out, err := AppendSegments(dst, false, good, bad)
		if !errors.Is(err, ErrSegmentBadEnvelope) {
			t.Fatalf("len %d: err = %v", len(bad), err)
		}
		if string(out) != "prefix" {
			t.Fatalf("dst changed on error: %q", out)
		}
	}
}

// TestSegmentCRCMatchesSpec checks the CRC helpers against the algorithm as
// DRIVERS.md §5 describes it (and gocql v2 implements it).
func TestSegmentCRCMatchesSpec(t *testing.T) {
	crc24 := func(b []byte) uint32 {
		c := uint32(0x875060)
		for _, x := range b {
			c ^= uint32(x) << 16
			for range 8 {
				c <<= 1
				if c&0x1000000 != 0 {
					c ^= 0x1974F0B
				}
			}
		}
		return c
	}
	r := rand.New(rand.NewPCG(5, 5))
	for range 1000 {
		n := 3 + 2*r.IntN(2)
		b := make([]byte, n)
		var h uint64
		for i := range b {
			b[i] = byte(r.Uint32())
			h |= uint64(b[i]) << (8 * i)
		}
		enc := appendSegmentHeader(nil, h, n)
		got := uint32(enc[n]) | uint32(enc[n+1])<<8 | uint32(enc[n+2])<<16
		if want := crc24(b); got != want {
			t.Fatalf("crc24(%x) = %06x, want %06x", b, got, want)
		}
	}
	// CRC32 primed with FA 2D 55 CA.
	payload := []byte("hello, segment")
	if got, want := crcIEEE(payload), crc32IEEE(append([]byte{0xFA, 0x2D, 0x55, 0xCA}, payload...)); got != want {
		t.Fatalf("crc32 = %08x, want %08x", got, want)
	}
}

func crcIEEE(b []byte) uint32 { return crc.ChecksumIEEE(b) }

func crc32IEEE(b []byte) uint32 { return crc32.ChecksumIEEE(b) }

// An envelope over the limit is skipped, with SkipOversized: its segments
// are dropped as they come, nothing of it is pending, and its header
// stands in its place among the envelopes around it.
func TestSegmentSkipOversized(t *testing.T) {
	const max = 1000
	for _, lz4 := range []bool{false, true} {
		small1, small2 := testEnvelope(1, []byte("before")), testEnvelope(3, []byte("after"))
		big := testEnvelope(2, randomBody(7, 3*MaxSegmentPayload)) // several segments
		mid := testEnvelope(4, randomBody(8, 2*max))               // one self-contained segment
		var wire []byte
		for _, env := range [][]byte{small1, big, mid, small2} {
			b, err := AppendSegments(nil, lz4, env)
			if err != nil {
				t.Fatal(err)
			}
			wire = append(wire, b...)
		}
		d := NewSegmentDecoder(lz4, max)
		d.SkipOversized()
		// Fed a segment's worth at a time, the decoder keeps nothing of big.
		var envs [][]byte
		for off := 0; off < len(wire); {
			end := min(off+MaxSegmentPayload/2, len(wire))
			n, got, err := d.Decode(wire[off:end])
			if err != nil {
				t.Fatalf("lz4=%v: %v", lz4, err)
			}
			if n == 0 {
				end = min(off+2*MaxSegmentPayload, len(wire))
				n, got, err = d.Decode(wire[off:end])
				if err != nil || n == 0 {
					t.Fatalf("lz4=%v: no progress at %d: %v", lz4, off, err)
				}
			}
			off += n
			envs = append(envs, got...)
			if have, want := d.Pending(); have > max || want > max {
				t.Fatalf("lz4=%v: pending %d of %d while skipping", lz4, have, want)
			}
		}
		if d.Mid() {
			t.Fatalf("lz4=%v: still mid-envelope at the end", lz4)
		}
		equalEnvelopes(t, envs, [][]byte{small1, big[:HeaderLen], mid[:HeaderLen], small2})
		if !Oversized(envs[1]) || !Oversized(envs[2]) || Oversized(envs[0]) {
			t.Fatalf("lz4=%v: Oversized misreports", lz4)
		}
	}

	// Without SkipOversized the same envelope breaks the stream; with it,
	// a length Cassandra reads as negative still does.
	b, _ := AppendSegments(nil, false, testEnvelope(1, make([]byte, 2*max)))
	if _, _, err := NewSegmentDecoder(false, max).Decode(b); !errors.Is(err, ErrSegmentEnvelopeTooLarge) {
		t.Fatalf("without SkipOversized: %v", err)
	}
	neg := testEnvelope(1, make([]byte, 100))
	binary.BigEndian.PutUint32(neg[5:], 0x80000000)
	b, _ = appendSegment(nil, neg, false, false)
	d := NewSegmentDecoder(false, max)
	d.SkipOversized()
	if _, _, err := d.Decode(b); !errors.Is(err, ErrSegmentEnvelopeTooLarge) {
		t.Fatalf("a negative length: %v", err)
	}
}
