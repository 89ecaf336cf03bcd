package test

import (
	"bytes"
	"context"
	"crypto/md5"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"

	"github.com/cqld/cqld/config"
	"github.com/cqld/cqld/cqlclient"
	"github.com/cqld/cqld/protocol"
)

// batchRequestBody is the body of a PREPARE_BATCH of stmts, as the codec
// encodes it.
func batchRequestBody(t testing.TB, stmts ...protocol.BatchStatement) []byte {
	t.Helper()
	f, err := protocol.AppendRequest(nil, 4, 0, &protocol.PrepareBatch{Statements: stmts})
	if err != nil {
		t.Fatal(err)
	}
	return f[protocol.HeaderLen:]
}

// optInStartup is a v4 STARTUP turning the extension on.
func (w *wire) optIn(version byte) {
	w.t.Helper()
	w.send(version, 1, primitive.OpCodeStartup, stringMap(map[string]string{"CQL_VERSION": "3.0.0", protocol.PrepareBatchExtension: "1"}))
	if r := w.mustRead(); r.op != primitive.OpCodeReady {
		w.t.Fatalf("STARTUP with %s: %s", protocol.PrepareBatchExtension, fmtReply(r))
	}
}

// batchOf decodes a PREPARED_BATCH reply.
func batchOf(t testing.TB, r reply) *protocol.PreparedBatch {
	t.Helper()
	h := protocol.Header{Version: primitive.ProtocolVersion(r.version &^ 0x80), Stream: r.stream, OpCode: r.op, BodyLen: len(r.body)}
	msg, err := protocol.DecodeResponse(h, r.body)
	if err != nil {
		t.Fatalf("undecodable answer %s: %v", fmtReply(r), err)
	}
	b, ok := msg.(*protocol.PreparedBatch)
	if !ok {
		t.Fatalf("answer %v, want PREPARED_BATCH", msg)
	}
	return b
}

// TestPrepareBatchNegotiation: SUPPORTED offers the extension; a
// connection that did not turn it on gets the PROTOCOL_ERROR of an unknown
// opcode and stays open; an unknown extension version fails STARTUP; stock
// gocql, which never asks, prepares and executes as before.
func TestPrepareBatchNegotiation(t *testing.T) {
	node, _ := newNode(t)
	w := dial(t, node.Addr())
	w.send(4, 2, primitive.OpCodeOptions, nil)
	sup, ok := decodeReply(t, w.mustRead()).(*message.Supported)
	if !ok || !reflect.DeepEqual(sup.Options[protocol.PrepareBatchExtension], []string{"1"}) {
		t.Fatalf("SUPPORTED = %v", sup)
	}
	body := batchRequestBody(t, protocol.BatchStatement{Query: "SELECT key FROM system.local"})
	unknown := func(w *wire, stream int16) {
		t.Helper()
		w.send(4, stream, protocol.OpCodePrepareBatch, body)
		r := w.mustRead()
		if code, msg := r.errorCode(); code != primitive.ErrorCodeProtocolError || r.stream != stream || msg != "Unknown opcode 32" {
			t.Fatalf("PREPARE_BATCH without opting in: %s", fmtReply(r))
		}
	}
	unknown(w, 3) // before STARTUP
	w.handshake()
	unknown(w, 4) // after a STARTUP without the option
	if _, ok := w.roundTrip(4, 5, &message.Prepare{Query: "SELECT key FROM system.local"}).(*message.PreparedResult); !ok {
		t.Fatal("the connection did not survive the unknown opcode")
	}

	w2 := dial(t, node.Addr())
	w2.send(4, 1, primitive.OpCodeStartup, stringMap(map[string]string{"CQL_VERSION": "3.0.0", protocol.PrepareBatchExtension: "2"}))
	if r := w2.mustRead(); r.op != primitive.OpCodeError || !strings.Contains(fmtReply(r), `Unsupported CQLD_PREPARE_BATCH version \"2\"`) {
		t.Fatalf("STARTUP with version 2: %s", fmtReply(r))
	}

	s := tableSession(t, node.Addr(), "ks")
	mustExec(t, s, `CREATE TABLE kv (k int PRIMARY KEY, v text)`)
	mustExec(t, s, `INSERT INTO kv (k, v) VALUES (?, ?)`, 1, "one")
	var v string
	if err := s.Query(`SELECT v FROM kv WHERE k = ?`, 1).Scan(&v); err != nil || v != "one" {
		t.Fatalf("gocql: %q %v", v, err)
	}
}

// TestPrepareBatchResults prepares valid, invalid and repeated statements
// in one request with the client, on v4 and v5, and checks each result is
// what a PREPARE of the statement alone gets: the same id and metadata, or
// the same error; the ids execute.
func TestPrepareBatchResults(t *testing.T) {
	node, _ := newNode(t)
	kvSetup(t, node.Addr())
	stmts := []cqlclient.Statement{
		{Query: "SELECT v FROM kv WHERE k = ?", Keyspace: "ks"},
		{Query: "SELEC v FROM kv"},
		{Query: "INSERT INTO ks.kv (k, v) VALUES (?, ?)"},
		{Query: "SELECT * FROM ks.nope WHERE k = ?"},
		{Query: "SELECT v FROM kv WHERE k = ?", Keyspace: "ks"},
		{Query: "SELECT v FROM kv WHERE k = ?"}, // no keyspace: this connection has none
	}
	for _, v := range []primitive.ProtocolVersion{4, 5} {
		t.Run(fmt.Sprintf("v%d", v), func(t *testing.T) {
			ctx := context.Background()
			c, err := cqlclient.Dial(ctx, node.Addr(), cqlclient.Options{Version: v})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if !c.CanPrepareBatch() {
				t.Fatal("extension not negotiated")
			}
			res, err := c.PrepareBatch(ctx, stmts)
			if err != nil || len(res) != len(stmts) {
				t.Fatalf("PrepareBatch: %d results, %v", len(res), err)
			}
			want := md5.Sum([]byte("ks" + stmts[0].Query))
			if res[0].Err != nil || !bytes.Equal(res[0].Prepared.ID, want[:]) {
				t.Fatalf("statement 1: %+v %v", res[0].Prepared, res[0].Err)
			}
			md, err := res[0].Prepared.Metadata()
			if err != nil || len(md.VariablesMetadata.Columns) != 1 || !reflect.DeepEqual(md.VariablesMetadata.PkIndices, []uint16{0}) ||
				len(md.ResultMetadata.Columns) != 1 || !bytes.Equal(md.PreparedQueryId, want[:]) {
				t.Fatalf("statement 1 metadata: %+v %v", md, err)
			}
			if v >= 5 && len(res[0].Prepared.ResultMetadataID) == 0 {
				t.Error("v5 result without a result metadata id")
			}
			if res[4].Err != nil || !bytes.Equal(res[4].Prepared.ID, res[0].Prepared.ID) {
				t.Errorf("repeated statement: %+v %v", res[4].Prepared, res[4].Err)
			}
			for i, code := range map[int]primitive.ErrorCode{1: primitive.ErrorCodeSyntaxError, 3: primitive.ErrorCodeInvalid, 5: primitive.ErrorCodeInvalid} {
				se, ok := res[i].Err.(*cqlclient.ServerError)
				if !ok || se.Code != code {
					t.Errorf("statement %d: %v, want code 0x%04x", i+1, res[i].Err, uint32(code))
					continue
				}
				if v < 5 && stmts[i].Keyspace != "" {
					continue
				}
				_, alone := c.Prepare(ctx, stmts[i])
				if alone == nil || alone.Error() != se.Error() {
					t.Errorf("statement %d: in the batch %v, alone %v", i+1, se, alone)
				}
			}
			for _, i := range []int{0, 2} {
				if v < 5 && stmts[i].Keyspace != "" {
					continue
				}
				alone, err := c.Prepare(ctx, stmts[i])
				if err != nil || !bytes.Equal(alone.Body(), res[i].Prepared.Body()) || !bytes.Equal(alone.ID, res[i].Prepared.ID) ||
					!bytes.Equal(alone.ResultMetadataID, res[i].Prepared.ResultMetadataID) {
					t.Errorf("statement %d: in the batch %+v, alone %+v %v", i+1, res[i].Prepared, alone, err)
				}
			}
			w := dial(t, node.Addr())
			w.handshake()
			rows, ok := w.roundTrip(4, 2, execOne(res[0].Prepared.ID, int32Bytes(1))).(*message.RowsResult)
			if !ok || len(rows.Data) != 1 || string(rows.Data[0][0]) != "one" {
				t.Fatalf("EXECUTE of a batch-prepared id: %v", rows)
			}
		})
	}
}

// TestPrepareBatchBadInput sends each bad request of the issue on one
// opted-in connection: each gets its specific PROTOCOL_ERROR on its stream
// or its per-statement results, and the connection keeps serving.
func TestPrepareBatchBadInput(t *testing.T) {
	node, cfg := newNode(t)
	w := dial(t, node.Addr())
	w.optIn(4)
	good := protocol.BatchStatement{Query: "SELECT key FROM system.local"}
	stillServes := func(stream int16) {
		t.Helper()
		w.send(4, stream, protocol.OpCodePrepareBatch, batchRequestBody(t, good))
		if b := batchOf(t, w.mustRead()); len(b.Results) != 1 {
			t.Fatalf("after bad input: %v", b)
		}
	}
	three := batchRequestBody(t, good, good, protocol.BatchStatement{Query: "SELECT host_id FROM system.local"})
	for i, tc := range []struct {
		name, want string
		body       []byte
	}{
		{"zero statements", "PREPARE_BATCH must carry at least one statement", []byte{0, 0, 0, 0}},
		{"65536 statements", "PREPARE_BATCH carries more than 65535 statements: 65536",
			append([]byte{0, 1, 0, 0}, batchRequestBody(t, good)[4:]...)},
		{"body shorter than it claims", "statement 3 of 3: the body ends 10 bytes into its query of 32 bytes", three[:len(three)-24]},
		{"statement longer than the frame limit", fmt.Sprintf("statement 1 of 1: a query of 2147483647 bytes is longer than the frame limit of %d bytes", cfg.NativeTransportMaxFrameSize),
			append([]byte{0, 0, 0, 1, 0x7f, 0xff, 0xff, 0xff}, "SELECT"...)},
	} {
		stream := int16(10 + 2*i)
		w.send(4, stream, protocol.OpCodePrepareBatch, tc.body)
		r := w.mustRead()
		if code, msg := r.errorCode(); code != primitive.ErrorCodeProtocolError || r.stream != stream || msg != tc.want {
			t.Errorf("%s: %s, want %q", tc.name, fmtReply(r), tc.want)
		}
		stillServes(stream + 1)
	}

	w.send(4, 30, protocol.OpCodePrepareBatch, batchRequestBody(t, good, protocol.BatchStatement{Query: "DROP"}, good,
		protocol.BatchStatement{Query: "SELECT * FROM system.nope"}, protocol.BatchStatement{Query: "SELECT host_id FROM system.local"}))
	b := batchOf(t, w.mustRead())
	kinds := make([]string, len(b.Results))
	for i, r := range b.Results {
		kinds[i] = fmt.Sprintf("%T", r)
	}
	if fmt.Sprint(kinds) != "[*message.PreparedResult *message.SyntaxError *message.PreparedResult *message.Invalid *message.PreparedResult]" {
		t.Fatalf("mixed batch: %v", kinds)
	}
	first, third := b.Results[0].(*message.PreparedResult), b.Results[2].(*message.PreparedResult)
	if !bytes.Equal(first.PreparedQueryId, third.PreparedQueryId) {
		t.Error("duplicate texts got different ids")
	}
	if inv := b.Results[3].(*message.Invalid); !strings.Contains(inv.ErrorMessage, "nope") {
		t.Errorf("INVALID message %q", inv.ErrorMessage)
	}
	stillServes(31)
}

// TestPrepareBatchV5Limits runs the extension inside v5 segments: 65,535
// statements in one request (an answer of several MiB, cut into many
// segments), and a statement too long for the frame limit, which the
// client fails alone while the rest are prepared.
func TestPrepareBatchV5Limits(t *testing.T) {
	cfg := testConfig(t, t.TempDir())
	cfg.NativeTransportMaxFrameSize = 64 * config.KiB
	node := startNode(t, cfg)
	ctx := context.Background()
	c, err := cqlclient.Dial(ctx, node.Addr(), cqlclient.Options{Version: 5, MaxFrameSize: 16 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	const q = "SELECT key FROM system.local"
	stmts := make([]cqlclient.Statement, protocol.MaxPrepareBatch)
	for i := range stmts {
		stmts[i].Query = q
	}
	res, err := c.PrepareBatch(ctx, stmts[:1]) // warms the cache
	if err != nil || res[0].Err != nil {
		t.Fatal(err, res)
	}
	// 65,535 statements do not fit 64 KiB: the client splits them.
	small, err := cqlclient.Dial(ctx, node.Addr(), cqlclient.Options{Version: 5, MaxFrameSize: int(cfg.NativeTransportMaxFrameSize)})
	if err != nil {
		t.Fatal(err)
	}
	defer small.Close()
	long := cqlclient.Statement{Query: q + " WHERE key = '" + strings.Repeat("x", 70<<10) + "'"}
	res, err = small.PrepareBatch(ctx, append(stmts, long))
	if err != nil || len(res) != len(stmts)+1 {
		t.Fatalf("%d results, %v", len(res), err)
	}
	for i, r := range res[:len(stmts)] {
		if r.Err != nil || !bytes.Equal(r.Prepared.ID, res[0].Prepared.ID) {
			t.Fatalf("statement %d: %+v %v", i+1, r.Prepared, r.Err)
		}
	}
	if last := res[len(stmts)]; last.Err == nil || !strings.Contains(last.Err.Error(), "does not fit the frame limit") {
		t.Errorf("the overlong statement: %v", last.Err)
	}

	// One request of 65,535 statements, on a node whose frame limit fits it.
	big := testConfig(t, t.TempDir())
	n2 := startNode(t, big)
	c2, err := cqlclient.Dial(ctx, n2.Addr(), cqlclient.Options{Version: 5})
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	res, err = c2.PrepareBatch(ctx, stmts)
	if err != nil || len(res) != len(stmts) || res[len(res)-1].Err != nil {
		t.Fatalf("65,535 statements: %d results, %v", len(res), err)
	}
	if n := metricValue(t, n2.Registry, "cqld_native_requests_total", map[string]string{"opcode": "PREPARE_BATCH"}); n != 1 {
		t.Errorf("%v PREPARE_BATCH requests for 65,535 statements, want 1", n)
	}
}
