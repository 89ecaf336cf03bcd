package lincheck

import (
	"context"
	"flag"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
)

// memRegisters are registers in memory, each operation atomic under one
// lock, with a bug to inject: the system under test of the checker's own
// tests.
type memRegisters struct {
	bug  string
	mu   sync.Mutex
	vals map[int]Value
	prev map[int]Value // each register's value before its last write
}

// memClient is one client of memRegisters, with its own randomness.
type memClient struct {
	r   *memRegisters
	rnd *rand.Rand
}

func (c *memClient) Do(_ context.Context, in Input) (Output, Outcome, error) {
	r := c.r
	r.mu.Lock()
	defer r.mu.Unlock()
	time.Sleep(time.Duration(c.rnd.IntN(20)) * time.Microsecond) // let the clients overlap
	s := r.vals[in.Key]
	if in.Kind == Read {
		if r.bug == "stale reads" && c.rnd.IntN(4) == 0 {
			return Output{Current: r.prev[in.Key]}, Definite, nil
		}
		return Output{Current: s}, Definite, nil
	}
	ok, next := holds(s, in)
	// Faults: an operation that times out before or after taking effect,
	// one refused before it runs.
	switch x := c.rnd.IntN(20); {
	case x == 0:
		return Output{}, Indefinite, nil
	case x == 1:
		return Output{}, Refused, nil
	case x == 2 && ok:
		r.prev[in.Key], r.vals[in.Key] = s, next
		return Output{}, Indefinite, nil
	case x == 3 && ok && r.bug == "refused yet applied":
		r.prev[in.Key], r.vals[in.Key] = s, next
		return Output{}, Refused, nil
	}
	if !ok {
		return Output{Current: s}, Definite, nil
	}
	r.prev[in.Key], r.vals[in.Key] = s, next
	return Output{Applied: true}, Definite, nil
}

// runMem runs the workload against memRegisters with bug for n
// operations and checks the history.
func runMem(t *testing.T, bug string, seed uint64, n int) Result {
	t.Helper()
	r := &memRegisters{bug: bug, vals: map[int]Value{}, prev: map[int]Value{}}
	var clients []Client
	for i := range 4 {
		clients = append(clients, &memClient{r: r, rnd: rand.New(rand.NewPCG(seed, uint64(100+i)))})
	}
	start := time.Now()
	h := NewHistory(func() int64 { return int64(time.Since(start)) })
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for h.Counts().Total() < n {
			time.Sleep(time.Millisecond)
		}
		cancel()
	}()
	w := Workload{Keys: []int{1, 2}, Levels: []string{"ANY", "QUORUM"}, Seed: seed}
	if err := w.Run(ctx, clients, h); err != nil {
		t.Fatal(err)
	}
	ops, err := h.Operations()
	if err != nil {
		t.Fatal(err)
	}
	res, err := Check(ops, time.Minute, filepath.Join(t.TempDir(), "history.html"))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s, seed %d: %d operations (%d unknown), %v in %s; %v", bug, seed, res.Ops, res.Unknown, res.Verdict, res.Took, h.Counts())
	return res
}

var recheck = flag.String("lincheck.history", "", "TestRecheck: a history written by WriteOperations (a failed run's history-N.json) to check again")

// TestRecheck checks a saved history again, writing its visualization
// and listing beside the test's output.
func TestRecheck(t *testing.T) {
	if *recheck == "" {
		t.Skip("give -lincheck.history=FILE")
	}
	ops, err := ReadOperations(*recheck)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Check(ops, 0, strings.TrimSuffix(*recheck, ".json")+"-recheck.html")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d operations (%d unknown): %v in %s; %s %s", res.Ops, res.Unknown, res.Verdict, res.Took, res.Visualization, res.Listing)
}

// TestWorkloadOnRegisters runs the whole pipeline, workload, history and
// checker, on atomic registers (whose timeouts take effect or not, and
// whose refusals do not): every history is linearizable.
func TestWorkloadOnRegisters(t *testing.T) {
	for seed := range uint64(3) {
		if res := runMem(t, "", seed, 600); res.Verdict != porcupine.Ok {
			t.Errorf("seed %d: atomic registers judged %v", seed, res.Verdict)
		}
	}
}

// TestWorkloadFindsBugs runs the pipeline on registers with a bug: the
// checker must find a violation, and write its visualization.
func TestWorkloadFindsBugs(t *testing.T) {
	for _, bug := range []string{"stale reads", "refused yet applied"} {
		t.Run(bug, func(t *testing.T) {
			res := runMem(t, bug, 1, 600)
			if res.Verdict != porcupine.Illegal {
				t.Fatalf("%s judged %v", bug, res.Verdict)
			}
			b, err := os.ReadFile(res.Visualization)
			if err != nil || !strings.Contains(string(b), "<html") {
				t.Errorf("visualization %s: %v", res.Visualization, err)
			}
			b, err = os.ReadFile(res.Listing)
			if err != nil || !strings.Contains(string(b), "stuck at") {
				t.Errorf("listing %s: %v\n%s", res.Listing, err, b)
			}
			// The history saved is the one checked: checked again, it is
			// still not linearizable.
			ops, err := ReadOperations(res.History)
			if err != nil {
				t.Fatal(err)
			}
			if len(ops) != res.Ops || porcupine.CheckOperations(Model, ops) {
				t.Errorf("%s: %d operations (%d checked), linearizable when read back", res.History, len(ops), res.Ops)
			}
		})
	}
}
