package coordinator

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/datastax/go-cassandra-native-protocol/frame"
	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"

	"github.com/cqld/cqld/mutation"
	"github.com/cqld/cqld/protocol"
	"github.com/cqld/cqld/systables"
	"github.com/cqld/cqld/tracing"
)

// The execute-path benchmarks run prepared single-row writes and reads
// through Handle with no network, on a coordinator built the way
// server/node.go builds one, with the commit log in periodic mode. They show
// the time and the allocations per request of the server's hot path:
//
//	path=handle: Coordinator.Handle alone, on a decoded EXECUTE
//	path=frame:  what a frontend worker does for one request - decode the
//	             frame body, Handle, encode the answer into a reused buffer
//	             (the frontend adds its own body copy, metrics and AsyncWrite)
//	path=inline: the same through Inline, as an event loop runs it (with
//	             the callback a write waiting for its sync would answer by)
//
// The workload is the one of test.BenchmarkPreparedWriteRead: bench.kv
// (k int PRIMARY KEY, v blob), random k among benchKeys, 100-byte values.

const (
	benchKeys     = 100_000
	benchValueLen = 100
	benchInsert   = "INSERT INTO bench.kv (k, v) VALUES (?, ?)"
	benchSelect   = "SELECT v FROM bench.kv WHERE k = ?"
)

// benchCoord is a test coordinator with bench.kv created.
func benchCoord(b *testing.B) *Coordinator {
	b.Helper()
	c := newTestCoordinator(b)
	runQuery(b, c, "CREATE KEYSPACE bench WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
	runQuery(b, c, "CREATE TABLE bench.kv (k int PRIMARY KEY, v blob)")
	return c
}

func benchPrepare(b *testing.B, c *Coordinator, q string) []byte {
	b.Helper()
	resp := c.Handle(context.Background(), &protocol.Request{Version: primitive.ProtocolVersion4, Message: &message.Prepare{Query: q}})
	p, ok := resp.Message.(*message.PreparedResult)
	if !ok {
		b.Fatalf("PREPARE %s: %v", q, resp.Message)
	}
	return p.PreparedQueryId
}

// benchExec is a reusable EXECUTE of a prepared statement, shaped the way
// gocql sends one (skip_metadata, a page size, consistency QUORUM).
type benchExec struct {
	vals []*primitive.Value
	req  protocol.Request
}

func newBenchExec(id []byte, nvals int) *benchExec {
	e := &benchExec{vals: make([]*primitive.Value, nvals)}
	for i := range e.vals {
		e.vals[i] = &primitive.Value{Type: primitive.ValueTypeRegular}
	}
	e.req = protocol.Request{Version: primitive.ProtocolVersion4, Message: &message.Execute{
		QueryId: id,
		Options: &message.QueryOptions{
			Consistency:      primitive.ConsistencyLevelQuorum,
			PositionalValues: e.vals,
			SkipMetadata:     true,
			PageSize:         5000,
		},
	}}
	return e
}

// benchKeyBytes is every key 0..benchKeys-1 as a CQL int, 4 bytes each.
func benchKeyBytes() []byte {
	ks := make([]byte, 4*benchKeys)
	for i := 0; i < benchKeys; i++ {
		binary.BigEndian.PutUint32(ks[4*i:], uint32(i))
	}
	return ks
}

// rnd is xorshift64*: random keys without allocating or locking.
type rnd uint64

func (r *rnd) intn(n int) int {
	x := uint64(*r)
	x ^= x >> 12
	x ^= x << 25
	x ^= x >> 27
	*r = rnd(x)
	return int((x * 2685821657736338717) >> 33 % uint64(n))
}

// populate writes every key once.
func populate(b *testing.B, c *Coordinator, insertID, keys, value []byte) {
	b.Helper()
	e := newBenchExec(insertID, 2)
	e.vals[1].Contents = value
	ctx := context.Background()
	for i := 0; i < benchKeys; i++ {
		e.vals[0].Contents = keys[4*i : 4*i+4]
		if resp := c.Handle(ctx, &e.req); resp.Message.GetOpCode() != primitive.OpCodeResult {
			b.Fatalf("populate: %v", resp.Message)
		}
	}
}

// encodeExecute encodes e as a v4 request frame body, and returns where
// the first value's 4 bytes are in it, so a loop can change the key in
// place.
func encodeExecute(b *testing.B, e *benchExec) (protocol.Header, []byte, int) {
	b.Helper()
	marker := []byte{0xde, 0xad, 0xbe, 0xef}
	saved := e.vals[0].Contents
	e.vals[0].Contents = marker
	defer func() { e.vals[0].Contents = saved }()
	var buf bytes.Buffer
	if err := frame.NewRawCodec().EncodeFrame(frame.NewFrame(primitive.ProtocolVersion4, 1, e.req.Message), &buf); err != nil {
		b.Fatal(err)
	}
	raw := buf.Bytes()
	h, ok := protocol.ParseHeader(raw)
	if !ok {
		b.Fatal("cannot parse the encoded header")
	}
	body := raw[protocol.HeaderLen:]
	at := bytes.Index(body, marker)
	if at < 0 {
		b.Fatal("key not found in the encoded EXECUTE")
	}
	return h, body, at
}

func BenchmarkExecuteInsert(b *testing.B) {
	c := benchCoord(b)
	id := benchPrepare(b, c, benchInsert)
	keys := benchKeyBytes()
	value := bytes.Repeat([]byte{'v'}, benchValueLen)
	ctx := context.Background()

	b.Run("path=handle", func(b *testing.B) {
		e := newBenchExec(id, 2)
		e.vals[1].Contents = value
		r := rnd(0x9e3779b97f4a7c15)
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			k := r.intn(benchKeys)
			e.vals[0].Contents = keys[4*k : 4*k+4]
			resp := c.Handle(ctx, &e.req)
			if _, ok := resp.Message.(*message.VoidResult); !ok {
				b.Fatalf("INSERT answered %v", resp.Message)
			}
		}
	})
	for _, inline := range []bool{false, true} {
		b.Run(framePathName(inline), func(b *testing.B) {
			e := newBenchExec(id, 2)
			e.vals[1].Contents = value
			benchFrames(b, c, e, keys, inline, 0)
		})
	}
}

func BenchmarkExecuteSelect(b *testing.B) {
	c := benchCoord(b)
	insertID := benchPrepare(b, c, benchInsert)
	id := benchPrepare(b, c, benchSelect)
	keys := benchKeyBytes()
	value := bytes.Repeat([]byte{'v'}, benchValueLen)
	populate(b, c, insertID, keys, value)
	ctx := context.Background()

	b.Run("path=handle", func(b *testing.B) {
		e := newBenchExec(id, 1)
		r := rnd(0x9e3779b97f4a7c15)
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			k := r.intn(benchKeys)
			e.vals[0].Contents = keys[4*k : 4*k+4]
			resp := c.Handle(ctx, &e.req)
			rows, ok := resp.Message.(*message.RowsResult)
			if !ok || len(rows.Data) != 1 || len(rows.Data[0][0]) != benchValueLen {
				b.Fatalf("SELECT answered %v", resp.Message)
			}
		}
	})
	for _, inline := range []bool{false, true} {
		b.Run(framePathName(inline), func(b *testing.B) {
			benchFrames(b, c, newBenchExec(id, 1), keys, inline, benchValueLen)
		})
	}
}

// benchLater takes an answer given later: a write the commit log made
// wait, in periodic mode too when it has to (a segment to switch to).
type benchLater struct{ ch chan *protocol.Response }

func (l *benchLater) Answer(_ *protocol.Request, resp *protocol.Response) { l.ch <- resp }

func framePathName(inline bool) string {
	if inline {
		return "path=inline"
	}
	return "path=frame"
}

// benchFrames runs e's frame with a random key each time, as a frontend
// does: decode the body, Handle (a worker) or Inline (the event loop, with
// its later callback), encode the answer into a reused buffer; the answer
// must be a RESULT at least minLen bytes long.
func benchFrames(b *testing.B, c *Coordinator, e *benchExec, keys []byte, inline bool, minLen int) {
	benchFramesAs(b, c, e, keys, inline, minLen, "")
}

// benchFramesAs is benchFrames on a connection logged in as role.
func benchFramesAs(b *testing.B, c *Coordinator, e *benchExec, keys []byte, inline bool, minLen int, role string) {
	h, body, at := encodeExecute(b, e)
	out := make([]byte, 0, 256)
	r := rnd(0x9e3779b97f4a7c15)
	ctx := context.Background()
	later := benchLater{ch: make(chan *protocol.Response, 1)}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		k := r.intn(benchKeys)
		copy(body[at:at+4], keys[4*k:4*k+4])
		req, err := protocol.DecodeRequest(h, body, nil, 16<<20)
		if err != nil {
			b.Fatal(err)
		}
		req.Role = role
		var resp *protocol.Response
		if inline {
			var taken bool
			resp, taken = c.Inline(ctx, req, &later)
			if !taken {
				b.Fatal("Inline did not take the request")
			}
			if resp == nil {
				resp = <-later.ch
			}
		} else {
			resp = c.Handle(ctx, req)
		}
		if out, err = protocol.AppendResponse(out[:0], h.Version, h.Stream, resp, nil); err != nil {
			b.Fatal(err)
		}
		if primitive.OpCode(out[4]) != primitive.OpCodeResult || len(out) < protocol.HeaderLen+minLen {
			b.Fatalf("answered %v", resp.Message)
		}
	}
}

// BenchmarkEncodeRows is the encoding alone of the answer to the prepared
// SELECT: a one-row, one-column RowsResult without metadata.
func BenchmarkEncodeRows(b *testing.B) {
	c := benchCoord(b)
	insertID := benchPrepare(b, c, benchInsert)
	id := benchPrepare(b, c, benchSelect)
	keys := benchKeyBytes()
	value := bytes.Repeat([]byte{'v'}, benchValueLen)
	e := newBenchExec(insertID, 2)
	e.vals[0].Contents, e.vals[1].Contents = keys[:4], value
	ctx := context.Background()
	c.Handle(ctx, &e.req)
	s := newBenchExec(id, 1)
	s.vals[0].Contents = keys[:4]
	resp := c.Handle(ctx, &s.req)
	if rows, ok := resp.Message.(*message.RowsResult); !ok || len(rows.Data) != 1 {
		b.Fatalf("SELECT answered %v", resp.Message)
	}
	out := make([]byte, 0, 256)
	var err error
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if out, err = protocol.AppendResponse(out[:0], primitive.ProtocolVersion4, 1, resp, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(len(out)))
}

// BenchmarkExecuteLWT runs lightweight transactions through Handle on one
// node, as BenchmarkExecuteInsert runs plain writes: an INSERT IF NOT
// EXISTS of random keys (most apply), an UPDATE ... IF v = ? whose
// condition holds (each reads and writes its row), and a SELECT at SERIAL.
func BenchmarkExecuteLWT(b *testing.B) {
	c := benchCoord(b)
	insertID := benchPrepare(b, c, benchInsert)
	keys := benchKeyBytes()
	value := bytes.Repeat([]byte{'v'}, benchValueLen)
	ctx := context.Background()

	b.Run("op=insert-if-not-exists", func(b *testing.B) {
		id := benchPrepare(b, c, "INSERT INTO bench.kv (k, v) VALUES (?, ?) IF NOT EXISTS")
		e := newBenchExec(id, 2)
		e.vals[1].Contents = value
		r := rnd(0x9e3779b97f4a7c15)
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			k := r.intn(benchKeys)
			e.vals[0].Contents = keys[4*k : 4*k+4]
			resp := c.Handle(ctx, &e.req)
			if _, ok := resp.Message.(*message.RowsResult); !ok {
				b.Fatalf("INSERT IF NOT EXISTS answered %v", resp.Message)
			}
		}
	})
	populate(b, c, insertID, keys, value)
	b.Run("op=update-if", func(b *testing.B) {
		id := benchPrepare(b, c, "UPDATE bench.kv SET v = ? WHERE k = ? IF v = ?")
		e := newBenchExec(id, 3)
		e.vals[0].Contents, e.vals[2].Contents = value, value
		r := rnd(0x9e3779b97f4a7c15)
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			k := r.intn(benchKeys)
			e.vals[1].Contents = keys[4*k : 4*k+4]
			resp := c.Handle(ctx, &e.req)
			rows, ok := resp.Message.(*message.RowsResult)
			if !ok || len(rows.Data) != 1 || rows.Data[0][0][0] != 1 {
				b.Fatalf("UPDATE IF answered %v", resp.Message)
			}
		}
	})
	b.Run("op=serial-read", func(b *testing.B) {
		id := benchPrepare(b, c, benchSelect)
		e := newBenchExec(id, 1)
		e.req.Message.(*message.Execute).Options.Consistency = primitive.ConsistencyLevelSerial
		r := rnd(0x9e3779b97f4a7c15)
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			k := r.intn(benchKeys)
			e.vals[0].Contents = keys[4*k : 4*k+4]
			resp := c.Handle(ctx, &e.req)
			rows, ok := resp.Message.(*message.RowsResult)
			if !ok || len(rows.Data) != 1 {
				b.Fatalf("SELECT at SERIAL answered %v", resp.Message)
			}
		}
	})
}

// BenchmarkSystemTableRead reads system tables as drivers do at connect
// time, with 50 user tables of 6 columns in the schema: the rows are made
// on each read.
func BenchmarkSystemTableRead(b *testing.B) {
	c := newTestCoordinator(b)
	runQuery(b, c, "CREATE KEYSPACE bench WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
	for i := range 50 {
		runQuery(b, c, fmt.Sprintf("CREATE TABLE bench.t%d (k int, c int, a text, b text, d int, e int, PRIMARY KEY (k, c))", i))
	}
	for _, tc := range []struct{ name, q string }{
		{"columns", "SELECT * FROM system_schema.columns"},
		{"tables", "SELECT * FROM system_schema.tables"},
		{"local", "SELECT * FROM system.local WHERE key = 'local'"},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, ok := runQuery(b, c, tc.q).(*message.RowsResult); !ok {
					b.Fatal("no rows")
				}
			}
		})
	}
}

// BenchmarkExecuteSelectTraced is a point read through Handle with no
// tracer, with a tracer but the request untraced (every request's cost of
// tracing), and traced (the writes go to a writer that drops them, so the
// figure is the recording's cost on the request path and the end's wait
// for the writer).
func BenchmarkExecuteSelectTraced(b *testing.B) {
	c := benchCoord(b)
	insertID := benchPrepare(b, c, benchInsert)
	id := benchPrepare(b, c, benchSelect)
	keys := benchKeyBytes()
	value := bytes.Repeat([]byte{'v'}, benchValueLen)
	populate(b, c, insertID, keys, value)
	tr := tracing.New(tracing.Options{
		Tables: tracing.Tables{Sessions: systables.Lookup("system_traces", "sessions").Storage, Events: systables.Lookup("system_traces", "events").Storage},
		Write:  func(context.Context, *mutation.Mutation) error { return nil },
	})
	defer tr.Close()
	for _, tc := range []struct {
		name   string
		tracer *tracing.Tracer
		traced bool
	}{{"tracer=none", nil, false}, {"tracer=idle", tr, false}, {"traced", tr, true}} {
		b.Run(tc.name, func(b *testing.B) {
			c.opts.Tracer = tc.tracer
			e := newBenchExec(id, 1)
			e.req.Tracing = tc.traced
			r := rnd(0x9e3779b97f4a7c15)
			b.ReportAllocs()
			for b.Loop() {
				k := r.intn(benchKeys)
				e.vals[0].Contents = keys[4*k : 4*k+4]
				resp := c.Handle(context.Background(), &e.req)
				if _, ok := resp.Message.(*message.RowsResult); !ok || (tc.traced != (resp.TracingID != nil)) {
					b.Fatalf("SELECT answered %v (tracing id %v)", resp.Message, resp.TracingID)
				}
			}
		})
	}
	c.opts.Tracer = nil
}
