package proxy

import "github.com/prometheus/client_golang/prometheus"

// CASMetrics are the lightweight transactions' counters, named cqld_cas_*
// in the spirit of ScyllaDB's cas_* family, each by operation: "write" (a
// conditional write) or "read" (a SERIAL read). Several proxies may share
// one set. Safe for concurrent use.
type CASMetrics struct {
	// Contended counts the rounds lost to another proposer: a prepare
	// refused for a later ballot, or a proposal no replica accepted.
	Contended *prometheus.CounterVec
	// Timeouts counts the transactions answered with a timeout: contention
	// past cas_contention_timeout, a round's deadline, an unknown outcome.
	Timeouts *prometheus.CounterVec
	// UnfinishedCommits counts the proposals found accepted and not
	// committed, which a round finishes before its own.
	UnfinishedCommits *prometheus.CounterVec
	// Reproposals counts those of them re-proposed and chosen.
	Reproposals *prometheus.CounterVec
	// CatchUps counts the replicas sent the most recent commit because
	// their promise showed an older one or did not arrive.
	CatchUps *prometheus.CounterVec
	// RoundTrips is how many round trips each transaction took (0 on a
	// partition whose one replica is the coordinator).
	RoundTrips *prometheus.HistogramVec
	// Repeats counts the transactions that tried the repeat proposer's
	// promise given in advance, by outcome: "chosen" (one round trip),
	// "refused" (nothing accepted: the usual way followed), "unknown"
	// (some accepted), "nothing" (no update to propose: the usual way).
	Repeats *prometheus.CounterVec
}

// NewCASMetrics creates the metrics and registers them on reg.
func NewCASMetrics(reg prometheus.Registerer) *CASMetrics {
	const ns, sub = "cqld", "cas"
	counter := func(name, help string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: name, Help: help}, []string{"op"})
	}
	m := &CASMetrics{
		Contended:         counter("contended_total", "Paxos rounds lost to another proposer."),
		Timeouts:          counter("timeouts_total", "Lightweight transactions answered with a timeout."),
		UnfinishedCommits: counter("unfinished_commits_total", "Proposals found accepted and not committed."),
		Reproposals:       counter("reproposals_total", "Unfinished proposals re-proposed and chosen."),
		CatchUps:          counter("catch_ups_total", "Replicas sent the most recent commit they may lack."),
		RoundTrips: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: ns, Subsystem: sub, Name: "round_trips",
			Help: "Round trips each lightweight transaction took.", Buckets: []float64{0, 1, 2, 3, 4, 6, 8, 12, 16}}, []string{"op"}),
		Repeats: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "repeats_total",
			Help: "Lightweight transactions that tried a promise given in advance, by outcome."}, []string{"outcome"}),
	}
	reg.MustRegister(m.Contended, m.Timeouts, m.UnfinishedCommits, m.Reproposals, m.CatchUps, m.RoundTrips, m.Repeats)
	return m
}
