package metalog

import (
	"github.com/hashicorp/raft"
	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the Log's gauges, read from raft when scraped, and its
// counters.
type metrics struct {
	reg        prometheus.Registerer
	collectors []prometheus.Collector
}

func newMetrics(l *Log, reg prometheus.Registerer) *metrics {
	gauge := func(name, help string, f func() float64) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: "cqld", Subsystem: "metalog", Name: name, Help: help}, f)
	}
	all := []prometheus.Collector{
		gauge("leader", "1 if this node leads the cluster metadata log, else 0.", func() float64 {
			if l.raft.State() == raft.Leader {
				return 1
			}
			return 0
		}),
		gauge("term", "The metadata log's raft term as this node knows it.", func() float64 {
			return float64(l.raft.CurrentTerm())
		}),
		gauge("last_index", "The index of the last entry in this node's metadata log.", func() float64 {
			return float64(l.raft.LastIndex())
		}),
		gauge("commit_index", "The index of the last metadata log entry this node knows committed.", func() float64 {
			return float64(l.raft.CommitIndex())
		}),
		gauge("applied_index", "The index of the last metadata log entry applied on this node.", func() float64 {
			return float64(l.raft.AppliedIndex())
		}),
	}
	all = append(all, l.misaddressedRPCs)
	m := &metrics{reg: reg}
	for _, c := range all {
		// NB: a registerer that already holds these (another Log in the
		// process, as in tests) keeps the first; this Log's go unexposed,
		// and its Close leaves the first's registered.
		if reg.Register(c) == nil {
			m.collectors = append(m.collectors, c)
		}
	}
	return m
}

func (m *metrics) unregister() {
	for _, c := range m.collectors {
		m.reg.Unregister(c)
	}
}

func newMisaddressedCounter() prometheus.Counter {
	return prometheus.NewCounter(prometheus.CounterOpts{Namespace: "cqld", Subsystem: "metalog", Name: "misaddressed_rpcs_total",
		Help: "Raft RPCs refused because they were for another server than this node (its address is another server's in the sender's configuration)."})
}
