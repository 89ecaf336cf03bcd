package proxy

import (
	"errors"
	"time"

	"github.com/datastax/go-cassandra-native-protocol/primitive"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/cqld/cqld/cqlerr"
)

// Metrics are a proxy's counters and latencies, named cqld_proxy_*.
// Several proxies (a test's nodes) may share one set. Safe for concurrent
// use.
type Metrics struct {
	// Latency is each request's time in the proxy, by operation ("write",
	// "read", "range") and consistency level.
	Latency *prometheus.HistogramVec
	// Errors counts the requests answered UNAVAILABLE, a timeout, a
	// failure or OVERLOADED, by operation, level and kind ("unavailable",
	// "timeout", "failure", "overloaded").
	Errors *prometheus.CounterVec
	// ReadRepairs counts the repair writes reads sent to stale replicas.
	ReadRepairs prometheus.Counter
	// DigestMismatches counts the reads whose replicas' digests differed,
	// so that they were read again in full.
	DigestMismatches prometheus.Counter
	// SpeculativeRetries counts the replicas reads asked in place of a
	// late or unreachable one.
	SpeculativeRetries prometheus.Counter
	// Hints counts the hints handed to hinted handoff, by reason: "down"
	// (the replica was down when the write was sent), "late" (it did not
	// answer in time or could not be reached).
	Hints *prometheus.CounterVec
}

// NewMetrics creates the metrics and registers them on reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	const ns, sub = "cqld", "proxy"
	m := &Metrics{
		Latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: ns, Subsystem: sub, Name: "request_seconds",
			Help:    "Time of requests in the proxy, from placement to the level met.",
			Buckets: prometheus.ExponentialBuckets(50e-6, 2, 18)}, []string{"op", "consistency"}),
		Errors: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "errors_total",
			Help: "Requests answered UNAVAILABLE, a timeout, a failure or OVERLOADED (too many hints in progress)."}, []string{"op", "consistency", "kind"}),
		ReadRepairs: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "read_repairs_total",
			Help: "Repair writes sent to replicas a read found stale."}),
		DigestMismatches: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "digest_mismatches_total",
			Help: "Reads whose replicas' digests differed, read again in full."}),
		SpeculativeRetries: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "speculative_retries_total",
			Help: "Replicas reads asked in place of a late or unreachable one."}),
		Hints: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "hints_total",
			Help: "Hints handed to hinted handoff."}, []string{"reason"}),
	}
	reg.MustRegister(m.Latency, m.Errors, m.ReadRepairs, m.DigestMismatches, m.SpeculativeRetries, m.Hints)
	return m
}

// observe records a request of op at level cl that started at start and
// ended with err.
func (p *Proxy) observe(op string, cl primitive.ConsistencyLevel, start time.Time, err error) {
	m := p.opts.Metrics
	if m == nil {
		return
	}
	level := cqlerr.ConsistencyName(cl)
	m.Latency.WithLabelValues(op, level).Observe(p.opts.Now().Sub(start).Seconds())
	if kind := errorKind(err); kind != "" {
		m.Errors.WithLabelValues(op, level, kind).Inc()
	}
}

func errorKind(err error) string {
	if err == nil {
		return ""
	}
	// errors.AsType, unlike errors.As, leaves nothing on the heap.
	if _, ok := errors.AsType[*cqlerr.Unavailable](err); ok {
		return "unavailable"
	}
	if _, ok := errors.AsType[*cqlerr.WriteTimeout](err); ok {
		return "timeout"
	}
	if _, ok := errors.AsType[*cqlerr.CasWriteUnknown](err); ok {
		return "timeout"
	}
	if _, ok := errors.AsType[*cqlerr.ReadTimeout](err); ok {
		return "timeout"
	}
	if _, ok := errors.AsType[*cqlerr.WriteFailure](err); ok {
		return "failure"
	}
	if _, ok := errors.AsType[*cqlerr.ReadFailure](err); ok {
		return "failure"
	}
	if ce, ok := errors.AsType[*cqlerr.Error](err); ok && ce.Code == primitive.ErrorCodeOverloaded {
		return "overloaded"
	}
	return ""
}

// started is when a request began, for measured; zero when the proxy has
// no metrics. A request measures itself with
//
//	start := p.started()
//	defer func() { p.measured(op, cl, start, err) }()
//
// which, unlike a deferred closure returned by a function, keeps its
// error off the heap. The requests of a node alone's hot path (Apply,
// ReadPartition, ReadLocal) defer it only when p.opts.Metrics is set, so
// that without metrics they run no deferred call.
func (p *Proxy) started() time.Time {
	if p.opts.Metrics == nil {
		return time.Time{}
	}
	return p.opts.Now()
}

// measured records a request of op at level cl begun at start.
func (p *Proxy) measured(op string, cl primitive.ConsistencyLevel, start time.Time, err error) {
	if p.opts.Metrics != nil {
		p.observe(op, cl, start, err)
	}
}
