package server

import (
	"context"

	"github.com/datastax/go-cassandra-native-protocol/primitive"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/cqld/cqld/config"
	"github.com/cqld/cqld/mutation"
	"github.com/cqld/cqld/systables"
	"github.com/cqld/cqld/tracing"
)

// newTracer starts the node's tracer: its traces go to system_traces
// through the proxy at ANY, as Cassandra writes them, with the node's
// internode address as their source.
func (n *Node) newTracer(cfg config.Config, o Options) *tracing.Tracer {
	t := tracing.New(tracing.Options{
		Tables: tracing.Tables{
			Sessions: systables.Lookup("system_traces", "sessions").Storage,
			Events:   systables.Lookup("system_traces", "events").Storage,
		},
		Write: func(ctx context.Context, m *mutation.Mutation) error {
			return n.proxy.Apply(ctx, primitive.ConsistencyLevelAny, m, primitive.WriteTypeSimple, nil)
		},
		Source:      n.cluster.Transport().Addr(),
		TTL:         cfg.TraceTypeQueryTTL.Duration,
		Probability: cfg.TraceProbability,
		Now:         o.Now,
		Logger:      n.log,
	})
	n.Registry.MustRegister(
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "cqld_trace_records_written_total",
			Help: "Trace sessions and events written to system_traces."}, func() float64 { return float64(t.Written()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "cqld_trace_records_dropped_total",
			Help: "Trace sessions and events dropped: the trace queue was full or the write failed."}, func() float64 { return float64(t.Dropped()) }),
	)
	return t
}
