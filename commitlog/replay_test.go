package commitlog

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// writeRecords appends payloads to a fresh log in batch mode, so each record
// claims the ones before it synced, and closes it.
func writeRecords(t *testing.T, opts Options, ps []string) []Position {
	t.Helper()
	l := mustOpen(t, opts)
	var pos []Position
	for _, p := range ps {
		at, err := l.Append([]byte(p))
		mustf(t, err, "Append(%q)", p)
		pos = append(pos, at)
	}
	mustf(t, l.Close(), "Close")
	return pos
}

func TestReplayRoundTrip(t *testing.T) {
	for _, mode := range []string{SyncPeriodic, SyncBatch, SyncGroup, SyncAdaptive} {
		t.Run(mode, func(t *testing.T) {
			fs := vfs.NewMem()
			opts := testOptions(fs)
			opts.Sync = mode
			opts.GroupWindow = 50 * 1000 // 50µs
			want := []string{"", "a", "bb", strings.Repeat("x", 1000), "last"}
			pos := writeRecords(t, opts, want)
			got, st, err := replayAll(t, opts)
			mustf(t, err, "Replay")
			if !slices.Equal(payloads(got), want) {
				t.Fatalf("replayed %q, want %q", payloads(got), want)
			}
			for i := range got {
				if got[i].pos != pos[i] {
					t.Errorf("record %d replayed at %v, appended at %v", i, got[i].pos, pos[i])
				}
			}
			if st.Records != len(want) || st.TruncatedBytes != 0 || st.SkippedBytes != 0 || st.Segments != 1 {
				t.Errorf("stats %+v", st)
			}
		})
	}
}

func TestReplayAfterAppend(t *testing.T) {
	l := mustOpen(t, testOptions(vfs.NewMem()))
	defer l.Close()
	if _, err := l.Append([]byte("x")); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Replay(func([]byte, Position) error { return nil }); !errors.Is(err, ErrReplayAfterAppend) {
		t.Fatalf("Replay after Append: %v", err)
	}
}

func TestReplayCallbackError(t *testing.T) {
	fs := vfs.NewMem()
	opts := testOptions(fs)
	writeRecords(t, opts, []string{"a", "b", "c"})
	l := mustOpen(t, opts)
	defer l.Close()
	stop := errors.New("engine says no")
	n := 0
	_, err := l.Replay(func([]byte, Position) error {
		n++
		if n == 2 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || n != 2 {
		t.Fatalf("Replay = %v after %d records", err, n)
	}
}

// tornBase writes five records, closes the log and returns the segment's
// bytes without its end record, and where the last record starts.
func tornBase(t *testing.T) (opts Options, path string, base []byte, last int64, want []string) {
	t.Helper()
	fs := vfs.NewMem()
	opts = testOptions(fs)
	want = []string{"first", "second", "third", "fourth", "the fifth and last record"}
	pos := writeRecords(t, opts, want)
	path = fs.PathJoin(testDir, segmentName(pos[0].Segment))
	b := readFile(t, fs, path)
	// The end record follows the last data record; zeros fill the rest of
	// the segment.
	end := pos[len(pos)-1].Offset + recordSize(len(want[len(want)-1]))
	if h, _, err := decodeRecord(b[end:], pos[0].Segment, end); err != nil || h.kind != kindEnd {
		t.Fatalf("no end record after the last record: %v", err)
	}
	if int64(len(b)) != opts.SegmentSize || slices.ContainsFunc(b[end+recordHeaderSize:], func(c byte) bool { return c != 0 }) {
		t.Fatalf("the segment is %d bytes, not %d zero-filled past its end record", len(b), opts.SegmentSize)
	}
	return opts, path, b[:end], pos[len(pos)-1].Offset, want
}

// TestTornTail cuts the last record at every byte: replay keeps the records
// before it, reports the cut bytes, and appends after a restart follow them.
func TestTornTail(t *testing.T) {
	opts, path, base, last, want := tornBase(t)
	for cut := last; cut <= int64(len(base)); cut++ {
		t.Run(fmt.Sprint(cut-last), func(t *testing.T) {
			opts, logs := withSegmentFile(t, opts, path, base[:cut])

			wantHere, torn := want[:4], max(0, nonZeroLen(base[:cut])-last)
			if cut == int64(len(base)) {
				wantHere, torn = want, 0
			}
			got, st, err := replayAll(t, opts)
			mustf(t, err, "Replay")
			if !slices.Equal(payloads(got), wantHere) {
				t.Fatalf("replayed %q, want %q", payloads(got), wantHere)
			}
			if st.TruncatedBytes != torn {
				t.Fatalf("TruncatedBytes = %d, want %d", st.TruncatedBytes, torn)
			}
			if torn > 0 && !strings.Contains(logs.String(), fmt.Sprintf("bytes=%d", torn)) {
				t.Fatalf("no log line with the truncated byte count:\n%s", logs)
			}

			// A restart appends after the kept records.
			l := mustOpen(t, opts)
			_, err = l.Replay(func([]byte, Position) error { return nil })
			mustf(t, err, "second Replay")
			_, err = l.Append([]byte("after restart"))
			mustf(t, err, "Append")
			mustf(t, l.Close(), "Close")
			got, st, err = replayAll(t, opts)
			mustf(t, err, "third Replay")
			if w := append(slices.Clone(wantHere), "after restart"); !slices.Equal(payloads(got), w) {
				t.Fatalf("after restart replayed %q, want %q", payloads(got), w)
			}
			if st.TruncatedBytes != 0 {
				t.Fatalf("truncated again: %+v", st)
			}
		})
	}
}

func TestZeroedTail(t *testing.T) {
	opts, path, base, last, want := tornBase(t)
	zeroLast := slices.Clone(base)
	clear(zeroLast[last:])
	for _, tc := range []struct {
		name  string
		bytes []byte
		want  []string
		torn  int64
	}{
		// Zeros to the end of the file are space never written.
		{"zeros after the last record", append(slices.Clone(base), make([]byte, 4096)...), want, 0},
		{"last record zeroed", zeroLast, want[:4], 0},
		{"a page of zeros mid-record", append(slices.Clone(base[:last+10]), make([]byte, 4096)...), want[:4], nonZeroLen(base[:last+10]) - last},
		{"zeros inside the last record", append(slices.Clone(zeroLast), 1), want[:4], int64(len(zeroLast)) + 1 - last},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := vfs.NewMem()
			opts := opts
			opts.FS = fs
			mustf(t, fs.MkdirAll(testDir, 0o755), "mkdir")
			writeFile(t, fs, path, tc.bytes)
			got, st, err := replayAll(t, opts)
			mustf(t, err, "Replay")
			if !slices.Equal(payloads(got), tc.want) || st.TruncatedBytes != tc.torn {
				t.Fatalf("replayed %q truncating %d, want %q truncating %d", payloads(got), st.TruncatedBytes, tc.want, tc.torn)
			}
			got, st, err = replayAll(t, opts)
			mustf(t, err, "Replay again")
			if !slices.Equal(payloads(got), tc.want) || st.TruncatedBytes != 0 {
				t.Fatalf("second replay %q truncating %d", payloads(got), st.TruncatedBytes)
			}
		})
	}
}

// TestRecycledStaleTail: a reused file still holds an older segment's
// records after the new ones; they are never replayed, and the log says
// they are an older segment's, not a torn write.
func TestRecycledStaleTail(t *testing.T) {
	old, _ := encodeSegment(3, []string{"old-1", "old-2", "old-3", "old-4", "old-5", "old-6"}, nil)
	fresh, _ := encodeSegment(7, []string{"new-1", "new-2"}, nil)
	for _, tc := range []struct {
		name   string
		file   []byte
		want   []string
		unused bool
	}{
		{"new records over old ones", append(slices.Clone(fresh), old[len(fresh):]...), []string{"new-1", "new-2"}, false},
		{"header only over old ones", append(segmentHeader(7), old[segmentHeaderSize:]...), nil, true},
		{"old header left", old, nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := vfs.NewMem()
			opts := testOptions(fs)
			logs := &testLogger{}
			opts.Logger = logs.logger()
			mustf(t, fs.MkdirAll(testDir, 0o755), "mkdir")
			writeFile(t, fs, fs.PathJoin(testDir, segmentName(7)), tc.file)
			_, st, err := replayAll(t, opts)
			mustf(t, err, "Replay")
			if !tc.unused {
				line := fmt.Sprintf("level=INFO msg=\"commit log segment ends at its last record; the rest of the file is left over from the older segment it was recycled from, and is cut off\" file=%s offset=%d leftover_bytes=%d", fs.PathJoin(testDir, segmentName(7)), len(fresh), st.LeftoverBytes)
				if !strings.Contains(logs.String(), line) || strings.Contains(logs.String(), "level=WARN") {
					t.Fatalf("the log does not say the rest is an older segment's (%s):\n%s", line, logs)
				}
				// Nor does the summary call them truncated.
				if st.LeftoverBytes <= 0 || st.TruncatedBytes != 0 ||
					!strings.Contains(logs.String(), fmt.Sprintf("truncated_bytes=0 leftover_bytes=%d", st.LeftoverBytes)) {
					t.Fatalf("the summary: %+v\n%s", st, logs)
				}
			}
			for range 2 {
				got, st, err := replayAll(t, opts)
				mustf(t, err, "Replay")
				if !slices.Equal(payloads(got), tc.want) {
					t.Fatalf("replayed %q, want %q", payloads(got), tc.want)
				}
				if tc.unused && st.TruncatedBytes != 0 {
					t.Fatalf("an unused segment was truncated: %+v", st)
				}
			}
		})
	}
}

func TestMidSegmentCorruption(t *testing.T) {
	want := []string{"zero", "one", "two", "three", "four"}
	damages := []struct {
		name string
		at   int64 // byte of the record to flip
	}{
		{"payload", recordHeaderSize},
		{"segment id", 16},
		{"kind", 12},
		{"length", 5},
	}
	for i := range want {
		for _, d := range damages {
			t.Run(fmt.Sprintf("record %d/%s", i, d.name), func(t *testing.T) {
				fs := vfs.NewMem()
				opts := testOptions(fs)
				pos := writeRecords(t, opts, want)
				path := fs.PathJoin(testDir, segmentName(pos[i].Segment))
				b := readFile(t, fs, path)
				b[pos[i].Offset+d.at] ^= 0x40 // a bit rots
				writeFile(t, fs, path, b)

				_, _, err := replayAll(t, opts)
				var ce *CorruptionError
				if !errors.As(err, &ce) || !errors.Is(err, ErrCorrupt) {
					t.Fatalf("Replay = %v, want a CorruptionError", err)
				}
				if ce.File != path || ce.Offset != pos[i].Offset {
					t.Fatalf("corruption reported in %s at %d, want %s at %d", ce.File, ce.Offset, path, pos[i].Offset)
				}
				if msg := err.Error(); !strings.Contains(msg, path) || !strings.Contains(msg, fmt.Sprint(pos[i].Offset)) {
					t.Fatalf("message does not name the file and offset: %s", msg)
				}

				opts.IgnoreReplayErrors = true
				skipped := slices.Delete(slices.Clone(want), i, i+1)
				for range 2 {
					got, st, err := replayAll(t, opts)
					mustf(t, err, "Replay with IgnoreReplayErrors")
					if !slices.Equal(payloads(got), skipped) {
						t.Fatalf("replayed %q, want %q", payloads(got), skipped)
					}
					if st.SkippedBytes != recordSize(len(want[i])) || st.TruncatedBytes != 0 {
						t.Fatalf("stats %+v", st)
					}
				}
			})
		}
	}
}

// TestTornTailWithLaterUnsyncedRecords: after a crash, unsynced pages may
// survive past a lost one. Records there claim nothing past the hole, so it
// is a torn tail, not corruption.
func TestTornTailWithLaterUnsyncedRecords(t *testing.T) {
	fs := vfs.NewMem()
	opts := testOptions(fs)
	b, offs := encodeSegment(1, []string{"a", "b"}, nil)
	// Two more records written after the last sync, which covered "a" only.
	for _, p := range []string{"c", "d"} {
		offs = append(offs, int64(len(b)))
		b = append(b, encodeRecord(kindData, 1, offs[1], []byte(p))...)
	}
	clear(b[offs[2] : offs[2]+8]) // "c" is lost
	mustf(t, fs.MkdirAll(testDir, 0o755), "mkdir")
	writeFile(t, fs, fs.PathJoin(testDir, segmentName(1)), b)
	got, st, err := replayAll(t, opts)
	mustf(t, err, "Replay")
	if !slices.Equal(payloads(got), []string{"a", "b"}) || st.TruncatedBytes != nonZeroLen(b)-offs[2] {
		t.Fatalf("replayed %q, stats %+v", payloads(got), st)
	}
}

func TestUnknownVersionStopsReplay(t *testing.T) {
	fs := vfs.NewMem()
	b, _ := encodeSegment(1, []string{"a"}, nil)
	b[16] = 9
	copy(b[20:24], []byte{0, 0, 0, 0})
	crc := crc32c(b[:20])
	b[20], b[21], b[22], b[23] = byte(crc), byte(crc>>8), byte(crc>>16), byte(crc>>24)
	mustf(t, fs.MkdirAll(testDir, 0o755), "mkdir")
	writeFile(t, fs, fs.PathJoin(testDir, segmentName(1)), b)
	if _, _, err := replayAll(t, testOptions(fs)); !errors.Is(err, errHeaderVersion) {
		t.Fatalf("Replay of a newer format = %v", err)
	}
}

// withSegmentFile returns opts on a new memory FS holding only the file at
// path, with b in it, and a logger whose lines the test can read.
func withSegmentFile(t *testing.T, opts Options, path string, b []byte) (Options, *testLogger) {
	t.Helper()
	fs := vfs.NewMem()
	opts.FS = fs
	logs := &testLogger{}
	opts.Logger = logs.logger()
	mustf(t, fs.MkdirAll(testDir, 0o755), "mkdir")
	writeFile(t, fs, path, b)
	return opts, logs
}

// nonZeroLen is the length of b without its trailing zeros.
func nonZeroLen(b []byte) int64 {
	n := len(b)
	for n > 0 && b[n-1] == 0 {
		n--
	}
	return int64(n)
}

// TestZeroFilledSegmentEnd: a segment is zero-filled when created, so one
// that was being written at a crash ends in zeros to its full size. Those
// are its end, not a torn tail: nothing is cut or logged; a torn record
// before them is cut by its own bytes only.
func TestZeroFilledSegmentEnd(t *testing.T) {
	opts, path, base, last, want := tornBase(t)
	full := func(b []byte) []byte { return append(slices.Clone(b), make([]byte, opts.SegmentSize-int64(len(b)))...) }
	for _, tc := range []struct {
		name  string
		bytes []byte
		want  []string
		torn  int64
	}{
		{"records then zeros", full(base), want, 0},
		{"a torn record then zeros", full(base[:last+recordHeaderSize+3]), want[:4], nonZeroLen(base[:last+recordHeaderSize+3]) - last},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts, logs := withSegmentFile(t, opts, path, tc.bytes)
			got, st, err := replayAll(t, opts)
			mustf(t, err, "Replay")
			if !slices.Equal(payloads(got), tc.want) || st.TruncatedBytes != tc.torn {
				t.Fatalf("replayed %q truncating %d, want %q truncating %d", payloads(got), st.TruncatedBytes, tc.want, tc.torn)
			}
			if logged := strings.Contains(logs.String(), "a record the crash left incomplete"); logged != (tc.torn > 0) {
				t.Fatalf("torn-tail log line: %v, want %v:\n%s", logged, tc.torn > 0, logs)
			}
		})
	}
}

// TestReplayAcrossChunks appends records that fill, straddle and exceed
// the append buffer's chunks, while the flusher writes behind, and
// replays them intact and in place.
func TestReplayAcrossChunks(t *testing.T) {
	for _, mode := range []string{SyncPeriodic, SyncBatch} {
		t.Run(mode, func(t *testing.T) {
			fs := vfs.NewMem()
			opts := testOptions(fs)
			opts.Sync = mode
			opts.SegmentSize = 8 << 20
			sizes := []int{1, chunkSize - 100, 300, 700 << 10, 400 << 10, chunkSize + 5000, 10, 3 * chunkSize / 2, 64 << 10}
			var want []string
			for r := 0; r < 3; r++ {
				for i, n := range sizes {
					want = append(want, strings.Repeat(string(rune('a'+(r*len(sizes)+i)%26)), n))
				}
			}
			pos := writeRecords(t, opts, want)
			got, st, err := replayAll(t, opts)
			mustf(t, err, "Replay")
			if len(got) != len(want) {
				t.Fatalf("replayed %d records, want %d (%+v)", len(got), len(want), st)
			}
			for i := range got {
				if got[i].payload != want[i] || got[i].pos != pos[i] {
					t.Fatalf("record %d: %d bytes at %v, want %d bytes at %v", i, len(got[i].payload), got[i].pos, len(want[i]), pos[i])
				}
			}
			if st.TruncatedBytes != 0 || st.SkippedBytes != 0 {
				t.Errorf("stats %+v", st)
			}
		})
	}
}
