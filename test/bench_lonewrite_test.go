package test

import (
	"flag"
	"fmt"
	"os"
	"runtime/trace"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/gocql/gocql"

	"github.com/cqld/cqld/server"
)

var (
	lwOps    = flag.Int("lw.ops", 1000, "BenchmarkLoneDurableWrite: writes per mode per round")
	lwRounds = flag.Int("lw.rounds", 3, "BenchmarkLoneDurableWrite: rounds, each starting at the next mode")
	lwTrace  = flag.String("lw.trace", "", "BenchmarkLoneDurableWrite: write a runtime trace of the first round's first 50 adaptive writes to this file")
)

// BenchmarkLoneDurableWrite tells where a lone durable write's time goes,
// from the client's send to its answer on the socket. One gocql session
// (one connection, protocol v4, write coalescing off) writes one row at a
// time, INSERT INTO lw.t (k, v) VALUES (?, ?) with an 18-byte text v that
// marks the write, against in-process nodes in adaptive, batch and
// periodic mode; and a loop of 128-byte pwrite + fdatasync on a file of
// the same disk, the fsync alone. Rounds run every mode in turn, each round
// starting at the next, and the table pools the rounds.
//
// Every stamp is taken outside the node, so that the node runs its own
// code: the connection (tsConn) stamps each request just before it goes
// to the socket and each answer with the kernel's receive stamp, taken on
// loopback as the node's write puts it on the wire; the commit log's disk
// (syncOrderFS, no added latency) stamps each segment write that carried a
// marker and each sync. The stages of a write:
//
//	send→pwrite    the request read by the event loop, the statement run,
//	               the record appended to the log's buffer, the flusher
//	               woken and its WriteAt begun
//	pwrite         the WriteAt of the buffer (a pwrite system call)
//	pwrite→sync    what the flusher does between the two
//	fdatasync      the sync that covers the record
//	sync→answer    the completion goroutine woken, the answer encoded
//	               and queued, the event loop woken, its write
//	answer→read    the client's read returning (client side)
//	send→answer    all of the node's share, the sum of the above but the
//	               last
//	send→answer − fdatasync
//	               the same without its fsync, write by write: what the
//	               node adds to the disk, to set against periodic mode's
//	               send→answer
//	client Exec    gocql's Exec from call to return
//
// Run it with -test.benchtime 1x: it runs -lw.rounds × -lw.ops writes per
// mode whatever b.N is. The command and figures are in docs/commitlog.md.
func BenchmarkLoneDurableWrite(b *testing.B) {
	load0 := loadAvg()
	modes := []string{"adaptive", "batch", "periodic", "fdatasync"}
	type lwNode struct {
		fs *syncOrderFS
		d  *tsDialer
		s  *gocql.Session
		q  *gocql.Query
	}
	nodes := map[string]*lwNode{}
	for _, mode := range modes[:3] {
		cfg := testConfig(b, b.TempDir())
		cfg.CommitlogSync = mode
		fs := newSyncOrderFS(0)
		node := startNodeWith(b, cfg, server.Options{FS: fs})
		d := &tsDialer{}
		c := gocqlCluster(node.Addr())
		c.ProtoVersion = 4
		c.NumConns = 1
		c.WriteCoalesceWaitTime = 0
		c.Dialer = d
		s, err := c.CreateSession()
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(s.Close)
		for _, q := range []string{
			`CREATE KEYSPACE lw WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}`,
			`CREATE TABLE lw.t (k int PRIMARY KEY, v text)`,
		} {
			if err := s.Query(q).Exec(); err != nil {
				b.Fatalf("%s: %v", q, err)
			}
		}
		q := s.Query(`INSERT INTO lw.t (k, v) VALUES (?, ?)`)
		for k := range 300 { // prepared, segments ready, caches warm
			if err := q.Bind(k, "warm").Exec(); err != nil {
				b.Fatal(err)
			}
		}
		nodes[mode] = &lwNode{fs: fs, d: d, s: s, q: q}
	}
	sf, err := newSyncLoop(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer sf.close()

	stages := map[string]map[string][]time.Duration{} // mode -> stage -> samples
	add := func(mode, stage string, d time.Duration) {
		if stages[mode] == nil {
			stages[mode] = map[string][]time.Duration{}
		}
		stages[mode][stage] = append(stages[mode][stage], d)
	}
	next := 0 // the next write's marker
	b.ResetTimer()
	for r := range *lwRounds {
		for i := range modes {
			mode := modes[(i+r)%len(modes)]
			if mode == "fdatasync" {
				for range *lwOps {
					w, s, err := sf.once()
					if err != nil {
						b.Fatal(err)
					}
					add(mode, "pwrite", w)
					add(mode, "fdatasync", s)
				}
				continue
			}
			n := nodes[mode]
			first := next
			execs := make([]time.Duration, 0, *lwOps)
			for j := range *lwOps {
				if r == 0 && j == 0 && mode == "adaptive" && *lwTrace != "" {
					f, err := os.Create(*lwTrace)
					if err != nil {
						b.Fatal(err)
					}
					if err := trace.Start(f); err != nil {
						b.Fatal(err)
					}
				}
				start := time.Now()
				if err := n.q.Bind(next%1000, orderMarker(next)).Exec(); err != nil {
					b.Fatal(err)
				}
				execs = append(execs, time.Since(start))
				next++
				if r == 0 && j == 49 && mode == "adaptive" && *lwTrace != "" {
					trace.Stop()
				}
			}
			for _, e := range execs {
				add(mode, "client Exec", e)
			}
			lwStages(b, n.fs, n.d, first, next, func(stage string, d time.Duration) { add(mode, stage, d) })
		}
	}
	b.StopTimer()
	fmt.Print(lwTable(stages, modes, load0, loadAvg()))
}

// lwStages adds the stages of the writes marked first..end-1.
func lwStages(b *testing.B, fs *syncOrderFS, d *tsDialer, first, end int, add func(string, time.Duration)) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	d.mu.Lock()
	defer d.mu.Unlock()
	for k := first; k < end; k++ {
		m := orderMarker(k)
		sent, ok1 := d.sent[m]
		answered, ok2 := d.answered[m]
		read, ok3 := d.read[m]
		if !ok1 || !ok2 || !ok3 {
			b.Fatalf("%s: not seen on the client's socket", m)
		}
		add("send→answer", answered.Sub(sent))
		add("answer→read", read.Sub(answered))
		w, ok := fs.written[m]
		if !ok {
			continue // periodic: may still be in the buffer
		}
		add("send→pwrite", w.start.Sub(sent))
		add("pwrite", w.end.Sub(w.start))
		cover := fs.coverOf(w)
		if cover == nil || cover.returned.After(answered) {
			continue // periodic: answered before any sync
		}
		add("pwrite→sync", cover.started.Sub(w.end))
		add("fdatasync", cover.returned.Sub(cover.started))
		add("sync→answer", answered.Sub(cover.returned))
		add("send→answer − fdatasync", answered.Sub(sent)-cover.returned.Sub(cover.started))
	}
}

// lwTable is the stages' p50, p90 and mean per mode, in microseconds.
func lwTable(stages map[string]map[string][]time.Duration, modes []string, load0, load1 string) string {
	order := []string{"send→pwrite", "pwrite", "pwrite→sync", "fdatasync", "sync→answer", "send→answer", "send→answer − fdatasync", "answer→read", "client Exec"}
	var out strings.Builder
	fmt.Fprintf(&out, "\nlone write stages, µs: p50 / p90 / mean (n); load average before: %s, after: %s\n", load0, load1)
	fmt.Fprintf(&out, "| stage | %s |\n|---|%s\n", strings.Join(modes, " | "), strings.Repeat("---|", len(modes)))
	for _, st := range order {
		fmt.Fprintf(&out, "| %s |", st)
		for _, m := range modes {
			ds := slices.Clone(stages[m][st])
			if len(ds) == 0 {
				out.WriteString(" |")
				continue
			}
			slices.Sort(ds)
			var sum time.Duration
			for _, d := range ds {
				sum += d
			}
			us := func(d time.Duration) float64 { return float64(d) / 1e3 }
			fmt.Fprintf(&out, " %.1f / %.1f / %.1f (%d) |", us(ds[len(ds)/2]), us(ds[len(ds)*9/10]), us(sum/time.Duration(len(ds))), len(ds))
		}
		out.WriteString("\n")
	}
	return out.String()
}

func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	return strings.Join(f[:min(3, len(f))], " ")
}

// syncLoop writes 128-byte records one after the other into a file whose
// space was written (zeros) and synced first, as the commit log writes a
// segment, each record followed by its fdatasync.
type syncLoop struct {
	f   vfs.File
	off int64
}

const syncLoopSize = 8 << 20

func newSyncLoop(dir string) (*syncLoop, error) {
	f, err := vfs.Default.Create(dir+"/fsync-loop", vfs.WriteCategoryUnspecified)
	if err != nil {
		return nil, err
	}
	if _, err := f.WriteAt(make([]byte, syncLoopSize), 0); err != nil {
		return nil, err
	}
	if err := f.Sync(); err != nil {
		return nil, err
	}
	return &syncLoop{f: f}, nil
}

func (s *syncLoop) once() (write, sync time.Duration, err error) {
	rec := make([]byte, 128)
	rec[0] = 1
	t0 := time.Now()
	if _, err := s.f.WriteAt(rec, s.off); err != nil {
		return 0, 0, err
	}
	t1 := time.Now()
	if err := s.f.SyncData(); err != nil {
		return 0, 0, err
	}
	s.off = (s.off + 128) % syncLoopSize
	return t1.Sub(t0), time.Since(t1), nil
}

func (s *syncLoop) close() { s.f.Close() }
