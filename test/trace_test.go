package test

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gocql/gocql"
)

// gocql's Tracer reads a traced request's session and events back
// (gocql.NewTraceWriter queries system_traces as soon as the answer
// arrives); the session's rows carry the trace TTL; requests not asked to
// be traced leave no session while trace_probability is 0, and all do
// at 1, though their answers carry no tracing id.
func TestTraceGocql(t *testing.T) {
	node, _ := newNode(t)
	s := tableSession(t, node.Addr(), "tr")
	mustExec(t, s, `CREATE TABLE t (k int PRIMARY KEY, v text)`)

	var buf bytes.Buffer
	if err := s.Query(`INSERT INTO t (k, v) VALUES (1, 'one')`).Trace(gocql.NewTraceWriter(s, &buf)).Exec(); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{"Tracing session", "coordinator: 127.0.0.1", "Parsing INSERT INTO t (k, v) VALUES (1, 'one')",
		"Preparing statement", "Appending to commitlog", "Commit log synced", "Adding to t memtable"} {
		if !strings.Contains(out, want) {
			t.Fatalf("gocql's trace of an INSERT lacks %q:\n%s", want, out)
		}
	}
	buf.Reset()
	var v string
	if err := s.Query(`SELECT v FROM t WHERE k = ?`, 1).Trace(gocql.NewTraceWriter(s, &buf)).Scan(&v); err != nil || v != "one" {
		t.Fatalf("traced read: %q, %v", v, err)
	}
	if out := buf.String(); !strings.Contains(out, "Executing single-partition query on t") || !strings.Contains(out, "Read 1 live rows") {
		t.Fatalf("gocql's trace of a read:\n%s", out)
	}

	var sessions, ttl int
	// system_traces has replication factor 2, as in Cassandra: on one
	// node, QUORUM (gocql's default) is unavailable.
	if err := s.Query(`SELECT count(*) FROM system_traces.sessions`).Consistency(gocql.One).Scan(&sessions); err != nil || sessions != 4 {
		t.Fatalf("%d sessions after two traced statements (each prepared, then executed) among untraced ones (%v), want 4", sessions, err)
	}
	if err := s.Query(`SELECT ttl(command) FROM system_traces.sessions LIMIT 1`).Consistency(gocql.One).Scan(&ttl); err != nil || ttl <= 0 || ttl > 86400 {
		t.Fatalf("a session's TTL is %d (%v), want trace_type_query_ttl's day", ttl, err)
	}

	cfg := testConfig(t, t.TempDir())
	cfg.TraceProbability = 1
	sampled := startNode(t, cfg)
	s2 := tableSession(t, sampled.Addr(), "tr")
	mustExec(t, s2, `CREATE TABLE t (k int PRIMARY KEY, v text)`)
	// Every request is traced; count those of this query text, whose
	// answers carry no tracing id (gocql would call a Tracer only then).
	for i := range 3 {
		mustExec(t, s2, `INSERT INTO t (k, v) VALUES (?, 'x')`, i)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		n := 0
		iter := s2.Query(`SELECT parameters FROM system_traces.sessions`).Consistency(gocql.One).Iter()
		var params map[string]string
		for iter.Scan(&params) {
			if params["query"] == `INSERT INTO t (k, v) VALUES (?, 'x')` && params["consistency_level"] == "QUORUM" {
				n++
			}
		}
		if err := iter.Close(); err != nil {
			t.Fatal(err)
		}
		if n == 3 { // the three executions (the PREPARE has no level)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d sessions of the 3 inserts at trace_probability 1", n)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// pythonTrace is one trace as drivers/python/trace.py prints it.
type pythonTrace struct {
	Query       string            `json:"query"`
	Coordinator string            `json:"coordinator"`
	RequestType string            `json:"request_type"`
	Duration    *float64          `json:"duration_us"`
	Client      string            `json:"client"`
	Parameters  map[string]string `json:"parameters"`
	Events      []struct {
		Activity, Source, Thread string
	} `json:"events"`
}

// runTraceScript runs trace.py against host:port and returns its traces.
func runTraceScript(t *testing.T, host string, port int, ks string, sources int) []pythonTrace {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), driverTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, debianPython, "trace.py", host, strconv.Itoa(port), ks, strconv.Itoa(sources))
	cmd.Dir = "drivers/python"
	cmd.Env = driverEnv()
	out, err := cmd.CombinedOutput()
	t.Logf("trace.py:\n%s", out)
	if err != nil {
		t.Fatalf("trace.py: %v", err)
	}
	var traces []pythonTrace
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if !strings.HasPrefix(line, "{") {
			continue
		}
		var tr pythonTrace
		if err := json.Unmarshal([]byte(line), &tr); err != nil {
			t.Fatalf("trace.py printed %q: %v", line, err)
		}
		traces = append(traces, tr)
	}
	if len(traces) != 2 {
		t.Fatalf("trace.py printed %d traces, want 2", len(traces))
	}
	return traces
}

// activities are a trace's events' activities from source ("" for any).
func (tr pythonTrace) activities(source string) string {
	var b strings.Builder
	for _, e := range tr.Events {
		if source == "" || e.Source == source {
			b.WriteString(e.Activity + "\n")
		}
	}
	return b.String()
}

// The Python driver's get_query_trace() reads a write's and a read's
// traces from one node.
func TestTracePythonDriver(t *testing.T) {
	needPythonDriver(t)
	node, _ := newNode(t)
	host, port := hostPort(node.Addr())
	traces := runTraceScript(t, host, port, "trpy", 1)
	w, r := traces[0], traces[1]
	if w.Coordinator != "127.0.0.1" || w.RequestType != "Execute CQL3 query" || w.Duration == nil || w.Client != "127.0.0.1" ||
		w.Parameters["query"] != w.Query || w.Parameters["consistency_level"] != "ONE" {
		t.Fatalf("the write's session: %+v", w)
	}
	if a := w.activities(""); !strings.Contains(a, "Parsing INSERT") || !strings.Contains(a, "Appending to commitlog") {
		t.Fatalf("the write's events:\n%s", a)
	}
	if a := r.activities(""); !strings.Contains(a, "Executing single-partition query on traced") || !strings.Contains(a, "Read 1 live rows") {
		t.Fatalf("the read's events:\n%s", a)
	}
}

// Traces expire at trace_type_query_ttl and the node's purge removes
// them: on a clock the test advances past the day, the session is gone
// from reads and from disk.
func TestTraceExpires(t *testing.T) {
	node, clock := newClockedNode(t)
	s := tableSession(t, node.Addr(), "trx")
	mustExec(t, s, `CREATE TABLE t (k int PRIMARY KEY)`)
	var tr idTracer
	if err := s.Query(`SELECT k FROM t WHERE k = 1`).Trace(&tr).Exec(); err != nil {
		t.Fatal(err)
	}
	count := func() int {
		var n int
		if err := s.Query(`SELECT count(*) FROM system_traces.events WHERE session_id = ?`, tr.last()).Consistency(gocql.One).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := count(); n == 0 {
		t.Fatal("the traced read recorded no events")
	}
	clock.Advance(24*time.Hour + time.Minute)
	if n := count(); n != 0 {
		t.Fatalf("%d events read back a day after", n)
	}
	st, err := node.Coord.Purge(clock.Now())
	if err != nil || st.Keys == 0 {
		t.Fatalf("purge after the traces expired: %+v, %v", st, err)
	}
}

// A traced role statement keeps no password in system_traces: the
// session's query and the "Parsing" event are cut after the word
// PASSWORD, as Cassandra's PasswordObfuscator cuts them in its audit log;
// so is a role statement that does not parse. Other statements keep
// their text.
func TestTraceKeepsNoPassword(t *testing.T) {
	node := newAuthNode(t)
	admin := loginAs(t, node.Addr(), "cassandra", "cassandra")
	var buf bytes.Buffer
	trace := gocql.NewTraceWriter(admin, &buf)
	if err := admin.Query(`CREATE ROLE alice WITH PASSWORD = 'S3cret-one' AND LOGIN = true`).Trace(trace).Exec(); err != nil {
		t.Fatal(err)
	}
	if err := admin.Query(`ALTER ROLE alice WITH PASSWORD = 'S3cret-two' AND LOGIN = tru`).Trace(trace).Exec(); err == nil {
		t.Fatal("a statement that does not parse ran")
	}
	const other = `SELECT role FROM system_auth.roles WHERE role = 'password'`
	if err := admin.Query(other).Trace(trace).Exec(); err != nil {
		t.Fatal(err)
	}
	loginAs(t, node.Addr(), "alice", "S3cret-one")

	var texts []string
	for _, q := range []string{`SELECT parameters FROM system_traces.sessions`, `SELECT activity FROM system_traces.events`} {
		for _, r := range rows(t, admin, q) {
			texts = append(texts, r...)
		}
	}
	all := strings.Join(texts, "\n") + buf.String()
	if strings.Contains(all, "S3cret") {
		t.Fatalf("a password is in system_traces:\n%s", all)
	}
	for _, want := range []string{"CREATE ROLE alice WITH PASSWORD *******", other} {
		if !strings.Contains(all, want) {
			t.Fatalf("system_traces lacks %q:\n%s", want, all)
		}
	}
}
