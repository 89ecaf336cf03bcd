package test

import (
	"errors"
	"testing"
	"time"

	"github.com/gocql/gocql"

	"github.com/cqld/cqld/config"
)

// Every request runs within its kind's deadline (read_request_timeout,
// range_request_timeout, write_request_timeout) and answers READ_TIMEOUT
// or WRITE_TIMEOUT past it, with Cassandra's fields. The deadlines here
// are a nanosecond, so each request is past its own before it reads or
// writes anything; the other kinds' defaults keep the setup working. (The
// requests answered on the event loop, point reads and blind writes, take
// no deadline: they cannot wait on anything but an fsync.)
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
