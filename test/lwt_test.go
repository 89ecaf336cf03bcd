package test

import (
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
		{s.Query(`SELECT v FROM acct`).Consistency(gocql.Consistency(gocql.Serial)), "SERIAL/LOCAL_SERIAL consistency may only be requested for one partition at a time"},
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
