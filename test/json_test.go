package test

import (
	"errors"
	"math/big"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gocql/gocql"
)

// selectJSON returns the one row of a SELECT JSON.
func selectJSON(t *testing.T, s *gocql.Session, q string, args ...any) string {
	t.Helper()
	var doc string
	if err := s.Query(q, args...).Scan(&doc); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return doc
}

// TestInsertJSONTypes inserts a JSON document with every type, reads it
// back with SELECT JSON and as typed values, then inserts what SELECT JSON
// returned (prepared) and reads the same document again.
func TestInsertJSONTypes(t *testing.T) {
	node, _ := newNode(t)
	s := tableSession(t, node.Addr(), "ij")
	mustExec(t, s, `CREATE TABLE docs (k int, c text, a ascii, bi bigint, b blob, bo boolean, d date, dec decimal, db double,
		du duration, f float, i inet, si smallint, ti tinyint, tm time, ts timestamp, tu timeuuid, u uuid, vi varint,
		l list<int>, st set<text>, m map<int, text>, fl frozen<list<text>>, tup frozen<tuple<int, text>>, "Name" text,
		PRIMARY KEY (k, c))`)

	mustExec(t, s, `INSERT INTO docs JSON '{"k": 1, "c": "x", "a": "ascii", "bi": "123123123123", "b": "0xcafe", "bo": "TRUE",
		"d": "1987-03-23", "dec": "1.50", "db": 123123.123123, "du": "P1Y2M3DT4H5M6S", "f": 1.5, "i": "::1", "si": -32768,
		"ti": "127", "tm": "07:35:07.000111222", "ts": "2011-02-03T04:05:00+0000", "tu": "6BDDC89A-5644-11E4-97FC-56847AFE9799",
		"u": "550e8400-e29b-41d4-a716-446655440000", "vi": 1234567890123456789012345678901234567890, "l": [3, 1, 2],
		"st": ["b", "a", "b"], "m": {"2": "b", "1": "a"}, "fl": "[\"x\"]", "tup": [1, null], "\"Name\"": "N"}'`)

	const cols = `k, c, a, bi, b, bo, d, dec, db, du, f, i, si, ti, tm, ts, tu, u, vi, l, st, m, fl, tup, "Name"`
	q := `SELECT JSON ` + cols + ` FROM docs WHERE k = 1 AND c = 'x'`
	want := `{"k": 1, "c": "x", "a": "ascii", "bi": 123123123123, "b": "0xcafe", "bo": true, "d": "1987-03-23", "dec": 1.50, ` +
		`"db": 123123.123123, "du": "1y2mo3d4h5m6s", "f": 1.5, "i": "0:0:0:0:0:0:0:1", "si": -32768, "ti": 127, ` +
		`"tm": "07:35:07.000111222", "ts": "2011-02-03 04:05:00.000Z", "tu": "6bddc89a-5644-11e4-97fc-56847afe9799", ` +
		`"u": "550e8400-e29b-41d4-a716-446655440000", "vi": 1234567890123456789012345678901234567890, "l": [3, 1, 2], ` +
		`"st": ["a", "b"], "m": {"1": "a", "2": "b"}, "fl": ["x"], "tup": [1, null], "\"Name\"": "N"}`
	doc := selectJSON(t, s, q)
	if doc != want {
		t.Fatalf("SELECT JSON:\n%s\nwant\n%s", doc, want)
	}

	// The typed values a driver sees.
	var (
		bi      int64
		b       []byte
		bo      bool
		d, ts   time.Time
		db      float64
		f       float32
		si      int16
		ti      int8
		tm      time.Duration
		vi      *big.Int
		l       []int
		st      []string
		m       map[int]string
		name, a string
		du      gocql.Duration
		tupA    int
		tupB    *string
		tu, u   gocql.UUID
	)
	if err := s.Query(`SELECT a, bi, b, bo, d, db, du, f, si, ti, tm, ts, tu, u, vi, l, st, m, tup, "Name" FROM docs WHERE k = 1 AND c = 'x'`).
		Scan(&a, &bi, &b, &bo, &d, &db, &du, &f, &si, &ti, &tm, &ts, &tu, &u, &vi, &l, &st, &m, &tupA, &tupB, &name); err != nil {
		t.Fatal(err)
	}
	if a != "ascii" || bi != 123123123123 || string(b) != "\xca\xfe" || !bo || d.Format("2006-01-02") != "1987-03-23" || db != 123123.123123 ||
		du != (gocql.Duration{Months: 14, Days: 3, Nanoseconds: int64(4*time.Hour + 5*time.Minute + 6*time.Second)}) || f != 1.5 ||
		si != -32768 || ti != 127 || tm != 7*time.Hour+35*time.Minute+7*time.Second+111222 || !ts.Equal(time.Date(2011, 2, 3, 4, 5, 0, 0, time.UTC)) ||
		tu.String() != "6bddc89a-5644-11e4-97fc-56847afe9799" || u.String() != "550e8400-e29b-41d4-a716-446655440000" ||
		vi.String() != "1234567890123456789012345678901234567890" || !reflect.DeepEqual(l, []int{3, 1, 2}) || !reflect.DeepEqual(st, []string{"a", "b"}) ||
		!reflect.DeepEqual(m, map[int]string{1: "a", 2: "b"}) || tupA != 1 || tupB != nil || name != "N" {
		t.Errorf("typed row: %q %d %x %v %v %v %v %v %d %d %v %v %v %v %v %v %v %v %d %v %q", a, bi, b, bo, d, db, du, f, si, ti, tm, ts, tu, u, vi, l, st, m, tupA, tupB, name)
	}

	// Round trip: what SELECT JSON wrote is what INSERT JSON reads. The
	// decimal 1.50 comes back as 1.5, as in Cassandra (Jackson decodes a
	// JSON number with a fraction as a double).
	mustExec(t, s, `DELETE FROM docs WHERE k = 1 AND c = 'x'`)
	mustExec(t, s, `INSERT INTO docs JSON ?`, doc)
	if got, want := selectJSON(t, s, q), strings.Replace(want, `"dec": 1.50`, `"dec": 1.5`, 1); got != want {
		t.Errorf("after the round trip:\n%s\nwant\n%s", got, want)
	}
	// A literal of the same document, and toJson of a decimal given as a
	// string, keep the scale.
	mustExec(t, s, `INSERT INTO docs JSON '`+strings.ReplaceAll(strings.Replace(doc, `"dec": 1.50`, `"dec": "1.50"`, 1), `'`, `''`)+`'`)
	if got := selectJSON(t, s, q); got != want {
		t.Errorf("after a literal round trip:\n%s\nwant\n%s", got, want)
	}
}

// TestInsertJSONDefaults is Cassandra's testInsertJsonSyntaxDefaultUnset
// and testInsertJsonSyntax: missing columns are null (DEFAULT NULL) or
// left alone (DEFAULT UNSET); USING, IF NOT EXISTS and case-sensitive
// names work as for INSERT ... VALUES.
func TestInsertJSONDefaults(t *testing.T) {
	node, _ := newNode(t)
	s := tableSession(t, node.Addr(), "ijd")
	mustExec(t, s, `CREATE TABLE t (k int PRIMARY KEY, v1 int, v2 int, "Foo" int)`)
	row := func(k int) []any {
		t.Helper()
		var v1, v2, foo *int
		if err := s.Query(`SELECT v1, v2, "Foo" FROM t WHERE k = ?`, k).Scan(&v1, &v2, &foo); err != nil {
			t.Fatal(err)
		}
		out := []any{}
		for _, p := range []*int{v1, v2, foo} {
			if p == nil {
				out = append(out, nil)
			} else {
				out = append(out, *p)
			}
		}
		return out
	}
	check := func(k int, want ...any) {
		t.Helper()
		if got := row(k); !reflect.DeepEqual(got, want) {
			t.Errorf("row %d = %v, want %v", k, got, want)
		}
	}

	mustExec(t, s, `INSERT INTO t JSON ?`, `{"k": 0, "v1": 0, "v2": 0, "\"Foo\"": 0}`)
	check(0, 0, 0, 0)
	mustExec(t, s, `INSERT INTO t JSON ? DEFAULT UNSET`, `{"k": 0, "v2": 2}`)
	check(0, 0, 2, 0)
	mustExec(t, s, `INSERT INTO t JSON ? DEFAULT NULL`, `{"k": 0, "v2": 2}`)
	check(0, nil, 2, nil)
	mustExec(t, s, `INSERT INTO t JSON ?`, `{"K": 0}`)
	check(0, nil, nil, nil)

	mustExec(t, s, `INSERT INTO t JSON '{"k": 1, "v1": 1, "v2": 1, "\"Foo\"": 1}'`)
	mustExec(t, s, `INSERT INTO t JSON '{"k": 1, "v1": null}' DEFAULT UNSET`)
	check(1, nil, 1, 1)
	mustExec(t, s, `INSERT INTO t JSON '{"k": 1}' DEFAULT NULL`)
	check(1, nil, nil, nil)

	// TTL, TIMESTAMP and IF NOT EXISTS.
	mustExec(t, s, `INSERT INTO t JSON ? USING TTL 1000 AND TIMESTAMP 12345`, `{"k": 2, "v1": 2}`)
	var ttl, wt int64
	if err := s.Query(`SELECT ttl(v1), writetime(v1) FROM t WHERE k = 2`).Scan(&ttl, &wt); err != nil || ttl <= 0 || ttl > 1000 || wt != 12345 {
		t.Errorf("ttl, writetime = %d, %d, %v", ttl, wt, err)
	}
	m := map[string]any{}
	applied, err := s.Query(`INSERT INTO t JSON ? IF NOT EXISTS`, `{"k": 3, "v1": 3}`).MapScanCAS(m)
	if err != nil || !applied {
		t.Fatalf("first IF NOT EXISTS: %v %v", applied, err)
	}
	m = map[string]any{}
	applied, err = s.Query(`INSERT INTO t JSON '{"k": 3, "v1": 4}' IF NOT EXISTS`).MapScanCAS(m)
	if err != nil || applied || m["v1"] != 3 {
		t.Fatalf("second IF NOT EXISTS: %v %v %v", applied, m, err)
	}
	check(3, 3, nil, nil)

	// In a batch.
	b := s.NewBatch(gocql.LoggedBatch)
	b.Query(`INSERT INTO t JSON ?`, `{"k": 4, "v1": 4}`)
	b.Query(`INSERT INTO t JSON ? DEFAULT UNSET`, `{"k": 5, "v2": 5}`)
	if err := s.ExecuteBatch(b); err != nil {
		t.Fatal(err)
	}
	check(4, 4, nil, nil)
	check(5, nil, 5, nil)
}

func TestInsertJSONErrors(t *testing.T) {
	node, _ := newNode(t)
	s := tableSession(t, node.Addr(), "ije")
	mustExec(t, s, `CREATE TABLE t (k int, c text, v int, l list<int>, b blob, PRIMARY KEY (k, c))`)
	mustExec(t, s, `CREATE TABLE cnt (k int PRIMARY KEY, n counter)`)
	for _, tc := range []struct {
		q    string
		args []any
		msg  string
	}{
		{`INSERT INTO t JSON '{"k": 0, "c": "a", "zzz": 0}'`, nil, "JSON values map contains unrecognized column: zzz"},
		{`INSERT INTO t JSON ?`, []any{`{"k": 0, "c": "a", "zzz": 0}`}, "JSON values map contains unrecognized column: zzz"},
		{`INSERT INTO t JSON ?`, []any{`{"k": 0, "c": "a", "v": "notanint"}`}, "Error decoding JSON value for v: Unable to make int from 'notanint'"},
		{`INSERT INTO t JSON '{"k": 0, "c": "a", "v": 1.5}'`, nil, "Error decoding JSON value for v: Expected an int value, but got a Double: 1.5"},
		{`INSERT INTO t JSON ?`, []any{`{"k": 0, "c": "a", "l": [null]}`}, "Error decoding JSON value for l: Invalid null element in list"},
		{`INSERT INTO t JSON ?`, []any{`{"k": 0, "c": "a", "b": "cafe"}`}, "Error decoding JSON value for b: Value 'cafe' is not a valid blob representation: String representation of blob is missing 0x prefix: cafe"},
		{`INSERT INTO t JSON ?`, []any{`null`}, "Got null for INSERT JSON values"},
		{`INSERT INTO t JSON ?`, []any{nil}, "Got null for INSERT JSON values"},
		{`INSERT INTO t JSON ?`, []any{`"notamap"`}, "Could not decode JSON string as a map"},
		{`INSERT INTO t JSON '12.34'`, nil, "Could not decode JSON string as a map"},
		{`INSERT INTO t JSON '{"k": 0,'`, nil, "Could not decode JSON string as a map"},
		{`INSERT INTO t JSON '{"c": "a"}'`, nil, "Invalid null value in condition for column k"},
		{`INSERT INTO t JSON ?`, []any{`{"k": 0}`}, "Invalid null value in condition for column c"},
		{`INSERT INTO t JSON ? DEFAULT UNSET`, []any{`{"c": "a"}`}, "Invalid unset value for column k"},
		{`INSERT INTO t JSON '{"k": 0, "c": null}'`, nil, "Invalid null value in condition for column c"},
		{`INSERT INTO cnt JSON '{"k": 0}'`, nil, "INSERT statements are not allowed on counter tables, use UPDATE instead"},
	} {
		selExpectInvalid(t, s, tc.q, tc.msg, tc.args...)
	}
	// Nothing was written by the failed statements.
	if rows := rowsOf(t, s, `SELECT * FROM t`); len(rows) != 0 {
		t.Errorf("rows = %v", rows)
	}
}

func TestFromJSONFunction(t *testing.T) {
	node, _ := newNode(t)
	s := tableSession(t, node.Addr(), "app")
	mustExec(t, s, `CREATE TABLE fj (k int PRIMARY KEY, m map<text, int>, l list<text>)`)
	mustExec(t, s, `INSERT INTO fj (k, m, l) VALUES (1, fromJson('{"b": 2, "a": 1}'), fromJson(?))`, `["x", "y"]`)
	mustExec(t, s, `UPDATE fj SET l = fromJson('["z"]') WHERE k = fromJson('1')`)
	var m map[string]int
	var l []string
	if err := s.Query(`SELECT m, l FROM fj WHERE k = 1`).Scan(&m, &l); err != nil || m["a"] != 1 || m["b"] != 2 || len(l) != 1 || l[0] != "z" {
		t.Fatalf("fromJson: %v %v %v", m, l, err)
	}
}

// TestFromJSONFunctionFailure: fromJson() of text that is not JSON, or of a
// value its receiver cannot hold, fails the function as FromJsonFct does:
// FUNCTION_FAILURE naming system.fromjson(text), through a literal and a
// bound marker, and nothing is written.
func TestFromJSONFunctionFailure(t *testing.T) {
	node, _ := newNode(t)
	s := tableSession(t, node.Addr(), "app")
	mustExec(t, s, `CREATE TABLE fjf (k int PRIMARY KEY, i int, l list<int>)`)
	for _, tc := range []struct {
		query string
		args  []any
		msg   string
	}{
		{`INSERT INTO fjf (k, i) VALUES (1, fromJson('"abc"'))`, nil,
			`execution of 'system.fromjson[text]' failed: org.apache.cassandra.serializers.MarshalException: Unable to make int from 'abc'`},
		{`INSERT INTO fjf (k, l) VALUES (1, fromJson(?))`, []any{`[1, "x"]`},
			`execution of 'system.fromjson[text]' failed: org.apache.cassandra.serializers.MarshalException: Unable to make int from 'x'`},
		{`UPDATE fjf SET i = fromJson(?) WHERE k = 1`, []any{`{"a": 1`},
			`execution of 'system.fromjson[text]' failed: Could not decode JSON string '{"a": 1': `},
	} {
		err := s.Query(tc.query, tc.args...).Exec()
		var ff *gocql.RequestErrFunctionFailure
		if !errors.As(err, &ff) || !strings.HasPrefix(ff.Message(), tc.msg) {
			t.Fatalf("%s %v: got %T %v, want FUNCTION_FAILURE %q", tc.query, tc.args, err, err, tc.msg)
		}
		if ff.Keyspace != "system" || ff.Function != "fromjson" || len(ff.ArgTypes) != 1 || ff.ArgTypes[0] != "text" {
			t.Errorf("%s: the failure names %s.%s%v", tc.query, ff.Keyspace, ff.Function, ff.ArgTypes)
		}
	}
	if rows := rowsOf(t, s, `SELECT * FROM fjf`); len(rows) != 0 {
		t.Errorf("rows = %v", rows)
	}
}
