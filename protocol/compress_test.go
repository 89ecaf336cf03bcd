package protocol

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"testing"

	gocqllz4 "github.com/apache/cassandra-gocql-driver/v2/lz4"
	gocqlsnappy "github.com/apache/cassandra-gocql-driver/v2/snappy"
	dslz4 "github.com/datastax/go-cassandra-native-protocol/compression/lz4"
	"github.com/golang/snappy"
)

func TestNewCompressor(t *testing.T) {
	for _, tc := range []struct {
		name string
		ok   bool
	}{
		{"lz4", true}, {"LZ4", true}, {"snappy", true}, {"Snappy", true},
		{"", false}, {"zstd", false}, {"deflate", false}, {"lz4 ", false},
	} {
		c, err := NewCompressor(tc.name)
		if tc.ok != (err == nil) || tc.ok != (c != nil) {
			t.Errorf("NewCompressor(%q) = %v, %v", tc.name, c, err)
		}
		if !tc.ok && !errors.Is(err, ErrUnknownCompression) {
			t.Errorf("NewCompressor(%q) err = %v, want ErrUnknownCompression", tc.name, err)
		}
	}
}

func compressors(t *testing.T) map[string]Compressor {
	t.Helper()
	out := map[string]Compressor{}
	for _, name := range []string{CompressionLZ4, CompressionSnappy} {
		c, err := NewCompressor(name)
		if err != nil {
			t.Fatal(err)
		}
		out[name] = c
	}
	return out
}

func TestCompressorRoundTrip(t *testing.T) {
	inputs := map[string][]byte{
		"empty":  nil,
		"byte":   {42},
		"text":   textBody(1, 100_000),
		"random": randomBody(1, 100_000),
		"zeros":  make([]byte, 1<<20),
	}
	for name, c := range compressors(t) {
		for in, src := range inputs {
			t.Run(name+"/"+in, func(t *testing.T) {
				comp, err := c.Compress([]byte("pre"), src)
				if err != nil {
					t.Fatal(err)
				}
				if string(comp[:3]) != "pre" {
					t.Fatal("Compress clobbered dst")
				}
				comp = comp[3:]
				out, err := c.Decompress([]byte("fix"), comp, len(src))
				if err != nil {
					t.Fatal(err)
				}
				if string(out[:3]) != "fix" || !bytes.Equal(out[3:], src) {
					t.Fatalf("round trip gave %d bytes, want %d", len(out)-3, len(src))
				}
				if len(src) > 0 {
					if _, err := c.Decompress(nil, comp, len(src)-1); !errors.Is(err, ErrDecompressedTooLarge) {
						t.Fatalf("limit len-1: err = %v", err)
					}
				}
			})
		}
	}
}

// TestCompressorMaxRatio makes sure the expansion-ratio sanity checks accept
// the most compressible input each format can produce.
func TestCompressorMaxRatio(t *testing.T) {
	src := make([]byte, 16<<20)
	for name, c := range compressors(t) {
		comp, err := c.Compress(nil, src)
		if err != nil {
			t.Fatal(err)
		}
		out, err := c.Decompress(nil, comp, len(src))
		if err != nil {
			t.Fatalf("%s: %d zero bytes compressed to %d: %v", name, len(src), len(comp), err)
		}
		if len(out) != len(src) {
			t.Fatalf("%s: got %d bytes", name, len(out))
		}
		t.Logf("%s: ratio %.1f", name, float64(len(src))/float64(len(comp)))
	}
	// Raw LZ4 block (segment payloads).
	block, _ := appendLZ4Block(nil, src[:MaxSegmentPayload])
	if _, err := decompressLZ4Block(nil, block, MaxSegmentPayload); err != nil {
		t.Fatalf("raw block of %d bytes: %v", len(block), err)
	}
}

// TestCompressorInterop checks the body formats against gocql v2 and the
// go-cassandra-native-protocol library, in both directions.
func TestCompressorInterop(t *testing.T) {
	lz4c, _ := NewCompressor(CompressionLZ4)
	snap, _ := NewCompressor(CompressionSnappy)
	for _, src := range [][]byte{nil, []byte("x"), textBody(2, 50_000), randomBody(2, 5000)} {
		t.Run(fmt.Sprint(len(src)), func(t *testing.T) {
			// gocql v2 LZ4.
			theirs, err := gocqllz4.LZ4Compressor{}.AppendCompressedWithLength(nil, src)
			if err != nil {
				t.Fatal(err)
			}
			if got, err := lz4c.Decompress(nil, theirs, len(src)); err != nil || !bytes.Equal(got, src) {
				t.Fatalf("gocql lz4 -> ours: %v", err)
			}
			mine, _ := lz4c.Compress(nil, src)
			if !bytes.Equal(mine, theirs) {
				t.Errorf("lz4 bodies differ from gocql's")
			}
			if got, err := (gocqllz4.LZ4Compressor{}).AppendDecompressedWithLength(nil, mine); err != nil || !bytes.Equal(got, src) {
				t.Fatalf("ours -> gocql lz4: %v", err)
			}
			// go-cassandra-native-protocol LZ4 (what Cassandra sends: a
			// zero length is followed by one zero byte).
			var buf bytes.Buffer
			if err := (dslz4.Compressor{}).CompressWithLength(bytes.NewReader(src), &buf); err != nil {
				t.Fatal(err)
			}
			if got, err := lz4c.Decompress(nil, buf.Bytes(), len(src)); err != nil || !bytes.Equal(got, src) {
				t.Fatalf("library lz4 -> ours: %v", err)
			}
			// gocql v2 Snappy.
			theirs, _ = gocqlsnappy.SnappyCompressor{}.AppendCompressedWithLength(nil, src)
			if got, err := snap.Decompress(nil, theirs, len(src)); err != nil || !bytes.Equal(got, src) {
				t.Fatalf("gocql snappy -> ours: %v", err)
			}
			mine, _ = snap.Compress(nil, src)
			if got, err := (gocqlsnappy.SnappyCompressor{}).AppendDecompressedWithLength(nil, mine); err != nil || !bytes.Equal(got, src) {
				t.Fatalf("ours -> gocql snappy: %v", err)
			}
		})
	}
}

// allocated returns the bytes f allocates on the heap.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

func TestCompressorBounds(t *testing.T) {
	const gib = 1 << 30
	lz4Body := binary.BigEndian.AppendUint32(nil, gib)
	lz4Body = append(lz4Body, 0x1F, 0, 0x01, 0, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF) // a short block of zeros
	snappyBody := binary.AppendUvarint(nil, gib)
	snappyBody = append(snappyBody, 0x00, 0, 0xFE, 0x01, 0) // a literal and a copy

	lz4c, _ := NewCompressor(CompressionLZ4)
	snap, _ := NewCompressor(CompressionSnappy)
	for _, tc := range []struct {
		name  string
		c     Compressor
		body  []byte
		limit int
		want  error
	}{
		{"lz4 over limit", lz4c, lz4Body, 16 << 20, ErrDecompressedTooLarge},
		{"snappy over limit", snap, snappyBody, 16 << 20, ErrDecompressedTooLarge},
		// Within the limit, but the input cannot expand that much.
		{"lz4 implausible ratio", lz4c, lz4Body, 2 * gib, ErrCompressedCorrupt},
		{"snappy implausible ratio", snap, snappyBody, 2 * gib, ErrCompressedCorrupt},
		{"lz4 negative limit", lz4c, lz4Body, -1, ErrDecompressedTooLarge},
		{"snappy zero limit", snap, snappyBody, 0, ErrDecompressedTooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			n := allocated(func() { _, err = tc.c.Decompress(nil, tc.body, tc.limit) })
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			if n > 1<<20 {
				t.Fatalf("allocated %d bytes", n)
			}
		})
	}
	// Sanity check of the measurement itself.
	if n := allocated(func() { _ = make([]byte, 16<<20) }); n < 16<<20 {
		t.Logf("allocation measurement unreliable (%d bytes)", n)
	}
}

func TestCompressorMalformed(t *testing.T) {
	lz4c, _ := NewCompressor(CompressionLZ4)
	snap, _ := NewCompressor(CompressionSnappy)
	good, _ := lz4c.Compress(nil, textBody(3, 10_000))
	goodSnappy, _ := snap.Compress(nil, textBody(3, 10_000))
	declare := func(b []byte, n uint32) []byte {
		b = bytes.Clone(b)
		binary.BigEndian.PutUint32(b, n)
		return b
	}
	for _, tc := range []struct {
		name string
		c    Compressor
		body []byte
	}{
		{"lz4 no length", lz4c, []byte{0, 0, 1}},
		{"lz4 garbage", lz4c, append([]byte{0, 0, 1, 0}, bytes.Repeat([]byte{0xFF}, 40)...)},
		{"lz4 declared longer", lz4c, declare(good, 10_001)},
		{"lz4 declared shorter", lz4c, declare(good, 9_999)},
		{"lz4 truncated", lz4c, good[:len(good)/2]},
		{"lz4 length only", lz4c, []byte{0, 0, 0, 5}},
		{"snappy empty", snap, nil},
		{"snappy bad varint", snap, bytes.Repeat([]byte{0xFF}, 11)},
		{"snappy truncated", snap, goodSnappy[:len(goodSnappy)/2]},
		{"snappy garbage", snap, append(binary.AppendUvarint(nil, 100), bytes.Repeat([]byte{0xFF}, 40)...)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := tc.c.Decompress([]byte("dst"), tc.body, 1<<20)
			if !errors.Is(err, ErrCompressedCorrupt) {
				t.Fatalf("err = %v, want ErrCompressedCorrupt", err)
			}
			if string(out) != "dst" {
				t.Fatalf("dst = %q after error", out)
			}
		})
	}
	// The stream (framed) snappy format is not what Cassandra uses.
	var framed bytes.Buffer
	w := snappy.NewBufferedWriter(&framed)
	_, _ = w.Write(textBody(4, 1000))
	_ = w.Close()
	if _, err := snap.Decompress(nil, framed.Bytes(), 1<<20); err == nil {
		t.Fatal("framed snappy accepted")
	}
}

// TestDecompressLZ4BlockEmpty covers n == 0, which must not reach the lz4
// decoder with a nil dst (its amd64 assembly writes through it).
func TestDecompressLZ4BlockEmpty(t *testing.T) {
	long := append([]byte{0x1F, 'a', 1, 0}, make([]byte, 40)...)
	for _, tc := range []struct {
		src []byte
		ok  bool
	}{{nil, true}, {[]byte{0}, true}, {[]byte{1}, false}, {long, false}} {
		out, err := decompressLZ4Block(nil, tc.src, 0)
		if (err == nil) != tc.ok || len(out) != 0 {
			t.Errorf("src %x: %d bytes, %v", tc.src, len(out), err)
		}
		if !tc.ok && !errors.Is(err, ErrCompressedCorrupt) {
			t.Errorf("src %x: err = %v", tc.src, err)
		}
	}
}
