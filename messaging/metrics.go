package messaging

import (
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
)

// Reasons a message is dropped, the values of Metrics.Dropped's reason
// label.
const (
	DropExpired   = "expired"    // its deadline passed before it was written or handled
	DropQueueFull = "queue_full" // the queue toward the peer was full (the sender got ErrQueueFull)
	DropNoHandler = "no_handler" // a one-way message for a verb without a handler
	DropClosed    = "closed"     // its connection closed or failed first
	DropLate      = "late"       // a response whose request had already given up
	DropFault     = "fault"      // dropped by a fault seam: an InmemNetwork fault or a Partitioner
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

const (
	dirSent = iota
	dirReceived
)

var directions = [...]string{dirSent: "sent", dirReceived: "received"}

// peerCounters caches one peer's Messages and Bytes counters by direction
// and verb, so that counting a message looks up no labels. Safe for
// concurrent use.
type peerCounters struct {
	m     *Metrics
	peer  string
	known [len(directions)][len(verbNames)]atomic.Pointer[verbCounters]
}

type verbCounters struct{ messages, bytes prometheus.Counter }

func (m *Metrics) forPeer(peer string) *peerCounters { return &peerCounters{m: m, peer: peer} }

func (p *peerCounters) count(dir int, verb Verb, bytes int) {
	var vc *verbCounters
	if int(verb) < len(verbNames) {
		vc = p.known[dir][verb].Load()
	}
	if vc == nil {
		vc = &verbCounters{
			messages: p.m.Messages.WithLabelValues(directions[dir], verb.String(), p.peer),
			bytes:    p.m.Bytes.WithLabelValues(directions[dir], verb.String(), p.peer),
		}
		if int(verb) < len(verbNames) {
			p.known[dir][verb].Store(vc)
		}
	}
	vc.messages.Inc()
	vc.bytes.Add(float64(bytes))
}

func (m *Metrics) dropped(verb Verb, peer, reason string) {
	m.Dropped.WithLabelValues(verb.String(), peer, reason).Inc()
}
