package test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/datastax/go-cassandra-native-protocol/primitive"
)

// TestOverloadedPerConnection checks the in-flight limit for a client
// that set THROW_ON_OVERLOAD: past it, requests get OVERLOADED on their own
// stream, every request is answered, and the connection stays usable.
func TestOverloadedPerConnection(t *testing.T) {
	cfg := testConfig(t, t.TempDir())
	cfg.NativeTransportMaxRequestsPerConnection = 2
	node := startNode(t, cfg)
	w := dial(t, node.Addr())
	w.handshakeThrowing()
	const n = 200
	var burst []byte
	for i := 0; i < n; i++ {
		burst = append(burst, frameBytes(4, 0, int16(10+i), primitive.OpCodeQuery, queryBody(`SELECT * FROM system_schema.columns`))...)
	}
	w.write(burst)
	answered := map[int16]bool{}
	overloaded := 0
	for len(answered) < n {
		r := w.mustRead()
		if answered[r.stream] || r.stream < 10 || r.stream >= 10+n {
			t.Fatalf("unexpected answer on stream %d", r.stream)
		}
		answered[r.stream] = true
		if code, msg := r.errorCode(); code == primitive.ErrorCodeOverloaded {
			overloaded++
			if !strings.Contains(msg, "overloaded") {
				t.Errorf("OVERLOADED message %q", msg)
			}
		} else if r.op != primitive.OpCodeResult {
			t.Fatalf("got %s", fmtReply(r))
		}
	}
	if overloaded == 0 {
		t.Fatalf("%d requests in one burst with a limit of 2 in flight, none OVERLOADED", n)
	}
	if v := metricValue(t, node.Registry, "cqld_native_overloaded_total", map[string]string{"limit": "connection"}); int(v) != overloaded {
		t.Errorf("overloaded metric %v, clients saw %d", v, overloaded)
	}
	w.send(4, 1, primitive.OpCodeQuery, queryBody(`SELECT key FROM system.local`))
	if r := w.mustRead(); r.op != primitive.OpCodeResult {
		t.Fatalf("after overload: %s", fmtReply(r))
	}
}

// TestBackpressurePerConnection checks the default past the in-flight
// limit, as Cassandra's: the requests past it wait unread until the
// connection's own end, and every one is answered with its result, none
// OVERLOADED; the node never holds more than the limit of them.
func TestBackpressurePerConnection(t *testing.T) {
	const limit, n = 2, 200
	cfg := testConfig(t, t.TempDir())
	cfg.NativeTransportMaxRequestsPerConnection = limit
	node := startNode(t, cfg)
	w := dial(t, node.Addr())
	w.handshake()
	var burst []byte
	for i := range n {
		burst = append(burst, frameBytes(4, 0, int16(10+i), primitive.OpCodeQuery, queryBody(`SELECT * FROM system_schema.columns`))...)
	}
	// The in-flight gauge, sampled while the burst is served.
	stop := make(chan struct{})
	most := make(chan float64)
	go func() {
		m := 0.0
		for {
			m = max(m, metricValue(t, node.Registry, "cqld_native_requests_in_flight", nil))
			select {
			case <-stop:
				most <- m
				return
			default:
			}
		}
	}()
	w.write(burst)
	answered := map[int16]bool{}
	for len(answered) < n {
		r := w.mustRead()
		if answered[r.stream] || r.stream < 10 || r.stream >= 10+n {
			t.Fatalf("unexpected answer on stream %d", r.stream)
		}
		answered[r.stream] = true
		if r.op != primitive.OpCodeResult {
			t.Fatalf("stream %d: %s", r.stream, fmtReply(r))
		}
	}
	close(stop)
	if m := <-most; m > limit {
		t.Errorf("%v requests in flight, limit %d", m, limit)
	}
	if v := metricValue(t, node.Registry, "cqld_native_backpressure_pauses_total", map[string]string{"limit": "connection"}); v == 0 {
		t.Errorf("%d requests in one burst with a limit of %d in flight, the connection never paused", n, limit)
	}
	if v := metricValue(t, node.Registry, "cqld_native_overloaded_total", nil); v != 0 {
		t.Errorf("overloaded metric %v, want 0", v)
	}
}

// TestBackpressureGreedyBesideDriver: a connection that pipelines far
// more requests than the node's limits is paused, not answered
// OVERLOADED, and a driver's requests beside it all succeed.
func TestBackpressureGreedyBesideDriver(t *testing.T) {
	const greedy, good = 600, 100
	cfg := testConfig(t, t.TempDir())
	cfg.NativeTransportMaxThreads = 4
	cfg.NativeTransportMaxRequestsPerConnection = 64
	cfg.NativeTransportMaxQueuedRequests = 96
	node := startNode(t, cfg)
	s := connect(t, node.Addr())
	defer s.Close()

	g := dial(t, node.Addr())
	g.handshake()
	var burst []byte
	for i := range greedy {
		burst = append(burst, frameBytes(4, 0, int16(10+i), primitive.OpCodeQuery, queryBody(`SELECT * FROM system_schema.columns`))...)
	}
	done := make(chan error, 1)
	go func() {
		for range greedy {
			r, err := g.read()
			if err == nil && r.op != primitive.OpCodeResult {
				err = fmt.Errorf("greedy answer on stream %d: %s", r.stream, fmtReply(r))
			}
			if err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	g.write(burst)
	waitMetric(t, node.Registry, "cqld_native_backpressure_pauses_total", func(v float64) bool { return v > 0 })
	for i := range good {
		var key string
		if err := s.Query(`SELECT key FROM system.local`).Scan(&key); err != nil {
			t.Fatalf("driver request %d beside the greedy connection: %v", i, err)
		}
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if v := metricValue(t, node.Registry, "cqld_native_overloaded_total", nil); v != 0 {
		t.Errorf("overloaded metric %v, want 0", v)
	}
}

// TestIdleTimeout checks native_transport_idle_timeout: a silent connection
// is closed, a busy one is not.
func TestIdleTimeout(t *testing.T) {
	cfg := testConfig(t, t.TempDir())
	cfg.NativeTransportIdleTimeout.Duration = time.Second
	node := startNode(t, cfg)
	idle := dial(t, node.Addr())
	idle.handshake()
	busy := dial(t, node.Addr())
	busy.handshake()
	// The busy connection speaks every 100 ms, ten times inside the timeout,
	// for longer than the timeout; only a stall of a whole second (on a
	// very loaded machine) could close it.
	for i := 0; i < 25; i++ {
		busy.send(4, 2, primitive.OpCodeOptions, nil)
		busy.mustRead()
		time.Sleep(100 * time.Millisecond)
	}
	idle.expectClosed()
	busy.send(4, 3, primitive.OpCodeOptions, nil)
	if r := busy.mustRead(); r.op != primitive.OpCodeSupported {
		t.Fatalf("busy connection: %s", fmtReply(r))
	}
}
