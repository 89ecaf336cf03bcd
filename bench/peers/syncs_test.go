//go:build linux

package main

import (
	"math"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/cqld/cqld/metrics"
)

// TestSyncSpread: a cell's sync figures are what the node's commit log
// metrics, as it serves them, added during the cell.
func TestSyncSpread(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := metrics.NewCommitLog(reg)
	srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	defer srv.Close()
	addr := strings.TrimPrefix(srv.URL, "http://")

	m.SyncDuration.Observe(5) // before the cell: not counted
	m.Syncs.Inc()
	before, err := scrapeSyncs(addr)
	if err != nil {
		t.Fatal(err)
	}
	// 100 syncs of 100..199 us, covering 400 appends.
	for i := range 100 {
		m.SyncDuration.Observe(float64(100+i) * 1e-6)
		m.Syncs.Inc()
	}
	m.Appends.Add(400)
	after, err := scrapeSyncs(addr)
	if err != nil {
		t.Fatal(err)
	}
	sp := after.since(before, 2*time.Second)
	if sp == nil {
		t.Fatal("no spread")
	}
	if sp.PerSecond != 50 || sp.PerSync != 4 || math.Abs(sp.Mean-149.5) > 0.01 {
		t.Errorf("%+v, want 50 syncs/s, 4 appends/sync, mean 149.5 us", *sp)
	}
	// The buckets step by √2: the interpolated quantiles land within a
	// bucket of the true ones (149.5 and 189.5 us).
	if sp.P50 < 149.5/math.Sqrt2 || sp.P50 > 149.5*math.Sqrt2 || sp.P90 < 189.5/math.Sqrt2 || sp.P90 > 189.5*math.Sqrt2 || sp.P90 < sp.P50 {
		t.Errorf("p50 %.1f, p90 %.1f us, want about 149.5 and 189.5", sp.P50, sp.P90)
	}
	if after.since(after, time.Second) != nil {
		t.Error("a cell without syncs has a spread")
	}
}

func TestQuantile(t *testing.T) {
	bs := []bucket{{1, 10}, {2, 30}, {4, 40}, {math.Inf(1), 50}}
	for _, c := range []struct{ q, want float64 }{{0.1, 0.5}, {0.2, 1}, {0.4, 1.5}, {0.6, 2}, {0.7, 3}, {0.9, 4}} {
		if got := quantile(bs, 50, c.q); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("quantile %.1f = %v, want %v", c.q, got, c.want)
		}
	}
}
