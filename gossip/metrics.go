package gossip

import "github.com/prometheus/client_golang/prometheus"

// Reasons a gossip message is dropped, the values of Metrics.Dropped's
// reason label.
const (
	DropMalformed = "malformed"  // the bytes are not a gossip message
	DropQueueFull = "queue_full" // memberlist's packet queue was full
	DropBusy      = "busy"       // too many streams were open at once
	DropClosed    = "closed"     // gossip was shutting down
)

// Reasons a peer is refused, the values of Metrics.Refused's reason label.
const (
	RefusedHostID  = "host_id" // another live node has its host id
	RefusedAddress = "address" // another live node has its address
	RefusedInvalid = "invalid" // its name is not a host id or its metadata does not decode
)

// Metrics are gossip's instruments. Several nodes of a test may share one
// set. Its fields are safe for concurrent use.
type Metrics struct {
	// Members counts the peers this node knows, by state ("up", "down"),
	// itself included.
	Members *prometheus.GaugeVec
	// Events counts the events delivered, by kind.
	Events *prometheus.CounterVec
	// Dropped counts gossip messages dropped on receipt, by reason (the
	// Drop* constants).
	Dropped *prometheus.CounterVec
	// Refused counts alive announcements refused, by reason (the Refused*
	// constants).
	Refused *prometheus.CounterVec
	// MetaRespread counts metadata changes queued again because
	// memberlist had not sent them within spreadWait (spreadLoop).
	MetaRespread prometheus.Counter
}

// NewMetrics creates the metrics, named cqld_gossip_*, and registers them on
// reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	const ns, sub = "cqld", "gossip"
	m := &Metrics{
		Members: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: ns, Subsystem: sub, Name: "members",
			Help: "Cluster members this node knows, itself included, by state."}, []string{"state"}),
		Events: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "events_total",
			Help: "Membership events delivered, by kind."}, []string{"kind"}),
		Dropped: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "dropped_messages_total",
			Help: "Gossip messages dropped on receipt, by reason."}, []string{"reason"}),
		Refused: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "refused_total",
			Help: "Alive announcements of peers refused, by reason."}, []string{"reason"}),
		MetaRespread: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "meta_respread_total",
			Help: "Changes of this node's metadata queued again because gossip had not sent them within ten rounds."}),
	}
	reg.MustRegister(m.Members, m.Events, m.Dropped, m.Refused, m.MetaRespread)
	return m
}
