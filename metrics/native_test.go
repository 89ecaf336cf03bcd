package metrics

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

func TestNativeLintAndServe(t *testing.T) {
	reg := NewRegistry()
	m := NewNative(reg)
	m.ConnectionsOpen.Inc()
	m.Requests.WithLabelValues("QUERY", "ok").Inc()
	m.Latency.WithLabelValues("QUERY").Observe(0.001)
	m.Overloaded.WithLabelValues("connection").Inc()

	problems, err := testutil.GatherAndLint(reg)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("lint: %s: %s", p.Metric, p.Text)
	}

	srv, err := Serve("127.0.0.1:0", reg)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close(context.Background())
	resp, err := http.Get("http://" + srv.Addr() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{
		`cqld_native_connections_open 1`,
		`cqld_native_requests_total{opcode="QUERY",outcome="ok"} 1`,
		`cqld_native_request_duration_seconds_count{opcode="QUERY"} 1`,
		`go_goroutines`,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
}
