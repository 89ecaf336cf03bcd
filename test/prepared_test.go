package test

import (
	"bytes"
	"crypto/md5"
	"fmt"
	"testing"
	"time"

	"github.com/datastax/go-cassandra-native-protocol/datatype"
	"github.com/datastax/go-cassandra-native-protocol/frame"
	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"
	"github.com/gocql/gocql"

	"github.com/cqld/cqld/protocol"
)

var libCodec = frame.NewCodec()

// roundTrip sends msg on an unframed connection and decodes the answer.
func (w *wire) roundTrip(version primitive.ProtocolVersion, stream int16, msg message.Message) message.Message {
	w.t.Helper()
	var buf bytes.Buffer
	if err := libCodec.EncodeFrame(frame.NewFrame(version, stream, msg), &buf); err != nil {
		w.t.Fatal(err)
	}
	w.write(buf.Bytes())
	r := w.mustRead()
	if r.stream != stream {
		w.t.Fatalf("answer on stream %d, want %d", r.stream, stream)
	}
	return decodeReply(w.t, r)
}

func decodeReply(t testing.TB, r reply) message.Message {
	t.Helper()
	raw := frameBytes(r.version, 0, r.stream, r.op, r.body)
	f, err := libCodec.DecodeFrame(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("undecodable answer: %v", err)
	}
	return f.Body.Message
}

// TestPreparedSystemTables checks PREPARE and EXECUTE on system tables at
// the byte level: Cassandra's statement id, bind metadata with
// partition-key indexes and the global table spec, result metadata equal to
// what EXECUTE returns, skip_metadata, and UNPREPARED for unknown ids.
func TestPreparedSystemTables(t *testing.T) {
	node, _ := newNode(t)
	w := dial(t, node.Addr())
	w.handshake()
	const q = `SELECT keyspace_name, durable_writes, replication FROM system_schema.keyspaces WHERE keyspace_name = ?`
	res, ok := w.roundTrip(4, 2, &message.Prepare{Query: q}).(*message.PreparedResult)
	if !ok {
		t.Fatal("PREPARE did not answer PREPARED")
	}
	if id := md5.Sum([]byte(q)); !bytes.Equal(res.PreparedQueryId, id[:]) {
		t.Errorf("statement id %x, want md5 of the query %x", res.PreparedQueryId, id)
	}
	vars := res.VariablesMetadata
	if len(vars.Columns) != 1 || vars.Columns[0].Name != "keyspace_name" || vars.Columns[0].Type != datatype.Varchar ||
		vars.Columns[0].Keyspace != "system_schema" || vars.Columns[0].Table != "keyspaces" {
		t.Errorf("bind metadata = %+v", vars.Columns)
	}
	if len(vars.PkIndices) != 1 || vars.PkIndices[0] != 0 {
		t.Errorf("pk indices = %v, want [0]", vars.PkIndices)
	}
	cols := res.ResultMetadata.Columns
	if len(cols) != 3 || cols[0].Name != "keyspace_name" || cols[1].Type != datatype.Boolean ||
		fmt.Sprint(cols[2].Type) != fmt.Sprint(datatype.NewMap(datatype.Varchar, datatype.Varchar)) {
		t.Errorf("result metadata = %v", cols)
	}

	exec := func(skip bool, ks string) *message.RowsResult {
		rows, ok := w.roundTrip(4, 3, &message.Execute{QueryId: res.PreparedQueryId, Options: &message.QueryOptions{
			Consistency:      primitive.ConsistencyLevelOne,
			SkipMetadata:     skip,
			PositionalValues: []*primitive.Value{primitive.NewValue([]byte(ks))},
		}}).(*message.RowsResult)
		if !ok {
			t.Fatal("EXECUTE did not answer ROWS")
		}
		return rows
	}
	full := exec(false, "system")
	if len(full.Data) != 1 || string(full.Data[0][0]) != "system" || len(full.Metadata.Columns) != 3 {
		t.Fatalf("EXECUTE rows = %v, metadata %v", full.Data, full.Metadata.Columns)
	}
	for i, c := range full.Metadata.Columns {
		if c.Name != cols[i].Name || fmt.Sprint(c.Type) != fmt.Sprint(cols[i].Type) {
			t.Errorf("EXECUTE column %d = %v, PREPARED said %v", i, c, cols[i])
		}
	}
	if skipped := exec(true, "system_schema"); skipped.Metadata.Columns != nil || skipped.Metadata.ColumnCount != 3 || len(skipped.Data) != 1 {
		t.Errorf("skip_metadata: columns %v count %d rows %d", skipped.Metadata.Columns, skipped.Metadata.ColumnCount, len(skipped.Data))
	}
	if none := exec(false, "nope"); len(none.Data) != 0 {
		t.Errorf("rows for a missing keyspace: %v", none.Data)
	}

	unknown := []byte("0123456789abcdef")
	got := w.roundTrip(4, 4, &message.Execute{QueryId: unknown, Options: &message.QueryOptions{Consistency: primitive.ConsistencyLevelOne}})
	if up, ok := got.(*message.Unprepared); !ok || !bytes.Equal(up.Id, unknown) {
		t.Errorf("EXECUTE of an unknown id answered %v", got)
	}
	wrong := w.roundTrip(4, 5, &message.Execute{QueryId: res.PreparedQueryId, Options: &message.QueryOptions{Consistency: primitive.ConsistencyLevelOne}})
	if _, ok := wrong.(*message.Invalid); !ok {
		t.Errorf("EXECUTE without its bound value answered %v", wrong)
	}
}

// TestPreparedV5MetadataID checks v5's result metadata id: PREPARED carries
// it, an EXECUTE with a stale id gets Metadata_changed and the new id.
func TestPreparedV5MetadataID(t *testing.T) {
	node, _ := newNode(t)
	w := dial(t, node.Addr())
	w.send(5, 1, primitive.OpCodeStartup, startupBody())
	if r := w.mustRead(); r.op != primitive.OpCodeReady {
		t.Fatal(fmtReply(r))
	}
	send := func(stream int16, msg message.Message) message.Message { return w.roundTripV5(stream, msg) }
	prep, ok := send(2, &message.Prepare{Query: `SELECT key, host_id FROM system.local`}).(*message.PreparedResult)
	if !ok || len(prep.ResultMetadataId) == 0 {
		t.Fatalf("v5 PREPARED without a result metadata id: %v", prep)
	}
	opts := &message.QueryOptions{Consistency: primitive.ConsistencyLevelOne, SkipMetadata: true}
	same := send(3, &message.Execute{QueryId: prep.PreparedQueryId, ResultMetadataId: prep.ResultMetadataId, Options: opts}).(*message.RowsResult)
	if same.Metadata.NewResultMetadataId != nil || same.Metadata.Columns != nil || len(same.Data) != 1 {
		t.Errorf("current id: new id %x, columns %v", same.Metadata.NewResultMetadataId, same.Metadata.Columns)
	}
	stale := send(4, &message.Execute{QueryId: prep.PreparedQueryId, ResultMetadataId: []byte("stale-metadata-id"), Options: opts}).(*message.RowsResult)
	if !bytes.Equal(stale.Metadata.NewResultMetadataId, prep.ResultMetadataId) || len(stale.Metadata.Columns) != 2 {
		t.Errorf("stale id: new id %x, columns %v", stale.Metadata.NewResultMetadataId, stale.Metadata.Columns)
	}
}

// roundTripV5 sends msg in a v5 segment on a connection past its v5
// STARTUP and decodes the answer.
func (w *wire) roundTripV5(stream int16, msg message.Message) message.Message {
	t := w.t
	t.Helper()
	var buf bytes.Buffer
	if err := libCodec.EncodeFrame(frame.NewFrame(5, stream, msg), &buf); err != nil {
		t.Fatal(err)
	}
	seg, err := protocol.AppendSegments(nil, false, buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	w.write(seg)
	return decodeReply(t, w.readV5())
}

// readV5 reads one envelope from v5 segments.
func (w *wire) readV5() reply {
	t := w.t
	t.Helper()
	w.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	dec := protocol.NewSegmentDecoder(false, 1<<24)
	var pending []byte
	tmp := make([]byte, 65536)
	for {
		n, err := w.br.Read(tmp)
		if err != nil {
			t.Fatal(err)
		}
		pending = append(pending, tmp[:n]...)
		used, envs, err := dec.Decode(pending)
		if err != nil {
			t.Fatal(err)
		}
		pending = pending[used:]
		if len(envs) > 0 {
			e := envs[0]
			return reply{version: e[0], stream: int16(e[2])<<8 | int16(e[3]), op: primitive.OpCode(e[4]), body: e[9:]}
		}
	}
}

// TestGocqlReprepareAfterRestart checks that a driver's cached statement
// keeps working after the node restarts and forgets it: UNPREPARED, then
// the driver prepares again and retries by itself.
func TestGocqlReprepareAfterRestart(t *testing.T) {
	cfg := testConfig(t, t.TempDir())
	n1, err := startStoppable(t, cfg)
	if err != nil {
		t.Fatal(err)
	}
	c := gocqlCluster(n1.Addr())
	c.ReconnectInterval = 100e6
	c.Logger = &logSink{} // the restart makes the driver log reconnects
	s, err := c.CreateSession()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var key string
	if err := s.Query(`SELECT key FROM system.local WHERE key = ?`, "local").Scan(&key); err != nil {
		t.Fatal(err)
	}
	if err := n1.Shutdown(t.Context()); err != nil {
		t.Fatal(err)
	}
	startNode(t, cfg)
	var lastErr error
	for i := 0; i < 400; i++ {
		if lastErr = s.Query(`SELECT key FROM system.local WHERE key = ?`, "local").Scan(&key); lastErr == nil {
			break
		}
		if _, ok := lastErr.(gocql.RequestError); ok {
			t.Fatalf("after restart: %v", lastErr)
		}
		sleep(50)
	}
	if lastErr != nil || key != "local" {
		t.Fatalf("after restart: %q %v", key, lastErr)
	}
}
