package commitlog

import (
	"fmt"
	"sync"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/cqld/cqld/metrics"
)

// histogram returns the sample count and sum of the named histogram.
func histogram(t *testing.T, reg *prometheus.Registry, name string) (count uint64, sum float64) {
	t.Helper()
	mfs, err := reg.Gather()
	mustf(t, err, "Gather")
	for _, mf := range mfs {
		if mf.GetName() == name {
			h := mf.GetMetric()[0].GetHistogram()
			return h.GetSampleCount(), h.GetSampleSum()
		}
	}
	t.Fatalf("no metric %s", name)
	return 0, 0
}

// TestMetricsBatch checks the counters of batch mode: a lone writer gets one
// sync per append; concurrent writers share syncs, and every append is
// completed by exactly one of them.
func TestMetricsBatch(t *testing.T) {
	fs := vfs.NewMem()
	reg := prometheus.NewRegistry()
	m := metrics.NewCommitLog(reg)
	opts := testOptions(fs)
	opts.Metrics = m
	l := mustOpen(t, opts)

	const lone = 50
	var bytes int
	for i := range lone {
		p := fmt.Sprintf("lone-%d", i)
		bytes += len(p)
		_, err := l.Append([]byte(p))
		mustf(t, err, "Append")
	}
	if got := testutil.ToFloat64(m.Appends); got != lone {
		t.Errorf("appends_total %v, want %d", got, lone)
	}
	if got := testutil.ToFloat64(m.AppendedBytes); got != float64(bytes) {
		t.Errorf("appended_bytes_total %v, want %d", got, bytes)
	}
	if got := testutil.ToFloat64(m.Syncs); got != lone {
		t.Errorf("syncs_total %v, want %d (one per lone append)", got, lone)
	}
	if n, sum := histogram(t, reg, "cqld_commitlog_records_per_sync"); n != lone || sum != lone {
		t.Errorf("records_per_sync count %d sum %v, want %d and %d", n, sum, lone, lone)
	}
	if n, _ := histogram(t, reg, "cqld_commitlog_wait_duration_seconds"); n != lone {
		t.Errorf("wait_duration_seconds count %d, want %d", n, lone)
	}
	if n, _ := histogram(t, reg, "cqld_commitlog_sync_duration_seconds"); n != lone {
		t.Errorf("sync_duration_seconds count %d, want %d", n, lone)
	}
	if got := testutil.ToFloat64(m.SegmentsActive); got != 1 {
		t.Errorf("segments_active %v, want 1", got)
	}

	const writers, each = 8, 100
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				if _, err := l.Append([]byte(fmt.Sprintf("w%d-%d", w, i))); err != nil {
					t.Errorf("Append: %v", err)
					return
				}
			}
		})
	}
	wg.Wait()
	const total = lone + writers*each
	if got := testutil.ToFloat64(m.Appends); got != total {
		t.Errorf("appends_total %v, want %d", got, total)
	}
	syncs := testutil.ToFloat64(m.Syncs)
	if syncs <= lone || syncs > total {
		t.Errorf("syncs_total %v, want in (%d, %d]", syncs, lone, total)
	}
	n, sum := histogram(t, reg, "cqld_commitlog_records_per_sync")
	if float64(n) != syncs || sum != total {
		t.Errorf("records_per_sync count %d sum %v, want %v and %d", n, sum, syncs, total)
	}
	mustf(t, l.Close(), "Close")

	// Replay on a new registry counts what was appended.
	reg2 := prometheus.NewRegistry()
	m2 := metrics.NewCommitLog(reg2)
	opts.Metrics = m2
	l2 := mustOpen(t, opts)
	defer l2.Close()
	st, err := l2.Replay(func([]byte, Position) error { return nil })
	mustf(t, err, "Replay")
	if got := testutil.ToFloat64(m2.ReplayRecords); got != total || st.Records != total {
		t.Errorf("replay_records_total %v (stats %d), want %d", got, st.Records, total)
	}
	if got := testutil.ToFloat64(m2.ReplaySeconds); got != st.Duration.Seconds() {
		t.Errorf("replay_duration_seconds_total %v, want the replay's %v", got, st.Duration.Seconds())
	}
	if got := testutil.ToFloat64(m2.ReplayBytes); got != float64(st.Bytes) || got != testutil.ToFloat64(m.AppendedBytes) {
		t.Errorf("replay_bytes_total %v, want %d = appended bytes", got, st.Bytes)
	}
	if got := testutil.ToFloat64(m2.SegmentsActive); got != 1 {
		t.Errorf("segments_active after reopen %v, want 1 (the old segment)", got)
	}
	problems, err := testutil.GatherAndLint(reg)
	mustf(t, err, "GatherAndLint")
	for _, p := range problems {
		t.Errorf("lint: %s: %s", p.Metric, p.Text)
	}
}

// TestMetricsSegments checks segments_active and segments_recycled_total
// across rotation and MarkFlushed.
func TestMetricsSegments(t *testing.T) {
	fs := vfs.NewMem()
	m := metrics.NewCommitLog(prometheus.NewRegistry())
	opts := smallSegments(fs)
	opts.Metrics = m
	l := mustOpen(t, opts)
	defer l.Close()
	_, pos := appendN(t, l, "old", 40)
	if got := testutil.ToFloat64(m.SegmentsActive); got < 3 {
		t.Errorf("segments_active %v after 40 records of 1 KiB segments", got)
	}
	last := pos[len(pos)-1]
	mustf(t, l.MarkFlushed(last), "MarkFlushed")
	if got := testutil.ToFloat64(m.SegmentsActive); got != 1 {
		t.Errorf("segments_active %v after flushing up to the current segment, want 1", got)
	}
	_, recycled := segmentFiles(t, fs)
	if got := testutil.ToFloat64(m.SegmentsRecycled); got != float64(len(recycled)) || got == 0 {
		t.Errorf("segments_recycled_total %v, %d recycled files", got, len(recycled))
	}
}
