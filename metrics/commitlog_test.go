package metrics

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

func TestCommitLogLint(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	m := NewCommitLog(reg)
	m.Appends.Inc()
	m.AppendedBytes.Add(10)
	m.Syncs.Inc()
	m.RecordsPerSync.Observe(1)
	m.SyncDuration.Observe(0.001)
	m.WaitDuration.Observe(0.001)
	m.SegmentsActive.Set(1)

	problems, err := testutil.GatherAndLint(reg)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("lint: %s: %s", p.Metric, p.Text)
	}
	want := []string{
		"cqld_commitlog_appends_total", "cqld_commitlog_appended_bytes_total", "cqld_commitlog_syncs_total",
		"cqld_commitlog_records_per_sync", "cqld_commitlog_sync_duration_seconds",
		"cqld_commitlog_wait_duration_seconds", "cqld_commitlog_periodic_waits_total", "cqld_commitlog_segments_active",
		"cqld_commitlog_segments_recycled_total", "cqld_commitlog_replay_records_total",
		"cqld_commitlog_replay_bytes_total", "cqld_commitlog_replay_truncated_bytes_total",
	}
	if n, err := testutil.GatherAndCount(reg, want...); err != nil || n != len(want) {
		t.Errorf("gathered %d of the %d commit log metrics (err %v)", n, len(want), err)
	}
	if err := testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP cqld_commitlog_appends_total Records appended to the commit log.
# TYPE cqld_commitlog_appends_total counter
cqld_commitlog_appends_total 1
`), "cqld_commitlog_appends_total"); err != nil {
		t.Error(err)
	}
	// A second set on another registry must not collide: nothing is global.
	NewCommitLog(prometheus.NewRegistry())
}
