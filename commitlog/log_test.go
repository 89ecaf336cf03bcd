package commitlog

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
)

func smallSegments(fs vfs.FS) Options {
	opts := testOptions(fs)
	opts.SegmentSize = 1024
	opts.TotalSpace = 1 << 30
	return opts
}

func appendN(t *testing.T, l *Log, prefix string, n int) ([]string, []Position) {
	t.Helper()
	var ps []string
	var pos []Position
	for i := range n {
		p := fmt.Sprintf("%s-%03d-%s", prefix, i, strings.Repeat("x", 80))
		at, err := l.Append([]byte(p))
		mustf(t, err, "Append %d", i)
		ps = append(ps, p)
		pos = append(pos, at)
	}
	return ps, pos
}

func TestRotationAndMarkFlushed(t *testing.T) {
	fs := vfs.NewMem()
	opts := smallSegments(fs)
	l := mustOpen(t, opts)
	ps, pos := appendN(t, l, "r", 60)
	for i := 1; i < len(pos); i++ {
		if !pos[i-1].Less(pos[i]) {
			t.Fatalf("positions not increasing: %v then %v", pos[i-1], pos[i])
		}
	}
	first, last := pos[0].Segment, pos[len(pos)-1].Segment
	if last-first < 5 {
		t.Fatalf("60 records of ~100 bytes in 1 KiB segments used segments %d..%d", first, last)
	}
	segs, _ := segmentFiles(t, fs)
	for id := first; id <= last; id++ {
		if !slices.Contains(segs, segmentName(id)) {
			t.Fatalf("segment %d has no file: %v", id, segs)
		}
	}

	cut := pos[35]
	waitReady(l) // so the preparer does not take from the pool just filled
	mustf(t, l.MarkFlushed(cut), "MarkFlushed")
	segs, recycled := segmentFiles(t, fs)
	for _, name := range segs {
		if id, _, _ := parseFileName(name); id < cut.Segment {
			t.Errorf("segment %s survived MarkFlushed(%v)", name, cut)
		}
	}
	if len(recycled) != maxRecycledFiles {
		t.Errorf("recycled files %v, want %d", recycled, maxRecycledFiles)
	}
	// MarkFlushed of an older position changes nothing.
	mustf(t, l.MarkFlushed(pos[3]), "MarkFlushed backwards")

	more, _ := appendN(t, l, "s", 30)
	mustf(t, l.Close(), "Close")

	got, st, err := replayAll(t, opts)
	mustf(t, err, "Replay")
	var want []string
	for i, p := range ps {
		if pos[i].Segment >= cut.Segment {
			want = append(want, p)
		}
	}
	want = append(want, more...)
	if !slices.Equal(payloads(got), want) {
		t.Fatalf("replayed %d records, want %d:\n%q\n%q", len(got), len(want), payloads(got), want)
	}
	if st.TruncatedBytes != 0 {
		t.Fatalf("clean shutdown left torn tails: %+v", st)
	}
}

// TestRecycledSegmentsAreReused checks that freed files come back as new
// segments and that their old records never reappear.
func TestRecycledSegmentsAreReused(t *testing.T) {
	fs := vfs.NewMem()
	opts := smallSegments(fs)
	l := mustOpen(t, opts)
	_, pos := appendN(t, l, "old", 40)
	mustf(t, l.MarkFlushed(pos[len(pos)-1]), "MarkFlushed")
	if _, recycled := segmentFiles(t, fs); len(recycled) == 0 {
		t.Fatal("nothing was recycled")
	}
	keep, _ := appendN(t, l, "new", 40)
	if _, recycled := segmentFiles(t, fs); len(recycled) != 0 {
		t.Fatalf("recycled files %v were not reused", recycled)
	}
	mustf(t, l.Close(), "Close")
	got, _, err := replayAll(t, opts)
	mustf(t, err, "Replay")
	// The last old record's segment is still live; nothing before it is.
	var want []string
	if n := len(got) - len(keep); n >= 0 {
		for _, r := range got[:n] {
			if r.pos.Segment != pos[len(pos)-1].Segment {
				t.Fatalf("replayed %q from flushed segment %d", r.payload, r.pos.Segment)
			}
			want = append(want, r.payload)
		}
	}
	want = append(want, keep...)
	if !slices.Equal(payloads(got), want) {
		t.Fatalf("replayed %q", payloads(got))
	}
}

func TestOnFull(t *testing.T) {
	fs := vfs.NewMem()
	opts := smallSegments(fs)
	opts.TotalSpace = 3 * opts.SegmentSize
	calls := make(chan Position, 100)
	opts.OnFull = func(upTo Position) { calls <- upTo }
	l := mustOpen(t, opts)
	defer l.Close()

	var pos []Position
	cur := func() uint64 { return pos[len(pos)-1].Segment }
	live := func() (n int) {
		segs, _ := segmentFiles(t, fs)
		for _, name := range segs {
			if id, _, _ := parseFileName(name); id <= cur() {
				n++
			}
		}
		return n
	}
	// Append until the live segments pass the cap, then append no more:
	// OnFull is called from another goroutine, and the flush it asks for
	// is computed against the segments live then.
	for len(pos) == 0 || live() <= 3 {
		if len(pos) == 200 {
			t.Fatal("200 appends never passed the cap")
		}
		at, err := l.Append([]byte(strings.Repeat("f", 100)))
		mustf(t, err, "Append")
		pos = append(pos, at)
	}
	var upTo Position
	select {
	case upTo = <-calls:
	case <-time.After(10 * time.Second):
		t.Fatalf("OnFull not called with %d live segments, cap 3", live())
	}
	if live() <= 3 {
		t.Fatalf("OnFull(%v) with %d live segments, cap 3", upTo, live())
	}
	if upTo.Segment <= pos[0].Segment || upTo.Segment > cur() || upTo.Offset != 0 {
		t.Fatalf("OnFull(%v); segments %d..%d", upTo, pos[0].Segment, cur())
	}
	mustf(t, l.MarkFlushed(upTo), "MarkFlushed")
	if n := live(); n > 3 {
		t.Fatalf("%d live segments after MarkFlushed(%v), cap 3", n, upTo)
	}
}

func TestMarkFlushedRejectsFuturePositions(t *testing.T) {
	l := mustOpen(t, testOptions(vfs.NewMem()))
	defer l.Close()
	at, err := l.Append([]byte("x"))
	mustf(t, err, "Append")
	for _, p := range []Position{{at.Segment + 1, 0}, {at.Segment, 1 << 20}} {
		if err := l.MarkFlushed(p); !errors.Is(err, ErrBadPosition) {
			t.Errorf("MarkFlushed(%v) = %v", p, err)
		}
	}
	mustf(t, l.MarkFlushed(at), "MarkFlushed(%v)", at)
}

func TestClosed(t *testing.T) {
	l := mustOpen(t, testOptions(vfs.NewMem()))
	mustf(t, l.Close(), "Close")
	if _, err := l.Append([]byte("x")); !errors.Is(err, ErrClosed) {
		t.Errorf("Append after Close: %v", err)
	}
	if err := l.Close(); !errors.Is(err, ErrClosed) {
		t.Errorf("second Close: %v", err)
	}
	if err := l.MarkFlushed(Position{}); !errors.Is(err, ErrClosed) {
		t.Errorf("MarkFlushed after Close: %v", err)
	}
	if _, err := l.Replay(nil); !errors.Is(err, ErrClosed) {
		t.Errorf("Replay after Close: %v", err)
	}
}

func TestTooLarge(t *testing.T) {
	opts := smallSegments(vfs.NewMem())
	l := mustOpen(t, opts)
	defer l.Close()
	if _, err := l.Append(make([]byte, l.MaxPayload()+1)); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("oversized Append: %v", err)
	}
	// The largest payload fits in a segment, even a nearly full one.
	for range 3 {
		_, err := l.Append(make([]byte, 300))
		mustf(t, err, "Append")
		_, err = l.Append(make([]byte, l.MaxPayload()))
		mustf(t, err, "Append of MaxPayload")
	}
}

func TestOptionsValidation(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*Options)
		want string
	}{
		{"no dir", func(o *Options) { o.Dir = "" }, "no directory"},
		{"tiny segment", func(o *Options) { o.SegmentSize = 100 }, "segment size"},
		{"huge segment", func(o *Options) { o.SegmentSize = 4 << 30 }, "segment size"},
		{"space below a segment", func(o *Options) { o.TotalSpace = 1 }, "total space"},
		{"sync mode", func(o *Options) { o.Sync = "fast" }, `unknown sync mode "fast"`},
		{"policy", func(o *Options) { o.FailurePolicy = "panic" }, `unknown commit_failure_policy "panic"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := testOptions(vfs.NewMem())
			tc.edit(&opts)
			if _, err := Open(opts); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Open = %v, want %q", err, tc.want)
			}
		})
	}
	opts, err := Options{Dir: "x"}.withDefaults()
	mustf(t, err, "defaults")
	if opts.Sync != SyncAdaptive || opts.FailurePolicy != PolicyStop || opts.SegmentSize != 32<<20 ||
		opts.TotalSpace != 8192<<20 || opts.GroupWindow != DefaultGroupWindow || opts.SyncPeriod != DefaultSyncPeriod {
		t.Fatalf("defaults %+v", opts)
	}
}

func TestDirectoryIsLocked(t *testing.T) {
	fs := vfs.NewMem()
	l := mustOpen(t, testOptions(fs))
	if _, err := Open(testOptions(fs)); err == nil {
		t.Fatal("a second Log opened the same directory")
	}
	mustf(t, l.Close(), "Close")
	mustOpen(t, testOptions(fs)).Close()
}

// TestRealFiles runs the log on the operating system's files: fallocate,
// fdatasync on a second handle, rename-based recycling, and a torn tail
// truncated for real.
func TestRealFiles(t *testing.T) {
	dir := t.TempDir()
	opts := Options{Dir: dir, SegmentSize: 4096, Sync: SyncBatch, Logger: quietLogger()}
	l := mustOpen(t, opts)
	_, pos := appendN(t, l, "disk", 100)
	mustf(t, l.MarkFlushed(pos[50]), "MarkFlushed")
	more, morePos := appendN(t, l, "more", 100)
	mustf(t, l.Close(), "Close")

	// Tear the last record as a crash would: its end and the end record go.
	lastPos := morePos[len(morePos)-1]
	path := filepath.Join(dir, segmentName(lastPos.Segment))
	recLen := recordSize(len(more[len(more)-1]))
	mustf(t, os.Truncate(path, lastPos.Offset+recLen-5), "truncate")
	torn, err := os.ReadFile(path)
	mustf(t, err, "read")

	got, st, err := replayAll(t, opts)
	mustf(t, err, "Replay")
	want := more[:len(more)-1]
	if st.TruncatedBytes != nonZeroLen(torn)-lastPos.Offset || len(got) < len(want) || !slices.Equal(payloads(got[len(got)-len(want):]), want) {
		t.Fatalf("replayed %d records (%+v)", len(got), st)
	}
	info, err := os.Stat(path)
	mustf(t, err, "stat")
	if info.Size() != lastPos.Offset+recordHeaderSize {
		t.Fatalf("torn segment is %d bytes, want %d (end record at the cut)", info.Size(), lastPos.Offset+recordHeaderSize)
	}
	got2, st, err := replayAll(t, opts)
	mustf(t, err, "Replay again")
	if st.TruncatedBytes != 0 || !slices.Equal(payloads(got2), payloads(got)) {
		t.Fatalf("second replay differs: %+v", st)
	}
}

// TestZeroAhead: the flusher keeps zeros written a chunk ahead of the
// records, never over one: at every point the file holds every record
// acknowledged so far and zeros after them, and a replay of the segment
// left without its end record (a crash) finds them all and cuts nothing.
func TestZeroAhead(t *testing.T) {
	fs := vfs.NewMem()
	opts := testOptions(fs)
	opts.SegmentSize = 4 << 20
	l := mustOpen(t, opts)
	var want []string
	var last Position
	for round := range 30 {
		ps, pos := appendN(t, l, fmt.Sprint("r", round), 1200) // ~130 KB a round
		want, last = append(want, ps...), pos[len(pos)-1]
		b := readFile(t, fs, fs.PathJoin(testDir, segmentName(last.Segment)))
		end := last.Offset + recordSize(len(ps[len(ps)-1]))
		if int64(len(b)) < end+zeroAhead/2 && int64(len(b)) < opts.SegmentSize {
			t.Fatalf("round %d: file is %d bytes, records end at %d: zeros do not run ahead", round, len(b), end)
		}
		if int64(len(b)) > end+zeroChunk+zeroAhead {
			t.Fatalf("round %d: file is %d bytes, records end at %d: zeros run too far ahead", round, len(b), end)
		}
		if nonZeroLen(b) > end {
			t.Fatalf("round %d: bytes that are not zero after the records", round)
		}
	}
	// A crash: the segment as it is now, without Close's end record.
	b := readFile(t, fs, fs.PathJoin(testDir, segmentName(last.Segment)))
	crashed := vfs.NewMem()
	mustf(t, crashed.MkdirAll(testDir, 0o755), "mkdir")
	writeFile(t, crashed, crashed.PathJoin(testDir, segmentName(last.Segment)), b)
	mustf(t, l.Close(), "Close")
	opts.FS = crashed
	got, st, err := replayAll(t, opts)
	mustf(t, err, "Replay")
	if !slices.Equal(payloads(got), want) || st.TruncatedBytes != 0 {
		t.Fatalf("replayed %d of %d records, truncating %d", len(got), len(want), st.TruncatedBytes)
	}
}
