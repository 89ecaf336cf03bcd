package metrics

import "github.com/prometheus/client_golang/prometheus"

// CommitLog holds the commit log's metrics. Every field is a plain metric
// (no label vectors), so the write path updates them without lookups. Its
// fields are safe for concurrent use.
type CommitLog struct {
	// Appends counts records appended to the log; AppendedBytes counts their
	// payload bytes.
	Appends       prometheus.Counter
	AppendedBytes prometheus.Counter
	// Syncs counts flush cycles that fdatasynced at least one segment.
	Syncs prometheus.Counter
	// RecordsPerSync is, per sync, how many waiting appends (and Sync calls)
	// it completed. Periodic-mode appends do not wait, so they show as 0.
	RecordsPerSync prometheus.Histogram
	// SyncDuration is the time a flush cycle spent in fdatasync.
	SyncDuration prometheus.Histogram
	// WaitDuration is the time an append waited for its durability after
	// buffering its record (not observed for appends that do not wait).
	WaitDuration prometheus.Histogram
	// PeriodicWaits counts the periodic-mode appends that waited for a
	// sync: syncs lagged by half a period, or too much was buffered ahead
	// of the writes to the OS (a disk stalling them).
	PeriodicWaits prometheus.Counter
	// SegmentsActive is the number of live segments: not yet freed by a
	// flush, including the old ones awaiting replay and the current one.
	SegmentsActive prometheus.Gauge
	// SegmentsRecycled counts freed segments kept for reuse instead of
	// deleted.
	SegmentsRecycled prometheus.Counter
	// ReplayRecords, ReplayBytes, ReplayTruncatedBytes and
	// ReplaySkippedBytes add up what replays read: records, their payload
	// bytes, the torn tail bytes cut from segments, and the corrupt bytes
	// skipped under commitlog_ignore_replay_errors. ReplaySeconds adds up
	// the time they took, so records/s is the ratio of two counters.
	ReplayRecords        prometheus.Counter
	ReplayBytes          prometheus.Counter
	ReplayTruncatedBytes prometheus.Counter
	ReplaySkippedBytes   prometheus.Counter
	ReplaySeconds        prometheus.Counter
}

// NewCommitLog creates the commit log metrics and registers them on reg.
func NewCommitLog(reg prometheus.Registerer) *CommitLog {
	const ns, sub = "cqld", "commitlog"
	counter := func(name, help string) prometheus.Counter {
		return prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: name, Help: help})
	}
	histogram := func(name, help string, buckets []float64) prometheus.Histogram {
		return prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: ns, Subsystem: sub, Name: name, Help: help, Buckets: buckets,
		})
	}
	m := &CommitLog{
		Appends:       counter("appends_total", "Records appended to the commit log."),
		AppendedBytes: counter("appended_bytes_total", "Payload bytes of the records appended to the commit log."),
		Syncs:         counter("syncs_total", "Commit log flush cycles that fdatasynced at least one segment."),
		RecordsPerSync: histogram("records_per_sync",
			"Waiting appends (and Sync calls) completed by each commit log sync.",
			prometheus.ExponentialBuckets(1, 2, 12)), // 1 .. 2048
		SyncDuration: histogram("sync_duration_seconds",
			"Time each commit log flush cycle spent in fdatasync.",
			prometheus.ExponentialBuckets(25e-6, 2, 18)), // 25µs .. ~3.3s
		WaitDuration: histogram("wait_duration_seconds",
			"Time an append waited for the sync that made it durable, after buffering its record.",
			prometheus.ExponentialBuckets(25e-6, 2, 18)),
		PeriodicWaits: counter("periodic_waits_total",
			"Periodic-mode appends that waited for a sync: syncs lagging by half a period, or too much buffered ahead of the writes to the disk."),
		SegmentsActive: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: ns, Subsystem: sub, Name: "segments_active",
			Help: "Live commit log segments: not yet freed by a memtable flush.",
		}),
		SegmentsRecycled: counter("segments_recycled_total", "Freed commit log segments kept for reuse instead of deleted."),
		ReplayRecords:    counter("replay_records_total", "Records read by commit log replay."),
		ReplayBytes:      counter("replay_bytes_total", "Payload bytes of the records read by commit log replay."),
		ReplayTruncatedBytes: counter("replay_truncated_bytes_total",
			"Bytes of torn segment tails cut by commit log replay."),
		ReplaySkippedBytes: counter("replay_skipped_bytes_total",
			"Bytes of corrupt records skipped by commit log replay under commitlog_ignore_replay_errors."),
		ReplaySeconds: counter("replay_duration_seconds_total", "Time spent replaying the commit log."),
	}
	reg.MustRegister(m.Appends, m.AppendedBytes, m.Syncs, m.RecordsPerSync, m.SyncDuration, m.WaitDuration,
		m.PeriodicWaits, m.SegmentsActive, m.SegmentsRecycled, m.ReplayRecords, m.ReplayBytes, m.ReplayTruncatedBytes,
		m.ReplaySkippedBytes, m.ReplaySeconds)
	return m
}
