package test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/gocql/gocql"
	"golang.org/x/sys/unix"

	"github.com/cqld/cqld/server"
)

// TestDurableAnswerFollowsItsFsync: in every sync mode where a write waits
// for its fsync, no answer leaves the node before the fsync that covers
// the write's record has returned. The commit log runs on a disk whose
// syncs take 10 ms more (syncOrderFS), which notes when each write of a
// segment file happened, which rows' values it carried, and when each
// sync of that file returned. The writes come from gocql, over TCP, on
// connections whose sockets ask the kernel for receive timestamps
// (tsConn): on loopback a segment of the answer is stamped as the node's
// write puts it on the wire, so the stamp is when the answer was written
// to the socket, not when the client got round to reading it. A write's
// record is covered by the first sync of its file that started after the
// record reached the file; its answer must be stamped after that sync
// returned. All stamps are read from the one wall clock (CLOCK_REALTIME:
// the kernel's receive stamps are on no other). "adaptive, instant
// syncs" runs on one connection, its segment syncs returning at once
// without syncing: there the event loop syncs the lone writer's write
// itself (commitlog's Hold), and its answer must still follow the sync.
func TestDurableAnswerFollowsItsFsync(t *testing.T) {
	for _, tc := range []struct {
		name, mode string
		lat        time.Duration // each segment sync's delay; 0: it returns at once without syncing
		conns      int
	}{
		{"batch", "batch", 10 * time.Millisecond, 2},
		{"group", "group", 10 * time.Millisecond, 2},
		{"adaptive", "adaptive", 10 * time.Millisecond, 2},
		{"adaptive, instant syncs", "adaptive", 0, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig(t, t.TempDir())
			cfg.CommitlogSync = tc.mode
			fs := newSyncOrderFS(tc.lat)
			fs.instant = tc.lat == 0
			node := startNodeWith(t, cfg, server.Options{FS: fs})
			dialer := &tsDialer{}
			c := gocqlCluster(node.Addr())
			c.ProtoVersion = 4 // frames tsConn can cut without v5 segments
			c.NumConns = tc.conns
			c.Dialer = dialer
			s, err := c.CreateSession()
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(s.Close)
			mustExec(t, s, `CREATE KEYSPACE fo WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}`)
			mustExec(t, s, `CREATE TABLE fo.t (k int PRIMARY KEY, v text)`)

			// A lone writer first (adaptive mode answers it from the
			// flusher), then concurrent writers, so group and adaptive
			// syncs cover several records each.
			const lone, writers, each = 5, 8, 5
			for k := range lone {
				mustExec(t, s, `INSERT INTO fo.t (k, v) VALUES (?, ?)`, k, orderMarker(k))
			}
			var wg sync.WaitGroup
			errs := make(chan error, writers*each)
			for w := range writers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range each {
						k := lone + w*each + i
						if err := s.Query(`INSERT INTO fo.t (k, v) VALUES (?, ?)`, k, orderMarker(k)).Exec(); err != nil {
							errs <- fmt.Errorf("write %d: %w", k, err)
						}
					}
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
			checkAnswerOrder(t, fs, dialer, lone+writers*each)
		})
	}
}

// orderMarker is row k's value: a string that appears in the request
// that writes it and in the commit log record that holds it.
func orderMarker(k int) string { return fmt.Sprintf("%s%06d", orderMarkerPrefix, k) }

const orderMarkerPrefix = "fsync-order-"

var orderMarkerLen = len(orderMarker(0))

// checkAnswerOrder checks every one of the n writes: its record reached a
// segment file, a sync of that file started afterwards, and the answer
// was written to the socket after that sync returned.
func checkAnswerOrder(t *testing.T, fs *syncOrderFS, d *tsDialer, n int) {
	t.Helper()
	fs.mu.Lock()
	defer fs.mu.Unlock()
	d.mu.Lock()
	defer d.mu.Unlock()
	margin, checked := time.Duration(0), 0
	for k := range n {
		m := orderMarker(k)
		answered, ok := d.answered[m]
		if !ok {
			t.Errorf("%s: no answer seen on the socket", m)
			continue
		}
		w, ok := fs.written[m]
		if !ok {
			t.Errorf("%s: its record was never written to a commit log segment", m)
			continue
		}
		cover := fs.coverOf(w)
		switch {
		case cover == nil:
			t.Errorf("%s: answered at %v, but no sync of %s started after its record was written", m, answered.Format(time.RFC3339Nano), w.file)
		case answered.Before(cover.returned):
			t.Errorf("%s: answered %v before the fsync covering its record returned", m, cover.returned.Sub(answered))
		default:
			if d := answered.Sub(cover.returned); checked == 0 || d < margin {
				margin = d
			}
			checked++
		}
	}
	t.Logf("%d writes, %d segment syncs; answers stamped by the kernel %d, at read time %d; %d in order, the closest written %v after its sync returned",
		n, len(fs.syncs), d.stamped, d.unstamped, checked, margin)
}

// syncOrderFS is the file system of a node whose commit log records when
// things happen: for each segment file (CommitLog-*), the writes that
// carried a row's marker and each sync's start (as an order, seq) and
// return (as a time). Its segment syncs take lat longer, or, with
// instant, return at once without syncing. Other files pass through
// untouched.
type syncOrderFS struct {
	vfs.FS
	lat     time.Duration
	instant bool

	mu      sync.Mutex
	seq     int64                  // orders writes and sync starts
	written map[string]markerWrite // by marker: the first write that carried it
	syncs   []syncEvent            // in order of their start
}

// markerWrite is a segment write that carried a marker: its file, its
// place in the order and when it started and returned.
type markerWrite struct {
	file       string
	seq        int64
	start, end time.Time
}

type syncEvent struct {
	file              string
	startSeq          int64
	started, returned time.Time
}

// coverOf is the sync that covers w's bytes: the first sync of w's file
// that started after w returned, or nil. REQUIRES: s.mu held.
func (s *syncOrderFS) coverOf(w markerWrite) *syncEvent {
	for i := range s.syncs {
		if e := &s.syncs[i]; e.file == w.file && e.startSeq > w.seq {
			return e
		}
	}
	return nil
}

func newSyncOrderFS(lat time.Duration) *syncOrderFS {
	return &syncOrderFS{FS: vfs.Default, lat: lat, written: map[string]markerWrite{}}
}

func (s *syncOrderFS) wrap(name string, f vfs.File, err error) (vfs.File, error) {
	if err != nil || !strings.HasPrefix(s.PathBase(name), "CommitLog-") {
		return f, err
	}
	return &orderFile{File: f, fs: s, name: name}, nil
}

func (s *syncOrderFS) Create(name string, category vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := s.FS.Create(name, category)
	return s.wrap(name, f, err)
}

func (s *syncOrderFS) OpenReadWrite(name string, category vfs.DiskWriteCategory, opts ...vfs.OpenOption) (vfs.File, error) {
	f, err := s.FS.OpenReadWrite(name, category, opts...)
	return s.wrap(name, f, err)
}

func (s *syncOrderFS) ReuseForWrite(oldname, newname string, category vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := s.FS.ReuseForWrite(oldname, newname, category)
	return s.wrap(newname, f, err)
}

// Unwrap is the wrapped FS.
func (s *syncOrderFS) Unwrap() vfs.FS { return s.FS }

// orderFile is a segment file handle of a syncOrderFS.
type orderFile struct {
	vfs.File
	fs   *syncOrderFS
	name string
}

func (f *orderFile) Write(p []byte) (int, error) {
	start := time.Now()
	n, err := f.File.Write(p)
	f.wrote(p[:max(n, 0)], start)
	return n, err
}

func (f *orderFile) WriteAt(p []byte, off int64) (int, error) {
	start := time.Now()
	n, err := f.File.WriteAt(p, off)
	f.wrote(p[:max(n, 0)], start)
	return n, err
}

// wrote notes the markers in p, once the bytes are in the file.
func (f *orderFile) wrote(p []byte, start time.Time) {
	end := time.Now()
	s := f.fs
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	for rest := p; ; {
		i := bytes.Index(rest, []byte(orderMarkerPrefix))
		if i < 0 || len(rest)-i < orderMarkerLen {
			return
		}
		m := string(rest[i : i+orderMarkerLen])
		if _, ok := s.written[m]; !ok {
			s.written[m] = markerWrite{file: f.name, seq: s.seq, start: start, end: end}
		}
		rest = rest[i+orderMarkerLen:]
	}
}

func (f *orderFile) Sync() error { return f.sync(f.File.Sync) }

func (f *orderFile) SyncData() error { return f.sync(f.File.SyncData) }

func (f *orderFile) SyncTo(length int64) (fullSync bool, err error) {
	err = f.sync(func() error {
		var e error
		fullSync, e = f.File.SyncTo(length)
		return e
	})
	return fullSync, err
}

// sync runs do lat late and notes its start and, before the caller can
// learn of it, its return.
func (f *orderFile) sync(do func() error) error {
	s := f.fs
	s.mu.Lock()
	s.seq++
	seq := s.seq
	s.mu.Unlock()
	started := time.Now()
	if s.lat > 0 {
		time.Sleep(s.lat)
	}
	var err error
	if !s.instant {
		err = do()
	}
	returned := time.Now()
	s.mu.Lock()
	s.syncs = append(s.syncs, syncEvent{file: f.name, startSeq: seq, started: started, returned: returned})
	s.mu.Unlock()
	return err
}

// tsDialer dials tsConns and collects, from all of them, when each marked
// request was sent, when its answer was written by the node, and when the
// client read it.
type tsDialer struct {
	mu        sync.Mutex
	sent      map[string]time.Time // by marker: just before the request's write
	answered  map[string]time.Time // by marker
	read      map[string]time.Time // by marker: when the read returned
	stamped   int                  // answers stamped by the kernel
	unstamped int                  // answers stamped with the read's time
}

func (d *tsDialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	var nd net.Dialer
	nc, err := nd.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	tc := nc.(*net.TCPConn)
	rc, err := tc.SyscallConn()
	if err != nil {
		tc.Close()
		return nil, err
	}
	var serr error
	if err := rc.Control(func(fd uintptr) {
		serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1)
	}); err != nil || serr != nil {
		tc.Close()
		return nil, fmt.Errorf("SO_TIMESTAMPNS: %w", errors.Join(err, serr))
	}
	d.mu.Lock()
	if d.answered == nil {
		d.sent, d.answered, d.read = map[string]time.Time{}, map[string]time.Time{}, map[string]time.Time{}
	}
	d.mu.Unlock()
	return &tsConn{Conn: tc, rc: rc, d: d, pending: map[int16]string{}}, nil
}

// tsConn is a client connection that cuts the protocol v4 frames it
// carries: a request whose body holds a marker is remembered by stream
// id, and the answer on that stream is stamped with the kernel's receive
// time of the read that completed it.
type tsConn struct {
	// NB: net.Conn, not *net.TCPConn, whose promoted writeBuffers would
	// let net.Buffers (gocql's write coalescing) write past Write.
	net.Conn
	rc      syscall.RawConn
	d       *tsDialer
	mu      sync.Mutex
	pending map[int16]string // stream -> marker of the request in flight
	out     []byte           // a request frame not yet whole
	in      []byte           // an answer frame not yet whole
	oob     [128]byte
}

func (c *tsConn) Write(p []byte) (int, error) {
	// NB: noted before the bytes go, since the answer may come back
	// before Write returns.
	c.mu.Lock()
	c.out = cutFrames(append(c.out, p...), func(stream int16, body []byte) {
		if i := bytes.Index(body, []byte(orderMarkerPrefix)); i >= 0 && len(body)-i >= orderMarkerLen {
			m := string(body[i : i+orderMarkerLen])
			c.pending[stream] = m
			c.d.mu.Lock()
			c.d.sent[m] = time.Now()
			c.d.mu.Unlock()
		}
	})
	c.mu.Unlock()
	return c.Conn.Write(p)
}

func (c *tsConn) Read(p []byte) (int, error) {
	var n, oobn int
	var rerr error
	err := c.rc.Read(func(fd uintptr) bool {
		n, oobn, _, _, rerr = unix.Recvmsg(int(fd), p, c.oob[:], 0)
		return rerr != unix.EAGAIN
	})
	if err == nil {
		err = rerr
	}
	if err != nil {
		return 0, err
	}
	if n == 0 && len(p) > 0 {
		return 0, io.EOF
	}
	readAt := time.Now()
	at, kernel := readAt, false
	if msgs, perr := unix.ParseSocketControlMessage(c.oob[:oobn]); perr == nil {
		for _, m := range msgs {
			if m.Header.Level == unix.SOL_SOCKET && m.Header.Type == unix.SCM_TIMESTAMPNS && len(m.Data) >= int(unsafe.Sizeof(unix.Timespec{})) {
				ts := (*unix.Timespec)(unsafe.Pointer(&m.Data[0]))
				at, kernel = time.Unix(ts.Sec, ts.Nsec), true
			}
		}
	}
	c.mu.Lock()
	c.in = cutFrames(append(c.in, p[:n]...), func(stream int16, _ []byte) {
		m, ok := c.pending[stream]
		if !ok {
			return
		}
		delete(c.pending, stream)
		c.d.mu.Lock()
		c.d.answered[m] = at
		c.d.read[m] = readAt
		if kernel {
			c.d.stamped++
		} else {
			c.d.unstamped++
		}
		c.d.mu.Unlock()
	})
	c.mu.Unlock()
	return n, nil
}

// cutFrames calls f for each whole protocol v4 frame at the start of b
// and returns what is left of b.
func cutFrames(b []byte, f func(stream int16, body []byte)) []byte {
	const headerLen = 9
	for len(b) >= headerLen {
		size := headerLen + int(binary.BigEndian.Uint32(b[5:9]))
		if len(b) < size {
			break
		}
		f(int16(binary.BigEndian.Uint16(b[2:4])), b[headerLen:size])
		b = b[size:]
	}
	return append(b[:0:0], b...)
}

var (
	_ vfs.FS       = (*syncOrderFS)(nil)
	_ vfs.File     = (*orderFile)(nil)
	_ gocql.Dialer = (*tsDialer)(nil)
	_ net.Conn     = (*tsConn)(nil)
)
