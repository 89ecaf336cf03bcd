package test

import (
	"fmt"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/gocql/gocql"
)

// session opens a gocql session on keyspace ks, creating it first.
func tableSession(t *testing.T, addr, ks string) *gocql.Session {
	t.Helper()
	s, err := gocqlCluster(addr).CreateSession()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Query(fmt.Sprintf(`CREATE KEYSPACE IF NOT EXISTS %s WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}`, ks)).Exec(); err != nil {
		t.Fatal(err)
	}
	s.Close()
	c := gocqlCluster(addr)
	c.Keyspace = ks
	s, err = c.CreateSession()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

func mustExec(t *testing.T, s *gocql.Session, q string, args ...any) {
	t.Helper()
	if err := s.Query(q, args...).Exec(); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

// rowsOf reads every row of a query as maps.
func rowsOf(t *testing.T, s *gocql.Session, q string, args ...any) []map[string]any {
	t.Helper()
	rows, err := s.Query(q, args...).Iter().SliceMap()
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return rows
}

func TestTablesWriteAndRead(t *testing.T) {
	node, _ := newNode(t)
	s := tableSession(t, node.Addr(), "app")
	mustExec(t, s, `CREATE TABLE events (
		tenant text, day int, seq int, kind text, payload blob, tags set<text>, attrs map<text, int>, seen list<int>,
		owner text static,
		PRIMARY KEY ((tenant, day), seq)
	) WITH CLUSTERING ORDER BY (seq DESC) AND comment = 'events' AND default_time_to_live = 0`)

	ins := `INSERT INTO events (tenant, day, seq, kind, payload, tags, attrs, seen) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`
	for seq := 1; seq <= 5; seq++ {
		if err := s.Query(ins, "acme", 1, seq, fmt.Sprintf("k%d", seq), []byte{byte(seq)},
			[]string{"b", "a"}, map[string]int{"x": seq}, []int{seq, seq * 10}).Exec(); err != nil {
			t.Fatal(err)
		}
	}
	mustExec(t, s, `INSERT INTO events (tenant, day, seq, kind) VALUES ('acme', 2, 1, 'other')`)
	mustExec(t, s, `UPDATE events SET owner = 'ann' WHERE tenant = 'acme' AND day = 1`)

	// Clustering order is DESC.
	var seqs []int
	iter := s.Query(`SELECT seq FROM events WHERE tenant = ? AND day = ?`, "acme", 1).Iter()
	var seq int
	for iter.Scan(&seq) {
		seqs = append(seqs, seq)
	}
	if err := iter.Close(); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(seqs, []int{5, 4, 3, 2, 1}) {
		t.Fatalf("seqs = %v", seqs)
	}

	var kind, owner string
	var tags []string
	var attrs map[string]int
	var seen []int
	if err := s.Query(`SELECT kind, owner, tags, attrs, seen FROM events WHERE tenant = 'acme' AND day = 1 AND seq = 3`).
		Scan(&kind, &owner, &tags, &attrs, &seen); err != nil {
		t.Fatal(err)
	}
	if kind != "k3" || owner != "ann" || !reflect.DeepEqual(tags, []string{"a", "b"}) || attrs["x"] != 3 || !reflect.DeepEqual(seen, []int{3, 30}) {
		t.Fatalf("row 3 = %q %q %v %v %v", kind, owner, tags, attrs, seen)
	}

	// Collection operations.
	mustExec(t, s, `UPDATE events SET tags = tags + {'c'}, attrs['y'] = 7, seen = seen + [99] WHERE tenant = 'acme' AND day = 1 AND seq = 3`)
	mustExec(t, s, `UPDATE events SET tags = tags - {'a'}, seen = [0] + seen WHERE tenant = 'acme' AND day = 1 AND seq = 3`)
	mustExec(t, s, `DELETE attrs['x'] FROM events WHERE tenant = 'acme' AND day = 1 AND seq = 3`)
	if err := s.Query(`SELECT tags, attrs, seen FROM events WHERE tenant = 'acme' AND day = 1 AND seq = 3`).Scan(&tags, &attrs, &seen); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(tags, []string{"b", "c"}) || !reflect.DeepEqual(attrs, map[string]int{"y": 7}) || !reflect.DeepEqual(seen, []int{0, 3, 30, 99}) {
		t.Fatalf("after collection ops: %v %v %v", tags, attrs, seen)
	}
	mustExec(t, s, `UPDATE events SET tags = {'z'} WHERE tenant = 'acme' AND day = 1 AND seq = 3`)
	if err := s.Query(`SELECT tags FROM events WHERE tenant = 'acme' AND day = 1 AND seq = 3`).Scan(&tags); err != nil || !reflect.DeepEqual(tags, []string{"z"}) {
		t.Fatalf("overwritten set = %v %v", tags, err)
	}

	// Slices, ORDER BY, LIMIT, IN.
	seqs = nil
	iter = s.Query(`SELECT seq FROM events WHERE tenant = 'acme' AND day = 1 AND seq >= 2 AND seq < 5 ORDER BY seq ASC LIMIT 2`).Iter()
	for iter.Scan(&seq) {
		seqs = append(seqs, seq)
	}
	if err := iter.Close(); err != nil || !reflect.DeepEqual(seqs, []int{2, 3}) {
		t.Fatalf("slice asc limit 2 = %v %v", seqs, err)
	}
	var n int64
	if err := s.Query(`SELECT count(*) FROM events WHERE tenant = 'acme' AND day IN (1, 2)`).Scan(&n); err != nil || n != 6 {
		t.Fatalf("count = %d %v", n, err)
	}

	// Deletes: a row, a range, a column.
	mustExec(t, s, `DELETE FROM events WHERE tenant = 'acme' AND day = 1 AND seq = 5`)
	mustExec(t, s, `DELETE FROM events WHERE tenant = 'acme' AND day = 1 AND seq < 3`)
	mustExec(t, s, `DELETE kind FROM events WHERE tenant = 'acme' AND day = 1 AND seq = 4`)
	rows := rowsOf(t, s, `SELECT seq, kind FROM events WHERE tenant = 'acme' AND day = 1`)
	if len(rows) != 2 || rows[0]["seq"] != 4 || rows[0]["kind"] != "" || rows[1]["seq"] != 3 {
		t.Fatalf("after deletes: %v", rows)
	}
	mustExec(t, s, `DELETE FROM events WHERE tenant = 'acme' AND day = 2`)
	if rows := rowsOf(t, s, `SELECT * FROM events WHERE tenant = 'acme' AND day = 2`); len(rows) != 0 {
		t.Fatalf("deleted partition: %v", rows)
	}
}

func TestTablesTimestampsTTLAndPaging(t *testing.T) {
	node, clock := newClockedNode(t)
	s := tableSession(t, node.Addr(), "app")
	mustExec(t, s, `CREATE TABLE kv (k int, c int, v text, PRIMARY KEY (k, c))`)

	// Last write wins by timestamp, not by arrival.
	mustExec(t, s, `INSERT INTO kv (k, c, v) VALUES (1, 1, 'new') USING TIMESTAMP 2000`)
	mustExec(t, s, `INSERT INTO kv (k, c, v) VALUES (1, 1, 'old') USING TIMESTAMP 1000`)
	var v string
	var wt int64
	if err := s.Query(`SELECT v, writetime(v) FROM kv WHERE k = 1 AND c = 1`).Scan(&v, &wt); err != nil || v != "new" || wt != 2000 {
		t.Fatalf("LWW: %q %d %v", v, wt, err)
	}
	mustExec(t, s, `DELETE FROM kv USING TIMESTAMP 1500 WHERE k = 1 AND c = 1`)
	if err := s.Query(`SELECT v FROM kv WHERE k = 1 AND c = 1`).Scan(&v); err != nil || v != "new" {
		t.Fatalf("an older delete removed a newer write: %q %v", v, err)
	}

	// TTL.
	mustExec(t, s, `INSERT INTO kv (k, c, v) VALUES (2, 1, 'brief') USING TTL 1`)
	var ttl int
	if err := s.Query(`SELECT ttl(v) FROM kv WHERE k = 2 AND c = 1`).Scan(&ttl); err != nil || ttl != 1 {
		t.Fatalf("ttl = %d %v, want 1", ttl, err)
	}
	clock.Advance(time.Second)
	if rows := rowsOf(t, s, `SELECT * FROM kv WHERE k = 2`); len(rows) != 0 {
		t.Fatalf("a TTL of 1s, a second later: %v", rows)
	}

	// Paging over a full scan and within a partition, with writes between
	// pages.
	for k := 10; k < 20; k++ {
		for c := 0; c < 7; c++ {
			mustExec(t, s, `INSERT INTO kv (k, c, v) VALUES (?, ?, ?)`, k, c, fmt.Sprint(k*100+c))
		}
	}
	want := map[string]bool{}
	for _, r := range rowsOf(t, s, `SELECT k, c FROM kv`) {
		want[fmt.Sprint(r["k"], "/", r["c"])] = true
	}
	got := map[string]bool{}
	iter := s.Query(`SELECT k, c FROM kv`).PageSize(3).Iter()
	var k, c int
	pages := 0
	for iter.Scan(&k, &c) {
		key := fmt.Sprint(k, "/", c)
		if got[key] {
			t.Fatalf("row %s returned twice", key)
		}
		got[key] = true
		if len(got)%3 == 0 {
			pages++
		}
	}
	if err := iter.Close(); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) || len(got) != 71 {
		t.Fatalf("paged scan returned %d rows, unpaged %d", len(got), len(want))
	}
	var cs []int
	iter = s.Query(`SELECT c FROM kv WHERE k = 12`).PageSize(2).Iter()
	for iter.Scan(&c) {
		cs = append(cs, c)
	}
	if err := iter.Close(); err != nil || !sort.IntsAreSorted(cs) || len(cs) != 7 {
		t.Fatalf("paged partition = %v %v", cs, err)
	}
}

func TestTablesErrors(t *testing.T) {
	node, _ := newNode(t)
	s := tableSession(t, node.Addr(), "app")
	mustExec(t, s, `CREATE TABLE t (k int, c int, v text, PRIMARY KEY (k, c))`)
	for _, tc := range []struct {
		query string
		code  int
		msg   string
	}{
		{`CREATE TABLE t (k int PRIMARY KEY)`, gocql.ErrCodeAlreadyExists, `Cannot add already existing table "t" to keyspace "app"`},
		{`CREATE TABLE u (k int, v int)`, gocql.ErrCodeInvalid, "No PRIMARY KEY specifed"},
		{`CREATE TABLE u (k list<int> PRIMARY KEY)`, gocql.ErrCodeInvalid, "Invalid non-frozen collection type list<int> for PRIMARY KEY column 'k'"},
		{`CREATE TABLE u (k int PRIMARY KEY, s int static)`, gocql.ErrCodeInvalid, "Static columns are only useful"},
		{`INSERT INTO t (k, v) VALUES (1, 'x')`, gocql.ErrCodeInvalid, "Some clustering keys are missing: c"},
		{`INSERT INTO t (c, v) VALUES (1, 'x')`, gocql.ErrCodeInvalid, "Some partition key parts are missing: k"},
		{`INSERT INTO t (k, c, nope) VALUES (1, 1, 'x')`, gocql.ErrCodeInvalid, "Undefined column name nope"},
		{`INSERT INTO t (k, c, v) VALUES (1, 1, 42)`, gocql.ErrCodeInvalid, "Invalid INTEGER constant (42) for \"v\" of type text"},
		{`UPDATE t SET v = 'x' WHERE k = 1`, gocql.ErrCodeInvalid, "Some clustering keys are missing: c"},
		{`UPDATE t SET k = 2 WHERE k = 1 AND c = 1`, gocql.ErrCodeInvalid, "PRIMARY KEY part k found in SET part"},
		{`SELECT * FROM t WHERE v = 'x'`, gocql.ErrCodeInvalid, "ALLOW FILTERING"},
		{`SELECT * FROM t WHERE c = 1`, gocql.ErrCodeInvalid, "ALLOW FILTERING"},
		{`SELECT * FROM nope`, gocql.ErrCodeInvalid, "unconfigured table nope"},
		{`INSERT INTO t (k, c, v) VALUES (1, 1, 'x') USING TTL 700000000`, gocql.ErrCodeInvalid, "ttl is too large"},
	} {
		err := s.Query(tc.query).Exec()
		re, ok := err.(gocql.RequestError)
		if !ok || re.Code() != tc.code || !strings.Contains(re.Message(), tc.msg) {
			t.Errorf("%s: got %v, want 0x%04x %q", tc.query, err, tc.code, tc.msg)
		}
	}
	// ALLOW FILTERING makes the filtered query legal.
	mustExec(t, s, `INSERT INTO t (k, c, v) VALUES (1, 1, 'x')`)
	mustExec(t, s, `INSERT INTO t (k, c, v) VALUES (1, 2, 'y')`)
	if rows := rowsOf(t, s, `SELECT c FROM t WHERE v = 'y' ALLOW FILTERING`); len(rows) != 1 || rows[0]["c"] != 2 {
		t.Fatalf("filtered rows = %v", rows)
	}
}

func TestAlterTable(t *testing.T) {
	node, _ := newNode(t)
	s := tableSession(t, node.Addr(), "app")
	mustExec(t, s, `CREATE TABLE u (id int PRIMARY KEY, name text)`)
	mustExec(t, s, `INSERT INTO u (id, name) VALUES (1, 'a')`)
	// A prepared SELECT * made before the ALTER must see the new column:
	// the driver gets UNPREPARED and prepares it again.
	rows := rowsOf(t, s, `SELECT * FROM u WHERE id = ?`, 1)
	if len(rows) != 1 || len(rows[0]) != 2 {
		t.Fatalf("before ALTER: %v", rows)
	}
	mustExec(t, s, `ALTER TABLE u ADD (email text, score int)`)
	mustExec(t, s, `UPDATE u SET email = 'a@x', score = 3 WHERE id = 1`)
	rows = rowsOf(t, s, `SELECT * FROM u WHERE id = ?`, 1)
	if len(rows) != 1 || rows[0]["email"] != "a@x" || rows[0]["score"] != 3 {
		t.Fatalf("after ADD: %v", rows)
	}
	mustExec(t, s, `ALTER TABLE u DROP score`)
	if err := s.Query(`SELECT score FROM u`).Exec(); err == nil {
		t.Fatal("a dropped column is still selectable")
	}
	mustExec(t, s, `ALTER TABLE u ADD score int`)
	rows = rowsOf(t, s, `SELECT score FROM u WHERE id = 1`)
	if len(rows) != 1 || rows[0]["score"] != 0 { // gocql reads null int as 0
		t.Fatalf("data of a dropped column came back: %v", rows)
	}
	var score *int
	if err := s.Query(`SELECT score FROM u WHERE id = 1`).Scan(&score); err != nil || score != nil {
		t.Fatalf("re-added column holds %v (%v), want null", score, err)
	}
	mustExec(t, s, `ALTER TABLE u WITH comment = 'users' AND default_time_to_live = 3600`)
	var comment string
	var ttl int
	if err := s.Query(`SELECT comment, default_time_to_live FROM system_schema.tables WHERE keyspace_name = 'app' AND table_name = 'u'`).Scan(&comment, &ttl); err != nil || comment != "users" || ttl != 3600 {
		t.Fatalf("options = %q %d %v", comment, ttl, err)
	}
	mustExec(t, s, `INSERT INTO u (id, name) VALUES (2, 'b')`)
	var left int
	if err := s.Query(`SELECT ttl(name) FROM u WHERE id = 2`).Scan(&left); err != nil || left <= 3500 {
		t.Fatalf("default TTL not applied: %d %v", left, err)
	}
	for _, q := range []string{`ALTER TABLE u DROP id`, `ALTER TABLE u ADD name text`, `ALTER TABLE u DROP nope`, `ALTER TABLE nope ADD x int`} {
		if err := s.Query(q).Exec(); err == nil {
			t.Errorf("%s succeeded", q)
		}
	}
}

func TestCounters(t *testing.T) {
	node, _ := newNode(t)
	s := tableSession(t, node.Addr(), "app")
	mustExec(t, s, `CREATE TABLE hits (page text PRIMARY KEY, views counter, likes counter)`)
	for i := 0; i < 10; i++ {
		mustExec(t, s, `UPDATE hits SET views = views + 1, likes = likes + ? WHERE page = ?`, int64(2), "home")
	}
	mustExec(t, s, `UPDATE hits SET views = views - 3 WHERE page = 'home'`)
	b := s.NewBatch(gocql.CounterBatch)
	b.Query(`UPDATE hits SET views = views + 100 WHERE page = ?`, "about")
	b.Query(`UPDATE hits SET views = views + 5 WHERE page = ?`, "home")
	if err := s.ExecuteBatch(b); err != nil {
		t.Fatal(err)
	}
	var views, likes int64
	if err := s.Query(`SELECT views, likes FROM hits WHERE page = 'home'`).Scan(&views, &likes); err != nil || views != 12 || likes != 20 {
		t.Fatalf("home = %d views %d likes (%v)", views, likes, err)
	}
	for _, tc := range []struct{ q, msg string }{
		{`UPDATE hits SET views = 5 WHERE page = 'x'`, "Cannot set the value of counter column views"},
		{`INSERT INTO hits (page, views) VALUES ('x', 1)`, "INSERT statements are not allowed on counter tables"},
		{`CREATE TABLE mixed (k int PRIMARY KEY, c counter, v int)`, "Cannot mix counter and non counter columns"},
		{`UPDATE hits USING TIMESTAMP 5 SET views = views + 1 WHERE page = 'x'`, "Cannot provide custom timestamp for counter updates"},
	} {
		err := s.Query(tc.q).Exec()
		if err == nil || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: %v, want %q", tc.q, err, tc.msg)
		}
	}
}

// TestTokenRangeScans splits the ring into ranges as drivers and bulk
// tools do, and checks the ranges partition the table exactly.
func TestTokenRangeScans(t *testing.T) {
	node, _ := newNode(t)
	s := tableSession(t, node.Addr(), "app")
	mustExec(t, s, `CREATE TABLE r (a int, b text, c int, PRIMARY KEY ((a, b), c))`)
	for i := 0; i < 40; i++ {
		mustExec(t, s, `INSERT INTO r (a, b, c) VALUES (?, ?, ?)`, i, fmt.Sprint("k", i%3), i)
	}
	tokens := map[int64]bool{}
	for _, row := range rowsOf(t, s, `SELECT token(a, b), c FROM r`) {
		for k, v := range row {
			if strings.HasPrefix(k, "system.token") {
				tokens[v.(int64)] = true
			}
		}
	}
	if len(tokens) != 40 {
		t.Fatalf("%d distinct tokens for 40 partitions", len(tokens))
	}
	bounds := []int64{-1 << 63, -1 << 62, 0, 1 << 62}
	seen := map[int]bool{}
	for i, lo := range bounds {
		q := `SELECT c FROM r WHERE token(a, b) > ? AND token(a, b) <= ?`
		hi := int64(1<<63 - 1)
		if i+1 < len(bounds) {
			hi = bounds[i+1]
		}
		args := []any{lo, hi}
		if i == 0 {
			q = `SELECT c FROM r WHERE token(a, b) >= ? AND token(a, b) <= ?`
		}
		iter := s.Query(q, args...).PageSize(7).Iter()
		var c int
		for iter.Scan(&c) {
			if seen[c] {
				t.Fatalf("row %d in two token ranges", c)
			}
			seen[c] = true
		}
		if err := iter.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if len(seen) != 40 {
		t.Fatalf("token ranges covered %d of 40 rows", len(seen))
	}
	if err := s.Query(`SELECT * FROM r WHERE token(b, a) > 0`).Exec(); err == nil {
		t.Fatal("token() over the key out of order was accepted")
	}
}

// TestPreparedAfterRecreate checks that a driver's prepared statement keeps
// working when its table is dropped and created again with other columns.
func TestPreparedAfterRecreate(t *testing.T) {
	node, _ := newNode(t)
	s := tableSession(t, node.Addr(), "app")
	mustExec(t, s, `CREATE TABLE rc (k int PRIMARY KEY, v text)`)
	mustExec(t, s, `INSERT INTO rc (k, v) VALUES (?, ?)`, 1, "a")
	if rows := rowsOf(t, s, `SELECT * FROM rc WHERE k = ?`, 1); len(rows) != 1 {
		t.Fatalf("before: %v", rows)
	}
	mustExec(t, s, `DROP TABLE rc`)
	mustExec(t, s, `CREATE TABLE rc (k int PRIMARY KEY, v text, w int)`)
	mustExec(t, s, `INSERT INTO rc (k, v) VALUES (?, ?)`, 2, "b")
	rows := rowsOf(t, s, `SELECT * FROM rc WHERE k = ?`, 2)
	if len(rows) != 1 || rows[0]["v"] != "b" || len(rows[0]) != 3 {
		t.Fatalf("after re-create: %v", rows)
	}
	if rows := rowsOf(t, s, `SELECT * FROM rc WHERE k = ?`, 1); len(rows) != 0 {
		t.Fatalf("data of the dropped table came back: %v", rows)
	}
}

// TestMultiColumnSlices pages through a partition by tuple bounds, as
// applications resuming after the last (c, d) seen do.
func TestMultiColumnSlices(t *testing.T) {
	node, _ := newNode(t)
	s := tableSession(t, node.Addr(), "app")
	mustExec(t, s, `CREATE TABLE mc (k int, c int, d int, PRIMARY KEY (k, c, d))`)
	for c := 0; c < 3; c++ {
		for d := 0; d < 3; d++ {
			mustExec(t, s, `INSERT INTO mc (k, c, d) VALUES (0, ?, ?)`, c, d)
		}
	}
	var got []string
	lastC, lastD := -1, -1
	for {
		iter := s.Query(`SELECT c, d FROM mc WHERE k = 0 AND (c, d) > (?, ?) LIMIT 2`, lastC, lastD).Iter()
		var c, d, n int
		for iter.Scan(&c, &d) {
			got = append(got, fmt.Sprint(c, d))
			lastC, lastD = c, d
			n++
		}
		if err := iter.Close(); err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
	}
	if want := "[0 0 0 1 0 2 1 0 1 1 1 2 2 0 2 1 2 2]"; fmt.Sprint(got) != want {
		t.Fatalf("walked %v, want %s", got, want)
	}

	// Multi-column IN, with each element bound, and with the whole list
	// bound as one list<tuple<int, int>>. (IN (?, ?) binds tuple markers,
	// which gocql v1 cannot send: it counts a tuple marker as one value per
	// element, then marshals each as the whole tuple.)
	for _, tc := range []struct {
		q    string
		args []any
	}{
		{`SELECT c, d FROM mc WHERE k = 0 AND (c, d) IN ((?, ?), (?, ?))`, []any{2, 1, 0, 2}},
		{`SELECT c, d FROM mc WHERE k = 0 AND (c, d) IN ?`, []any{[][]any{{2, 1}, {0, 2}, {2, 1}}}},
	} {
		var got []string
		iter := s.Query(tc.q, tc.args...).Iter()
		var c, d int
		for iter.Scan(&c, &d) {
			got = append(got, fmt.Sprint(c, d))
		}
		if err := iter.Close(); err != nil {
			t.Fatalf("%s: %v", tc.q, err)
		}
		if want := "[0 2 2 1]"; fmt.Sprint(got) != want {
			t.Errorf("%s: %v, want %s", tc.q, got, want)
		}
	}
}

// TestListElementOperations sets and removes list elements by position and
// by value with bound values, on a regular and a static list, and checks
// the bind metadata names Cassandra gives the index and value markers.
func TestListElementOperations(t *testing.T) {
	node, _ := newNode(t)
	s := tableSession(t, node.Addr(), "app")
	mustExec(t, s, `CREATE TABLE todo (k int, c int, items list<text>, tags list<int> static, PRIMARY KEY (k, c))`)
	mustExec(t, s, `INSERT INTO todo (k, c, items, tags) VALUES (1, 1, ['a', 'b', 'c', 'b'], [1, 2, 3])`)
	mustExec(t, s, `UPDATE todo SET items[?] = ? WHERE k = ? AND c = ?`, 2, "C", 1, 1)
	mustExec(t, s, `UPDATE todo SET items = items - ? WHERE k = ? AND c = ?`, []string{"b"}, 1, 1)
	mustExec(t, s, `DELETE tags[?] FROM todo WHERE k = ?`, 0, 1)
	mustExec(t, s, `UPDATE todo SET tags[1] = 30 WHERE k = 1`)
	var items []string
	var tags []int
	if err := s.Query(`SELECT items, tags FROM todo WHERE k = 1 AND c = 1`).Scan(&items, &tags); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(items, []string{"a", "C"}) || !reflect.DeepEqual(tags, []int{2, 30}) {
		t.Fatalf("items %q tags %v, want [a C] [2 30]", items, tags)
	}
	err := s.Query(`UPDATE todo SET items[?] = ? WHERE k = ? AND c = ?`, 5, "x", 1, 1).Exec()
	if err == nil || !strings.Contains(err.Error(), "List index 5 out of bound, list has size 2") {
		t.Fatalf("out of bound index: %v", err)
	}

	// The markers carry Cassandra's names: idx(items) and value(items).
	w := dial(t, node.Addr())
	w.handshake()
	res, ok := w.roundTrip(4, 2, &message.Prepare{Query: `UPDATE app.todo SET items[?] = ? WHERE k = ? AND c = ?`}).(*message.PreparedResult)
	if !ok {
		t.Fatal("PREPARE did not answer PREPARED")
	}
	var names []string
	for _, c := range res.VariablesMetadata.Columns {
		names = append(names, c.Name)
	}
	if want := []string{"idx(items)", "value(items)", "k", "c"}; !reflect.DeepEqual(names, want) {
		t.Fatalf("bind names %q, want %q", names, want)
	}
}

// TestCountersConcurrent increments shared counters from many clients at
// once, alone and in counter batches naming two partitions in either
// order, and checks no increment is lost and no batch deadlocks.
func TestCountersConcurrent(t *testing.T) {
	node, _ := newNode(t)
	s := tableSession(t, node.Addr(), "app")
	mustExec(t, s, `CREATE TABLE hits (page text PRIMARY KEY, n counter)`)
	const workers, rounds = 8, 40
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			a, b := "a", "b"
			if w%2 == 1 {
				a, b = b, a
			}
			for i := 0; i < rounds; i++ {
				if err := s.Query(`UPDATE hits SET n = n + 1 WHERE page = ?`, "solo").Exec(); err != nil {
					errs <- err
					return
				}
				bt := s.NewBatch(gocql.CounterBatch)
				bt.Query(`UPDATE hits SET n = n + 1 WHERE page = ?`, a)
				bt.Query(`UPDATE hits SET n = n + 2 WHERE page = ?`, b)
				if err := s.ExecuteBatch(bt); err != nil {
					errs <- err
					return
				}
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	got := map[string]int64{}
	iter := s.Query(`SELECT page, n FROM hits`).Iter()
	var page string
	var n int64
	for iter.Scan(&page, &n) {
		got[page] = n
	}
	if err := iter.Close(); err != nil {
		t.Fatal(err)
	}
	// Half the workers add 1 to a and 2 to b, the other half the reverse.
	want := map[string]int64{"solo": workers * rounds, "a": workers / 2 * rounds * 3, "b": workers / 2 * rounds * 3}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("counters %v, want %v", got, want)
	}
}
