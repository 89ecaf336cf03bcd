package test

import (
	"encoding/binary"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/gocql/gocql"

	"github.com/cqld/cqld/storage"
)

// selColumns runs q and returns its result columns as "name type", as the
// driver sees them (gocql prepares every SELECT, so these come from the
// PREPARED metadata and must match the rows of the EXECUTE).
func selColumns(t *testing.T, s *gocql.Session, q string, args ...any) []string {
	t.Helper()
	iter := s.Query(q, args...).Iter()
	var out []string
	for _, c := range iter.Columns() {
		out = append(out, fmt.Sprintf("%s %s", c.Name, c.TypeInfo.Type()))
	}
	if err := iter.Close(); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return out
}

// selExpectInvalid checks that q fails with an invalid request whose message
// contains msg.
func selExpectInvalid(t *testing.T, s *gocql.Session, q string, msg string, args ...any) {
	t.Helper()
	err := s.Query(q, args...).Exec()
	re, ok := err.(gocql.RequestError)
	if !ok || re.Code() != gocql.ErrCodeInvalid || !strings.Contains(re.Message(), msg) {
		t.Errorf("%s: got %v, want an invalid request containing %q", q, err, msg)
	}
}

func TestSelectAggregates(t *testing.T) {
	node, _ := newNode(t)
	s := tableSession(t, node.Addr(), "agg")
	mustExec(t, s, `CREATE TABLE nums (k int, c int, i int, b bigint, si smallint, ti tinyint, vi varint, f float, d double, dec decimal, t text,
		PRIMARY KEY (k, c))`)
	for _, r := range []struct {
		k, c, i int
		f, d    float64
		dec, t  string
	}{
		{1, 1, 1, 1.5, 0.5, "1.25", "b"},
		{1, 2, 2, 2.5, 1.5, "2.5", "a"},
		{1, 3, 4, 3.0, 2.0, "3.75", "c"},
		{2, 1, -3, -1.0, -1.0, "-0.5", "z"},
	} {
		mustExec(t, s, fmt.Sprintf(`INSERT INTO nums (k, c, i, b, si, ti, vi, f, d, dec, t) VALUES (%d, %d, %d, %d, %d, %d, %d, %v, %v, %s, '%s')`,
			r.k, r.c, r.i, 10*r.i, r.i, r.i, 100*r.i, r.f, r.d, r.dec, r.t))
	}
	mustExec(t, s, `INSERT INTO nums (k, c) VALUES (2, 2)`) // every value null

	// Result metadata: Cassandra's names and types (sum and avg keep the
	// argument's type).
	q := `SELECT count(*), count(1), count(i), min(i), max(t), sum(b), avg(si), sum(ti), avg(vi), sum(f), avg(d), sum(dec), avg(dec) FROM nums`
	want := []string{"count bigint", "count bigint", "system.count(i) bigint", "system.min(i) int", "system.max(t) varchar",
		"system.sum(b) bigint", "system.avg(si) smallint", "system.sum(ti) tinyint", "system.avg(vi) varint", "system.sum(f) float",
		"system.avg(d) double", "system.sum(dec) decimal", "system.avg(dec) decimal"}
	if got := selColumns(t, s, q); !reflect.DeepEqual(got, want) {
		t.Errorf("columns = %q\nwant      %q", got, want)
	}
	rows := rowsOf(t, s, q)
	if len(rows) != 1 {
		t.Fatalf("aggregate rows = %v", rows)
	}
	r := rows[0]
	for name, want := range map[string]string{
		"count": "5", "system.count(i)": "4", "system.min(i)": "-3", "system.max(t)": "z",
		"system.sum(b)": "40", "system.avg(si)": "1", "system.sum(ti)": "4", "system.avg(vi)": "100",
		"system.sum(f)": "6", "system.avg(d)": "0.75", "system.sum(dec)": "7.00", "system.avg(dec)": "1.75",
	} {
		if got := fmt.Sprint(r[name]); got != want {
			t.Errorf("%s = %s, want %s", name, got, want)
		}
	}

	// Every numeric type through sum, avg, min and max in one partition.
	var (
		cnt, sumB, avgB    int64
		sumI, avgI, minI   int
		maxSI              int16
		avgTI              int8
		sumF, avgF         float32
		sumD, avgD, maxD   float64
		first              int
		firstC             int
		countT, countNoArg int64
	)
	if err := s.Query(`SELECT k, c, count(*), sum(i), avg(i), min(i), sum(b), avg(b), max(si), avg(ti), sum(f), avg(f), sum(d), avg(d), max(d), count(t), count(1)
		FROM nums WHERE k = 1`).Scan(&first, &firstC, &cnt, &sumI, &avgI, &minI, &sumB, &avgB, &maxSI, &avgTI, &sumF, &avgF, &sumD, &avgD, &maxD, &countT, &countNoArg); err != nil {
		t.Fatal(err)
	}
	// Non-aggregated columns are the first row's.
	if first != 1 || firstC != 1 || cnt != 3 || sumI != 7 || avgI != 2 || minI != 1 || sumB != 70 || avgB != 23 || maxSI != 4 || avgTI != 2 ||
		sumF != 7 || avgF != float32(7.0)/3 || sumD != 4 || avgD != 4.0/3 || maxD != 2 || countT != 3 || countNoArg != 3 {
		t.Errorf("partition aggregates: k=%d c=%d count=%d sum(i)=%d avg(i)=%d min(i)=%d sum(b)=%d avg(b)=%d max(si)=%d avg(ti)=%d sum(f)=%v avg(f)=%v sum(d)=%v avg(d)=%v max(d)=%v count(t)=%d count(1)=%d",
			first, firstC, cnt, sumI, avgI, minI, sumB, avgB, maxSI, avgTI, sumF, avgF, sumD, avgD, maxD, countT, countNoArg)
	}

	// LIMIT does not limit the rows an aggregate reads (Cassandra applies
	// it to the one result row); WHERE does.
	var n int64
	if err := s.Query(`SELECT count(*) FROM nums LIMIT 2`).Scan(&n); err != nil || n != 5 {
		t.Errorf("count with LIMIT = %d %v", n, err)
	}
	if err := s.Query(`SELECT count(*) FROM nums WHERE k = 1 AND c >= 2`).Scan(&n); err != nil || n != 2 {
		t.Errorf("count with a slice = %d %v", n, err)
	}
	if err := s.Query(`SELECT count(*) FROM nums WHERE i > 0 ALLOW FILTERING`).Scan(&n); err != nil || n != 3 {
		t.Errorf("count with filtering = %d %v", n, err)
	}
	if err := s.Query(`SELECT count(*) FROM nums WHERE k IN (1, 2)`).Scan(&n); err != nil || n != 5 {
		t.Errorf("count with IN = %d %v", n, err)
	}

	// No row: one result row, counts 0, sum and avg 0, min, max and plain
	// columns null.
	var minP, kP *int
	var sumP *int64
	var avgP *float64
	if err := s.Query(`SELECT count(*), min(i), sum(b), avg(d), k FROM nums WHERE k = 99`).Scan(&n, &minP, &sumP, &avgP, &kP); err != nil {
		t.Fatal(err)
	}
	if n != 0 || minP != nil || sumP == nil || *sumP != 0 || avgP == nil || *avgP != 0 || kP != nil {
		t.Errorf("empty aggregate: count=%d min=%v sum=%v avg=%v k=%v", n, minP, sumP, avgP, kP)
	}

	// Prepared with bound values, on the hot path of an application.
	for k, want := range map[int]int64{1: 3, 2: 2, 3: 0} {
		if err := s.Query(`SELECT count(*) FROM nums WHERE k = ?`, k).Scan(&n); err != nil || n != want {
			t.Errorf("count(k=%d) = %d %v, want %d", k, n, err, want)
		}
	}

	// Scalar functions over aggregates and aggregates over functions.
	var text string
	var maxWT int64
	if err := s.Query(`SELECT cast(count(*) as text), max(writetime(i)) FROM nums WHERE k = 1`).Scan(&text, &maxWT); err != nil || text != "3" || maxWT < time.Now().Add(-time.Hour).UnixMicro() {
		t.Errorf("cast(count) = %q, max(writetime) = %d, %v", text, maxWT, err)
	}

	selExpectInvalid(t, s, `SELECT sum(t) FROM nums`, "Invalid call to function sum, none of its type signatures match (known type signatures: system.sum : (tinyint) -> tinyint, system.sum : (smallint) -> smallint, system.sum : (int) -> int")
	selExpectInvalid(t, s, `SELECT sum(max(i)) FROM nums`, "aggregate functions cannot be used as arguments of aggregate functions")
	selExpectInvalid(t, s, `SELECT avg(i, b) FROM nums`, "Invalid call to function avg, none of its type signatures match")
}

func TestSelectScalarFunctions(t *testing.T) {
	node, _ := newNode(t)
	s := tableSession(t, node.Addr(), "fns")
	mustExec(t, s, `CREATE TABLE ev (k int, c timeuuid, v text, b blob, n int, d double, ip inet, PRIMARY KEY (k, c))`)
	t0 := time.Date(2021, 3, 4, 5, 6, 7, 123e6, time.UTC)
	u := gocql.UUIDFromTime(t0)
	mustExec(t, s, `INSERT INTO ev (k, c, v, b, n, d, ip) VALUES (?, ?, ?, ?, ?, ?, ?) USING TIMESTAMP 1234567 AND TTL 1000`,
		7, u, "hello", []byte("bytes"), 42, 2.75, "10.0.0.1")

	want := []string{"system.totimestamp(c) timestamp", "system.todate(c) date", "system.tounixtimestamp(c) bigint",
		"system.dateof(c) timestamp", "system.unixtimestampof(c) bigint", "writetime(v) bigint", "ttl(v) int"}
	q := `SELECT toTimestamp(c), toDate(c), toUnixTimestamp(c), dateOf(c), unixTimestampOf(c), writetime(v), ttl(v) FROM ev WHERE k = 7`
	if got := selColumns(t, s, q); !reflect.DeepEqual(got, want) {
		t.Errorf("columns = %q, want %q", got, want)
	}
	var ts, date, dateOf time.Time
	var unix, unixOf, wt int64
	var ttl int
	if err := s.Query(q).Scan(&ts, &date, &unix, &dateOf, &unixOf, &wt, &ttl); err != nil {
		t.Fatal(err)
	}
	if !ts.Equal(t0) || !dateOf.Equal(t0) || unix != t0.UnixMilli() || unixOf != t0.UnixMilli() ||
		date.Format("2006-01-02") != "2021-03-04" || wt != 1234567 || ttl <= 990 || ttl > 1000 {
		t.Errorf("time functions: %v %v %d %v %d writetime=%d ttl=%d", ts, date, unix, dateOf, unixOf, wt, ttl)
	}

	// Generators.
	var now, rnd gocql.UUID
	var cts time.Time
	var cdate time.Time
	before := time.Now().Add(-time.Second)
	if err := s.Query(`SELECT now(), uuid(), currentTimestamp(), currentDate() FROM ev WHERE k = 7`).Scan(&now, &rnd, &cts, &cdate); err != nil {
		t.Fatal(err)
	}
	if now.Version() != 1 || now.Time().Before(before) || rnd.Version() != 4 || cts.Before(before) || cts.After(time.Now().Add(time.Second)) ||
		cdate.Format("2006-01-02") != time.Now().UTC().Format("2006-01-02") {
		t.Errorf("generators: now=%v (%v) uuid=%v ts=%v date=%v", now, now.Time(), rnd, cts, cdate)
	}

	// Blob conversions, token, casts, nested calls, toJson.
	q = `SELECT textAsBlob(v), blobAsText(b), intAsBlob(n), blobAsInt(intAsBlob(n)), token(k), CAST(n AS text), CAST(n AS double),
		cast(d as int), cast(d as text), cast(ip as text), toUnixTimestamp(toTimestamp(c)), toJson(v), CAST(c AS timestamp) FROM ev WHERE k = 7`
	want = []string{"system.textasblob(v) blob", "system.blobastext(b) varchar", "system.intasblob(n) blob",
		"system.blobasint(system.intasblob(n)) int", "system.token(k) bigint", "cast(n as text) varchar", "cast(n as double) double",
		"cast(d as int) int", "cast(d as text) varchar", "cast(ip as text) varchar", "system.tounixtimestamp(system.totimestamp(c)) bigint",
		"system.tojson(v) varchar", "cast(c as timestamp) timestamp"}
	if got := selColumns(t, s, q); !reflect.DeepEqual(got, want) {
		t.Errorf("columns = %q\nwant      %q", got, want)
	}
	var asBlob, intBlob []byte
	var blobText, nText, dText, ipText, js string
	var nBack, dInt int
	var tok, unix2 int64
	var nDouble float64
	var castTS time.Time
	if err := s.Query(q).Scan(&asBlob, &blobText, &intBlob, &nBack, &tok, &nText, &nDouble, &dInt, &dText, &ipText, &unix2, &js, &castTS); err != nil {
		t.Fatal(err)
	}
	key := binary.BigEndian.AppendUint32(nil, 7)
	if string(asBlob) != "hello" || blobText != "bytes" || !reflect.DeepEqual(intBlob, []byte{0, 0, 0, 42}) || nBack != 42 ||
		tok != storage.Token(key) || nText != "42" || nDouble != 42 || dInt != 2 || dText != "2.75" || ipText != "10.0.0.1" ||
		unix2 != t0.UnixMilli() || js != `"hello"` || !castTS.Equal(t0) {
		t.Errorf("conversions: %q %q %v %d token=%d %q %v %d %q %q %d %q %v", asBlob, blobText, intBlob, nBack, tok, nText, nDouble, dInt, dText, ipText, unix2, js, castTS)
	}

	// A cast to the column's own type is the column itself.
	if got := selColumns(t, s, `SELECT CAST(n AS int) AS m, cast(n as int) FROM ev WHERE k = 7`); !reflect.DeepEqual(got, []string{"m int", "n int"}) {
		t.Errorf("identity casts = %q", got)
	}

	// Bound values in the selection, and paging through computed rows.
	var bound []byte
	if err := s.Query(`SELECT intAsBlob(?) FROM ev WHERE k = ?`, 5, 7).Scan(&bound); err != nil || !reflect.DeepEqual(bound, []byte{0, 0, 0, 5}) {
		t.Errorf("bound intAsBlob = %v %v", bound, err)
	}
	for i := 0; i < 9; i++ {
		mustExec(t, s, `INSERT INTO ev (k, c, n) VALUES (8, now(), ?)`, i)
	}
	iter := s.Query(`SELECT cast(n as text), toTimestamp(c) FROM ev WHERE k = 8`).PageSize(2).Iter()
	var got []string
	var txt string
	var tsv time.Time
	for iter.Scan(&txt, &tsv) {
		got = append(got, txt)
	}
	if err := iter.Close(); err != nil || len(got) != 9 {
		t.Errorf("paged computed rows = %v %v", got, err)
	}

	selExpectInvalid(t, s, `SELECT nosuch(v) FROM ev`, "Unknown function 'nosuch'")
	selExpectInvalid(t, s, `SELECT now(v) FROM ev`, "Invalid number of arguments in call to function system.now: 0 required but 1 provided")
	selExpectInvalid(t, s, `SELECT intAsBlob(v) FROM ev`, "Type error: v cannot be passed as argument 0 of function system.intasblob of type int")
	selExpectInvalid(t, s, `SELECT toTimestamp(v) FROM ev`, "Invalid call to function totimestamp, none of its type signatures match (known type signatures: system.totimestamp : (timeuuid) -> timestamp, system.totimestamp : (date) -> timestamp)")
	selExpectInvalid(t, s, `SELECT CAST(b AS int) FROM ev`, "b cannot be cast to int")
	selExpectInvalid(t, s, `SELECT writetime(k) FROM ev`, "Cannot use selection function writeTime on PRIMARY KEY part k")
	selExpectInvalid(t, s, `SELECT ttl(c) FROM ev`, "Cannot use selection function ttl on PRIMARY KEY part c")
	selExpectInvalid(t, s, `SELECT ? FROM ev`, "Cannot infer type for term ? in selection clause (try using a cast to force a type)", 1)
	selExpectInvalid(t, s, `SELECT blobAsInt(v) FROM ev WHERE k = 7`, "In call to function blobasint, value 0x68656c6c6f is not a valid binary representation for type int")
	selExpectInvalid(t, s, `SELECT token(k, c) FROM ev`, "Invalid number of arguments in call to function system.token: 1 required but 2 provided")
}

func TestSelectJSON(t *testing.T) {
	node, _ := newNode(t)
	s := tableSession(t, node.Addr(), "js")
	mustExec(t, s, `CREATE TABLE docs (k int, c text, "Name" text, ts timestamp, u uuid, b blob, l list<int>, m map<int, text>, st set<text>,
		f float, dec decimal, ok boolean, missing text, PRIMARY KEY (k, c))`)
	mustExec(t, s, `INSERT INTO docs (k, c, "Name", ts, u, b, l, m, st, f, dec, ok) VALUES (1, 'x', 'N', '2011-02-03 04:05:00+0000',
		550e8400-e29b-41d4-a716-446655440000, 0xcafe, [1, 2], {1: 'a', 2: 'b"q'}, {'q'}, 1.5, 1.50, true)`)
	mustExec(t, s, `INSERT INTO docs (k, c) VALUES (1, 'y')`)

	q := `SELECT JSON k, c, "Name", ts, u, b, l, m, st, f, dec, ok, missing FROM docs WHERE k = 1`
	if got := selColumns(t, s, q); !reflect.DeepEqual(got, []string{"[json] varchar"}) {
		t.Errorf("JSON columns = %q", got)
	}
	var docs []string
	iter := s.Query(q).Iter()
	var doc string
	for iter.Scan(&doc) {
		docs = append(docs, doc)
	}
	if err := iter.Close(); err != nil {
		t.Fatal(err)
	}
	want := []string{
		`{"k": 1, "c": "x", "\"Name\"": "N", "ts": "2011-02-03 04:05:00.000Z", "u": "550e8400-e29b-41d4-a716-446655440000", "b": "0xcafe", ` +
			`"l": [1, 2], "m": {"1": "a", "2": "b\"q"}, "st": ["q"], "f": 1.5, "dec": 1.50, "ok": true, "missing": null}`,
		`{"k": 1, "c": "y", "\"Name\"": null, "ts": null, "u": null, "b": null, "l": null, "m": null, "st": null, "f": null, "dec": null, "ok": null, "missing": null}`,
	}
	if !reflect.DeepEqual(docs, want) {
		t.Errorf("JSON rows:\n%s\nwant\n%s", strings.Join(docs, "\n"), strings.Join(want, "\n"))
	}

	// Aliases are keys; functions and aggregates by their column names.
	if err := s.Query(`SELECT JSON k AS key, count(*), max(f) AS "Top", toJson(l) FROM docs WHERE k = 1`).Scan(&doc); err != nil ||
		doc != `{"key": 1, "count": 2, "\"Top\"": 1.5, "system.tojson(l)": "[1, 2]"}` {
		t.Errorf("JSON aggregate = %s %v", doc, err)
	}
	// SELECT JSON * uses Cassandra's SELECT * column order.
	if err := s.Query(`SELECT JSON * FROM docs WHERE k = 1 AND c = 'y'`).Scan(&doc); err != nil ||
		!strings.HasPrefix(doc, `{"k": 1, "c": "y", "\"Name\"": null, "b": null, "dec": null`) {
		t.Errorf("JSON * = %s %v", doc, err)
	}
	// Element and slice selection on maps and sets.
	q = `SELECT m[1], m[?], st['q'], m[2..], st[..'p'], m[0] FROM docs WHERE k = 1 AND c = 'x'`
	if got := selColumns(t, s, q, 2); !reflect.DeepEqual(got, []string{"m[1] varchar", "m[?] varchar", "st['q'] varchar", "m[2..] map", "st[..'p'] set", "m[0] varchar"}) {
		t.Errorf("element columns = %q", got)
	}
	var e1, e2, e3 string
	var sliceM map[int]string
	var sliceS []string
	var none *string
	if err := s.Query(q, 2).Scan(&e1, &e2, &e3, &sliceM, &sliceS, &none); err != nil ||
		e1 != "a" || e2 != `b"q` || e3 != "q" || !reflect.DeepEqual(sliceM, map[int]string{2: `b"q`}) || len(sliceS) != 0 || none != nil {
		t.Errorf("elements = %q %q %q %v %v %v, %v", e1, e2, e3, sliceM, sliceS, none, err)
	}
	selExpectInvalid(t, s, `SELECT l[0] FROM docs`, "Element selection is only allowed on sets and maps, but l is a list")
	selExpectInvalid(t, s, `SELECT f[0] FROM docs`, "Invalid element selection: f is of type float is not a collection")

	// No rows, no JSON.
	if rows := rowsOf(t, s, `SELECT JSON * FROM docs WHERE k = 2`); len(rows) != 0 {
		t.Errorf("JSON of nothing = %v", rows)
	}
}

func TestSelectGroupBy(t *testing.T) {
	node, _ := newNode(t)
	s := tableSession(t, node.Addr(), "grp")
	mustExec(t, s, `CREATE TABLE g (k int, c1 int, c2 int, v int, PRIMARY KEY (k, c1, c2))`)
	for _, r := range [][4]int{{1, 1, 1, 10}, {1, 1, 2, 20}, {1, 2, 1, 30}, {2, 1, 1, 40}, {3, 5, 5, 50}, {3, 6, 1, 60}} {
		mustExec(t, s, `INSERT INTO g (k, c1, c2, v) VALUES (?, ?, ?, ?)`, r[0], r[1], r[2], r[3])
	}
	groups := func(q string, args ...any) []string {
		t.Helper()
		var out []string
		for _, r := range rowsOf(t, s, q, args...) {
			keys := make([]string, 0, len(r))
			for k := range r {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			var parts []string
			for _, k := range keys {
				parts = append(parts, fmt.Sprintf("%s=%v", k, r[k]))
			}
			out = append(out, strings.Join(parts, " "))
		}
		sort.Strings(out)
		return out
	}
	check := func(q string, want ...string) {
		t.Helper()
		sort.Strings(want)
		if got := groups(q); !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n got %q\nwant %q", q, got, want)
		}
	}
	check(`SELECT k, count(*), sum(v) FROM g GROUP BY k`,
		"count=3 k=1 system.sum(v)=60", "count=1 k=2 system.sum(v)=40", "count=2 k=3 system.sum(v)=110")
	check(`SELECT k, c1, count(*), max(v) FROM g WHERE k = 1 GROUP BY k, c1`,
		"c1=1 count=2 k=1 system.max(v)=20", "c1=2 count=1 k=1 system.max(v)=30")
	check(`SELECT c1, sum(v) FROM g WHERE k = 1 GROUP BY c1`, "c1=1 system.sum(v)=30", "c1=2 system.sum(v)=30")
	check(`SELECT c1, c2, v FROM g WHERE k = 1 GROUP BY c1`, "c1=1 c2=1 v=10", "c1=2 c2=1 v=30") // first row of each group
	check(`SELECT * FROM g WHERE k = 3 GROUP BY k, c1`, "c1=5 c2=5 k=3 v=50", "c1=6 c2=1 k=3 v=60")
	check(`SELECT k, c1, c2, count(*) FROM g WHERE k = 1 GROUP BY k, c1, c2`,
		"c1=1 c2=1 count=1 k=1", "c1=1 c2=2 count=1 k=1", "c1=2 c2=1 count=1 k=1")
	if got := groups(`SELECT k, c1, count(*) FROM g GROUP BY k, c1 LIMIT 2`); len(got) != 2 {
		t.Errorf("LIMIT counts groups: %q", got)
	}
	check(`SELECT k, count(*) FROM g GROUP BY k, c1 PER PARTITION LIMIT 1`, "count=1 k=2", "count=1 k=3", "count=2 k=1")
	if got := groups(`SELECT k, count(*) FROM g WHERE k = ? GROUP BY k`, 2); !reflect.DeepEqual(got, []string{"count=1 k=2"}) {
		t.Errorf("prepared GROUP BY = %q", got)
	}
	if got := groups(`SELECT k, count(*) FROM g WHERE k = 9 GROUP BY k`); len(got) != 0 {
		t.Errorf("GROUP BY over no rows = %q", got)
	}
	var doc string
	if err := s.Query(`SELECT JSON c1, count(*) FROM g WHERE k = 1 GROUP BY c1 LIMIT 1`).Scan(&doc); err != nil || doc != `{"c1": 1, "count": 2}` {
		t.Errorf("JSON GROUP BY = %s %v", doc, err)
	}

	selExpectInvalid(t, s, `SELECT count(*) FROM g GROUP BY v`, "Group by is currently only supported on the columns of the PRIMARY KEY, got v")
	selExpectInvalid(t, s, `SELECT count(*) FROM g GROUP BY c1`, "Group by currently only support groups of columns following their declared order in the PRIMARY KEY")
	selExpectInvalid(t, s, `SELECT count(*) FROM g WHERE k = 1 GROUP BY c2`, "Group by currently only support groups of columns following their declared order in the PRIMARY KEY")
	selExpectInvalid(t, s, `SELECT count(*) FROM g GROUP BY k, c2`, "Group by currently only support groups of columns following their declared order in the PRIMARY KEY")
	mustExec(t, s, `CREATE TABLE g2 (a int, b int, c int, PRIMARY KEY ((a, b), c))`)
	selExpectInvalid(t, s, `SELECT count(*) FROM g2 GROUP BY a`, "Group by is not supported on only a part of the partition key")
}
