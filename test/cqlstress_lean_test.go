package test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cqld/cqld/server"
	"github.com/cqld/cqld/stress"
)

// leanRun runs cqlstress in the lean mode and checks that the server
// executed as many prepared statements meanwhile as the tool counts
// operations (none with -mode simple: then they are QUERY requests).
func leanRun(t *testing.T, node *server.Node, args ...string) stress.Step {
	t.Helper()
	before := served(t, node, "EXECUTE", "ok")
	r := runJSON(t, node, append(args, "-mode", "lean")...)
	if len(r.Steps) != 1 {
		t.Fatalf("%d steps", len(r.Steps))
	}
	st := r.Steps[0]
	want := st.Total.Ops
	if strings.Contains(strings.Join(args, " "), "-mode simple") {
		want = 0
	}
	if got := served(t, node, "EXECUTE", "ok") - before; got != want {
		t.Errorf("server executed %d prepared statements, want %d", got, want)
	}
	if st.ClientCPU == nil || st.ClientCPU.PerOp <= 0 {
		t.Errorf("client CPU %+v", st.ClientCPU)
	}
	return st
}

// TestLeanMode runs cqlstress's lean mode (cqlclient, one connection per
// thread, one request in flight on each) against a node: every built-in
// operation it supports, prepared and simple, on v4 and v5, bounded by
// count and by time; the reads check what the writes stored.
func TestLeanMode(t *testing.T) {
	node, _ := newNode(t)
	t.Run("update", func(t *testing.T) {
		st := leanRun(t, node, "update", "n=300", "-rate", "threads=4", "-pop", "seq=1..300")
		if tot := st.Total; tot.Ops != 300 || tot.Errors != 0 || tot.Rows != 300 {
			t.Fatalf("summary %+v", tot)
		}
	})
	t.Run("write then read", func(t *testing.T) {
		leanRun(t, node, "write", "n=200", "-rate", "threads=3", "-pop", "seq=1..200")
		tot := leanRun(t, node, "read", "n=200", "-rate", "threads=3", "-pop", "seq=1..200").Total
		if tot.Ops != 200 || tot.Rows != 200 || tot.NotFound != 0 || tot.Errors != 0 {
			t.Fatalf("summary %+v, want 200 reads each finding what write stored", tot)
		}
		// update gives C0 the value write gives it: reads still match.
		leanRun(t, node, "update", "n=50", "-pop", "seq=1..50")
		tot = leanRun(t, node, "read", "n=50", "-pop", "seq=1..50", "-mode", "protocolVersion=5").Total
		if tot.Rows != 50 || tot.Errors != 0 {
			t.Fatalf("v5 reads after update: %+v", tot)
		}
	})
	t.Run("counters simple", func(t *testing.T) {
		leanRun(t, node, "counter_write", "n=100", "-pop", "seq=1..10", "-mode", "simple")
		tot := leanRun(t, node, "counter_read", "n=50", "-pop", "seq=1..10").Total
		if tot.Rows != 50 || tot.Errors != 0 {
			t.Fatalf("summary %+v", tot)
		}
		var sum int64
		it := stressSession(t, node).Query(`SELECT "C0" FROM keyspace1.counter1`).Iter()
		for c0 := int64(0); it.Scan(&c0); {
			sum += c0
		}
		if err := it.Close(); err != nil {
			t.Fatal(err)
		}
		if sum != 100 {
			t.Errorf("C0 summed over counter1 = %d, want 100 after 100 increments", sum)
		}
	})
	t.Run("duration sweep", func(t *testing.T) {
		before := served(t, node, "EXECUTE", "ok")
		r := runJSON(t, node, "update", "duration=300ms", "-rate", "threads>=1", "threads<=2", "-mode", "lean")
		var ops int64
		for _, s := range r.Steps {
			if s.Total.Ops == 0 || s.Total.Errors != 0 {
				t.Errorf("%d threads: %+v", s.Threads, s.Total)
			}
			ops += s.Total.Ops
		}
		if got := served(t, node, "EXECUTE", "ok") - before; len(r.Steps) != 2 || got != ops {
			t.Errorf("%d steps, %d operations; the server answered %d", len(r.Steps), ops, got)
		}
	})
	t.Run("refused", func(t *testing.T) {
		code, out := run(t, node, "cas", "n=1", "-mode", "lean")
		if code != stress.ExitUsage || !strings.Contains(out, "-mode lean does not support cas") {
			t.Errorf("cas in the lean mode: exit %d\n%s", code, out)
		}
	})
}

// TestLeanModeTimeout: a node whose every fsync takes 250 ms, in batch
// mode, answers no write within the lean mode's 50 ms timeout; each
// operation fails as a client timeout (its connection closed and dialled
// again for the next), and the run ends by itself.
func TestLeanModeTimeout(t *testing.T) {
	cfg := testConfig(t, t.TempDir())
	cfg.CommitlogSync = "batch"
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	node, err := server.StartWith(cfg, nil, server.Options{FS: newSlowFS(nil, 150*time.Millisecond)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := stopNode(node); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	})
	// The schema first, with the default timeout: it waits for syncs too.
	runJSON(t, node, "update", "n=1")
	path := filepath.Join(t.TempDir(), "r.json")
	code, out := run(t, node, "update", "n=4", "-rate", "threads=2", "-mode", "lean", "timeout=50ms", "-json", path)
	if code != stress.ExitFailed {
		t.Fatalf("exit %d, want %d (errors beyond -max-errors)\n%s", code, stress.ExitFailed, out)
	}
	r, err := stress.ReadResult(path)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	st := r.Steps[0]
	if st.Total.Ops != 4 || st.Total.Errors != 4 || st.ErrorKinds["client_timeout"] != 4 {
		t.Errorf("summary %+v, errors by kind %v; want 4 client timeouts\n%s", st.Total, st.ErrorKinds, out)
	}
}
