package test

import (
	"bufio"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/datastax/go-cassandra-native-protocol/primitive"

	"github.com/cqld/cqld/config"
)

// The native transport's limits, set through the configuration keys of a
// whole node: the connection caps, the handshake and frame deadlines, and
// the request data budget. The frontend's own tests cover each limit in
// depth; these check that a node applies what its configuration says.
func TestFrontendLimitsFromConfig(t *testing.T) {
	cfg := testConfig(t, t.TempDir())
	cfg.NativeTransportMaxConcurrentConnections = 3
	cfg.NativeTransportMaxConcurrentConnectionsPerIP = 2
	cfg.NativeTransportHandshakeTimeout.Duration = 500 * time.Millisecond
	cfg.NativeTransportFrameTimeout.Duration = 500 * time.Millisecond
	cfg.NativeTransportMaxFrameSize = 64 * config.KiB
	cfg.NativeTransportMaxRequestDataInFlightPerIP = 100 * config.KiB
	node := startNode(t, cfg)
	addr := node.Addr()

	// A connection that never sends STARTUP is closed; so is one that
	// begins a frame and does not finish it.
	lingering := dial(t, addr)
	slow := dial(t, addr)
	slow.handshake()
	slow.write(frameBytes(4, 0, 2, primitive.OpCodeQuery, queryBody("SELECT key FROM system.local"))[:12])
	lingering.expectClosed()
	slow.expectClosed()
	for _, reason := range []string{"handshake_timeout", "frame_timeout"} {
		if v := metricValue(t, node.Registry, "cqld_native_connections_closed_total", map[string]string{"reason": reason}); v != 1 {
			t.Errorf("connections_closed_total{reason=%q} = %v, want 1", reason, v)
		}
	}

	// A frame promising more than the address's request data budget
	// holds is refused on its stream; the connection stays usable.
	a := dial(t, addr)
	a.handshake()
	b := dial(t, addr)
	b.handshake()
	big := frameBytes(4, 0, 3, primitive.OpCodeQuery, make([]byte, 60*1024))
	a.write(big[:1024]) // holds its 60KiB
	// a and b may be served by different event loops: b's frame must
	// arrive once a's is counted (the gauge is sampled every sweep).
	for deadline := time.Now().Add(10 * time.Second); metricValue(t, node.Registry, "cqld_native_request_data_bytes", nil) < 60*1024; {
		if time.Now().After(deadline) {
			t.Fatal("the held 60KiB frame is never counted in cqld_native_request_data_bytes")
		}
		time.Sleep(10 * time.Millisecond)
	}
	b.write(big[:1024])
	b.write(big[1024:])
	r := b.mustRead()
	if code, msg := r.errorCode(); code != primitive.ErrorCodeOverloaded || r.stream != 3 || !strings.Contains(msg, "native_transport_max_request_data_in_flight") {
		t.Fatalf("second 60KiB frame against a 100KiB budget: %s", fmtReply(r))
	}
	b.send(4, 4, primitive.OpCodeOptions, nil)
	if r := b.mustRead(); r.op != primitive.OpCodeSupported || r.stream != 4 {
		t.Fatalf("after the refusal: %s", fmtReply(r))
	}

	// Two connections from 127.0.0.1 are open (a, b): a third is closed at
	// once; one from 127.0.0.2 is the node's third and last.
	dial(t, addr).expectClosed()
	other, err := (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 2)}, Timeout: 5 * time.Second}).Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	w := &wire{t: t, c: other, br: bufio.NewReader(other)}
	w.handshake()
	third, err := (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 3)}, Timeout: 5 * time.Second}).Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer third.Close()
	(&wire{t: t, c: third, br: bufio.NewReader(third)}).expectClosed()
	for _, reason := range []string{"max_connections_per_ip", "max_connections"} {
		if v := metricValue(t, node.Registry, "cqld_native_connections_refused_total", map[string]string{"reason": reason}); v != 1 {
			t.Errorf("connections_refused_total{reason=%q} = %v, want 1", reason, v)
		}
	}
}
