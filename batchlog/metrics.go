package batchlog

import "github.com/prometheus/client_golang/prometheus"

// Metrics are a batchlog's counters, named cqld_batchlog_*. A nil
// *Metrics counts nothing. Safe for concurrent use.
type Metrics struct {
	// Stored and Removed count the batches written to and removed from
	// this node's batchlog; Replayed, the batches it replayed, and
	// ReplayFailures those whose replay left some replica neither written
	// nor hinted.
	Stored, Removed, Replayed, ReplayFailures prometheus.Counter
	// Pending is the batches in this node's batchlog at its last replay
	// round.
	Pending prometheus.Gauge
}

// NewMetrics creates the metrics and registers them on reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	const ns, sub = "cqld", "batchlog"
	c := func(name, help string) prometheus.Counter {
		return prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: name, Help: help})
	}
	m := &Metrics{
		Stored:         c("stored_total", "Batches written to this node's batchlog."),
		Removed:        c("removed_total", "Batches removed from this node's batchlog by their coordinator."),
		Replayed:       c("replayed_total", "Batches this node replayed, their coordinator not having removed them in time."),
		ReplayFailures: c("replay_failures_total", "Replayed batches that left a replica neither written nor hinted."),
		Pending: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Subsystem: sub, Name: "pending",
			Help: "Batches in this node's batchlog at its last replay round."}),
	}
	reg.MustRegister(m.Stored, m.Removed, m.Replayed, m.ReplayFailures, m.Pending)
	return m
}

func (m *Metrics) stored() {
	if m != nil {
		m.Stored.Inc()
	}
}

func (m *Metrics) removed() {
	if m != nil {
		m.Removed.Inc()
	}
}
