package test

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/xml"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/gocql/gocql"

	"github.com/cqld/cqld/server"
	"github.com/cqld/cqld/stress"
)

// served is the number of requests of one opcode the server answered
// with the given outcome, by its Prometheus counter.
// The frontend counts a request after sending its answer, so it first
// waits (bounded) for the server to have no request in flight.
func served(t *testing.T, node *server.Node, opcode, outcome string) int64 {
	t.Helper()
	for i := 0; i < 5000 && metricValue(t, node.Registry, "cqld_native_requests_in_flight", nil) > 0; i++ {
		sleep(1)
	}
	return int64(metricValue(t, node.Registry, "cqld_native_requests_total", map[string]string{"opcode": opcode, "outcome": outcome}))
}

// run runs cqlstress's Main against node and returns its exit status and
// output.
func run(t *testing.T, node *server.Node, args ...string) (int, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	args = append(args, "-node", node.Addr(), "-log", "interval=200ms")
	code := stress.Main(context.Background(), args, &out, &errOut)
	if testing.Verbose() {
		t.Logf("cqlstress %s\n%s%s", strings.Join(args, " "), out.String(), errOut.String())
	}
	return code, out.String() + errOut.String()
}

// runJSON runs cqlstress with -json and returns the parsed result.
func runJSON(t *testing.T, node *server.Node, args ...string) *stress.Result {
	t.Helper()
	path := filepath.Join(t.TempDir(), "result.json")
	code, out := run(t, node, append(args, "-json", path)...)
	if code != stress.ExitOK {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	r, err := stress.ReadResult(path)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestWorkloadsAgainstCqld runs every workload for a small bounded count
// and checks what the tool says it did against what the server says it
// served.
func TestWorkloadsAgainstCqld(t *testing.T) {
	node, _ := newNode(t)
	execs := func() int64 { return served(t, node, "EXECUTE", "ok") }
	// runExecuted runs cqlstress and checks the server executed as many
	// prepared statements meanwhile as the tool reports.
	runExecuted := func(t *testing.T, node *server.Node, want int64, args ...string) *stress.Result {
		t.Helper()
		before := execs()
		r := runJSON(t, node, args...)
		if got := execs() - before; got != want {
			t.Errorf("server executed %d statements, the tool reports %d", got, want)
		}
		return r
	}

	t.Run("write", func(t *testing.T) {
		r := runExecuted(t, node, 300, "write", "n=300", "-rate", "threads=4")
		tot := r.Steps[0].Total
		if tot.Ops != 300 || tot.Errors != 0 || tot.Partitions != 300 || tot.Rows != 300 {
			t.Fatalf("summary %+v, want 300 ops, partitions and rows, no errors", tot)
		}
		var n int64
		s := stressSession(t, node)
		if err := s.Query(`SELECT count(*) FROM keyspace1.standard1`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 300 {
			t.Errorf("standard1 holds %d rows after writing keys 1..300", n)
		}
	})
	t.Run("prepare ahead", func(t *testing.T) {
		// cqld offers CQLD_PREPARE_BATCH: the tool prepares the mixed
		// workload's four statements in one request before it runs, and
		// gocql's PREPAREs then find them cached; prepareBatch=off leaves
		// preparing to gocql alone.
		batches := served(t, node, "PREPARE_BATCH", "ok")
		r := runJSON(t, node, "mixed", "ratio(write=1,read=1,cas=1)", "n=30", "-pop", "seq=1..300", "-schema", "keyspace=ahead")
		if got := served(t, node, "PREPARE_BATCH", "ok") - batches; got != 1 {
			t.Errorf("%d PREPARE_BATCH requests served, want 1", got)
		}
		if len(r.PreparedAhead) != 1 || !r.PreparedAhead[0].Batched || r.PreparedAhead[0].Statements != 4 || r.PreparedAhead[0].Failed != 0 {
			t.Errorf("prepared ahead: %+v, want 4 statements batched on one node", r.PreparedAhead)
		}
		batches = served(t, node, "PREPARE_BATCH", "ok")
		r = runJSON(t, node, "write", "n=10", "-mode", "prepareBatch=off")
		if got := served(t, node, "PREPARE_BATCH", "ok") - batches; got != 0 || len(r.PreparedAhead) != 0 {
			t.Errorf("prepareBatch=off: %d PREPARE_BATCH requests, prepared ahead %+v", got, r.PreparedAhead)
		}
	})
	t.Run("read", func(t *testing.T) {
		r := runExecuted(t, node, 200, "read", "n=200", "-pop", "seq=1..300")
		tot := r.Steps[0].Total
		// Every read checks the values against what write stored.
		if tot.Ops != 200 || tot.Rows != 200 || tot.NotFound != 0 || tot.Errors != 0 {
			t.Fatalf("summary %+v, want 200 reads each finding its row", tot)
		}
	})
	t.Run("mixed", func(t *testing.T) {
		// cas works on a table of its own: the reads' checks of what write
		// stored hold beside it.
		r := runExecuted(t, node, 200, "mixed", "ratio(write=1,read=3,cas=1)", "n=200", "-pop", "dist=zipf(1..300,1.2)")
		w, rd, cas := r.Steps[0].ByOp["write"], r.Steps[0].ByOp["read"], r.Steps[0].ByOp["cas"]
		if w.Ops+rd.Ops+cas.Ops != 200 || w.Ops == 0 || cas.Ops == 0 || rd.Ops <= w.Ops || r.Steps[0].Total.Errors != 0 {
			t.Fatalf("write %d + read %d + cas %d ops (%d errors), want 200 with about three reads per write", w.Ops, rd.Ops, cas.Ops, r.Steps[0].Total.Errors)
		}
	})
	t.Run("counter_write simple lz4", func(t *testing.T) {
		r := runExecuted(t, node, 0, "counter_write", "n=100", "-pop", "seq=1..10", "-mode", "simple", "compression=lz4")
		if tot := r.Steps[0].Total; tot.Ops != 100 || tot.Errors != 0 {
			t.Fatalf("summary %+v", tot)
		}
		// Each operation added 1 to each of C0..C4 of one of keys 1..10.
		s := stressSession(t, node)
		var sum int64
		it := s.Query(`SELECT "C0", "C4" FROM keyspace1.counter1`).Iter()
		var c0, c4 int64
		for it.Scan(&c0, &c4) {
			sum += c0 + c4
		}
		if err := it.Close(); err != nil {
			t.Fatal(err)
		}
		if sum != 200 {
			t.Errorf("C0+C4 summed over counter1 = %d, want 200 after 100 increments", sum)
		}
	})
	t.Run("counter_read snappy", func(t *testing.T) {
		r := runExecuted(t, node, 50, "counter_read", "n=50", "-pop", "seq=1..10", "-mode", "compression=snappy")
		if tot := r.Steps[0].Total; tot.Ops != 50 || tot.Rows != 50 || tot.Errors != 0 {
			t.Fatalf("summary %+v", tot)
		}
	})
	t.Run("cas", func(t *testing.T) {
		r := runExecuted(t, node, 100, "cas", "n=100", "-pop", "seq=1000..1019", "-rate", "threads=2")
		tot := r.Steps[0].Total
		if tot.Ops != 100 || tot.Errors != 0 {
			t.Fatalf("summary %+v", tot)
		}
		// The first operation on each of the 20 keys is an INSERT IF NOT
		// EXISTS that finds no row; at least those apply.
		if tot.NotApplied > 100-20 {
			t.Errorf("%d of 100 conditions not applied", tot.NotApplied)
		}
		n := 0
		it := stressSession(t, node).Query(`SELECT key FROM keyspace1.cas1`).Iter()
		for key := []byte(nil); it.Scan(&key); {
			if k := binary.BigEndian.Uint64(key); k >= 1000 && k <= 1019 {
				n++
			}
		}
		if err := it.Close(); err != nil {
			t.Fatal(err)
		}
		if n != 20 {
			t.Errorf("cas1 holds %d rows after conditional writes to keys 1000..1019", n)
		}
	})
	t.Run("serial_read", func(t *testing.T) {
		// -populate writes keys 2000..2019 of cas1 (20 statements), then
		// 60 reads at SERIAL find them all.
		r := runExecuted(t, node, 80, "serial_read", "n=60", "-populate", "n=20", "-pop", "seq=2000..2019", "-serial-cl", "SERIAL")
		st := r.Steps[0]
		tot := st.Total
		if tot.Ops != 60 || tot.Errors != 0 || tot.Rows != 60 || tot.NotFound != 0 || st.Timeouts != 0 {
			t.Fatalf("summary %+v, %d timeouts", tot, st.Timeouts)
		}
		if l := tot.Latency; l.P75 < l.Median || l.P75 > l.P95 {
			t.Errorf("p75 %v outside median %v .. p95 %v", l.P75, l.Median, l.P95)
		}
		// Without -populate the keys past cas1's are not there.
		r = runExecuted(t, node, 10, "serial_read", "n=10", "-pop", "seq=3000..3009")
		if tot := r.Steps[0].Total; tot.Ops != 10 || tot.NotFound != 10 || tot.Errors != 0 {
			t.Fatalf("reads of absent keys: %+v", tot)
		}
	})
	t.Run("user profile", func(t *testing.T) {
		before := execs()
		r := runJSON(t, node, "user", "profile=../stress/testdata/blogposts.yaml", "ops(insert=1,singlepost=2,timeline=1)",
			"n=120", "-populate", "n=20", "-pop", "seq=1..20")
		st := r.Steps[0]
		if st.Total.Ops != 120 || st.Total.Errors != 0 || len(st.ByOp) != 3 {
			t.Fatalf("summary %+v by op %v", st.Total, st.ByOp)
		}
		// Queries ask for partitions 1..20, all populated.
		if q := st.ByOp["singlepost"]; q.NotFound != 0 || q.Rows != q.Ops {
			t.Errorf("singlepost: %d ops found %d rows (%d missing)", q.Ops, q.Rows, q.NotFound)
		}
		// A session with a keyspace makes gocql read that keyspace's
		// metadata with a few prepared statements of its own.
		if got := execs() - before; got < 120+20 || got > 120+20+20 {
			t.Errorf("server executed %d statements, the tool reports 120 and 20 to populate", got)
		}
		var parts int
		it := stressSession(t, node).Query(`SELECT DISTINCT domain FROM stressprofile.blogposts`).Iter()
		for it.Scan(new(string)) {
			parts++
		}
		if err := it.Close(); err != nil {
			t.Fatal(err)
		}
		if parts != 20 {
			t.Errorf("blogposts has %d partitions after writing partitions 1..20", parts)
		}
	})
	t.Run("sweep", func(t *testing.T) {
		chart := filepath.Join(t.TempDir(), "sweep.svg")
		r := runExecuted(t, node, 120, "write", "n=40", "-rate", "threads>=1", "threads<=4", "-pop", "seq=1..40", "-chart", chart)
		checkSVG(t, chart, 2) // throughput and p99 against threads
		if len(r.Steps) != 3 || !r.Sweep {
			t.Fatalf("%d steps, want 3 (1, 2, 4 threads)", len(r.Steps))
		}
		for i, s := range r.Steps {
			if s.Threads != 1<<i || s.Total.Ops != 40 {
				t.Errorf("step %d: %d threads, %d ops", i, s.Threads, s.Total.Ops)
			}
		}
	})
	t.Run("fixed rate", func(t *testing.T) {
		r := runExecuted(t, node, 100, "write", "n=100", "-rate", "fixed=2000/s", "threads=8", "-pop", "seq=1..100")
		st := r.Steps[0]
		if !r.OpenLoop || st.Total.Ops != 100 || st.Total.ServiceTime == nil || st.TargetRate != 2000 {
			t.Fatalf("open loop %v, %d ops, service time %v", r.OpenLoop, st.Total.Ops, st.Total.ServiceTime)
		}
		// Latency counts from the intended start, so it is never below
		// the service time at the same percentile.
		if st.Total.Latency.Max < st.Total.ServiceTime.Max {
			t.Errorf("corrected max %v below service max %v", st.Total.Latency.Max, st.Total.ServiceTime.Max)
		}
	})
}

func stressSession(t *testing.T, node *server.Node) *gocql.Session {
	t.Helper()
	s, err := gocqlCluster(node.Addr()).CreateSession()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// TestOutputFilesParse checks that the JSON, the HDR log and the chart a
// run writes can be read back, and agree with each other.
func TestOutputFilesParse(t *testing.T) {
	node, _ := newNode(t)
	dir := t.TempDir()
	js, hl, svg, page := filepath.Join(dir, "r.json"), filepath.Join(dir, "r.hdr"), filepath.Join(dir, "r.svg"), filepath.Join(dir, "r.html")
	code, out := run(t, node, "mixed", "ratio(write=1,read=1)", "n=400", "-rate", "fixed=4000/s", "threads=4",
		"-json", js, "-hdrfile", hl, "-chart", svg, "-title", "fixed run")
	if code != stress.ExitOK {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	for _, field := range []string{"Op rate", "Partition rate", "Row rate", "Latency mean", "Latency median",
		"Latency 95th percentile", "Latency 99th percentile", "Latency 99.9th percentile", "Latency max",
		"Total errors", "Total operation time", "Service time 99th percentile"} {
		if !strings.Contains(out, field+" ") {
			t.Errorf("summary lacks %q:\n%s", field, out)
		}
	}
	r, err := stress.ReadResult(js)
	if err != nil {
		t.Fatal(err)
	}
	if r.Steps[0].Total.Ops != 400 {
		t.Fatalf("JSON says %d ops", r.Steps[0].Total.Ops)
	}
	// The percentile spectrum climbs to the maximum.
	spec := r.Steps[0].Spectrum
	for i := 1; i < len(spec); i++ {
		if spec[i].Ms < spec[i-1].Ms || spec[i].Percentile <= spec[i-1].Percentile {
			t.Fatalf("spectrum not increasing at %d: %v", i, spec)
		}
	}
	if len(spec) == 0 || spec[len(spec)-1].Ms != r.Steps[0].Total.Latency.Max || len(r.Steps[0].ServiceSpectrum) != len(spec) {
		t.Errorf("spectrum %v does not end at the max %v, or has no service-time twin", spec, r.Steps[0].Total.Latency.Max)
	}
	var ivOps int64
	for _, iv := range r.Steps[0].Intervals {
		ivOps += iv.Ops
	}
	if ivOps != 400 {
		t.Errorf("intervals add up to %d ops, want 400", ivOps)
	}

	// The HDR log: one histogram per kind per interval, plus service time
	// in an open loop; together they hold every successful operation.
	f, err := os.Open(hl)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	lr := hdr.NewHistogramLogReader(f)
	byTag := map[string]int64{}
	for i := 0; i < 10000; i++ {
		h, err := lr.NextIntervalHistogram()
		if err != nil {
			t.Fatal(err)
		}
		if h == nil {
			break
		}
		byTag[h.Tag()] += h.TotalCount()
	}
	if byTag["write"]+byTag["read"] != 400 || byTag["write-service"] != byTag["write"] || byTag["read"] == 0 {
		t.Errorf("HDR log counts by tag %v, want write+read = 400 and service time beside each", byTag)
	}

	checkSVG(t, svg, 3) // throughput, latency over time, latency by percentile

	// Comparing runs: two results in one picture, one series each.
	if code := stress.Main(context.Background(), []string{"chart", "-o", page, js, js}, io.Discard, io.Discard); code != stress.ExitOK {
		t.Fatalf("chart exit %d", code)
	}
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(b, []byte("<script")) || !bytes.Contains(b, []byte("<svg")) {
		t.Error("the HTML chart should be an inline SVG without script")
	}
}

// checkSVG parses an SVG file as XML and checks the throughput panel has
// one line per run.
func checkSVG(t *testing.T, path string, runs int) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dec := xml.NewDecoder(bytes.NewReader(b))
	lines := 0
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("%s is not XML: %v", path, err)
		}
		if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "polyline" {
			lines++
		}
	}
	if lines < runs {
		t.Errorf("%s has %d lines, want at least %d", path, lines, runs)
	}
}

// TestErrorsAndExitStatus: failures are counted by kind, the first few
// printed with their message, and the exit status follows -max-errors.
func TestErrorsAndExitStatus(t *testing.T) {
	node, _ := newNode(t)
	profile := filepath.Join(t.TempDir(), "bad.yaml")
	err := os.WriteFile(profile, []byte(`keyspace: badprofile
keyspace_definition: |
  CREATE KEYSPACE badprofile WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}
table: t
table_definition: CREATE TABLE t (k text PRIMARY KEY, v text)
queries:
  nosuch:
    cql: SELECT * FROM t WHERE nosuch = ?
`), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	before := served(t, node, "PREPARE", "invalid")
	code, out := run(t, node, "user", "profile="+profile, "ops(insert=1,nosuch=1)", "n=60", "-rate", "threads=2")
	if code != stress.ExitFailed {
		t.Errorf("exit %d with errors and -max-errors 0, want %d", code, stress.ExitFailed)
	}
	failed := served(t, node, "PREPARE", "invalid") - before
	if failed == 0 || !strings.Contains(out, "invalid=") || !strings.Contains(out, "error: nosuch: invalid:") {
		t.Errorf("server refused %d PREPAREs; output:\n%s", failed, out)
	}
	if n := strings.Count(out, "error: nosuch"); n > 5 {
		t.Errorf("%d error messages printed, want at most 5", n)
	}
	if code, out := run(t, node, "user", "profile="+profile, "ops(nosuch=1)", "n=10", "-max-errors", "10"); code != stress.ExitOK {
		t.Errorf("exit %d with 10 errors and -max-errors 10:\n%s", code, out)
	}
	if code, _ := run(t, node, "write"); code != stress.ExitUsage {
		t.Errorf("unbounded run: exit %d, want %d", code, stress.ExitUsage)
	}
}

// TestInterruptPrintsSummary: cancelling a run (Ctrl-C) ends it with a
// summary of what was done and the interrupted status.
func TestInterruptPrintsSummary(t *testing.T) {
	node, _ := newNode(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := &signalWriter{match: "total,", hit: make(chan struct{})}
	done := make(chan int, 1)
	go func() {
		done <- stress.Main(ctx, []string{"write", "duration=60s", "-rate", "threads=2", "-node", node.Addr(), "-log", "interval=100ms"}, out, io.Discard)
	}()
	select {
	case <-out.hit:
	case code := <-done:
		t.Fatalf("run ended (%d) before its first interval:\n%s", code, out.String())
	}
	cancel()
	if code := <-done; code != stress.ExitInterrupted {
		t.Errorf("exit %d, want %d", code, stress.ExitInterrupted)
	}
	if s := out.String(); !strings.Contains(s, "Op rate") || !strings.Contains(s, "Interrupted") {
		t.Errorf("no summary after interrupt:\n%s", s)
	}
}

// signalWriter closes hit the first time match is written.
type signalWriter struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	match string
	hit   chan struct{}
	once  sync.Once
}

func (w *signalWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if strings.Contains(w.buf.String(), w.match) {
		w.once.Do(func() { close(w.hit) })
	}
	return len(p), nil
}

func (w *signalWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}
