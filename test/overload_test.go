package test

import (
	"strings"
	"testing"
	"time"

	"github.com/datastax/go-cassandra-native-protocol/primitive"
)

// TestOverloadedPerConnection checks the in-flight limit: past it, requests
// get OVERLOADED on their own stream, every request is answered, and the
// connection stays usable.
func TestOverloadedPerConnection(t *testing.T) {
	cfg := testConfig(t, t.TempDir())
	cfg.NativeTransportMaxRequestsPerConnection = 2
	node := startNode(t, cfg)
	w := dial(t, node.Addr())
	w.handshake()
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
