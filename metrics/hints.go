package metrics

import "github.com/prometheus/client_golang/prometheus"

// Reasons a hint is dropped (the reason label of cqld_hints_dropped_total).
const (
	HintDroppedWindow     = "window"      // target down longer than max_hint_window: not written
	HintDroppedExpired    = "expired"     // older than its tables' gc grace at dispatch
	HintDroppedWriteError = "write_error" // Write failed on I/O
)

// Hints holds the hinted handoff store's metrics. Its fields are safe for
// concurrent use.
type Hints struct {
	// Written counts hints written (buffered for the disk); Replayed counts
	// hints delivered to their target and acknowledged.
	Written  prometheus.Counter
	Replayed prometheus.Counter
	// Dropped counts hints not written or not delivered, by reason
	// (HintDropped*).
	Dropped *prometheus.CounterVec
	// DeliveryFailures counts deliveries that failed (and will be retried).
	DeliveryFailures prometheus.Counter
	// QuarantinedFiles counts corrupt hints files set aside (renamed
	// *.corrupt); TornBytes counts bytes of torn file tails cut at dispatch.
	QuarantinedFiles prometheus.Counter
	TornBytes        prometheus.Counter
	// PendingBytes and PendingFiles are, per target host id, the hints on
	// disk or buffered that are not yet delivered.
	PendingBytes *prometheus.GaugeVec
	PendingFiles *prometheus.GaugeVec
}

// NewHints creates the hints metrics and registers them on reg.
func NewHints(reg prometheus.Registerer) *Hints {
	const ns, sub = "cqld", "hints"
	counter := func(name, help string) prometheus.Counter {
		return prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: name, Help: help})
	}
	gauge := func(name, help string) *prometheus.GaugeVec {
		return prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: ns, Subsystem: sub, Name: name, Help: help},
			[]string{"host_id"})
	}
	m := &Hints{
		Written:  counter("written_total", "Hints written for replicas that were down or did not answer."),
		Replayed: counter("replayed_total", "Hints delivered to their replica and acknowledged."),
		Dropped: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "dropped_total",
			Help: "Hints not written or not delivered, by reason: window (target down longer than max_hint_window), " +
				"expired (older than gc grace), write_error."}, []string{"reason"}),
		DeliveryFailures: counter("delivery_failures_total", "Hint deliveries that failed and will be retried."),
		QuarantinedFiles: counter("quarantined_files_total", "Corrupt hints files renamed *.corrupt and not replayed."),
		TornBytes:        counter("torn_bytes_total", "Bytes of torn hints file tails (unsynced at a crash) cut at dispatch."),
		PendingBytes:     gauge("pending_bytes", "Bytes of hints not yet delivered, per target host id."),
		PendingFiles:     gauge("pending_files", "Hints files not yet delivered, per target host id."),
	}
	reg.MustRegister(m.Written, m.Replayed, m.Dropped, m.DeliveryFailures, m.QuarantinedFiles, m.TornBytes,
		m.PendingBytes, m.PendingFiles)
	return m
}
