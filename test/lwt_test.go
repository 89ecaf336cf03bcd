package test

import (
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/gocql/gocql"
)

func TestLightweightTransactions(t *testing.T) {
	node, _ := newNode(t)
	s := tableSession(t, node.Addr(), "app")
	mustExec(t, s, `CREATE TABLE acct (id text, n int, owner text, PRIMARY KEY (id))`)

	// INSERT IF NOT EXISTS: applied once, then the existing row comes back.
	var id, owner string
	var n int
	applied, err := s.Query(`INSERT INTO acct (id, n, owner) VALUES ('a', 1, 'ann') IF NOT EXISTS`).ScanCAS(&id, &n, &owner)
	if err != nil || !applied {
		t.Fatalf("first insert: applied=%v %v", applied, err)
	}
	applied, err = s.Query(`INSERT INTO acct (id, n, owner) VALUES ('a', 9, 'bob') IF NOT EXISTS`).ScanCAS(&id, &n, &owner)
	if err != nil || applied || id != "a" || n != 1 || owner != "ann" {
		t.Fatalf("second insert: applied=%v %q %d %q %v", applied, id, n, owner, err)
	}

	// UPDATE IF: the current value of the conditioned column comes back.
	applied, err = s.Query(`UPDATE acct SET n = 2 WHERE id = 'a' IF n = 5`).ScanCAS(&n)
	if err != nil || applied || n != 1 {
		t.Fatalf("failed condition: applied=%v n=%d %v", applied, n, err)
	}
	m := map[string]any{}
	applied, err = s.Query(`UPDATE acct SET n = 2 WHERE id = 'a' IF n = 1 AND owner IN ('ann', 'x')`).MapScanCAS(m)
	if err != nil || !applied {
		t.Fatalf("holding condition: applied=%v %v %v", applied, m, err)
	}
	applied, err = s.Query(`UPDATE acct SET n = 3 WHERE id = 'nope' IF EXISTS`).ScanCAS()
	if err != nil || applied {
		t.Fatalf("IF EXISTS on a missing row: applied=%v %v", applied, err)
	}
	applied, err = s.Query(`DELETE FROM acct WHERE id = 'a' IF owner = 'ann'`).ScanCAS(&owner)
	if err != nil || !applied {
		t.Fatalf("conditional delete: applied=%v %v", applied, err)
	}
	if rows := rowsOf(t, s, `SELECT * FROM acct WHERE id = 'a'`); len(rows) != 0 {
		t.Fatalf("row survived its conditional delete: %v", rows)
	}

	// Concurrent compare-and-set increments: every applied CAS counts.
	mustExec(t, s, `INSERT INTO acct (id, n) VALUES ('c', 0)`)
	var wg sync.WaitGroup
	var mu sync.Mutex
	wins := 0
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 25; i++ {
				var cur int
				if err := s.Query(`SELECT n FROM acct WHERE id = 'c'`).Scan(&cur); err != nil {
					t.Error(err)
					return
				}
				var seen int
				ok, err := s.Query(`UPDATE acct SET n = ? WHERE id = 'c' IF n = ?`, cur+1, cur).ScanCAS(&seen)
				if err != nil {
					t.Error(err)
					return
				}
				if ok {
					mu.Lock()
					wins++
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	if err := s.Query(`SELECT n FROM acct WHERE id = 'c'`).Scan(&n); err != nil || n != wins {
		t.Fatalf("counter = %d after %d applied CAS increments (%v)", n, wins, err)
	}

	// A conditional batch on one partition, through a BATCH message.
	mustExec(t, s, `CREATE TABLE ledger (acct text, seq int, amount int, balance int static, PRIMARY KEY (acct, seq))`)
	mustExec(t, s, `INSERT INTO ledger (acct, balance) VALUES ('x', 10)`)
	b := s.NewBatch(gocql.LoggedBatch)
	b.Query(`UPDATE ledger SET balance = ? WHERE acct = ? IF balance = ?`, 7, "x", 10)
	b.Query(`INSERT INTO ledger (acct, seq, amount) VALUES (?, ?, ?)`, "x", 1, -3)
	applied, _, err = s.ExecuteBatchCAS(b)
	if err != nil || !applied {
		t.Fatalf("conditional batch: applied=%v %v", applied, err)
	}
	var bal int
	if err := s.Query(`SELECT balance FROM ledger WHERE acct = 'x' LIMIT 1`).Scan(&bal); err != nil || bal != 7 {
		t.Fatalf("balance = %d %v", bal, err)
	}
	b = s.NewBatch(gocql.LoggedBatch)
	b.Query(`UPDATE ledger SET balance = ? WHERE acct = ? IF balance = ?`, 1, "x", 10)
	b.Query(`INSERT INTO ledger (acct, seq, amount) VALUES (?, ?, ?)`, "x", 2, -9)
	applied, iter, err := s.ExecuteBatchCAS(b)
	if err != nil || applied {
		t.Fatalf("stale conditional batch: applied=%v %v", applied, err)
	}
	iter.Close()
	if rows := rowsOf(t, s, `SELECT seq FROM ledger WHERE acct = 'x'`); len(rows) != 1 {
		t.Fatalf("a failed conditional batch wrote: %v", rows)
	}

	// A list element set by index reads the list the transaction decided
	// on.
	mustExec(t, s, `CREATE TABLE lists (k int PRIMARY KEY, v int, l list<text>)`)
	mustExec(t, s, `INSERT INTO lists (k, v, l) VALUES (1, 1, ['a', 'b', 'c'])`)
	if applied, err := s.Query(`UPDATE lists SET l[1] = 'B', v = 2 WHERE k = 1 IF v = 1`).ScanCAS(); err != nil || !applied {
		t.Fatalf("list index set under a condition: %v %v", applied, err)
	}
	var l []string
	if err := s.Query(`SELECT l FROM lists WHERE k = 1`).Scan(&l); err != nil || strings.Join(l, ",") != "a,B,c" {
		t.Fatalf("list %v, %v", l, err)
	}

	// The Paxos state is in system.paxos, keyed by partition and table,
	// and the cells a transaction wrote carry its ballot's timestamp. On a
	// partition whose one replica coordinates, the state kept is the last
	// ballot's promise (no replica can lag and need the commit's update).
	var ballot gocql.UUID
	var cfID gocql.UUID
	if err := s.Query(`SELECT cf_id, in_progress_ballot FROM system.paxos WHERE row_key = textAsBlob('c')`).Scan(&cfID, &ballot); err != nil {
		t.Fatalf("system.paxos: %v", err)
	}
	// Cassandra 4.0's columns, every one.
	if err := s.Query(`SELECT row_key, cf_id, in_progress_ballot, proposal, proposal_ballot, proposal_version,
		most_recent_commit, most_recent_commit_at, most_recent_commit_version FROM system.paxos`).Exec(); err != nil {
		t.Fatalf("system.paxos's columns: %v", err)
	}
	var wt int64
	if err := s.Query(`SELECT writetime(n) FROM acct WHERE id = 'c'`).Scan(&wt); err != nil {
		t.Fatal(err)
	}
	if ballot.Version() != 1 || wt != ballot.Time().UnixMicro() {
		t.Fatalf("last ballot %v, writetime %d", ballot, wt)
	}
	var tableID gocql.UUID
	if err := s.Query(`SELECT id FROM system_schema.tables WHERE keyspace_name = 'app' AND table_name = 'acct'`).Scan(&tableID); err != nil || tableID != cfID {
		t.Fatalf("cf_id %v, table id %v (%v)", cfID, tableID, err)
	}
	// The state is purged as it expires: its cells live the table's
	// gc_grace_seconds (ten days by default), at least three hours
	// (Cassandra's paxosTtlSec).
	for _, q := range []string{
		`CREATE TABLE graced (k int PRIMARY KEY, v int) WITH gc_grace_seconds = 20000`,
		`CREATE TABLE brief (k int PRIMARY KEY, v int) WITH gc_grace_seconds = 60`,
	} {
		mustExec(t, s, q)
	}
	for _, q := range []string{`INSERT INTO graced (k, v) VALUES (1, 1) IF NOT EXISTS`, `INSERT INTO brief (k, v) VALUES (1, 1) IF NOT EXISTS`} {
		if applied, err := s.Query(q).ScanCAS(); err != nil || !applied {
			t.Fatalf("%s: %v %v", q, applied, err)
		}
	}
	for _, tc := range []struct {
		key, table string
		ttl        int
	}{{"textAsBlob('c')", "acct", 864000}, {"intAsBlob(1)", "graced", 20000}, {"intAsBlob(1)", "brief", 3 * 3600}} {
		var id gocql.UUID
		if err := s.Query(`SELECT id FROM system_schema.tables WHERE keyspace_name = 'app' AND table_name = ?`, tc.table).Scan(&id); err != nil {
			t.Fatal(err)
		}
		var ttl int
		if err := s.Query(`SELECT ttl(in_progress_ballot) FROM system.paxos WHERE row_key = `+tc.key+` AND cf_id = ?`, id).Scan(&ttl); err != nil || ttl > tc.ttl || ttl < tc.ttl-600 {
			t.Fatalf("%s: the Paxos state's TTL is %d, want %d (%v)", tc.table, ttl, tc.ttl, err)
		}
	}
}

// TestSerialConsistency checks the levels Cassandra refuses around
// lightweight transactions, and that a SERIAL read of one partition sees
// what a conditional write committed.
func TestSerialConsistency(t *testing.T) {
	node, _ := newNode(t)
	s := tableSession(t, node.Addr(), "app")
	mustExec(t, s, `CREATE TABLE acct (k int PRIMARY KEY, v int)`)
	applied, err := s.Query(`INSERT INTO acct (k, v) VALUES (1, 10) IF NOT EXISTS`).SerialConsistency(gocql.LocalSerial).MapScanCAS(map[string]any{})
	if err != nil || !applied {
		t.Fatalf("conditional insert: applied=%v %v", applied, err)
	}
	var v int
	if err := s.Query(`SELECT v FROM acct WHERE k = 1`).Consistency(gocql.Consistency(gocql.Serial)).Scan(&v); err != nil || v != 10 {
		t.Fatalf("SERIAL read: %d, %v", v, err)
	}
	for _, tc := range []struct {
		q   *gocql.Query
		msg string
	}{
		{s.Query(`UPDATE acct SET v = 1 WHERE k = 1`).Consistency(gocql.Consistency(gocql.Serial)), "You must use conditional updates for serializable writes"},
		{s.Query(`UPDATE acct SET v = 1 WHERE k = 1 IF v = 10`).Consistency(gocql.Consistency(gocql.LocalSerial)), "LOCAL_SERIAL is not supported as conditional update commit consistency"},
		{s.Query(`UPDATE acct SET v = 1 WHERE k = 1 IF v = 10`).SerialConsistency(gocql.SerialConsistency(gocql.Quorum)), "Invalid consistency for conditional update. Must be one of SERIAL or LOCAL_SERIAL"},
		{s.Query(`SELECT v FROM acct WHERE k IN (1, 2)`).Consistency(gocql.Consistency(gocql.LocalSerial)), "SERIAL/LOCAL_SERIAL consistency may only be requested for one partition at a time"},
		{s.Query(`SELECT v FROM acct WHERE k = 1`).Consistency(gocql.Any), "ANY ConsistencyLevel is only supported for writes"},
	} {
		err := tc.q.Exec()
		if err == nil || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: %v, want %q", tc.q.Statement(), err, tc.msg)
		}
	}
	b := s.NewBatch(gocql.LoggedBatch)
	b.Query(`UPDATE acct SET v = 2 WHERE k = 1`)
	b.SetConsistency(gocql.Consistency(gocql.Serial))
	if err := s.ExecuteBatch(b); err == nil || !strings.Contains(err.Error(), "You must use conditional updates for serializable writes") {
		t.Errorf("SERIAL batch without conditions: %v", err)
	}
	if err := s.Query(`SELECT v FROM acct WHERE k = 1`).Scan(&v); err != nil || v != 10 {
		t.Fatalf("after refused writes: %d, %v", v, err)
	}
}

// TestUnavailable checks that a level needing more replicas than this one
// node is refused with UNAVAILABLE and Cassandra's figures, as a one-node
// Cassandra does, and that levels it can meet work.
func TestUnavailable(t *testing.T) {
	node, _ := newNode(t)
	s := tableSession(t, node.Addr(), "app")
	for _, q := range []string{
		`CREATE KEYSPACE rf3 WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}`,
		`CREATE KEYSPACE elsewhere WITH replication = {'class': 'NetworkTopologyStrategy', 'dc2': 1}`,
		`CREATE KEYSPACE nts3 WITH replication = {'class': 'NetworkTopologyStrategy', 'datacenter1': 3}`,
		`CREATE TABLE rf3.t (k int PRIMARY KEY, v int)`,
		`CREATE TABLE elsewhere.t (k int PRIMARY KEY, v int)`,
		`CREATE TABLE nts3.t (k int PRIMARY KEY, v int)`,
		`CREATE TABLE app.t (k int PRIMARY KEY, v int)`,
	} {
		mustExec(t, s, q)
	}
	for _, tc := range []struct {
		q               string
		cl              gocql.Consistency
		serial          gocql.SerialConsistency
		want            string // consistency name; "" when it must work
		required, alive int
	}{
		{q: `INSERT INTO rf3.t (k, v) VALUES (1, 1)`, cl: gocql.One},
		{q: `SELECT v FROM rf3.t WHERE k = 1`, cl: gocql.LocalOne},
		{q: `INSERT INTO rf3.t (k, v) VALUES (1, 1)`, cl: gocql.Quorum, want: "QUORUM", required: 2, alive: 1},
		{q: `SELECT v FROM rf3.t WHERE k = 1`, cl: gocql.All, want: "ALL", required: 3, alive: 1},
		{q: `INSERT INTO rf3.t (k, v) VALUES (2, 2) IF NOT EXISTS`, cl: gocql.One, serial: gocql.Serial, want: "SERIAL", required: 2, alive: 1},
		{q: `SELECT v FROM nts3.t WHERE k = 1`, cl: gocql.LocalQuorum, want: "LOCAL_QUORUM", required: 2, alive: 1},
		{q: `SELECT v FROM nts3.t WHERE k = 1`, cl: gocql.LocalOne},
		{q: `INSERT INTO elsewhere.t (k, v) VALUES (1, 1)`, cl: gocql.One, want: "ONE", required: 1, alive: 0},
		{q: `INSERT INTO elsewhere.t (k, v) VALUES (1, 1)`, cl: gocql.Any},
		{q: `INSERT INTO app.t (k, v) VALUES (1, 1)`, cl: gocql.Two, want: "TWO", required: 2, alive: 1},
		{q: `SELECT v FROM app.t WHERE k = 1`, cl: gocql.All},
		{q: `SELECT v FROM app.t WHERE k = 1`, cl: gocql.Quorum},
	} {
		q := s.Query(tc.q).Consistency(tc.cl)
		if tc.serial != 0 {
			q = q.SerialConsistency(tc.serial)
		}
		err := q.Exec()
		if tc.want == "" {
			if err != nil {
				t.Errorf("%s at %v: %v", tc.q, tc.cl, err)
			}
			continue
		}
		var ua *gocql.RequestErrUnavailable
		if !errors.As(err, &ua) {
			t.Errorf("%s at %v: %v, want UNAVAILABLE", tc.q, tc.cl, err)
			continue
		}
		if ua.Required != tc.required || ua.Alive != tc.alive || ua.Message() != "Cannot achieve consistency level "+tc.want {
			t.Errorf("%s at %v: required %d alive %d %q, want %d %d %q", tc.q, tc.cl, ua.Required, ua.Alive, ua.Message(), tc.required, tc.alive, tc.want)
		}
	}
}
