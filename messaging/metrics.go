package messaging

import "github.com/prometheus/client_golang/prometheus"

// Reasons a message is dropped, the values of Metrics.Dropped's reason
// label.
const (
	DropExpired   = "expired"    // its deadline passed before it was written or handled
	DropQueueFull = "queue_full" // the queue toward the peer was full (the sender got ErrQueueFull)
	DropNoHandler = "no_handler" // a one-way message for a verb without a handler
	DropClosed    = "closed"     // its connection closed or failed first
	DropLate      = "late"       // a response whose request had already given up
	DropFault     = "fault"      // dropped by an InmemNetwork fault
)

// Metrics are a transport's counters. Several transports (a test's nodes)
// may share one set. Its fields are safe for concurrent use.
type Metrics struct {
	// Messages and Bytes count messages and their envelope bytes, by
	// direction ("sent" when written, "received" when decoded), verb and
	// peer address.
	Messages *prometheus.CounterVec
	Bytes    *prometheus.CounterVec
	// Dropped counts messages given up without being delivered, by verb,
	// peer and reason (the Drop* constants).
	Dropped *prometheus.CounterVec
	// Timeouts counts requests whose response did not arrive by their
	// deadline, by verb and peer.
	Timeouts *prometheus.CounterVec
	// ConnectionErrors counts connections that failed, by reason: "dial",
	// "handshake" (bad hello, including garbage on the port), "refused"
	// (the peer refused us), "foreign" (we refused the peer), "stream"
	// (a broken byte stream after the handshake).
	ConnectionErrors *prometheus.CounterVec
}

// NewMetrics creates the metrics, named cqld_internode_*, and registers
// them on reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	const ns, sub = "cqld", "internode"
	vec := func(name, help string, labels ...string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: name, Help: help}, labels)
	}
	m := &Metrics{
		Messages: vec("messages_total", "Internode messages sent (written) and received (decoded).",
			"direction", "verb", "peer"),
		Bytes: vec("bytes_total", "Envelope bytes of internode messages sent and received, before segment framing.",
			"direction", "verb", "peer"),
		Dropped: vec("dropped_messages_total", "Internode messages given up without being delivered.",
			"verb", "peer", "reason"),
		Timeouts: vec("timeouts_total", "Internode requests whose response did not arrive by their deadline.",
			"verb", "peer"),
		ConnectionErrors: vec("connection_errors_total", "Internode connections that failed.", "reason"),
	}
	reg.MustRegister(m.Messages, m.Bytes, m.Dropped, m.Timeouts, m.ConnectionErrors)
	return m
}

func (m *Metrics) sent(verb Verb, peer string, bytes int) {
	m.Messages.WithLabelValues("sent", verb.String(), peer).Inc()
	m.Bytes.WithLabelValues("sent", verb.String(), peer).Add(float64(bytes))
}

func (m *Metrics) received(verb Verb, peer string, bytes int) {
	m.Messages.WithLabelValues("received", verb.String(), peer).Inc()
	m.Bytes.WithLabelValues("received", verb.String(), peer).Add(float64(bytes))
}

func (m *Metrics) dropped(verb Verb, peer, reason string) {
	m.Dropped.WithLabelValues(verb.String(), peer, reason).Inc()
}
