package coordinator

import (
	"context"
	"strconv"
	"strings"

	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"

	"github.com/cqld/cqld/cqlerr"
	"github.com/cqld/cqld/protocol"
	"github.com/cqld/cqld/statements"
	"github.com/cqld/cqld/tracing"
)

// beginTrace starts the tracing session of req when its client asked for
// one (the frame's tracing flag) or the node's trace_probability draws it,
// as Cassandra's Message.Request.execute does; nil when it is not traced.
func (c *Coordinator) beginTrace(req *protocol.Request) *tracing.Session {
	if c.opts.Tracer == nil {
		return nil
	}
	return c.sampleTrace(req)
}

// sampleTrace is beginTrace with a tracer.
func (c *Coordinator) sampleTrace(req *protocol.Request) *tracing.Session {
	t := c.opts.Tracer
	if !req.Tracing && !t.Sample() {
		return nil
	}
	r := tracing.Request{Client: req.Client, Parameters: map[string]string{}}
	var opts *message.QueryOptions
	switch m := req.Message.(type) {
	case *message.Query:
		r.Command, r.Request, opts = "QUERY", "Execute CQL3 query", m.Options
		r.Parameters["query"] = traceText(m.Query)
	case *message.Execute:
		r.Command, r.Request, opts = "EXECUTE", "Execute CQL3 prepared query", m.Options
		if ps, err := c.preparedOf(req, m); err == nil {
			r.Parameters["query"] = traceText(ps.st.Query)
			req.Prepared = ps // for execute
		}
	case *message.Batch:
		r.Command, r.Request = "BATCH", "Execute batch of CQL3 queries"
		r.Parameters["consistency_level"] = cqlerr.ConsistencyName(m.Consistency)
		if m.SerialConsistency != nil {
			r.Parameters["serial_consistency_level"] = cqlerr.ConsistencyName(*m.SerialConsistency)
		}
	case *message.Prepare:
		r.Command, r.Request = "PREPARE", "Preparing CQL3 query"
		r.Parameters["query"] = traceText(m.Query)
	default:
		return nil
	}
	if opts != nil {
		r.Parameters["consistency_level"] = cqlerr.ConsistencyName(opts.Consistency)
		if opts.SerialConsistency != nil {
			r.Parameters["serial_consistency_level"] = cqlerr.ConsistencyName(*opts.SerialConsistency)
		}
		if opts.PageSize > 0 {
			r.Parameters["page_size"] = strconv.Itoa(int(opts.PageSize))
		}
	}
	return t.Begin(r)
}

// endTrace records the end of session s of req, and gives its id to the
// response when the client asked for the trace.
func endTrace(s *tracing.Session, req *protocol.Request, resp *protocol.Response) {
	if s == nil {
		return
	}
	s.End()
	if req.Tracing && resp != nil {
		id := primitive.UUID(s.ID())
		resp.TracingID = &id
	}
}

// traceParse records the parsing and preparing of a statement.
func traceParse(ctx context.Context, query string) {
	if s := tracing.FromContext(ctx); s != nil {
		s.Trace("Parsing " + traceText(query))
		s.Trace("Preparing statement")
	}
}

// traceText is a query's text as its trace keeps it (system_traces is a
// table every node writes and a granted role reads): a role statement
// naming a password is cut after the word PASSWORD, as Cassandra's
// PasswordObfuscator cuts such statements in its audit log, so that no
// password is stored. Text that does not parse is cut too, when it
// holds the word: it may be a role statement with a typo.
func traceText(query string) string {
	const word = "password"
	i := 0
	for ; i+len(word) <= len(query) && !strings.EqualFold(query[i:i+len(word)], word); i++ {
	}
	if i+len(word) > len(query) {
		return query
	}
	if st, _, err := statements.Parse(query); err == nil && !isRoleStatement(st) {
		return query
	}
	return query[:i+len(word)] + " *******"
}
