package test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// metricValue sums the samples of a counter or gauge whose labels include
// the given ones.
func metricValue(t testing.TB, g prometheus.Gatherer, name string, labels map[string]string) float64 {
	t.Helper()
	mfs, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	sum := 0.0
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	next:
		for _, m := range mf.GetMetric() {
			for k, v := range labels {
				found := false
				for _, lp := range m.GetLabel() {
					if lp.GetName() == k && lp.GetValue() == v {
						found = true
					}
				}
				if !found {
					continue next
				}
			}
			switch {
			case m.Counter != nil:
				sum += m.Counter.GetValue()
			case m.Gauge != nil:
				sum += m.Gauge.GetValue()
			case m.Histogram != nil:
				sum += float64(m.Histogram.GetSampleCount())
			}
		}
	}
	return sum
}

// TestMetricsEndpoint drives real traffic and checks the scrape: it lints,
// and the counters say what the server did.
func TestMetricsEndpoint(t *testing.T) {
	node, _ := newNode(t)
	s, err := gocqlCluster(node.Addr()).CreateSession()
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 5; i++ {
		if err := s.Query(`SELECT key FROM system.local WHERE key = ?`, "local").Exec(); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Query(`SELECT nope FROM system.local`).Exec(); err == nil {
		t.Fatal("an undefined column was accepted")
	}
	s.Close()

	problems, err := testutil.GatherAndLint(node.Registry)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("lint %s: %s", p.Metric, p.Text)
	}
	if v := metricValue(t, node.Registry, "cqld_native_requests_total", map[string]string{"opcode": "EXECUTE", "outcome": "ok"}); v < 5 {
		t.Errorf("EXECUTE ok = %v, want >= 5", v)
	}
	if v := metricValue(t, node.Registry, "cqld_native_requests_total", map[string]string{"outcome": "invalid"}); v < 1 {
		t.Errorf("invalid outcomes = %v, want >= 1", v)
	}
	// The handshake counts too: gocql sends OPTIONS and STARTUP on every
	// connection and REGISTER on its control connection.
	startups := metricValue(t, node.Registry, "cqld_native_startups_total", nil)
	if v := metricValue(t, node.Registry, "cqld_native_requests_total", map[string]string{"opcode": "STARTUP", "outcome": "ok"}); v != startups || v < 2 {
		t.Errorf("STARTUP ok = %v, want the %v handshakes (>= 2)", v, startups)
	}
	for _, op := range []string{"OPTIONS", "REGISTER"} {
		if v := metricValue(t, node.Registry, "cqld_native_requests_total", map[string]string{"opcode": op, "outcome": "ok"}); v < 1 {
			t.Errorf("%s ok = %v, want >= 1", op, v)
		}
	}
	if v := metricValue(t, node.Registry, "cqld_native_request_duration_seconds", map[string]string{"opcode": "EXECUTE"}); v < 5 {
		t.Errorf("EXECUTE latency samples = %v", v)
	}
	if v := metricValue(t, node.Registry, "cqld_native_connections_total", nil); v < 2 {
		t.Errorf("connections_total = %v", v)
	}
	for _, name := range []string{"cqld_native_read_bytes_total", "cqld_native_written_bytes_total"} {
		if v := metricValue(t, node.Registry, name, nil); v <= 0 {
			t.Errorf("%s = %v", name, v)
		}
	}

	_, body := httpDo(t, http.MethodGet, "http://"+node.MetricsAddr()+"/metrics", "", "")
	for _, want := range []string{"cqld_native_connections_open", "cqld_native_requests_in_flight", "cqld_native_worker_queue_depth", "process_cpu_seconds_total"} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}

// httpDo sends a request without a body to url, with a role's basic
// credentials unless user is "", and returns the answer's status and body.
func httpDo(t *testing.T, method, url, user, password string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if user != "" {
		req.SetBasicAuth(user, password)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, body
}
