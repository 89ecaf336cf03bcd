package coordinator

import (
	"context"
	"testing"

	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"

	"github.com/cqld/cqld/mutation"
	"github.com/cqld/cqld/protocol"
	"github.com/cqld/cqld/systables"
	"github.com/cqld/cqld/tracing"
)

// An EXECUTE is one request of the prepared statement cache, as
// system_views.caches and cqld_prepared_hits_total count it, however many
// of Inline, beginTrace and Handle look at it: the statement found first
// is handed on in the request. One of a statement not prepared is
// answered UNPREPARED by Inline, counted as one miss.
func TestExecuteLooksUpOnce(t *testing.T) {
	c := newTestCoordinator(t)
	runQuery(t, c, "CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
	runQuery(t, c, "CREATE TABLE ks.t (k int, c int, v int, PRIMARY KEY (k, c))")
	resp := c.Handle(context.Background(), &protocol.Request{Version: primitive.ProtocolVersion4,
		Message: &message.Prepare{Query: "SELECT v FROM ks.t WHERE k = 1"}})
	id := resp.Message.(*message.PreparedResult).PreparedQueryId
	execute := func(id []byte, traced bool) *protocol.Request {
		return &protocol.Request{Version: primitive.ProtocolVersion4, Tracing: traced, Message: &message.Execute{QueryId: id,
			Options: &message.QueryOptions{Consistency: primitive.ConsistencyLevelOne}}}
	}
	counted := func(what string, requests, hits int64, run func()) {
		t.Helper()
		before := c.PreparedStats()
		run()
		after := c.PreparedStats()
		if n, h := after.Requests-before.Requests, after.Hits-before.Hits; n != requests || h != hits {
			t.Errorf("%s: counted %d requests, %d hits; want %d, %d", what, n, h, requests, hits)
		}
	}

	counted("EXECUTE that Inline leaves to Handle", 1, 1, func() {
		req := execute(id, false)
		if _, taken := c.Inline(context.Background(), req, nil); taken {
			t.Fatal("Inline took a read of a whole partition")
		}
		if resp := c.Handle(context.Background(), req); resp.Message.GetOpCode() != primitive.OpCodeResult {
			t.Fatalf("EXECUTE answered %v", resp.Message)
		}
	})
	counted("EXECUTE not prepared", 1, 0, func() {
		resp, taken := c.Inline(context.Background(), execute([]byte("0123456789abcdef"), false), nil)
		if _, ok := resp.Message.(*message.Unprepared); !taken || !ok {
			t.Fatalf("Inline: taken %v, answer %v", taken, resp)
		}
	})
	tr := tracing.New(tracing.Options{
		Tables: tracing.Tables{Sessions: systables.Lookup("system_traces", "sessions").Storage, Events: systables.Lookup("system_traces", "events").Storage},
		Write:  func(context.Context, *mutation.Mutation) error { return nil },
	})
	defer tr.Close()
	c.opts.Tracer = tr
	defer func() { c.opts.Tracer = nil }()
	counted("traced EXECUTE", 1, 1, func() {
		if resp := c.Handle(context.Background(), execute(id, true)); resp.TracingID == nil {
			t.Fatalf("traced EXECUTE answered %v without a tracing id", resp.Message)
		}
	})
}
