package test

import (
	"testing"
	"time"

	"github.com/gocql/gocql"

	"github.com/cqld/cqld/server"
)

// TestInlineRequests checks which requests the node takes on its event
// loops (coordinator.Inline) and that their answers are the right ones:
// single-row reads and blind writes, never a partition read, a counter, a
// conditional write or a batch. In batch mode an inline write is answered
// only after the commit log sync that covers it (the wait is observed
// before the answer leaves); in periodic mode at once.
func TestInlineRequests(t *testing.T) {
	for _, mode := range []string{"periodic", "batch"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			cfg := testConfig(t, t.TempDir())
			cfg.CommitlogSync = mode
			clock := newFakeClock()
			node := startNodeWith(t, cfg, server.Options{Now: clock.Now})
			c := gocqlCluster(node.Addr())
			c.NumConns = 1
			s, err := c.CreateSession()
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			for _, q := range []string{
				`CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}`,
				`CREATE TABLE ks.t (k int, c int, v text, PRIMARY KEY (k, c))`,
				`CREATE TABLE ks.n (k int PRIMARY KEY, n counter)`,
			} {
				if err := s.Query(q).Exec(); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
			inline := func() float64 { return metricValue(t, node.Registry, "cqld_native_inline_requests_total", nil) }
			waits := func() float64 { return metricValue(t, node.Registry, "cqld_commitlog_wait_duration_seconds", nil) }
			proxied := func() float64 { return metricValue(t, node.Registry, "cqld_proxy_request_seconds", nil) }
			writeWaits := 1.0
			if mode == "periodic" {
				writeWaits = 0
			}
			steps := []struct {
				name   string
				run    func() error
				inline float64
				waits  float64 // appends that waited for a sync
			}{
				{"insert", func() error {
					return s.Query(`INSERT INTO ks.t (k, c, v) VALUES (?, ?, ?)`, 1, 1, "a").Exec()
				}, 1, writeWaits},
				{"insert with TTL", func() error {
					return s.Query(`INSERT INTO ks.t (k, c, v) VALUES (?, ?, ?) USING TTL 1`, 1, 2, "gone").Exec()
				}, 1, writeWaits},
				{"update", func() error {
					return s.Query(`UPDATE ks.t SET v = ? WHERE k = ? AND c = ?`, "b", 1, 3).Exec()
				}, 1, writeWaits},
				{"select one row", func() error {
					var v string
					if err := s.Query(`SELECT v FROM ks.t WHERE k = ? AND c = ?`, 1, 1).Scan(&v); err != nil {
						return err
					}
					if v != "a" {
						t.Errorf("k=1 c=1: v = %q, want a", v)
					}
					return nil
				}, 1, 0},
				{"select an expired row", func() error {
					clock.Advance(time.Second) // past the TTL of 1 s
					err := s.Query(`SELECT v FROM ks.t WHERE k = ? AND c = ?`, 1, 2).Scan(new(string))
					if err != gocql.ErrNotFound {
						t.Errorf("expired row k=1 c=2: %v, want not found", err)
					}
					return nil
				}, 1, 0},
				{"select a partition", func() error {
					n := s.Query(`SELECT v FROM ks.t WHERE k = ?`, 1).Iter().NumRows()
					if n != 2 {
						t.Errorf("partition k=1: %d rows, want 2", n)
					}
					return nil
				}, 0, -1},
				{"counter", func() error {
					return s.Query(`UPDATE ks.n SET n = n + ? WHERE k = ?`, 1, 1).Exec()
				}, 0, -1},
				{"conditional insert", func() error {
					_, err := s.Query(`INSERT INTO ks.t (k, c, v) VALUES (?, ?, ?) IF NOT EXISTS`, 1, 9, "c").MapScanCAS(map[string]any{})
					return err
				}, 0, -1},
				{"batch", func() error {
					b := s.NewBatch(gocql.UnloggedBatch)
					b.Query(`INSERT INTO ks.t (k, c, v) VALUES (?, ?, ?)`, 2, 1, "d")
					return s.ExecuteBatch(b)
				}, 0, -1},
				{"serial read", func() error {
					return s.Query(`SELECT v FROM ks.t WHERE k = ? AND c = ?`, 1, 1).Consistency(gocql.Consistency(gocql.Serial)).Scan(new(string))
				}, 0, -1},
			}
			for _, st := range steps {
				// Run once to prepare, then count the second run.
				if err := st.run(); err != nil {
					t.Fatalf("%s: %v", st.name, err)
				}
				before, waited, measured := inline(), waits(), proxied()
				if err := st.run(); err != nil {
					t.Fatalf("%s: %v", st.name, err)
				}
				if got := inline() - before; got != st.inline {
					t.Errorf("%s: %v requests taken inline, want %v", st.name, got, st.inline)
				}
				if got := waits() - waited; st.waits >= 0 && got != st.waits {
					t.Errorf("%s: %v appends waited for a sync before the answer, want %v", st.name, got, st.waits)
				}
				// A request taken inline is still the proxy's, measured as
				// one read or one write.
				if got := proxied() - measured; st.inline == 1 && got != 1 {
					t.Errorf("%s: %v requests measured by the proxy, want 1", st.name, got)
				}
			}
			var n int64
			if err := s.Query(`SELECT n FROM ks.n WHERE k = ?`, 1).Scan(&n); err != nil || n != 2 {
				t.Errorf("counter: %d, %v; want 2", n, err)
			}
		})
	}
}
