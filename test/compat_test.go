package test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	gocql2 "github.com/apache/cassandra-gocql-driver/v2"
	"github.com/datastax/go-cassandra-native-protocol/frame"
	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"
	"github.com/gocql/gocql"
)

// Regression tests over the wire for the wrong answers of issue 17.

// v2Session is an apache/cassandra-gocql-driver v2 session (protocol
// v5) on the node at addr, closed when the test ends.
func v2Session(t *testing.T, addr string) *gocql2.Session {
	t.Helper()
	host, port := hostPort(addr)
	c := gocql2.NewCluster(host)
	c.Port = port
	c.Timeout = 5 * time.Second
	s, err := c.CreateSession()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// kcRows reads the (k, c) rows of q at page size size (0: unpaged) as
// "k/c" strings.
func kcRows(t *testing.T, s *gocql.Session, q string, size int) []string {
	t.Helper()
	iter := s.Query(q).PageSize(size).Iter()
	var k, c int
	var got []string
	for iter.Scan(&k, &c) {
		got = append(got, fmt.Sprintf("%d/%d", k, c))
	}
	if err := iter.Close(); err != nil {
		t.Fatalf("%s (page size %d): %v", q, size, err)
	}
	return got
}

// TestPerPartitionLimitPaged: PER PARTITION LIMIT holds across pages of
// every size, a scan's and an IN's.
func TestPerPartitionLimitPaged(t *testing.T) {
	node, _ := newNode(t)
	s := tableSession(t, node.Addr(), "ppl")
	mustExec(t, s, `CREATE TABLE t (k int, c int, PRIMARY KEY (k, c))`)
	for k := 0; k < 3; k++ {
		for c := 0; c < 3; c++ {
			mustExec(t, s, `INSERT INTO t (k, c) VALUES (?, ?)`, k, c)
		}
	}
	scan := []string{"1/0", "1/1", "0/0", "0/1", "2/0", "2/1"} // token order
	in := []string{"0/0", "0/1", "1/0", "1/1", "2/0", "2/1"}   // key order
	for _, size := range []int{0, 1, 2, 3, 5, 100} {
		if got := kcRows(t, s, `SELECT k, c FROM t PER PARTITION LIMIT 2`, size); !reflect.DeepEqual(got, scan) {
			t.Errorf("scan, page size %d: got %v, want %v", size, got, scan)
		}
		if got := kcRows(t, s, `SELECT k, c FROM t WHERE k IN (2, 0, 1) PER PARTITION LIMIT 2`, size); !reflect.DeepEqual(got, in) {
			t.Errorf("IN, page size %d: got %v, want %v", size, got, in)
		}
		if got := kcRows(t, s, `SELECT k, c FROM t PER PARTITION LIMIT 2 LIMIT 5`, size); !reflect.DeepEqual(got, scan[:5]) {
			t.Errorf("scan with LIMIT 5, page size %d: got %v, want %v", size, got, scan[:5])
		}
	}
}

// TestInOrderByAcrossPartitions: unpaged, IN on the partition key with
// ORDER BY sorts the rows of all the partitions (stably, partitions in key
// order among equal keys) and then applies LIMIT; paged, Cassandra refuses
// it.
func TestInOrderByAcrossPartitions(t *testing.T) {
	node, _ := newNode(t)
	s := tableSession(t, node.Addr(), "inorder")
	mustExec(t, s, `CREATE TABLE t (k int, c int, PRIMARY KEY (k, c))`)
	mustExec(t, s, `CREATE TABLE r (k int, c int, PRIMARY KEY (k, c)) WITH CLUSTERING ORDER BY (c DESC)`)
	for _, tbl := range []string{"t", "r"} {
		for _, kc := range [][2]int{{0, 1}, {0, 4}, {1, 2}, {1, 3}, {1, 4}, {2, 0}} {
			mustExec(t, s, `INSERT INTO `+tbl+` (k, c) VALUES (?, ?)`, kc[0], kc[1])
		}
	}
	desc := []string{"0/4", "1/4", "1/3", "1/2", "0/1"}
	asc := []string{"0/1", "1/2", "1/3", "0/4", "1/4"}
	for _, tc := range []struct {
		q    string
		want []string
	}{
		{`SELECT k, c FROM t WHERE k IN (1, 0) ORDER BY c DESC`, desc},
		{`SELECT k, c FROM t WHERE k IN (1, 0) ORDER BY c ASC`, asc},
		{`SELECT k, c FROM r WHERE k IN (1, 0) ORDER BY c DESC`, desc},
		{`SELECT k, c FROM r WHERE k IN (1, 0) ORDER BY c ASC`, asc},
		{`SELECT k, c FROM t WHERE k IN (1, 0) ORDER BY c DESC LIMIT 3`, desc[:3]},
		{`SELECT k, c FROM t WHERE k IN (1, 0) AND c > 1 ORDER BY c DESC`, desc[:4]},
		{`SELECT k, c FROM t WHERE k IN (1, 0) ORDER BY c DESC PER PARTITION LIMIT 1`, []string{"0/4", "1/4"}},
		// One value in IN is =: the partition's own order, paged or not.
		{`SELECT k, c FROM t WHERE k IN (1) ORDER BY c DESC`, []string{"1/4", "1/3", "1/2"}},
	} {
		if got := kcRows(t, s, tc.q, 0); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.q, got, tc.want)
		}
	}
	if got := kcRows(t, s, `SELECT k, c FROM t WHERE k IN (1) ORDER BY c DESC`, 2); !reflect.DeepEqual(got, []string{"1/4", "1/3", "1/2"}) {
		t.Errorf("IN (1) paged: got %v", got)
	}
	err := s.Query(`SELECT k, c FROM t WHERE k IN (1, 0) ORDER BY c DESC`).PageSize(100).Exec()
	if re, ok := err.(gocql.RequestError); !ok || re.Code() != gocql.ErrCodeInvalid || !strings.Contains(re.Message(), "Cannot page queries with both ORDER BY and a IN restriction on the partition key") {
		t.Errorf("paged IN + ORDER BY: got %v, want Cassandra's Invalid", err)
	}
}

// TestReadConsistencyEveryPath: ANY is refused for reads of user and
// system tables, simple or prepared; SERIAL is refused for several named
// partitions only, and a range or index read at SERIAL runs, as in
// Cassandra 4.0 (only its single-partition reads go through Paxos).
func TestReadConsistencyEveryPath(t *testing.T) {
	node, _ := newNode(t)
	s := tableSession(t, node.Addr(), "cl")
	mustExec(t, s, `CREATE TABLE t (k int, c int, v int, PRIMARY KEY (k, c))`)
	mustExec(t, s, `CREATE INDEX ON t (v)`)
	mustExec(t, s, `INSERT INTO t (k, c, v) VALUES (1, 1, 7)`)
	mustExec(t, s, `INSERT INTO t (k, c, v) VALUES (2, 1, 7)`)
	for _, q := range []string{
		`SELECT * FROM t`, `SELECT * FROM t WHERE k = 1`, `SELECT * FROM t WHERE k = 1 AND c = 1`,
		`SELECT * FROM t WHERE v = 7`, `SELECT count(*) FROM t`,
		`SELECT * FROM system.local`, `SELECT keyspace_name FROM system_schema.tables`,
	} {
		// gocql prepares a SELECT; the comment keeps it a simple QUERY.
		for _, text := range []string{q, "/* simple */ " + q} {
			err := s.Query(text).Consistency(gocql.Any).Exec()
			if re, ok := err.(gocql.RequestError); !ok || re.Code() != gocql.ErrCodeInvalid || re.Message() != "ANY ConsistencyLevel is only supported for writes" {
				t.Errorf("%s at ANY: got %v, want Invalid", text, err)
			}
		}
	}
	serial := gocql.Consistency(gocql.Serial)
	for _, tc := range []struct {
		q    string
		rows int
	}{{`SELECT * FROM t`, 2}, {`SELECT * FROM t WHERE v = 7`, 2}, {`SELECT * FROM t WHERE k = 1`, 1}, {`SELECT * FROM t WHERE k IN (1)`, 1}} {
		n := 0
		iter := s.Query(tc.q).Consistency(serial).Iter()
		for iter.Scan(new(int), new(int), new(int)) {
			n++
		}
		if err := iter.Close(); err != nil || n != tc.rows {
			t.Errorf("%s at SERIAL: %d rows, %v; want %d rows", tc.q, n, err, tc.rows)
		}
	}
	err := s.Query(`SELECT * FROM t WHERE k IN (1, 2)`).Consistency(serial).Exec()
	if err == nil || !strings.Contains(err.Error(), "SERIAL/LOCAL_SERIAL consistency may only be requested for one partition at a time") {
		t.Errorf("IN of two partitions at SERIAL: %v", err)
	}
}

// TestNowInSeconds: protocol v5's now_in_seconds is the request's time for
// TTLs and expiry on QUERY, EXECUTE and BATCH, as in Cassandra 4.0 (the
// cases of apache/cassandra-gocql-driver v2's own TestQuery_WithNowInSeconds
// and TestBatch_WithNowInSeconds, and an expiry either side of it).
func TestNowInSeconds(t *testing.T) {
	node, clock := newClockedNode(t)
	s := v2Session(t, node.Addr())
	for _, q := range []string{
		`CREATE KEYSPACE nis WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}`,
		`CREATE TABLE nis.t (id int PRIMARY KEY, val text)`,
	} {
		if err := s.Query(q).Exec(); err != nil {
			t.Fatal(err)
		}
	}
	ttlAt := func(id int, now int) int {
		t.Helper()
		var ttl int
		if err := s.Query(`SELECT TTL(val) FROM nis.t WHERE id = ?`, id).WithNowInSeconds(now).Scan(&ttl); err != nil {
			t.Fatalf("TTL of %d at %d: %v", id, now, err)
		}
		return ttl
	}
	// gocql v2 prepares an INSERT (EXECUTE); a leading comment keeps it a
	// QUERY.
	if err := s.Query(`INSERT INTO nis.t (id, val) VALUES (?, ?) USING TTL 20`, 1, "v").WithNowInSeconds(0).Exec(); err != nil {
		t.Fatal(err)
	}
	if err := s.Query(`/* q */ INSERT INTO nis.t (id, val) VALUES (2, 'v') USING TTL 20`).WithNowInSeconds(0).Exec(); err != nil {
		t.Fatal(err)
	}
	b := s.Batch(gocql2.LoggedBatch)
	b.WithNowInSeconds(0)
	b.Query(`INSERT INTO nis.t (id, val) VALUES (?, ?) USING TTL 20`, 3, "v")
	if err := b.Exec(); err != nil {
		t.Fatal(err)
	}
	for id := 1; id <= 3; id++ {
		if got := ttlAt(id, 10); got != 10 {
			t.Errorf("row %d written at 0 with TTL 20: TTL %d at 10, want 10", id, got)
		}
		// At the node's own time the cell expired long ago.
		if err := s.Query(`SELECT TTL(val) FROM nis.t WHERE id = ?`, id).Scan(new(int)); err != gocql2.ErrNotFound {
			t.Errorf("row %d at the node's time: %v, want no row", id, err)
		}
	}
	// A write at the node's time expires on the node's clock, and a read
	// with a later now_in_seconds sees it expired already.
	now := int(clock.Now().Unix())
	if err := s.Query(`INSERT INTO nis.t (id, val) VALUES (?, ?) USING TTL 100`, 4, "v").Exec(); err != nil {
		t.Fatal(err)
	}
	if got := ttlAt(4, now+40); got != 60 {
		t.Errorf("TTL at now+40: %d, want 60", got)
	}
	if err := s.Query(`SELECT val FROM nis.t WHERE id = ?`, 4).WithNowInSeconds(now + 100).Scan(new(string)); err != gocql2.ErrNotFound {
		t.Errorf("read at now+100: %v, want no row", err)
	}
	clock.Advance(50 * time.Second)
	if err := s.Query(`SELECT val FROM nis.t WHERE id = ?`, 4).Scan(new(string)); err != nil {
		t.Errorf("read at the node's time: %v", err)
	}
}

// TestSystemTableClockFunctions: SELECT now() FROM system.local, the
// classic health check, and the other clock functions answer as on user
// tables.
func TestSystemTableClockFunctions(t *testing.T) {
	node, clock := newClockedNode(t)
	s := tableSession(t, node.Addr(), "sysfn")
	for _, q := range []string{`SELECT now(), toTimestamp(now()), currentTimestamp(), currentDate() FROM system.local`,
		`/* simple */ SELECT now(), toTimestamp(now()), currentTimestamp(), currentDate() FROM system.local`} {
		var id gocql.UUID
		var ts, cur, day time.Time
		if err := s.Query(q).Scan(&id, &ts, &cur, &day); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		want := clock.Now().Truncate(time.Millisecond)
		if !id.Time().Truncate(time.Millisecond).Equal(want) || !ts.Equal(want) || !cur.Equal(want) {
			t.Errorf("%s: now() at %v, toTimestamp(now()) %v, currentTimestamp() %v; want the node's clock %v", q, id.Time(), ts, cur, want)
		}
		if y, m, d := day.Date(); y != want.UTC().Year() || m != want.UTC().Month() || d != want.UTC().Day() {
			t.Errorf("%s: currentDate() %v, want the day of %v", q, day, want)
		}
	}
}

// TestClientWarnings: the warnings Cassandra sends in a response, read
// back through gocql: aggregations over more than one partition, batches
// of several partitions over batch_size_warn_threshold (and refused over
// batch_size_fail_threshold), unlogged batches over
// unlogged_batch_across_partitions_warn_threshold partitions.
func TestClientWarnings(t *testing.T) {
	node, _ := newNode(t)
	s := tableSession(t, node.Addr(), "warn")
	mustExec(t, s, `CREATE TABLE t (k int, c int, v text, PRIMARY KEY (k, c))`)
	mustExec(t, s, `INSERT INTO t (k, c, v) VALUES (1, 1, 'a')`)
	warnings := func(iter *gocql.Iter) []string {
		t.Helper()
		w := iter.Warnings()
		if err := iter.Close(); err != nil {
			t.Fatal(err)
		}
		return w
	}
	noKey := []string{"Aggregation query used without partition key"}
	for _, tc := range []struct {
		q    string
		want []string
	}{
		{`SELECT count(*) FROM t`, noKey},
		{`/* simple */ SELECT max(c) FROM t`, noKey},
		{`SELECT count(*) FROM t WHERE k IN (1, 2)`, []string{"Aggregation query used on multiple partition keys (IN restriction)"}},
		{`SELECT count(*) FROM t WHERE k = 1`, nil},
		{`SELECT count(*) FROM t WHERE token(k) > 0`, nil},
		{`SELECT k FROM t`, nil},
		{`SELECT count(*) FROM system_schema.tables`, noKey},
	} {
		if got := warnings(s.Query(tc.q).Iter()); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: warnings %q, want %q", tc.q, got, tc.want)
		}
	}

	// Neither gocql hands out the warnings of a BATCH (a VOID answer), so
	// the batches go over a connection of the test's own.
	batch := func(typ primitive.BatchType, parts, valueSize int) ([]string, error) {
		b := &message.Batch{Type: typ, Consistency: primitive.ConsistencyLevelOne}
		for k := 0; k < parts; k++ {
			b.Children = append(b.Children, &message.BatchChild{Query: `INSERT INTO warn.t (k, c, v) VALUES (?, 1, ?)`,
				Values: []*primitive.Value{primitive.NewValue(binary.BigEndian.AppendUint32(nil, uint32(k))), primitive.NewValue([]byte(strings.Repeat("x", valueSize)))}})
		}
		return requestWarnings(t, node.Addr(), b)
	}
	big := "Batch for [warn.t] is of size "
	for _, tc := range []struct {
		name       string
		typ        primitive.BatchType
		parts, val int
		want       []string // prefixes
	}{
		{"small", primitive.BatchTypeLogged, 3, 10, nil},
		{"one partition over the threshold", primitive.BatchTypeLogged, 1, 6000, nil},
		{"over the threshold", primitive.BatchTypeLogged, 2, 3000, []string{big}},
		{"unlogged, 10 partitions", primitive.BatchTypeUnlogged, 10, 1, nil},
		{"unlogged, 11 partitions", primitive.BatchTypeUnlogged, 11, 1, []string{"Unlogged batch covering 11 partitions detected against table [warn.t]. You should use a logged batch for atomicity, or asynchronous writes for performance."}},
		{"unlogged and big", primitive.BatchTypeUnlogged, 11, 600, []string{big, "Unlogged batch covering 11 partitions"}},
	} {
		got, err := batch(tc.typ, tc.parts, tc.val)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		ok := len(got) == len(tc.want)
		for i := 0; ok && i < len(got); i++ {
			ok = strings.HasPrefix(got[i], tc.want[i])
		}
		if !ok {
			t.Errorf("%s: warnings %q, want ones starting %q", tc.name, got, tc.want)
		}
	}
	// 2 partitions of one row with a 3000-byte value: per row its cell of
	// 16+3000 bytes, its clustering of 4, liveness 8 and deletion time 12,
	// as Cassandra's dataSize counts them.
	if got, _ := batch(primitive.BatchTypeLogged, 2, 3000); len(got) != 1 || got[0] != "Batch for [warn.t] is of size 6080, exceeding specified threshold of 5120 by 960." {
		t.Errorf("batch size warning %q", got)
	}
	if _, err := batch(primitive.BatchTypeLogged, 2, 30000); err == nil || !strings.Contains(err.Error(), "Batch too large") {
		t.Errorf("a batch over batch_size_fail_threshold: %v, want Invalid 'Batch too large'", err)
	}
	// The refused batch wrote nothing.
	var v string
	if err := s.Query(`SELECT v FROM t WHERE k = 0 AND c = 1`).Scan(&v); err != nil || len(v) == 30000 {
		t.Errorf("after the refused batch: %d bytes, %v", len(v), err)
	}
	// A BEGIN BATCH statement warns as a BATCH message does.
	q := "/* simple */ BEGIN UNLOGGED BATCH\n"
	for k := 0; k < 11; k++ {
		q += fmt.Sprintf("INSERT INTO t (k, c, v) VALUES (%d, 2, 'y');\n", k)
	}
	if got := warnings(s.Query(q + "APPLY BATCH").Iter()); len(got) != 1 || !strings.HasPrefix(got[0], "Unlogged batch covering 11 partitions") {
		t.Errorf("BEGIN UNLOGGED BATCH of 11 partitions: warnings %q", got)
	}
}

// requestWarnings sends msg at v4 on a connection of its own and returns
// the warnings of the answer, or its ERROR as an error.
func requestWarnings(t *testing.T, addr string, msg message.Message) ([]string, error) {
	t.Helper()
	w := dial(t, addr)
	w.handshake()
	codec := frame.NewCodec()
	var buf bytes.Buffer
	if err := codec.EncodeFrame(frame.NewFrame(primitive.ProtocolVersion4, 2, msg), &buf); err != nil {
		t.Fatal(err)
	}
	w.write(buf.Bytes())
	w.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	f, err := codec.DecodeFrame(w.br)
	if err != nil {
		t.Fatal(err)
	}
	if e, ok := f.Body.Message.(message.Error); ok {
		return nil, fmt.Errorf("%s", e.GetErrorMessage())
	}
	return f.Body.Warnings, nil
}
