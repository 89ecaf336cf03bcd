//go:build linux

package main

import (
	"fmt"
	"math"
	"net/http"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// syncSnapshot is a cqld node's commit log sync metrics at one moment,
// read from its /metrics.
type syncSnapshot struct {
	appends, syncs float64
	// count, sum and buckets are the sync_duration_seconds histogram;
	// buckets are cumulative, by upper bound.
	count, sum float64
	buckets    []bucket
}

type bucket struct{ le, count float64 }

// syncSpread is what the commit log's fdatasync did during a cell: the
// spread of the fsync itself, which tells a cell that flaps because the
// disk did from one that flaps because cqld did.
type syncSpread struct {
	PerSecond float64 // syncs per second
	PerSync   float64 // appends per sync
	// Mean is exact; P50 and P90 are interpolated in the histogram's
	// buckets, which step by a factor of √2. Microseconds.
	Mean, P50, P90 float64
}

// scrapeSyncs reads the commit log's sync metrics from the node serving
// Prometheus at addr.
func scrapeSyncs(addr string) (syncSnapshot, error) {
	c := http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get("http://" + addr + "/metrics")
	if err != nil {
		return syncSnapshot{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return syncSnapshot{}, fmt.Errorf("GET %s/metrics: %s", addr, resp.Status)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		return syncSnapshot{}, fmt.Errorf("%s/metrics: %w", addr, err)
	}
	counter := func(name string) float64 {
		if f := families[name]; f != nil && len(f.GetMetric()) > 0 {
			return f.GetMetric()[0].GetCounter().GetValue()
		}
		return 0
	}
	s := syncSnapshot{appends: counter("cqld_commitlog_appends_total"), syncs: counter("cqld_commitlog_syncs_total")}
	f := families["cqld_commitlog_sync_duration_seconds"]
	if f == nil || len(f.GetMetric()) == 0 || f.GetMetric()[0].GetHistogram() == nil {
		return syncSnapshot{}, fmt.Errorf("%s/metrics: no cqld_commitlog_sync_duration_seconds histogram", addr)
	}
	h := f.GetMetric()[0].GetHistogram()
	s.count, s.sum = float64(h.GetSampleCount()), h.GetSampleSum()
	for _, b := range h.GetBucket() {
		s.buckets = append(s.buckets, bucket{b.GetUpperBound(), float64(b.GetCumulativeCount())})
	}
	return s, nil
}

// since is what happened between b and s, wall apart.
func (s syncSnapshot) since(b syncSnapshot, wall time.Duration) *syncSpread {
	n := s.count - b.count
	if n <= 0 || len(s.buckets) != len(b.buckets) {
		return nil
	}
	d := make([]bucket, len(s.buckets))
	for i := range s.buckets {
		d[i] = bucket{s.buckets[i].le, s.buckets[i].count - b.buckets[i].count}
	}
	sp := &syncSpread{
		PerSecond: (s.syncs - b.syncs) / wall.Seconds(),
		Mean:      (s.sum - b.sum) / n * 1e6,
		P50:       quantile(d, n, 0.5) * 1e6,
		P90:       quantile(d, n, 0.9) * 1e6,
	}
	if syncs := s.syncs - b.syncs; syncs > 0 {
		sp.PerSync = (s.appends - b.appends) / syncs
	}
	return sp
}

// quantile interpolates the q quantile of n observations in cumulative
// buckets linearly within its bucket, as Prometheus's histogram_quantile
// does; past the last finite bound it is that bound.
func quantile(bs []bucket, n, q float64) float64 {
	rank := q * n
	lo, below := 0.0, 0.0
	for _, b := range bs {
		if b.count >= rank {
			if math.IsInf(b.le, 1) {
				return lo
			}
			if b.count == below {
				return b.le
			}
			return lo + (b.le-lo)*(rank-below)/(b.count-below)
		}
		lo, below = b.le, b.count
	}
	return lo
}
