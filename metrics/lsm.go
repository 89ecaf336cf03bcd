package metrics

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
)

// LSMLevels is the number of levels of the storage engine's LSM.
const LSMLevels = 7

// LSMStats is what the storage engine reports of its LSM (pebble) when
// Prometheus scrapes: counters since the engine opened, and gauges of now.
type LSMStats struct {
	// CompactionDebtBytes estimates the bytes compactions must rewrite
	// before every level is within its target size.
	CompactionDebtBytes uint64
	// Per level: live sstables and their bytes; Sublevels counts L0's
	// sublevels, the read amplification of L0.
	LevelFiles [LSMLevels]int64
	LevelBytes [LSMLevels]int64
	Sublevels  int32
	// ReadAmplification is the number of sorted runs a read may consult.
	ReadAmplification int
	// Memtables and MemtableBytes are the memtables, mutable and queued
	// for flush, and their bytes.
	Memtables     int64
	MemtableBytes uint64
	// Flushes counts completed flushes, FlushBytes the bytes they wrote.
	Flushes    int64
	FlushBytes uint64
	// Compactions counts completed compactions; CompactionBytesRead and
	// CompactionBytesWritten the bytes they read and wrote;
	// CompactionsInProgress those running now.
	Compactions            int64
	CompactionBytesRead    uint64
	CompactionBytesWritten uint64
	CompactionsInProgress  int64
	// WriteStalls counts the times pebble stopped writes (too many
	// memtables or L0 files), WriteStallSeconds how long they lasted.
	WriteStalls       uint64
	WriteStallSeconds float64
	// FlushFailing is set while the newest flush failed and writes are
	// refused.
	FlushFailing bool
}

// lsmCollector reads LSMStats at every scrape.
type lsmCollector struct {
	stats func() LSMStats

	debt, levelFiles, levelBytes, sublevels, readAmp   *prometheus.Desc
	memtables, memtableBytes, flushes, flushBytes      *prometheus.Desc
	compactions, compRead, compWritten, compInProgress *prometheus.Desc
	writeStalls, writeStallSeconds, flushFailing       *prometheus.Desc
}

var _ prometheus.Collector = (*lsmCollector)(nil)

// NewLSM registers on reg the storage engine's LSM metrics, read from
// stats at every scrape; stats must be safe for concurrent use.
func NewLSM(reg prometheus.Registerer, stats func() LSMStats) {
	desc := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc(prometheus.BuildFQName("cqld", "lsm", name), help, labels, nil)
	}
	reg.MustRegister(&lsmCollector{
		stats:          stats,
		debt:           desc("compaction_debt_bytes", "Estimated bytes compactions must rewrite to bring every level within its target size."),
		levelFiles:     desc("level_files", "Live sstables per LSM level.", "level"),
		levelBytes:     desc("level_bytes", "Bytes of the live sstables per LSM level.", "level"),
		sublevels:      desc("l0_sublevels", "Sublevels of L0 (each one a sorted run a read consults)."),
		readAmp:        desc("read_amplification", "Sorted runs a read may consult: L0 sublevels plus non-empty levels."),
		memtables:      desc("memtables", "Memtables, the mutable one and those queued for flush."),
		memtableBytes:  desc("memtable_bytes", "Bytes allocated to memtables."),
		flushes:        desc("flushes_total", "Memtable flushes completed."),
		flushBytes:     desc("flush_bytes_total", "Bytes written to sstables by flushes."),
		compactions:    desc("compactions_total", "Compactions completed."),
		compRead:       desc("compaction_read_bytes_total", "Bytes of sstables read by compactions."),
		compWritten:    desc("compaction_written_bytes_total", "Bytes of sstables written by compactions."),
		compInProgress: desc("compactions_in_progress", "Compactions running now."),
		writeStalls:    desc("write_stalls_total", "Times the LSM stopped writes because of too many memtables or L0 files."),
		writeStallSeconds: desc("write_stall_seconds_total",
			"Time writes were stopped by the LSM."),
		flushFailing: desc("flush_failing", "1 while the newest flush failed and writes are refused."),
	})
}

func (c *lsmCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.debt, c.levelFiles, c.levelBytes, c.sublevels, c.readAmp,
		c.memtables, c.memtableBytes, c.flushes, c.flushBytes, c.compactions, c.compRead, c.compWritten,
		c.compInProgress, c.writeStalls, c.writeStallSeconds, c.flushFailing} {
		ch <- d
	}
}

func (c *lsmCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.stats()
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	counter := func(d *prometheus.Desc, v float64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v)
	}
	gauge(c.debt, float64(s.CompactionDebtBytes))
	for l := range LSMLevels {
		level := strconv.Itoa(l)
		gauge(c.levelFiles, float64(s.LevelFiles[l]), level)
		gauge(c.levelBytes, float64(s.LevelBytes[l]), level)
	}
	gauge(c.sublevels, float64(s.Sublevels))
	gauge(c.readAmp, float64(s.ReadAmplification))
	gauge(c.memtables, float64(s.Memtables))
	gauge(c.memtableBytes, float64(s.MemtableBytes))
	counter(c.flushes, float64(s.Flushes))
	counter(c.flushBytes, float64(s.FlushBytes))
	counter(c.compactions, float64(s.Compactions))
	counter(c.compRead, float64(s.CompactionBytesRead))
	counter(c.compWritten, float64(s.CompactionBytesWritten))
	gauge(c.compInProgress, float64(s.CompactionsInProgress))
	counter(c.writeStalls, float64(s.WriteStalls))
	counter(c.writeStallSeconds, s.WriteStallSeconds)
	failing := 0.0
	if s.FlushFailing {
		failing = 1
	}
	gauge(c.flushFailing, failing)
}
