package metrics

import "github.com/prometheus/client_golang/prometheus"

// Prepared holds the prepared-statement cache's metrics. Its fields are
// plain metrics (no label vectors), so lookups on the execute path cost one
// atomic add; they are safe for concurrent use.
type Prepared struct {
	// Entries and Bytes are the statements cached and their estimated
	// memory, which prepared_statements_cache_size bounds.
	Entries prometheus.Gauge
	Bytes   prometheus.Gauge
	// Hits and Misses count lookups by statement id (PREPARE of known text,
	// EXECUTE, BATCH entries): found in memory or not.
	Hits   prometheus.Counter
	Misses prometheus.Counter
	// Evictions counts statements dropped to make room for others.
	Evictions prometheus.Counter
}

// NewPrepared creates the prepared-statement cache metrics and registers
// them on reg.
func NewPrepared(reg prometheus.Registerer) *Prepared {
	const ns, sub = "cqld", "prepared"
	m := &Prepared{
		Entries: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Subsystem: sub, Name: "entries",
			Help: "Prepared statements in the cache."}),
		Bytes: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Subsystem: sub, Name: "bytes",
			Help: "Estimated memory of the cached prepared statements."}),
		Hits: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "hits_total",
			Help: "Statement id lookups (PREPARE, EXECUTE, BATCH) answered from the cache."}),
		Misses: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "misses_total",
			Help: "Statement id lookups that found nothing in the cache."}),
		Evictions: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "evictions_total",
			Help: "Prepared statements evicted to keep the cache within prepared_statements_cache_size."}),
	}
	reg.MustRegister(m.Entries, m.Bytes, m.Hits, m.Misses, m.Evictions)
	return m
}
