package metrics

import "github.com/prometheus/client_golang/prometheus"

// Native holds the client-protocol metrics the frontend updates. Its fields
// are safe for concurrent use.
type Native struct {
	ConnectionsOpen  prometheus.Gauge
	ConnectionsTotal prometheus.Counter
	// Requests counts finished requests by opcode (QUERY, EXECUTE, ...) and
	// outcome ("ok", or the error code's name such as "invalid").
	Requests *prometheus.CounterVec
	// Latency is the time from a whole frame being read to its response
	// being handed to the event loop, by opcode.
	Latency    *prometheus.HistogramVec
	InFlight   prometheus.Gauge
	QueueDepth prometheus.Gauge
	// Inline counts requests answered on the event loop that read them,
	// without a worker.
	Inline   prometheus.Counter
	BytesIn  prometheus.Counter
	BytesOut prometheus.Counter
	// Overloaded counts requests refused with OVERLOADED, by the limit hit.
	Overloaded *prometheus.CounterVec
	// Backpressure counts the times a connection stopped being read
	// because its next request was over a limit ("connection", "server",
	// "fair_share") and its client had not asked for OVERLOADED
	// (THROW_ON_OVERLOAD): the request waits unread until it may start.
	Backpressure *prometheus.CounterVec
	// ProtocolErrors counts connections closed for a broken byte stream.
	ProtocolErrors prometheus.Counter
	// Closed counts connections the server closed, by reason
	// ("protocol_error", "encode_error", ...).
	Closed *prometheus.CounterVec
	// Refused counts connections closed as soon as they were accepted,
	// by reason ("max_connections", "max_connections_per_ip", "error").
	Refused *prometheus.CounterVec
	// RequestData is the bytes of requests held: frames being read,
	// frames waiting on paused connections, requests in flight.
	// ResponseData is the bytes of answers queued and not yet taken by
	// sockets; Paused the connections paused until theirs drain. The
	// three are sampled by the frontend's housekeeper.
	RequestData  prometheus.Gauge
	ResponseData prometheus.Gauge
	Paused       prometheus.Gauge
	// Held is the connections whose requests wait, read and not yet
	// run, until their answers drain; sampled with the three above.
	Held prometheus.Gauge
	// AcceptErrors counts failed accept calls (EMFILE and the like), after
	// each of which the server backs off and tries again.
	AcceptErrors prometheus.Counter
	// Startups counts completed handshakes by protocol version and
	// compression ("none", "lz4", "snappy").
	Startups *prometheus.CounterVec
}

// NewNative creates the client-protocol metrics and registers them on reg.
func NewNative(reg prometheus.Registerer) *Native {
	const ns, sub = "cqld", "native"
	m := &Native{
		ConnectionsOpen: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: ns, Subsystem: sub, Name: "connections_open",
			Help: "Client connections currently open.",
		}),
		ConnectionsTotal: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: ns, Subsystem: sub, Name: "connections_total",
			Help: "Client connections accepted since start.",
		}),
		Requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: ns, Subsystem: sub, Name: "requests_total",
			Help: "Requests answered, by opcode and outcome.",
		}, []string{"opcode", "outcome"}),
		Latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: ns, Subsystem: sub, Name: "request_duration_seconds",
			Help:    "Time from a whole request frame read to its response queued for writing, by opcode.",
			Buckets: prometheus.ExponentialBuckets(25e-6, 2, 18), // 25µs .. ~3.3s
		}, []string{"opcode"}),
		InFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: ns, Subsystem: sub, Name: "requests_in_flight",
			Help: "Requests read and not yet answered.",
		}),
		QueueDepth: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: ns, Subsystem: sub, Name: "worker_queue_depth",
			Help: "Requests waiting for a free worker.",
		}),
		Inline: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: ns, Subsystem: sub, Name: "inline_requests_total",
			Help: "Requests answered on the event loop that read them (single-row reads, writes in periodic commit log mode), without a worker.",
		}),
		BytesIn: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: ns, Subsystem: sub, Name: "read_bytes_total",
			Help: "Bytes read from client connections.",
		}),
		BytesOut: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: ns, Subsystem: sub, Name: "written_bytes_total",
			Help: "Bytes queued for writing to client connections.",
		}),
		Overloaded: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: ns, Subsystem: sub, Name: "overloaded_total",
			Help: "Requests refused with OVERLOADED, by the limit that was reached.",
		}, []string{"limit"}),
		Backpressure: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: ns, Subsystem: sub, Name: "backpressure_pauses_total",
			Help: "Times a connection stopped being read because its next request was over a limit and its client had not asked for OVERLOADED (THROW_ON_OVERLOAD), by the limit.",
		}, []string{"limit"}),
		ProtocolErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: ns, Subsystem: sub, Name: "protocol_errors_total",
			Help: "Connections closed because their byte stream was not valid CQL protocol.",
		}),
		Closed: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: ns, Subsystem: sub, Name: "connections_closed_total",
			Help: "Client connections the server closed, by reason.",
		}, []string{"reason"}),
		Refused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: ns, Subsystem: sub, Name: "connections_refused_total",
			Help: "Client connections closed as soon as they were accepted, by reason.",
		}, []string{"reason"}),
		RequestData: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: ns, Subsystem: sub, Name: "request_data_bytes",
			Help: "Bytes of client requests held: frames being read, frames waiting on paused connections, requests in flight.",
		}),
		ResponseData: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: ns, Subsystem: sub, Name: "response_data_bytes",
			Help: "Bytes of answers queued for client connections and not yet taken by their sockets.",
		}),
		Paused: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: ns, Subsystem: sub, Name: "connections_paused",
			Help: "Client connections not read from until the answers queued for them drain.",
		}),
		Held: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: ns, Subsystem: sub, Name: "connections_held",
			Help: "Client connections whose requests, read and not yet run, wait for the answers queued for them to drain.",
		}),
		AcceptErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: ns, Subsystem: sub, Name: "accept_errors_total",
			Help: "Failed accepts of client connections (such as EMFILE); the server backs off and retries.",
		}),
		Startups: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: ns, Subsystem: sub, Name: "startups_total",
			Help: "Connections that completed STARTUP, by protocol version and compression.",
		}, []string{"version", "compression"}),
	}
	reg.MustRegister(m.Startups, m.ConnectionsOpen, m.ConnectionsTotal, m.Requests, m.Latency,
		m.InFlight, m.QueueDepth, m.Inline, m.BytesIn, m.BytesOut, m.Overloaded, m.Backpressure, m.ProtocolErrors, m.Closed, m.Refused, m.AcceptErrors,
		m.RequestData, m.ResponseData, m.Paused, m.Held)
	return m
}
