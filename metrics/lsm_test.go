package metrics

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

func TestLSMMetrics(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	st := LSMStats{CompactionDebtBytes: 5 << 20, Sublevels: 3, Flushes: 7, FlushBytes: 100,
		WriteStalls: 2, WriteStallSeconds: 1.5, FlushFailing: true}
	st.LevelFiles[0], st.LevelBytes[6] = 4, 1<<30
	calls := 0
	NewLSM(reg, func() LSMStats { calls++; return st })

	problems, err := testutil.GatherAndLint(reg)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("lint: %s: %s", p.Metric, p.Text)
	}
	if calls != 1 {
		t.Errorf("one scrape read the stats %d times", calls)
	}
	if err := testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP cqld_lsm_compaction_debt_bytes Estimated bytes compactions must rewrite to bring every level within its target size.
# TYPE cqld_lsm_compaction_debt_bytes gauge
cqld_lsm_compaction_debt_bytes 5.24288e+06
# HELP cqld_lsm_flush_failing 1 while the newest flush failed and writes are refused.
# TYPE cqld_lsm_flush_failing gauge
cqld_lsm_flush_failing 1
# HELP cqld_lsm_flushes_total Memtable flushes completed.
# TYPE cqld_lsm_flushes_total counter
cqld_lsm_flushes_total 7
# HELP cqld_lsm_l0_sublevels Sublevels of L0 (each one a sorted run a read consults).
# TYPE cqld_lsm_l0_sublevels gauge
cqld_lsm_l0_sublevels 3
# HELP cqld_lsm_write_stall_seconds_total Time writes were stopped by the LSM.
# TYPE cqld_lsm_write_stall_seconds_total counter
cqld_lsm_write_stall_seconds_total 1.5
# HELP cqld_lsm_write_stalls_total Times the LSM stopped writes because of too many memtables or L0 files.
# TYPE cqld_lsm_write_stalls_total counter
cqld_lsm_write_stalls_total 2
`), "cqld_lsm_compaction_debt_bytes", "cqld_lsm_flush_failing", "cqld_lsm_flushes_total",
		"cqld_lsm_l0_sublevels", "cqld_lsm_write_stall_seconds_total", "cqld_lsm_write_stalls_total"); err != nil {
		t.Error(err)
	}
	if got := levelValue(t, reg, "cqld_lsm_level_files", "0"); got != 4 {
		t.Errorf("L0 files %v, want 4", got)
	}
	// Nothing is global: a second set on another registry does not collide.
	NewLSM(prometheus.NewRegistry(), func() LSMStats { return LSMStats{} })
}

// levelValue finds the value of a per-level gauge for one level.
func levelValue(t *testing.T, g prometheus.Gatherer, name, level string) float64 {
	t.Helper()
	mfs, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "level" && l.GetValue() == level {
					return m.GetGauge().GetValue()
				}
			}
		}
	}
	t.Fatalf("%s{level=%q} not gathered", name, level)
	return 0
}
