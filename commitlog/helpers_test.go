package commitlog

import (
	"bytes"
	"fmt"
	"hash/crc32"
	"io"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
)

const testDir = "/cl"

// testLogger collects log lines so tests can check what the operator reads.
type testLogger struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (tl *testLogger) logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(lockedWriter{tl}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

func (tl *testLogger) String() string {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	return tl.buf.String()
}

type lockedWriter struct{ tl *testLogger }

func (w lockedWriter) Write(p []byte) (int, error) {
	w.tl.mu.Lock()
	defer w.tl.mu.Unlock()
	return w.tl.buf.Write(p)
}

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func testOptions(fs vfs.FS) Options {
	return Options{FS: fs, Dir: testDir, SegmentSize: 64 << 10, Sync: SyncBatch, Logger: quietLogger()}
}

func mustOpen(t testing.TB, opts Options) *Log {
	t.Helper()
	l, err := Open(opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return l
}

type replayed struct {
	payload string
	pos     Position
}

// replayAll opens the log in opts, replays it and closes it.
func replayAll(t testing.TB, opts Options) ([]replayed, ReplayStats, error) {
	t.Helper()
	l := mustOpen(t, opts)
	defer l.Close()
	var out []replayed
	st, err := l.Replay(func(p []byte, pos Position) error {
		out = append(out, replayed{string(p), pos})
		return nil
	})
	return out, st, err
}

func payloads(rs []replayed) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.payload
	}
	return out
}

// segmentFiles lists the segment files in dir, in id order.
func segmentFiles(t testing.TB, fs vfs.FS) (segs, recycled []string) {
	t.Helper()
	names, err := fs.List(testDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if _, rec, ok := parseFileName(n); ok {
			if rec {
				recycled = append(recycled, n)
			} else {
				segs = append(segs, n)
			}
		}
	}
	return segs, recycled
}

func readFile(t testing.TB, fs vfs.FS, path string) []byte {
	t.Helper()
	f, err := fs.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func writeFile(t testing.TB, fs vfs.FS, path string, b []byte) {
	t.Helper()
	f, err := fs.Create(path, vfs.WriteCategoryUnspecified)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(bytes.Clone(b)); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// encodeSegment builds a segment file by hand: header, then one data record
// per payload, each claiming the previous records synced, then tail.
func encodeSegment(id uint64, payloads []string, tail []byte) (b []byte, offs []int64) {
	b = segmentHeader(id)
	synced := int64(segmentHeaderSize)
	for _, p := range payloads {
		off := int64(len(b))
		rec := make([]byte, recordSize(len(p)))
		copy(rec[recordHeaderSize:], p)
		putRecordHeader(rec, kindData, id, synced, len(p), crc32c([]byte(p)))
		b = append(b, rec...)
		offs = append(offs, off)
		synced = int64(len(b))
	}
	return append(b, tail...), offs
}

// faultFS wraps an FS to count syncs, hold them at a gate, slow them down,
// and make writes short: the faults errorfs does not inject.
type faultFS struct {
	vfs.FS
	syncs      atomic.Int64 // SyncData calls on segment files
	gate       atomic.Pointer[chan struct{}]
	gatePath   atomic.Pointer[string] // when set, only this file's syncs are counted and held
	gateHit    chan string            // receives the path of each sync held at the gate
	shortWrite atomic.Bool            // the next segment write writes half and says so
	syncDelay  atomic.Int64           // each segment sync first sleeps this many nanoseconds
	writes     atomic.Int64           // segment writes
	writeGate  atomic.Pointer[chan struct{}]
	writeHit   chan struct{} // receives once for each segment write held at writeGate
}

func newFaultFS(fs vfs.FS) *faultFS {
	return &faultFS{FS: fs, gateHit: make(chan string, 64), writeHit: make(chan struct{}, 64)}
}

// holdWrites makes every later segment write wait until the returned func
// is called, as the kernel holds a writer while it writes back dirty pages.
func (f *faultFS) holdWrites() (release func()) { return closeGate(&f.writeGate) }

// closeGate makes every later segment sync wait until the returned func is
// called.
func (f *faultFS) closeGate() (open func()) { return closeGate(&f.gate) }

// closeGate stores a closed gate in g and returns the func that opens it.
func closeGate(g *atomic.Pointer[chan struct{}]) (open func()) {
	c := make(chan struct{})
	g.Store(&c)
	return func() {
		g.Store(nil)
		close(c)
	}
}

func isSegment(path string) bool {
	return strings.HasSuffix(path, segmentSuffix) && strings.Contains(path, segmentPrefix)
}

func (f *faultFS) wrap(file vfs.File, path string, err error) (vfs.File, error) {
	if err != nil || !isSegment(path) {
		return file, err
	}
	return &faultFile{File: file, fs: f, path: path}, nil
}

func (f *faultFS) Create(name string, c vfs.DiskWriteCategory) (vfs.File, error) {
	file, err := f.FS.Create(name, c)
	return f.wrap(file, name, err)
}

func (f *faultFS) OpenReadWrite(name string, c vfs.DiskWriteCategory, opts ...vfs.OpenOption) (vfs.File, error) {
	file, err := f.FS.OpenReadWrite(name, c, opts...)
	return f.wrap(file, name, err)
}

func (f *faultFS) Unwrap() vfs.FS { return f.FS }

type faultFile struct {
	vfs.File
	fs   *faultFS
	path string
}

func (f *faultFile) SyncData() error {
	if p := f.fs.gatePath.Load(); p != nil && *p != f.path {
		return f.File.SyncData()
	}
	f.fs.syncs.Add(1)
	if d := f.fs.syncDelay.Load(); d > 0 {
		time.Sleep(time.Duration(d))
	}
	if g := f.fs.gate.Load(); g != nil {
		f.fs.gateHit <- f.path
		<-*g
	}
	return f.File.SyncData()
}

func (f *faultFile) WriteAt(b []byte, off int64) (int, error) {
	f.fs.writes.Add(1)
	if g := f.fs.writeGate.Load(); g != nil {
		f.fs.writeHit <- struct{}{}
		<-*g
	}
	if f.fs.shortWrite.CompareAndSwap(true, false) {
		return f.File.WriteAt(b[:len(b)/2], off)
	}
	return f.File.WriteAt(b, off)
}

func crc32c(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }

func mustf(t testing.TB, err error, format string, args ...any) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", fmt.Sprintf(format, args...), err)
	}
}

// waitReady waits until the next segment is prepared.
func waitReady(l *Log) {
	waitFor(func() bool {
		l.mu.Lock()
		defer l.mu.Unlock()
		return l.ready != nil
	})
}
