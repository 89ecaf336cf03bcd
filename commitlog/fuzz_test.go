package commitlog

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
)

var rewriteSeeds = flag.Bool("rewrite-seeds", false, "rewrite testdata/fuzz/FuzzReplay seeds")

// seedSegments are the fuzz seeds: real segments, clean and damaged.
func seedSegments() map[string][]byte {
	clean, offs := encodeSegment(1, []string{"alpha", "", "gamma gamma gamma", "delta"}, nil)
	sealed := append(slices.Clone(clean), endRecord(1, int64(len(clean)))...)
	torn := clean[:len(clean)-5]
	corrupt := slices.Clone(sealed)
	corrupt[offs[1]+30] ^= 1
	stale, _ := encodeSegment(1, []string{"new"}, nil)
	old, _ := encodeSegment(9, []string{"old one", "old two", "old three"}, nil)
	stale = append(stale, old[len(stale):]...)
	return map[string][]byte{
		"clean":   clean,
		"sealed":  sealed,
		"torn":    torn,
		"zeroed":  append(slices.Clone(clean), make([]byte, 64)...),
		"corrupt": corrupt,
		"stale":   stale,
		"header":  segmentHeader(1),
		"empty":   nil,
	}
}

func TestWriteFuzzSeeds(t *testing.T) {
	if !*rewriteSeeds {
		t.Skip("run with -rewrite-seeds to regenerate testdata/fuzz/FuzzReplay")
	}
	dir := filepath.Join("testdata", "fuzz", "FuzzReplay")
	mustf(t, os.MkdirAll(dir, 0o755), "mkdir")
	for name, b := range seedSegments() {
		body := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", b)
		mustf(t, os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644), "write seed")
	}
}

// FuzzReplay feeds arbitrary bytes to replay as a segment: it never panics,
// reports only well-formed positions, and records encoded in front of any
// garbage always come back first, in order.
func FuzzReplay(f *testing.F) {
	for _, b := range seedSegments() {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		// Raw bytes as segment 1, through the whole Open/Replay path.
		fs := vfs.NewMem()
		mustf(t, fs.MkdirAll(testDir, 0o755), "mkdir")
		writeFile(t, fs, fs.PathJoin(testDir, segmentName(1)), data)
		for _, skipCorrupt := range []bool{false, true} {
			opts := testOptions(fs)
			opts.IgnoreReplayErrors = skipCorrupt
			got, _, err := replayAll(t, opts)
			var ce *CorruptionError
			if err != nil && !errors.As(err, &ce) && !errors.Is(err, errHeaderVersion) {
				t.Fatalf("Replay: %v", err)
			}
			if err != nil && skipCorrupt && ce != nil {
				t.Fatalf("corruption not skipped: %v", err)
			}
			last := int64(-1)
			for _, r := range got {
				if r.pos.Segment != 1 || r.pos.Offset < segmentHeaderSize || r.pos.Offset%recordAlign != 0 || r.pos.Offset <= last {
					t.Fatalf("bad position %v after %d", r.pos, last)
				}
				last = r.pos.Offset
			}
		}

		// Valid records built from the input, then the input as a tail.
		var want []string
		for rest := data; len(rest) > 0; {
			n := min(int(rest[0])%40, len(rest)-1)
			want = append(want, string(rest[1:1+n]))
			rest = rest[1+n:]
		}
		seg, _ := encodeSegment(2, want, data)
		{
			r := &segmentReader{f: bytes.NewReader(seg), size: int64(len(seg))}
			var got []string
			res, err := scanSegment(r, 2, false, func(p []byte, off int64) error {
				got = append(got, string(p))
				return nil
			})
			var ce *CorruptionError
			if err != nil && !errors.As(err, &ce) {
				t.Fatalf("scan: %v", err)
			}
			if len(got) < len(want) || !slices.Equal(got[:len(want)], want) {
				t.Fatalf("decoded %q, want %q first", got, want)
			}
			if res.tornAt >= 0 && (res.tornEnd <= res.tornAt || res.tornEnd > int64(len(seg))) {
				t.Fatalf("torn tail [%d, %d) in %d bytes", res.tornAt, res.tornEnd, len(seg))
			}
		}
	})
}
