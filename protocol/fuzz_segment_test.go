package protocol

import (
	"bytes"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/datastax/go-cassandra-native-protocol/crc"
	"github.com/datastax/go-cassandra-native-protocol/segment"
)

var rewriteFuzzSeeds = flag.Bool("protocol.rewrite-fuzz-seeds", false,
	"rewrite testdata/fuzz/{FuzzSegmentDecode,FuzzDecompress} seed files")

const fuzzMaxEnvelope = 1 << 20

// fuzzEnvelopes cuts data into envelopes: each run of bytes up to a 0x00
// becomes one envelope body.
func fuzzEnvelopes(data []byte) [][]byte {
	var envs [][]byte
	for i, body := range bytes.Split(data, []byte{0}) {
		envs = append(envs, testEnvelope(uint16(i), body))
	}
	return envs
}

type segmentSeed struct {
	name string
	data []byte
	lz4  bool
}

func segmentSeeds() []segmentSeed {
	var seeds []segmentSeed
	add := func(name string, lz4 bool, envs ...[]byte) {
		b, err := AppendSegments(nil, lz4, envs...)
		if err != nil {
			panic(err)
		}
		seeds = append(seeds, segmentSeed{name, b, lz4})
	}
	for _, lz4 := range []bool{false, true} {
		suffix := "plain"
		if lz4 {
			suffix = "lz4"
		}
		add("empty-body-"+suffix, lz4, testEnvelope(1, nil))
		add("one-"+suffix, lz4, testEnvelope(1, textBody(1, 300)))
		add("several-"+suffix, lz4, testEnvelope(1, []byte("a")), testEnvelope(2, textBody(2, 100)), testEnvelope(3, randomBody(3, 50)))
		add("random-"+suffix, lz4, testEnvelope(1, randomBody(4, 200)))
		b, err := appendSegment(nil, nil, true, lz4)
		if err != nil {
			panic(err)
		}
		seeds = append(seeds, segmentSeed{"empty-segment-" + suffix, b, lz4})
	}
	// A two-segment envelope, kept small by hand-splitting a small envelope
	// across non-self-contained segments.
	for _, lz4 := range []bool{false, true} {
		env := testEnvelope(9, textBody(9, 100))
		b, _ := appendSegment(nil, env[:40], false, lz4)
		b, _ = appendSegment(b, env[40:], false, lz4)
		seeds = append(seeds, segmentSeed{"split-" + strconv.FormatBool(lz4), b, lz4})
	}
	// Inputs for withValidCRCs: segments with their CRCs left out.
	for _, lz4 := range []bool{false, true} {
		env1, env2 := testEnvelope(1, []byte("one")), testEnvelope(2, textBody(2, 120))
		var b []byte
		for _, seg := range []struct {
			payload       []byte
			selfContained bool
		}{{append(bytes.Clone(env1), env2...), true}, {env2[:50], false}, {env2[50:], false}} {
			s, _ := appendSegment(nil, seg.payload, seg.selfContained, lz4)
			hdr := segHeaderLen
			if lz4 {
				hdr = segLZ4HeaderLen
			}
			b = append(b, s[:hdr-segment.Crc24Length]...)
			b = append(b, s[hdr:len(s)-segTrailerLen]...)
		}
		seeds = append(seeds, segmentSeed{"nocrc-" + strconv.FormatBool(lz4), b, lz4})
	}
	return seeds
}

func FuzzSegmentDecode(f *testing.F) {
	for _, s := range segmentSeeds() {
		f.Add(s.data, s.lz4)
	}
	f.Fuzz(func(t *testing.T, data []byte, lz4 bool) {
		checkDecode(t, data, lz4)
		// Random bytes rarely pass the CRCs; also decode them as segments
		// with arbitrary headers and payloads but valid checksums.
		fixed := withValidCRCs(data, lz4)
		if n, err := checkDecode(t, fixed, lz4); err == nil && n != len(fixed) {
			t.Fatalf("consumed %d of %d whole segments", n, len(fixed))
		}
		// A decoder that skips envelopes over a limit most seeds pass
		// (their multi-segment one included) never keeps one.
		checkDecodeSkip(t, data, lz4)
		checkDecodeSkip(t, fixed, lz4)
		// And data as envelope bodies round-trips.
		if len(data) <= fuzzMaxEnvelope-segEnvHeaderLen {
			roundTrip(t, lz4, fuzzEnvelopes(data))
		}
	})
}

// withValidCRCs reads data as a sequence of segment headers (3 or 5 bytes,
// the payload length clamped to what is left) each followed by its payload,
// and frames them with correct CRC24s and CRC32s.
func withValidCRCs(data []byte, lz4 bool) []byte {
	n := segment.UncompressedHeaderLength
	if lz4 {
		n = segment.CompressedHeaderLength
	}
	var out []byte
	for len(data) >= n {
		var h uint64
		for i := range n {
			h |= uint64(data[i]) << (8 * i)
		}
		data = data[n:]
		wireLen := min(int(h&segLenMask), len(data))
		h = h&^segLenMask | uint64(wireLen)
		out = appendSegmentHeader(out, h, n)
		out = append(out, data[:wireLen]...)
		out = binary.LittleEndian.AppendUint32(out, crc.ChecksumIEEE(data[:wireLen]))
		data = data[wireLen:]
	}
	return out
}

// checkDecode decodes data whole and in two pieces, checks the outcomes
// agree, and round-trips what was decoded. It returns bytes consumed.
func checkDecode(t *testing.T, data []byte, lz4 bool) (int, error) {
	t.Helper()
	d := NewSegmentDecoder(lz4, fuzzMaxEnvelope)
	n, envs, err := d.Decode(data)
	if n < 0 || n > len(data) {
		t.Fatalf("consumed %d of %d", n, len(data))
	}
	checkEnvelopes(t, envs)

	// The same bytes in two pieces give the same outcome.
	half := len(data) / 2
	d2 := NewSegmentDecoder(lz4, fuzzMaxEnvelope)
	n1, envs1, err1 := d2.Decode(data[:half])
	if err1 == nil {
		var n2 int
		var envs2 [][]byte
		n2, envs2, err1 = d2.Decode(data[n1:])
		n1 += n2
		envs1 = append(envs1, envs2...)
	}
	if (err == nil) != (err1 == nil) || n1 != n || len(envs1) != len(envs) {
		t.Fatalf("whole: %d, %d envelopes, %v; in two pieces: %d, %d envelopes, %v",
			n, len(envs), err, n1, len(envs1), err1)
	}
	for i := range envs {
		if !bytes.Equal(envs[i], envs1[i]) {
			t.Fatalf("envelope %d differs when fed in two pieces", i)
		}
	}

	// Decoded envelopes re-encode and decode back.
	if len(envs) > 0 {
		roundTrip(t, lz4, envs)
	}
	return n, err
}

// fuzzSkipMax is the envelope limit of checkDecodeSkip: below the seeds'
// multi-segment envelope and most of their self-contained ones.
const fuzzSkipMax = 64

// checkDecodeSkip decodes data with SkipOversized, whole and fed in
// pieces of 7 bytes: the outcomes agree, every envelope is within the
// limit or is an oversized one's header, and what is pending never
// passes the limit.
func checkDecodeSkip(t *testing.T, data []byte, lz4 bool) {
	t.Helper()
	decoder := func() *SegmentDecoder {
		d := NewSegmentDecoder(lz4, fuzzSkipMax)
		d.SkipOversized()
		return d
	}
	n, envs, err := decoder().Decode(data)
	d := decoder()
	var buf []byte
	var n1 int
	var envs1 [][]byte
	var err1 error
	for i := 0; i < len(data) && err1 == nil; i += 7 {
		buf = append(buf, data[i:min(i+7, len(data))]...)
		var k int
		var got [][]byte
		k, got, err1 = d.Decode(buf)
		buf = buf[k:]
		n1 += k
		envs1 = append(envs1, got...)
		if have, want := d.Pending(); have > fuzzSkipMax || want > fuzzSkipMax {
			t.Fatalf("pending %d of %d, limit %d", have, want, fuzzSkipMax)
		}
	}
	if (err == nil) != (err1 == nil) || n1 != n || len(envs1) != len(envs) {
		t.Fatalf("whole: %d, %d envelopes, %v; in pieces: %d, %d envelopes, %v", n, len(envs), err, n1, len(envs1), err1)
	}
	for i, e := range envs {
		if !bytes.Equal(e, envs1[i]) {
			t.Fatalf("envelope %d differs when fed in pieces", i)
		}
		body := uint64(binary.BigEndian.Uint32(e[segEnvLenOffset:]))
		switch {
		case Oversized(e):
			if body+segEnvHeaderLen <= fuzzSkipMax || body > math.MaxInt32 {
				t.Fatalf("envelope %d: a header alone, of a %d-byte body", i, body)
			}
		case len(e) > fuzzSkipMax || uint64(len(e)-segEnvHeaderLen) != body:
			t.Fatalf("envelope %d malformed (%d bytes)", i, len(e))
		}
	}
}

func checkEnvelopes(t *testing.T, envs [][]byte) {
	t.Helper()
	for i, e := range envs {
		if len(e) < segEnvHeaderLen || len(e) > fuzzMaxEnvelope ||
			uint64(len(e)-segEnvHeaderLen) != uint64(binary.BigEndian.Uint32(e[segEnvLenOffset:])) {
			t.Fatalf("envelope %d malformed (%d bytes)", i, len(e))
		}
	}
}

func roundTrip(t *testing.T, lz4 bool, envs [][]byte) {
	t.Helper()
	enc, err := AppendSegments(nil, lz4, envs...)
	if err != nil {
		t.Fatalf("AppendSegments: %v", err)
	}
	n, got, err := NewSegmentDecoder(lz4, fuzzMaxEnvelope).Decode(enc)
	if err != nil || n != len(enc) || len(got) != len(envs) {
		t.Fatalf("round trip: consumed %d of %d, %d of %d envelopes, %v", n, len(enc), len(got), len(envs), err)
	}
	for i := range envs {
		if !bytes.Equal(got[i], envs[i]) {
			t.Fatalf("round trip: envelope %d differs", i)
		}
	}
}

type decompressSeed struct {
	name string
	data []byte
}

func decompressSeeds() []decompressSeed {
	lz4c, _ := NewCompressor(CompressionLZ4)
	snap, _ := NewCompressor(CompressionSnappy)
	var seeds []decompressSeed
	for i, src := range [][]byte{nil, []byte("hello hello hello hello"), textBody(5, 500), randomBody(5, 64), make([]byte, 300)} {
		l, _ := lz4c.Compress(nil, src)
		s, _ := snap.Compress(nil, src)
		b, _ := appendLZ4Block(nil, src)
		seeds = append(seeds,
			decompressSeed{fmt.Sprintf("lz4-%d", i), l},
			decompressSeed{fmt.Sprintf("snappy-%d", i), s},
			decompressSeed{fmt.Sprintf("block-%d", i), b})
	}
	return seeds
}

// FuzzDecompress runs every input through both body decompressors and the
// raw LZ4 block decoder used for segments, then checks round trips.
func FuzzDecompress(f *testing.F) {
	for _, s := range decompressSeeds() {
		f.Add(s.data)
	}
	const limit = 1 << 20
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, name := range []string{CompressionLZ4, CompressionSnappy} {
			c, _ := NewCompressor(name)
			out, err := c.Decompress([]byte("pre"), data, limit)
			if string(out[:3]) != "pre" {
				t.Fatalf("%s: dst prefix lost", name)
			}
			if err == nil && len(out)-3 > limit {
				t.Fatalf("%s: %d bytes over limit %d", name, len(out)-3, limit)
			}
			if err != nil && !errors.Is(err, ErrCompressedCorrupt) && !errors.Is(err, ErrDecompressedTooLarge) {
				t.Fatalf("%s: untyped error %v", name, err)
			}

			comp, err := c.Compress(nil, data)
			if err != nil {
				t.Fatalf("%s: Compress: %v", name, err)
			}
			back, err := c.Decompress(nil, comp, len(data))
			if err != nil || !bytes.Equal(back, data) {
				t.Fatalf("%s: round trip: %v", name, err)
			}
			if len(data) > 0 {
				if _, err := c.Decompress(nil, comp, len(data)-1); !errors.Is(err, ErrDecompressedTooLarge) {
					t.Fatalf("%s: limit len-1: %v", name, err)
				}
			}
		}

		// Raw block, with the expected length taken from the first 3 bytes
		// (as a segment header would give it).
		if len(data) >= 3 {
			n := int(data[0]) | int(data[1])<<8 | int(data[2]&1)<<16
			out, err := decompressLZ4Block(nil, data[3:], n)
			if err == nil && len(out) != n {
				t.Fatalf("block: %d bytes, want %d", len(out), n)
			}
		}
		block, err := appendLZ4Block(nil, data)
		if err != nil {
			t.Fatal(err)
		}
		if back, err := decompressLZ4Block(nil, block, len(data)); err != nil || !bytes.Equal(back, data) {
			t.Fatalf("block round trip: %v", err)
		}
	})
}

// TestFuzzSeedCorpus checks the checked-in seed files still match what the
// seed generators produce (and rewrites them with -protocol.rewrite-fuzz-seeds).
func TestFuzzSeedCorpus(t *testing.T) {
	files := map[string]string{}
	for _, s := range segmentSeeds() {
		files[filepath.Join("FuzzSegmentDecode", s.name)] = fmt.Sprintf("go test fuzz v1\n[]byte(%q)\nbool(%v)\n", s.data, s.lz4)
	}
	for _, s := range decompressSeeds() {
		files[filepath.Join("FuzzDecompress", s.name)] = fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", s.data)
	}
	for name, want := range files {
		path := filepath.Join("testdata", "fuzz", name)
		if *rewriteFuzzSeeds {
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run with -protocol.rewrite-fuzz-seeds)", err)
		}
		if string(got) != want {
			t.Fatalf("%s is stale (run with -protocol.rewrite-fuzz-seeds)", path)
		}
	}
}

func TestWithValidCRCs(t *testing.T) {
	for _, s := range segmentSeeds() {
		if !strings.HasPrefix(s.name, "nocrc-") {
			continue
		}
		enc := withValidCRCs(s.data, s.lz4)
		if got := len(decodeAll(t, NewSegmentDecoder(s.lz4, fuzzMaxEnvelope), enc)); got != 3 {
			t.Fatalf("%s: %d envelopes, want 3", s.name, got)
		}
	}
}
