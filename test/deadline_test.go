package test

import (
	"errors"
	"testing"
	"time"

	"github.com/datastax/go-cassandra-native-protocol/primitive"
	"github.com/gocql/gocql"

	"github.com/cqld/cqld/config"
	"github.com/cqld/cqld/server"
)

// Every request runs within its kind's deadline (read_request_timeout,
// range_request_timeout, write_request_timeout, truncate_request_timeout)
// and answers READ_TIMEOUT or WRITE_TIMEOUT past it, with Cassandra's
// fields, or for a truncate TRUNCATE_ERROR, as Cassandra's. The deadlines here
// are a nanosecond, so each request is past its own before it reads or
// writes anything; the other kinds' defaults keep the setup working. (The
// point reads answered on the event loop wait on nothing and take no
// deadline; a blind write there waits only for an fsync:
// TestWriteDeadlineUnderStalledSync.)
func TestRequestDeadlines(t *testing.T) {
	setup := testConfig(t, t.TempDir())
	node, err := startStoppable(t, setup)
	if err != nil {
		t.Fatal(err)
	}
	s := connect(t, node.Addr())
	mustExec(t, s, `CREATE KEYSPACE dl WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}`)
	mustExec(t, s, `CREATE TABLE dl.t (k int, c int, v text, PRIMARY KEY (k, c))`)
	mustExec(t, s, `INSERT INTO dl.t (k, c, v) VALUES (1, 1, 'a')`)
	mustExec(t, s, `CREATE TABLE dl.c (k int PRIMARY KEY, n counter)`)
	s.Close()
	if err := stopNode(node); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name  string
		set   func(*config.Config)
		query string
		check func(error) bool
	}{
		{"range", func(c *config.Config) { c.RangeRequestTimeout = config.Duration{Duration: time.Nanosecond} },
			`SELECT * FROM dl.t`, func(err error) bool {
				var rt *gocql.RequestErrReadTimeout
				return errors.As(err, &rt) && rt.Received == 0 && rt.BlockFor == 1 && rt.Consistency == gocql.One
			}},
		{"read", func(c *config.Config) { c.ReadRequestTimeout = config.Duration{Duration: time.Nanosecond} },
			`SELECT * FROM dl.t WHERE k = 1`, func(err error) bool {
				var rt *gocql.RequestErrReadTimeout
				return errors.As(err, &rt)
			}},
		{"write", func(c *config.Config) { c.WriteRequestTimeout = config.Duration{Duration: time.Nanosecond} },
			`UPDATE dl.c SET n = n + 1 WHERE k = 1`, func(err error) bool {
				var wt *gocql.RequestErrWriteTimeout
				return errors.As(err, &wt) && wt.WriteType == "COUNTER" && wt.BlockFor == 1
			}},
		{"counterless batch", func(c *config.Config) { c.WriteRequestTimeout = config.Duration{Duration: time.Nanosecond} },
			`BEGIN BATCH INSERT INTO dl.t (k, c, v) VALUES (1, 3, 'c'); INSERT INTO dl.t (k, c, v) VALUES (2, 3, 'c'); APPLY BATCH`, func(err error) bool {
				var wt *gocql.RequestErrWriteTimeout
				return errors.As(err, &wt) && wt.WriteType == "BATCH"
			}},
		{"truncate", func(c *config.Config) { c.TruncateRequestTimeout = config.Duration{Duration: time.Nanosecond} },
			`TRUNCATE dl.c`, func(err error) bool {
				var re gocql.RequestError
				return errors.As(err, &re) && re.Code() == gocql.ErrCodeTruncate &&
					re.Message() == "Error during truncate: Truncate timed out - received only 0 responses"
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := setup
			tc.set(&cfg)
			n := startNode(t, cfg)
			s := connect(t, n.Addr())
			defer s.Close()
			err := s.Query(tc.query).Consistency(gocql.One).Exec()
			if !tc.check(err) {
				t.Fatalf("%s past its deadline: %T %v", tc.query, err, err)
			}
			// Nothing else is affected: a request of another kind works.
			if tc.name != "read" {
				var v string
				if err := s.Query(`SELECT v FROM dl.t WHERE k = 1 AND c = 1`).Scan(&v); err != nil || v != "a" {
					t.Fatalf("a read after the timeout: %q, %v", v, err)
				}
			}
		})
	}
}

// A write waiting for a commit log sync that does not come answers
// WRITE_TIMEOUT at write_request_timeout, whether the event loop took it
// (a prepared blind write) or a worker (the same write as a QUERY): here
// every sync stalls for longer than the test waits.
func TestWriteDeadlineUnderStalledSync(t *testing.T) {
	cfg := testConfig(t, t.TempDir())
	cfg.CommitlogSync = "batch"
	cfg.WriteRequestTimeout = config.Duration{Duration: 300 * time.Millisecond}
	fs := newSlowFS(nil, 0)
	node := startNodeWith(t, cfg, server.Options{FS: fs})
	s := connect(t, node.Addr())
	defer s.Close()
	mustExec(t, s, `CREATE KEYSPACE dl WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}`)
	mustExec(t, s, `CREATE TABLE dl.t (k int PRIMARY KEY, v text)`)
	insert := `INSERT INTO dl.t (k, v) VALUES (?, ?)`
	mustExec(t, s, insert, 0, "prepared before the stall")
	w := dial(t, node.Addr())
	w.handshake()

	fs.stall.Store(int64(2 * time.Second))
	inline := metricValue(t, node.Registry, "cqld_native_inline_requests_total", nil)
	err := s.Query(insert, 1, "inline").Exec()
	var wt *gocql.RequestErrWriteTimeout
	if !errors.As(err, &wt) || wt.WriteType != "SIMPLE" || wt.BlockFor != 1 || wt.Received != 0 {
		t.Errorf("inline write under a stalled sync: %v, want WRITE_TIMEOUT", err)
	}
	if got := metricValue(t, node.Registry, "cqld_native_inline_requests_total", nil); got != inline+1 {
		t.Errorf("%v writes taken inline, want 1", got-inline)
	}
	w.send(4, 2, primitive.OpCodeQuery, queryBody(`INSERT INTO dl.t (k, v) VALUES (2, 'worker')`))
	if r := w.mustRead(); r.stream != 2 {
		t.Errorf("answer on stream %d", r.stream)
	} else if code, msg := r.errorCode(); code != primitive.ErrorCodeWriteTimeout {
		t.Errorf("worker write under a stalled sync: %s, want WRITE_TIMEOUT", fmtReply(r))
	} else {
		t.Logf("WRITE_TIMEOUT %q", msg)
	}

	// The writes land once the syncs come.
	fs.stall.Store(0)
	for k, want := range map[int]string{1: "inline", 2: "worker"} {
		var v string
		deadline := time.Now().Add(10 * time.Second)
		for s.Query(`SELECT v FROM dl.t WHERE k = ?`, k).Scan(&v) != nil && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
		if v != want {
			t.Errorf("k=%d: %q after the stall, want %q", k, v, want)
		}
	}
}
