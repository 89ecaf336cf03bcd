package tracing

import (
	"context"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/cqld/cqld/mutation"
	"github.com/cqld/cqld/systables"
)

func tables() Tables {
	return Tables{Sessions: systables.Lookup("system_traces", "sessions").Storage, Events: systables.Lookup("system_traces", "events").Storage}
}

// The writer writes, in order, the session's start, its events and its
// end, each a mutation of system_traces with the tracer's TTL.
func TestSessionWrites(t *testing.T) {
	var mu sync.Mutex
	var got []string // the table of each mutation's one update
	now := time.Unix(1000, 0)
	tr := New(Options{Tables: tables(), Source: netip.MustParseAddrPort("127.0.0.1:7000"), TTL: time.Hour,
		Now: func() time.Time { now = now.Add(time.Millisecond); return now },
		Write: func(_ context.Context, m *mutation.Mutation) error {
			mu.Lock()
			if len(m.Updates) == 1 {
				got = append(got, m.Updates[0].Table.Def.Name)
			}
			mu.Unlock()
			return nil
		}})
	s := tr.Begin(Request{Client: netip.MustParseAddr("127.0.0.9"), Command: "QUERY", Request: "Execute CQL3 query",
		Parameters: map[string]string{"query": "SELECT 1"}})
	ctx := WithSession(context.Background(), s)
	Trace(ctx, "Parsing")
	Tracef(ctx, "Read %d live rows", 3)
	Trace(context.Background(), "not traced")
	s.End()
	tr.Close()
	if len(got) != 4 || tr.Written() != 4 || tr.Dropped() != 0 {
		t.Fatalf("%d mutations written (%d counted, %d dropped), want 4", len(got), tr.Written(), tr.Dropped())
	}
	for i, want := range []string{"sessions", "events", "events", "sessions"} {
		if got[i] != want {
			t.Fatalf("mutations wrote %v, want sessions, events, events, sessions", got)
		}
	}
}

// A full queue drops records rather than wait, and counts them.
func TestFullQueueDrops(t *testing.T) {
	release := make(chan struct{})
	tr := New(Options{Tables: tables(), QueueSize: 1, Write: func(context.Context, *mutation.Mutation) error {
		<-release
		return nil
	}})
	s := tr.Begin(Request{Command: "QUERY"}) // taken by the writer, which blocks
	for range 10 {
		s.Trace("event")
	}
	close(release)
	tr.Close()
	if tr.Dropped() == 0 || tr.Written()+tr.Dropped() != 11 {
		t.Fatalf("written %d, dropped %d of 11", tr.Written(), tr.Dropped())
	}
}
