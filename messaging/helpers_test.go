package messaging

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

func testLogger(t testing.TB) *slog.Logger {
	if testing.Verbose() {
		return slog.Default()
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

func testOptions(t testing.TB, addr string) Options {
	id := [16]byte{0xcc}
	copy(id[1:], addr)
	return Options{
		ClusterName: "Test Cluster",
		HostID:      id,
		Addr:        netip.MustParseAddrPort(addr),
		Metrics:     NewMetrics(prometheus.NewRegistry()),
		Logger:      testLogger(t),
	}
}

// listenTCP starts a transport on addr (port 0 picks one), with mod
// applied to its options, and closes it when the test ends.
func listenTCP(t testing.TB, addr string, mod func(*Options)) *TCPTransport {
	t.Helper()
	opts := testOptions(t, addr)
	if mod != nil {
		mod(&opts)
	}
	tr, err := ListenTCP(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tr.Close() })
	return tr
}

// freePort returns a port free on ip, below Linux's ephemeral range so that
// no outgoing connection takes it between a close and a listen again.
func freePort(t testing.TB, ip string) int {
	t.Helper()
	for range 100 {
		port := 20000 + rand.IntN(12000)
		l, err := net.Listen("tcp", fmt.Sprintf("%s:%d", ip, port))
		if err != nil {
			continue
		}
		l.Close()
		return port
	}
	t.Fatalf("no free port on %s in 20000-31999", ip)
	return 0
}

func echo(_ context.Context, m Inbound) ([]byte, error) { return m.Payload, nil }

func ctxTimeout(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func counter(c prometheus.Collector) float64 { return testutil.ToFloat64(c) }

func dropped(m *Metrics, verb Verb, peer netip.AddrPort, reason string) float64 {
	return counter(m.Dropped.WithLabelValues(verb.String(), peer.String(), reason))
}

func received(m *Metrics, verb Verb, peer netip.AddrPort) float64 {
	return counter(m.Messages.WithLabelValues("received", verb.String(), peer.String()))
}

// kind starts transports of one implementation for the tests that every
// Transport must pass.
type kind struct {
	name string
	// nodes starts n transports at 127.0.0.1, 127.0.0.2, ..., the i-th
	// with mod(i, opts) applied, and closes them when the test ends.
	nodes func(t *testing.T, n int, mod func(i int, o *Options)) []Transport
}

var kinds = []kind{
	{"tcp", func(t *testing.T, n int, mod func(int, *Options)) []Transport {
		var trs []Transport
		for i := range n {
			trs = append(trs, listenTCP(t, fmt.Sprintf("127.0.0.%d:0", i+1), func(o *Options) {
				if mod != nil {
					mod(i, o)
				}
			}))
		}
		return trs
	}},
	{"inmem", func(t *testing.T, n int, mod func(int, *Options)) []Transport {
		var trs []Transport
		for _, tr := range inmemNodes(t, NewInmemNetwork(), n, mod) {
			trs = append(trs, tr)
		}
		return trs
	}},
}

func inmemNodes(t *testing.T, network *InmemNetwork, n int, mod func(int, *Options)) []*InmemTransport {
	t.Helper()
	var trs []*InmemTransport
	for i := range n {
		opts := testOptions(t, fmt.Sprintf("127.0.0.%d:7000", i+1))
		if mod != nil {
			mod(i, &opts)
		}
		tr, err := network.NewTransport(opts)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { tr.Close() })
		trs = append(trs, tr)
	}
	return trs
}

func coreOf(tr Transport) *core {
	switch tr := tr.(type) {
	case *TCPTransport:
		return tr.core
	case *InmemTransport:
		return tr.core
	}
	panic(fmt.Sprintf("unknown transport %T", tr))
}

func metricsOf(tr Transport) *Metrics { return coreOf(tr).metrics }

// queuedBytes returns the bytes from queued toward to and not yet sent.
func queuedBytes(from Transport, to netip.AddrPort) int64 {
	switch tr := from.(type) {
	case *TCPTransport:
		tr.mu.Lock()
		defer tr.mu.Unlock()
		if p := tr.peers[to]; p != nil {
			return p.budget.used.Load()
		}
	case *InmemTransport:
		tr.mu.Lock()
		defer tr.mu.Unlock()
		if l := tr.links[linkKey{to: to}]; l != nil {
			return l.budget.used.Load()
		}
	}
	return 0
}
