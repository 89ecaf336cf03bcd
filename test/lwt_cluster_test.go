package test

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/gocql/gocql"
)

// TestLWTThroughEveryNode runs compare-and-set increments of one row on a
// three-node RF 3 cluster through every node at once, each client pinned
// to its node so that every node coordinates (the partition's primary
// replica and the others alike): each applied increment sets v to the
// value it read plus one and appends its own token to a list, so the
// increments serialized exactly when v ends equal to the list's length,
// every token answered applied is in the list once, and none answered
// not applied is. SERIAL reads through every node see a value that never
// goes back, and plain QUORUM reads see the last one.
func TestLWTThroughEveryNode(t *testing.T) {
	if testing.Short() {
		t.Skip("runs three cqld processes")
	}
	tc := startCluster(t, 3)
	s := tc.session(0, gocql.Quorum)
	for _, q := range []string{
		`CREATE KEYSPACE lwt WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}`,
		`CREATE TABLE lwt.c (k int PRIMARY KEY, v int, log list<text>)`,
	} {
		if err := s.Query(q).Exec(); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if applied, err := s.Query(`INSERT INTO lwt.c (k, v) VALUES (0, 0) IF NOT EXISTS`).ScanCAS(); err != nil || !applied {
		t.Fatalf("insert: %v %v", applied, err)
	}
	const perWorker = 8
	type outcome struct {
		applied, refused, unknown []string
	}
	var (
		mu  sync.Mutex
		all outcome
		wg  sync.WaitGroup
	)
	for node := range tc.nodes {
		// One session per node, its clients' commits at QUORUM and ANY.
		ns := tc.single(node, gocql.Quorum)
		for w, commit := range []gocql.Consistency{gocql.Quorum, gocql.Any} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var mine outcome
				defer func() {
					mu.Lock()
					all.applied = append(all.applied, mine.applied...)
					all.refused = append(all.refused, mine.refused...)
					all.unknown = append(all.unknown, mine.unknown...)
					mu.Unlock()
				}()
				last := -1
				for i := 0; len(mine.applied) < perWorker; i++ {
					if i > 50*perWorker {
						t.Errorf("node%d worker %d: %d increments applied in %d attempts", node+1, w, len(mine.applied), i)
						return
					}
					var v int
					if err := ns.Query(`SELECT v FROM lwt.c WHERE k = 0`).Consistency(gocql.Consistency(gocql.Serial)).Scan(&v); err != nil {
						t.Errorf("node%d: SERIAL read: %v", node+1, err)
						return
					}
					if v < last {
						t.Errorf("node%d: a SERIAL read went back from %d to %d", node+1, last, v)
					}
					last = v
					token := fmt.Sprintf("n%d-w%d-%d", node+1, w, i)
					var cur int
					applied, err := ns.Query(`UPDATE lwt.c SET v = ?, log = log + ? WHERE k = 0 IF v = ?`, v+1, []string{token}, v).
						Consistency(commit).SerialConsistency(gocql.Serial).ScanCAS(&cur)
					switch {
					case errors.As(err, new(*gocql.RequestErrWriteTimeout)):
						mine.unknown = append(mine.unknown, token)
					case err != nil:
						t.Errorf("node%d: CAS: %v", node+1, err)
						return
					case applied:
						mine.applied = append(mine.applied, token)
					default:
						mine.refused = append(mine.refused, token)
					}
				}
			}()
		}
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	var v int
	var log []string
	if err := s.Query(`SELECT v, log FROM lwt.c WHERE k = 0`).Consistency(gocql.Consistency(gocql.Serial)).Scan(&v, &log); err != nil {
		t.Fatal(err)
	}
	if v != len(log) {
		t.Fatalf("v = %d after %d increments: two applied from one value", v, len(log))
	}
	for _, tok := range all.applied {
		if n := count(log, tok); n != 1 {
			t.Fatalf("applied %s is %d times in the log", tok, n)
		}
	}
	for _, tok := range all.refused {
		if slices.Contains(log, tok) {
			t.Fatalf("refused %s is in the log", tok)
		}
	}
	if len(log) < len(all.applied) || len(log) > len(all.applied)+len(all.unknown) {
		t.Fatalf("%d in the log, %d applied, %d unknown", len(log), len(all.applied), len(all.unknown))
	}
	t.Logf("%d applied, %d refused, %d unknown through 3 nodes", len(all.applied), len(all.refused), len(all.unknown))
	// Every node reads the last value at SERIAL, and at QUORUM once the
	// commits made at ANY have landed.
	for node := range tc.nodes {
		ns := tc.single(node, gocql.Quorum)
		var got int
		if err := ns.Query(`SELECT v FROM lwt.c WHERE k = 0`).Consistency(gocql.Consistency(gocql.Serial)).Scan(&got); err != nil || got != v {
			t.Fatalf("node%d at SERIAL: %d, %v; want %d", node+1, got, err, v)
		}
		eventually(t, 10*time.Second, fmt.Sprintf("node%d at QUORUM", node+1), func() error {
			if err := ns.Query(`SELECT v FROM lwt.c WHERE k = 0`).Scan(&got); err != nil || got != v {
				return fmt.Errorf("%d, %v; want %d", got, err, v)
			}
			return nil
		})
	}
}

func count(xs []string, x string) int {
	n := 0
	for _, y := range xs {
		if y == x {
			n++
		}
	}
	return n
}
