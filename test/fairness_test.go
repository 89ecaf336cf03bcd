package test

import (
	"fmt"
	"net"
	"runtime"
	runtimemetrics "runtime/metrics"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/datastax/go-cassandra-native-protocol/primitive"
	"github.com/gocql/gocql"
	"github.com/prometheus/client_golang/prometheus"
)

// A greedy connection with thousands of requests queued does not make a
// well-behaved client wait for them: the workers take the connections in
// turn, and the greedy connection runs at most
// native_transport_max_running_requests_per_connection of its requests at
// once. Each is checked alone: with that cap under the worker count,
// workers stay free for the good request whatever the order; with the cap
// at the worker count, every worker runs the greedy connection's requests
// and only the turns let the good one in before those queued. Checked on
// counts: how many of the greedy connection's answers arrive while the
// good client's one request is served, and how many requests run at once.
func TestFairSchedulingGreedyConnection(t *testing.T) {
	const workers = 8
	for _, running := range []int{3, workers} {
		t.Run(fmt.Sprintf("running=%d", running), func(t *testing.T) {
			greedyConnection(t, workers, running)
		})
	}
}

// greedyConnection is TestFairSchedulingGreedyConnection on a node of
// workers workers running at most running requests of one connection.
func greedyConnection(t *testing.T, workers, running int) {
	const (
		greedy = 4000
		rows   = 300
		queued = 3000
	)
	cfg := testConfig(t, t.TempDir())
	cfg.NativeTransportMaxThreads = workers
	cfg.NativeTransportMaxRequestsPerConnection = greedy
	cfg.NativeTransportMaxRunningRequestsPerConnection = running
	node := startNode(t, cfg)
	s := connect(t, node.Addr())
	defer s.Close()
	fillFairnessTable(t, s, rows, 16)

	g := dial(t, node.Addr())
	g.handshake()
	var burst []byte
	for i := range greedy {
		burst = append(burst, frameBytes(4, 0, int16(10+i), primitive.OpCodeQuery, queryBody(`SELECT count(*) FROM fair.t WHERE k = 0`))...)
	}
	var answered atomic.Int64
	var hangingUp atomic.Bool
	done := make(chan error, 1)
	go func() {
		for range greedy {
			r, err := g.read()
			if err != nil && hangingUp.Load() {
				break // the answers read so far were checked
			}
			if err == nil && r.op != primitive.OpCodeResult {
				err = fmt.Errorf("greedy answer: %s", fmtReply(r))
			}
			if err != nil {
				done <- err
				return
			}
			answered.Add(1)
		}
		done <- nil
	}()
	g.write(burst)
	waitMetric(t, node.Registry, "cqld_native_worker_queue_depth", func(v float64) bool { return v >= queued })

	before := answered.Load()
	var n int
	if err := s.Query(`SELECT count(*) FROM fair.t WHERE k = 0`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	during := answered.Load() - before
	// The greedy connection runs at most
	// native_transport_max_running_requests_per_connection of its
	// requests at once: this read runs on another worker.
	var active int
	if err := s.Query(`SELECT active_tasks FROM system_views.thread_pools WHERE name = 'Native-Transport-Requests'`).Scan(&active); err != nil {
		t.Fatal(err)
	}
	if active > running+1 {
		t.Errorf("%d requests running with the greedy connection's queued, want at most %d of its and this one", active, running)
	}
	t.Logf("the good request was answered while the greedy connection got %d answers, with %d+ of its requests queued", during, queued)
	if n != rows {
		t.Errorf("count(*) = %d, want %d", n, rows)
	}
	// In turn, about one greedy request per worker runs before the good
	// one, and more while its answer travels: the client's goroutines
	// share this process's processors with the busy workers, and wait for
	// them (up to several hundred answers here). First in, first out, all
	// those queued would run before it.
	if during >= queued/2 {
		t.Errorf("%d greedy answers came while the good request waited, of the %d+ queued before it", during, queued)
	}
	// The greedy connection hangs up with most of its requests still
	// queued: every answer it got was a result, and the node drops the
	// rest (running them all would take most of this test's time).
	hangingUp.Store(true)
	g.c.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	// Its queue goes with it, rather than running out (which would take
	// longer than waitMetric waits).
	waitMetric(t, node.Registry, "cqld_native_worker_queue_depth", func(v float64) bool { return v == 0 })
	if err := s.Query(`SELECT count(*) FROM fair.t WHERE k = 0`).Scan(&n); err != nil || n != rows {
		t.Errorf("after the greedy connection hung up: count(*) = %d, %v", n, err)
	}
}

// A connection that pipelines reads of large rows and never reads the
// answers makes the node run only as many as fill its send queue
// (native_transport_send_queue_capacity), plus those already running:
// the node's heap stays within that, not the answers to every request.
func TestUnreadLargeAnswersBounded(t *testing.T) {
	const (
		requests = 2000
		value    = 100 << 10
		workers  = 8
	)
	cfg := testConfig(t, t.TempDir())
	cfg.NativeTransportMaxThreads = workers
	node := startNode(t, cfg)
	s := connect(t, node.Addr())
	defer s.Close()
	for _, q := range []string{
		`CREATE KEYSPACE fair WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}`,
		`CREATE TABLE fair.big (k int PRIMARY KEY, v text)`,
	} {
		if err := s.Query(q).Exec(); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Query(`INSERT INTO fair.big (k, v) VALUES (0, ?)`, strings.Repeat("x", value)).Exec(); err != nil {
		t.Fatal(err)
	}

	before := liveHeap()
	g := dial(t, node.Addr())
	g.handshake()
	// Linux grows a loopback receive buffer to tens of MiB: keep it small,
	// so the kernel takes little of what the connection does not read.
	if err := g.c.(*net.TCPConn).SetReadBuffer(64 << 10); err != nil {
		t.Fatal(err)
	}
	var burst []byte
	for i := range requests {
		burst = append(burst, frameBytes(4, 0, int16(10+i), primitive.OpCodeQuery, queryBody(`SELECT v FROM fair.big WHERE k = 0`))...)
	}
	// Answered in full, the node would hold requests*value = 200MB.
	g.write(burst)
	// Until its requests wait (or, were they not held back, many answers
	// did) and nothing runs. The held and answer gauges are sampled every
	// few milliseconds, the others live.
	waitMetric(t, node.Registry, "cqld_native_connections_held", func(held float64) bool {
		return (held == 1 || metricValue(t, node.Registry, "cqld_native_response_data_bytes", nil) > 8<<20) &&
			metricValue(t, node.Registry, "cqld_native_requests_in_flight", nil) == metricValue(t, node.Registry, "cqld_native_worker_queue_depth", nil)
	})
	if v := metricValue(t, node.Registry, "cqld_native_connections_held", nil); v != 1 {
		t.Errorf("cqld_native_connections_held = %v, want 1", v)
	}
	grown := liveHeap() - before
	queuedAnswers := metricValue(t, node.Registry, "cqld_native_response_data_bytes", nil)
	t.Logf("heap grew %d KiB; %.0f KiB of answers held", grown>>10, queuedAnswers/1024)
	// The send queue (1MiB) and the answers of the requests running when
	// it filled, one per worker; gnet's buffers may double.
	if bound := int64(cfg.NativeTransportSendQueueCapacity) + workers*(value+1024); queuedAnswers > float64(bound) {
		t.Errorf("%.0f bytes of answers held, bound %d", queuedAnswers, bound)
	}
	if grown > 32<<20 {
		t.Errorf("heap grew %d MiB with a connection not reading its answers", grown>>20)
	}

	// The node serves others meanwhile, and lets go once the greedy
	// connection closes.
	var v string
	if err := s.Query(`SELECT v FROM fair.big WHERE k = 0`).Scan(&v); err != nil || len(v) != value {
		t.Fatalf("read beside the greedy connection: %d bytes, %v", len(v), err)
	}
	g.c.Close()
	waitMetric(t, node.Registry, "cqld_native_response_data_bytes", func(v float64) bool { return v == 0 })
	waitMetric(t, node.Registry, "cqld_native_connections_held", func(v float64) bool { return v == 0 })
}

// fillFairnessTable makes fair.t with rows rows of size bytes in
// partition 0.
func fillFairnessTable(t *testing.T, s *gocql.Session, rows, size int) {
	t.Helper()
	for _, q := range []string{
		`CREATE KEYSPACE fair WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}`,
		`CREATE TABLE fair.t (k int, c int, v text, PRIMARY KEY (k, c))`,
	} {
		if err := s.Query(q).Exec(); err != nil {
			t.Fatal(err)
		}
	}
	v := strings.Repeat("v", size)
	for c := 0; c < rows; c += 100 {
		b := s.NewBatch(gocql.UnloggedBatch)
		for i := c; i < min(c+100, rows); i++ {
			b.Query(`INSERT INTO fair.t (k, c, v) VALUES (0, ?, ?)`, i, v)
		}
		if err := s.ExecuteBatch(b); err != nil {
			t.Fatal(err)
		}
	}
}

// waitMetric polls a gauge every millisecond, for up to 10 s, until ok.
func waitMetric(t *testing.T, g prometheus.Gatherer, name string, ok func(float64) bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for v := metricValue(t, g, name, nil); !ok(v); v = metricValue(t, g, name, nil) {
		if time.Now().After(deadline) {
			t.Fatalf("%s = %v after 10s", name, v)
		}
		time.Sleep(time.Millisecond)
	}
}

// liveHeap is the Go heap in use after two collections (the first moves
// sync.Pool contents to their victim caches, the second frees them).
func liveHeap() int64 {
	runtime.GC()
	runtime.GC()
	s := []runtimemetrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	runtimemetrics.Read(s)
	return int64(s[0].Value.Uint64())
}

// Connections that pipeline large reads and never read the answers cannot
// fill the node's request budget: their requests wait on their own
// connections, counted against native_transport_max_requests_per_connection,
// not native_transport_max_queued_requests. A well-behaved client, a
// driver or one pipelining its fair share of the node's budget, gets no
// OVERLOADED although the attackers hold more requests than the budget.
// The raw connections set THROW_ON_OVERLOAD: what they test is who gets
// OVERLOADED (by default requests over a limit wait unread).
func TestUnreadAnswersDoNotOverloadOthers(t *testing.T) {
	const (
		attackers = 4
		requests  = 200
		limit     = 64
		value     = 1 << 20
		// The good connection's fair share once it has requests in flight:
		// within it, only the node's budget can refuse the good requests.
		// More could be refused by fair share, rightly, whenever an
		// attacker's answers drain a little and its requests count again.
		pipelined = limit / (attackers + 2)
	)
	cfg := testConfig(t, t.TempDir())
	cfg.NativeTransportMaxThreads = 4
	cfg.NativeTransportMaxQueuedRequests = limit
	cfg.NativeTransportMaxRequestsPerConnection = requests
	node := startNode(t, cfg)
	s := connect(t, node.Addr())
	defer s.Close()
	for _, q := range []string{
		`CREATE KEYSPACE fair WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}`,
		`CREATE TABLE fair.big (k int PRIMARY KEY, v text)`,
	} {
		if err := s.Query(q).Exec(); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Query(`INSERT INTO fair.big (k, v) VALUES (0, ?)`, strings.Repeat("x", value)).Exec(); err != nil {
		t.Fatal(err)
	}
	// A range read: the workers run it, the event loop does not.
	read := queryBody(`SELECT v FROM fair.big`)
	var burst []byte
	for i := range requests {
		burst = append(burst, frameBytes(4, 0, int16(10+i), primitive.OpCodeQuery, read)...)
	}
	for i := range attackers {
		a := dial(t, node.Addr())
		a.handshakeThrowing()
		if err := a.c.(*net.TCPConn).SetReadBuffer(64 << 10); err != nil {
			t.Fatal(err)
		}
		a.write(burst)
		waitMetric(t, node.Registry, "cqld_native_connections_held", func(held float64) bool {
			return held == float64(i+1) && metricValue(t, node.Registry, "cqld_native_requests_in_flight", nil) ==
				metricValue(t, node.Registry, "cqld_native_worker_queue_depth", nil)
		})
	}
	held := metricValue(t, node.Registry, "cqld_native_requests_in_flight", nil)
	t.Logf("%d connections hold %.0f requests, none running; node limit %d", attackers, held, limit)
	// Counted against the node they would fill its budget.
	if held < limit {
		t.Fatalf("the attackers hold %.0f requests, fewer than the node's limit %d", held, limit)
	}

	g := dial(t, node.Addr())
	g.handshakeThrowing()
	var good []byte
	for i := range pipelined {
		good = append(good, frameBytes(4, 0, int16(10+i), primitive.OpCodeQuery, read)...)
	}
	g.write(good)
	overloaded := 0
	for range pipelined {
		r := g.mustRead()
		if code, msg := r.errorCode(); code == primitive.ErrorCodeOverloaded {
			overloaded++
			t.Logf("stream %d: %s", r.stream, msg)
		} else if r.op != primitive.OpCodeResult {
			t.Fatalf("good request: %s", fmtReply(r))
		}
	}
	if overloaded > 0 {
		t.Errorf("%d of %d pipelined good requests OVERLOADED", overloaded, pipelined)
	}
	// A driver too.
	for range 2 * limit {
		var v string
		if err := s.Query(`SELECT v FROM fair.big`).Scan(&v); err != nil {
			t.Fatalf("driver read beside the attackers: %v", err)
		}
	}
}
