package test

import (
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gocql/gocql"
)

// idTracer is a gocql Tracer that keeps the tracing ids it is given.
type idTracer struct {
	mu  sync.Mutex
	ids [][]byte
}

func (t *idTracer) Trace(id []byte) {
	t.mu.Lock()
	t.ids = append(t.ids, append([]byte(nil), id...))
	t.mu.Unlock()
}

func (t *idTracer) last() []byte {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.ids) == 0 {
		return nil
	}
	return t.ids[len(t.ids)-1]
}

// On a cluster, a traced write coordinated by a node that is not the
// partition's replica has its events recorded by both, under the one
// session: the coordinator's (parsing, the message sent) and the
// replica's (the message received, the commit log append), readable
// through any node, by gocql and by the Python driver's
// get_query_trace(). A function created through one node runs through
// the others (the metadata log carries it).
func TestClusterTraceAndFunctions(t *testing.T) {
	if testing.Short() {
		t.Skip("runs three cqld processes")
	}
	tc := startCluster(t, 3)
	s1 := tc.single(0, gocql.One)
	mustExec(t, s1, `CREATE KEYSPACE trc WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}`)
	mustExec(t, s1, `CREATE TABLE trc.t (k int PRIMARY KEY, v text)`)
	mustExec(t, s1, `CREATE FUNCTION trc.plus(a int, b int) RETURNS NULL ON NULL INPUT RETURNS int LANGUAGE javascript AS 'a + b'`)
	mustExec(t, s1, `CREATE AGGREGATE trc.total(int) SFUNC plus STYPE int INITCOND 0`)
	for i := 1; i < 3; i++ {
		s := tc.single(i, gocql.One)
		eventually(t, 30*time.Second, fmt.Sprintf("trc.plus through node%d", i+1), func() error {
			var n int
			if err := s.Query(`SELECT trc.plus(k, 2) FROM trc.t WHERE k = 40`).Scan(&n); err != nil && err != gocql.ErrNotFound {
				return err
			}
			mustExec(t, s, `INSERT INTO trc.t (k, v) VALUES (40, 'x')`)
			if err := s.Query(`SELECT trc.plus(k, 2) FROM trc.t WHERE k = 40`).Scan(&n); err != nil || n != 42 {
				return fmt.Errorf("trc.plus(40, 2) = %d, %v", n, err)
			}
			return nil
		})
	}

	// A traced write through node1 of a partition node1 does not hold.
	var tr idTracer
	me := tc.nodes[0].addr
	s2 := tc.single(1, gocql.One) // reads the trace back through another node
	found := false
	for k := 0; k < 60 && !found; k++ {
		if err := s1.Query(`INSERT INTO trc.t (k, v) VALUES (?, 'traced')`, k).Trace(&tr).Exec(); err != nil {
			t.Fatal(err)
		}
		id := tr.last()
		if id == nil {
			t.Fatal("a traced write's answer carried no tracing id")
		}
		events := func() (map[string][]string, error) {
			bySource := map[string][]string{}
			iter := s2.Query(`SELECT activity, source FROM system_traces.events WHERE session_id = ?`, id).Iter()
			var activity string
			var source net.IP
			for iter.Scan(&activity, &source) {
				bySource[source.String()] = append(bySource[source.String()], activity)
			}
			return bySource, iter.Close()
		}
		var bySource map[string][]string
		eventually(t, 10*time.Second, "the coordinator's events", func() (err error) {
			if bySource, err = events(); err == nil && !strings.Contains(strings.Join(bySource[me], "\n"), "Adding to") &&
				!strings.Contains(strings.Join(bySource[me], "\n"), "Processing response") {
				err = fmt.Errorf("coordinator events %q", bySource[me])
			}
			return err
		})
		mine := strings.Join(bySource[me], "\n")
		if !strings.Contains(mine, "Sending MUTATION message to /") {
			continue // node1 is the replica: try another key
		}
		found = true
		eventually(t, 20*time.Second, "the replica's events", func() (err error) {
			if bySource, err = events(); err != nil {
				return err
			}
			for src, acts := range bySource {
				all := strings.Join(acts, "\n")
				if src != me && strings.Contains(all, "MUTATION message received from /"+me) && strings.Contains(all, "Appending to commitlog") {
					return nil
				}
			}
			return fmt.Errorf("events by source %q", bySource)
		})
	}
	if !found {
		t.Fatal("every one of 60 keys was written on node1 itself")
	}

	needPythonDriver(t)
	traces := runTraceScript(t, me, tc.native, "trcpy", 2)
	for _, tr := range traces {
		if tr.Coordinator != me || tr.Duration == nil {
			t.Fatalf("trace of %q: %+v", tr.Query, tr)
		}
		if a := tr.activities(me); !strings.Contains(a, "Sending ") || !strings.Contains(a, "Processing response from /") {
			t.Fatalf("the coordinator's events of %q:\n%s", tr.Query, a)
		}
	}
}
