package test

import (
	"bytes"
	"context"
	"crypto/md5"
	"fmt"
	"testing"
	"time"

	gocql2 "github.com/apache/cassandra-gocql-driver/v2"
	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"

	"github.com/cqld/cqld/config"
	"github.com/cqld/cqld/cqlclient"
)

// execOne is an EXECUTE at ONE of id with positional values.
func execOne(id []byte, values ...[]byte) *message.Execute {
	opts := &message.QueryOptions{Consistency: primitive.ConsistencyLevelOne}
	for _, v := range values {
		opts.PositionalValues = append(opts.PositionalValues, primitive.NewValue(v))
	}
	return &message.Execute{QueryId: id, Options: opts}
}

func int32Bytes(v int32) []byte { return []byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)} }

// kvNode starts a node with cfg and creates ks.kv (k int PRIMARY KEY, v
// text) holding (1, 'one').
func kvSetup(t *testing.T, addr string) {
	t.Helper()
	s := tableSession(t, addr, "ks")
	mustExec(t, s, `CREATE TABLE IF NOT EXISTS kv (k int PRIMARY KEY, v text)`)
	mustExec(t, s, `INSERT INTO kv (k, v) VALUES (1, 'one')`)
}

// TestPreparedCacheEviction fills a tiny cache: the least recently used
// statement is evicted and its EXECUTE answers UNPREPARED with its id; the
// metrics count what happened; and gocql, cycling through more statements
// than fit, re-prepares by itself and never fails.
func TestPreparedCacheEviction(t *testing.T) {
	cfg := testConfig(t, t.TempDir())
	cfg.PreparedStatementsCacheSize = 4 * config.KiB // about four statements
	node := startNode(t, cfg)
	kvSetup(t, node.Addr())

	w := dial(t, node.Addr())
	w.handshake()
	prep := func(stream int16, q string) []byte {
		t.Helper()
		res, ok := w.roundTrip(4, stream, &message.Prepare{Query: q}).(*message.PreparedResult)
		if !ok {
			t.Fatalf("PREPARE %q did not answer PREPARED", q)
		}
		return res.PreparedQueryId
	}
	first := prep(2, `SELECT v FROM ks.kv WHERE k = ? LIMIT 1`)
	if _, ok := w.roundTrip(4, 3, execOne(first, int32Bytes(1))).(*message.RowsResult); !ok {
		t.Fatal("EXECUTE of a fresh statement did not answer ROWS")
	}
	for i := 2; i < 12; i++ {
		prep(4, fmt.Sprintf(`SELECT v FROM ks.kv WHERE k = ? LIMIT %d`, i))
	}
	got := w.roundTrip(4, 5, execOne(first, int32Bytes(1)))
	if up, ok := got.(*message.Unprepared); !ok || !bytes.Equal(up.Id, first) {
		t.Fatalf("EXECUTE of an evicted statement answered %v", got)
	}
	evictions := metricValue(t, node.Registry, "cqld_prepared_evictions_total", nil)
	entries := metricValue(t, node.Registry, "cqld_prepared_entries", nil)
	size := metricValue(t, node.Registry, "cqld_prepared_bytes", nil)
	if evictions < 7 || entries < 1 || entries > 5 || size > float64(cfg.PreparedStatementsCacheSize) {
		t.Errorf("after 11 statements in a 4 KiB cache: evictions %v, entries %v, bytes %v", evictions, entries, size)
	}
	if misses := metricValue(t, node.Registry, "cqld_prepared_misses_total", nil); misses < 12 {
		t.Errorf("misses = %v, want at least 12 (11 new statements, 1 evicted)", misses)
	}
	if hits := metricValue(t, node.Registry, "cqld_prepared_hits_total", nil); hits < 1 {
		t.Errorf("hits = %v, want at least 1", hits)
	}

	s := tableSession(t, node.Addr(), "ks")
	before := metricValue(t, node.Registry, "cqld_prepared_evictions_total", nil)
	for round := 0; round < 3; round++ {
		for i := 1; i <= 10; i++ {
			var v string
			if err := s.Query(fmt.Sprintf(`SELECT v FROM kv WHERE k = ? LIMIT %d`, i), 1).Scan(&v); err != nil || v != "one" {
				t.Fatalf("round %d statement %d: %q %v", round, i, v, err)
			}
		}
	}
	if after := metricValue(t, node.Registry, "cqld_prepared_evictions_total", nil); after-before < 10 {
		t.Errorf("gocql's 30 executions of 10 statements evicted only %v", after-before)
	}
}

// TestPreparedSurvivesRestart prepares a statement, restarts the node on
// the same data, and executes the id on a new connection that never
// prepared it; system.prepared_statements lists it like Cassandra's table.
func TestPreparedSurvivesRestart(t *testing.T) {
	cfg := testConfig(t, t.TempDir())
	n1, err := startStoppable(t, cfg)
	if err != nil {
		t.Fatal(err)
	}
	kvSetup(t, n1.Addr())
	const q = `SELECT v FROM kv WHERE k = ?`
	w := dial(t, n1.Addr())
	w.handshake()
	if _, ok := w.roundTrip(4, 2, &message.Query{Query: `USE ks`, Options: &message.QueryOptions{Consistency: primitive.ConsistencyLevelOne}}).(*message.SetKeyspaceResult); !ok {
		t.Fatal("USE ks failed")
	}
	res, ok := w.roundTrip(4, 3, &message.Prepare{Query: q}).(*message.PreparedResult)
	if !ok {
		t.Fatal("PREPARE did not answer PREPARED")
	}
	if want := md5.Sum([]byte("ks" + q)); !bytes.Equal(res.PreparedQueryId, want[:]) {
		t.Fatalf("id %x, want md5(keyspace+query) %x", res.PreparedQueryId, want)
	}
	w.c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// Statements of one PREPARE_BATCH are persisted together.
	cc, err := cqlclient.Dial(ctx, n1.Addr(), cqlclient.Options{})
	if err != nil {
		t.Fatal(err)
	}
	batch, err := cc.PrepareBatch(ctx, []cqlclient.Statement{
		{Query: "SELECT v FROM kv WHERE k = ? LIMIT 1", Keyspace: "ks"},
		{Query: "SELECT k, v FROM ks.kv WHERE k = ?"},
	})
	cc.Close()
	if err != nil || batch[0].Err != nil || batch[1].Err != nil {
		t.Fatalf("PREPARE_BATCH: %v %v", err, batch)
	}
	if err := n1.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}

	n2 := startNode(t, cfg)
	w = dial(t, n2.Addr())
	w.handshake()
	rows, ok := w.roundTrip(4, 2, execOne(res.PreparedQueryId, int32Bytes(1))).(*message.RowsResult)
	if !ok || len(rows.Data) != 1 || string(rows.Data[0][0]) != "one" {
		t.Fatalf("EXECUTE after restart: %v", rows)
	}
	for i, r := range batch {
		rows, ok := w.roundTrip(4, int16(10+i), execOne(r.Prepared.ID, int32Bytes(1))).(*message.RowsResult)
		if !ok || len(rows.Data) != 1 {
			t.Fatalf("EXECUTE of batch-prepared statement %d after restart: %v", i+1, rows)
		}
	}
	sel, ok := w.roundTrip(4, 3, &message.Query{Query: `SELECT * FROM system.prepared_statements`,
		Options: &message.QueryOptions{Consistency: primitive.ConsistencyLevelOne}}).(*message.RowsResult)
	if !ok {
		t.Fatal("SELECT * FROM system.prepared_statements did not answer ROWS")
	}
	var names []string
	for _, c := range sel.Metadata.Columns {
		names = append(names, c.Name)
	}
	if fmt.Sprint(names) != "[prepared_id logged_keyspace query_string]" {
		t.Errorf("columns %v", names)
	}
	found := false
	for _, r := range sel.Data {
		if bytes.Equal(r[0], res.PreparedQueryId) {
			found = true
			if string(r[1]) != "ks" || string(r[2]) != q {
				t.Errorf("row = %q %q", r[1], r[2])
			}
		}
	}
	if !found {
		t.Errorf("system.prepared_statements lacks %x: %d rows", res.PreparedQueryId, len(sel.Data))
	}
}

// TestPreparedAfterAlterAndDrop follows a prepared SELECT * through ALTER
// TABLE and DROP TABLE on v5: the altered table's statement answers
// UNPREPARED, its new PREPARE a new result metadata id, and a client still
// holding the old id gets Metadata_changed with the new columns; after the
// DROP it answers INVALID, then UNPREPARED, and PREPARE fails.
func TestPreparedAfterAlterAndDrop(t *testing.T) {
	node, _ := newNode(t)
	kvSetup(t, node.Addr())
	w := dial(t, node.Addr())
	w.send(5, 1, primitive.OpCodeStartup, startupBody())
	if r := w.mustRead(); r.op != primitive.OpCodeReady {
		t.Fatal(fmtReply(r))
	}
	const q = `SELECT * FROM ks.kv WHERE k = ?`
	p1, ok := w.roundTripV5(2, &message.Prepare{Query: q}).(*message.PreparedResult)
	if !ok || len(p1.ResultMetadata.Columns) != 2 {
		t.Fatalf("PREPARE: %v", p1)
	}
	query := func(stream int16, cql string) message.Message {
		return w.roundTripV5(stream, &message.Query{Query: cql, Options: &message.QueryOptions{Consistency: primitive.ConsistencyLevelOne}})
	}
	if _, ok := query(3, `ALTER TABLE ks.kv ADD w int`).(*message.SchemaChangeResult); !ok {
		t.Fatal("ALTER TABLE failed")
	}
	exec := func(stream int16, metaID []byte) message.Message {
		x := execOne(p1.PreparedQueryId, int32Bytes(1))
		x.ResultMetadataId = metaID
		x.Options.SkipMetadata = true
		return w.roundTripV5(stream, x)
	}
	if got := exec(4, p1.ResultMetadataId); !isUnprepared(got, p1.PreparedQueryId) {
		t.Fatalf("EXECUTE after ALTER answered %v, want UNPREPARED", got)
	}
	p2, ok := w.roundTripV5(5, &message.Prepare{Query: q}).(*message.PreparedResult)
	if !ok || !bytes.Equal(p2.PreparedQueryId, p1.PreparedQueryId) || bytes.Equal(p2.ResultMetadataId, p1.ResultMetadataId) ||
		len(p2.ResultMetadata.Columns) != 3 {
		t.Fatalf("PREPARE after ALTER: %v", p2)
	}
	old, ok := exec(6, p1.ResultMetadataId).(*message.RowsResult)
	if !ok || !bytes.Equal(old.Metadata.NewResultMetadataId, p2.ResultMetadataId) || len(old.Metadata.Columns) != 3 {
		t.Fatalf("EXECUTE with the old metadata id: %v", old)
	}
	cur, ok := exec(7, p2.ResultMetadataId).(*message.RowsResult)
	if !ok || cur.Metadata.NewResultMetadataId != nil || cur.Metadata.Columns != nil || len(cur.Data) != 1 || len(cur.Data[0]) != 3 {
		t.Fatalf("EXECUTE with the current metadata id: %v", cur)
	}

	if _, ok := query(8, `DROP TABLE ks.kv`).(*message.SchemaChangeResult); !ok {
		t.Fatal("DROP TABLE failed")
	}
	if inv, ok := exec(9, p2.ResultMetadataId).(*message.Invalid); !ok || inv.ErrorMessage != "unconfigured table kv" {
		t.Fatalf("EXECUTE after DROP answered %v", inv)
	}
	if got := exec(10, p2.ResultMetadataId); !isUnprepared(got, p1.PreparedQueryId) {
		t.Fatalf("second EXECUTE after DROP answered %v, want UNPREPARED", got)
	}
	if _, ok := w.roundTripV5(11, &message.Prepare{Query: q}).(*message.Invalid); !ok {
		t.Fatal("PREPARE against a dropped table did not answer INVALID")
	}
}

func isUnprepared(m message.Message, id []byte) bool {
	up, ok := m.(*message.Unprepared)
	return ok && bytes.Equal(up.Id, id)
}

// TestGocqlPreparedAfterAlter: gocql's prepared SELECT * sees a column
// added by ALTER TABLE, through UNPREPARED and its own re-prepare.
func TestGocqlPreparedAfterAlter(t *testing.T) {
	node, _ := newNode(t)
	s := tableSession(t, node.Addr(), "ks")
	mustExec(t, s, `CREATE TABLE t (k int PRIMARY KEY, v text)`)
	mustExec(t, s, `INSERT INTO t (k, v) VALUES (1, 'a')`)
	if rows := rowsOf(t, s, `SELECT * FROM t WHERE k = ?`, 1); len(rows) != 1 || len(rows[0]) != 2 {
		t.Fatalf("before ALTER: %v", rows)
	}
	mustExec(t, s, `ALTER TABLE t ADD w int`)
	mustExec(t, s, `UPDATE t SET w = 7 WHERE k = ?`, 1)
	rows := rowsOf(t, s, `SELECT * FROM t WHERE k = ?`, 1)
	if len(rows) != 1 || rows[0]["w"] != 7 || rows[0]["v"] != "a" {
		t.Fatalf("after ALTER: %v", rows)
	}
}

// TestGocqlV2MetadataChanged runs the ALTER TABLE path through a v5
// driver: session 1 meets UNPREPARED and prepares again; session 2, still
// holding the old result metadata id, gets Metadata_changed with the new
// columns and reads the added column without preparing.
func TestGocqlV2MetadataChanged(t *testing.T) {
	node, _ := newNode(t)
	kvSetup(t, node.Addr())
	session := func() *gocql2.Session {
		host, port := hostPort(node.Addr())
		c := gocql2.NewCluster(host)
		c.Port = port
		c.Timeout = 5 * time.Second
		c.ConnectTimeout = 5 * time.Second
		c.Keyspace = "ks"
		c.NumConns = 1
		s, err := c.CreateSession()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Close)
		return s
	}
	const q = `SELECT * FROM kv WHERE k = ?`
	s1, s2 := session(), session()
	for _, s := range []*gocql2.Session{s1, s2} {
		row := map[string]any{}
		if err := s.Query(q, 1).MapScan(row); err != nil || len(row) != 2 {
			t.Fatalf("before ALTER: %v %v", row, err)
		}
	}
	if err := s1.Query(`ALTER TABLE kv ADD w int`).Exec(); err != nil {
		t.Fatal(err)
	}
	if err := s1.Query(`UPDATE kv SET w = 7 WHERE k = 1`).Exec(); err != nil {
		t.Fatal(err)
	}
	prepares := metricValue(t, node.Registry, "cqld_native_requests_total", map[string]string{"opcode": "PREPARE"})
	row := map[string]any{}
	if err := s1.Query(q, 1).MapScan(row); err != nil || row["w"] != 7 {
		t.Fatalf("session 1 after ALTER: %v %v", row, err)
	}
	if n := metricValue(t, node.Registry, "cqld_native_requests_total", map[string]string{"opcode": "PREPARE"}); n != prepares+1 {
		t.Errorf("session 1 prepared %v times after UNPREPARED, want 1", n-prepares)
	}
	row = map[string]any{}
	if err := s2.Query(q, 1).MapScan(row); err != nil || row["w"] != 7 || row["v"] != "one" {
		t.Fatalf("session 2 after ALTER: %v %v", row, err)
	}
	if n := metricValue(t, node.Registry, "cqld_native_requests_total", map[string]string{"opcode": "PREPARE"}); n != prepares+1 {
		t.Errorf("session 2 prepared again (%v PREPAREs), want Metadata_changed instead", n-prepares)
	}
}
