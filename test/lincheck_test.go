package test

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/gocql/gocql"

	"github.com/cqld/cqld/config"
	"github.com/cqld/cqld/internal/lincheck"
)

var (
	linDuration = flag.Duration("cqld.lin.duration", 0, "TestLinearizableLWT: how long the clients run, in histories of -cqld.lin.history (default 21s)")
	linHistory  = flag.Duration("cqld.lin.history", 7*time.Second, "TestLinearizableLWT: the length of one history, each on fresh keys and checked on its own")
	linDelay    = flag.Duration("cqld.lin.delay", 2*time.Millisecond, "TestLinearizableLWT: the nodes' internode_injected_delay")
	linVariant  = flag.String("cqld.lin.variant", "", "TestLinearizableLWT: the nodes' paxos_variant (default: the configuration's)")
	linSeed     = flag.Uint64("cqld.lin.seed", 0, "TestLinearizableLWT: seed of the workload and the fault schedule (0: from the clock; logged)")
)

// linCheckTimeout bounds the checker's search on one history; a history
// it cannot decide in time counts as Unknown, which fails nothing by
// itself.
const linCheckTimeout = 2 * time.Minute

// linRun is one linearizability run: a three-node RF 3 cluster, clients
// pinned to coordinators, a fault schedule.
type linRun struct {
	t       *testing.T
	tc      *testCluster
	seed    uint64
	clients int
	keys    int
	levels  []string
	faults  []lincheck.FaultKind
	// length is one history's.
	length time.Duration
	// until, when set, ends the run at the first history it is true for.
	until func(lincheck.Result) bool
	gocql []*lincheck.GocqlClient
}

// linSummary is what a run checked.
type linSummary struct {
	histories, ops, unknown int
	// writes counts the conditional writes that ended definitely.
	writes   int
	verdicts map[porcupine.CheckResult]int
	checking time.Duration
}

// TestLinearizableLWT runs concurrent clients, each through its own
// coordinator, doing conditional writes (INSERT IF NOT EXISTS, UPDATE
// and DELETE IF v = ?, committed at ANY, ONE or QUORUM) and SERIAL reads
// on a few keys of a three-node RF 3 cluster, while a schedule drawn from
// a logged seed kills (-9) and restarts nodes, pauses (SIGSTOP) and
// resumes them, and cuts them off from the others (the internode fault
// seam) and heals them. porcupine must find every history linearizable; a
// violation writes its visualization and fails. -cqld.lin.duration runs
// it longer, -cqld.lin.seed replays a schedule, -cqld.lin.delay sets the
// injected internode delay, -cqld.lin.variant the Paxos variant.
func TestLinearizableLWT(t *testing.T) {
	if testing.Short() {
		t.Skip("runs three cqld processes")
	}
	r := newLinRun(t, nil)
	d := *linDuration
	if d == 0 {
		d = 21 * time.Second
	}
	s := r.run(d)
	if s.verdicts[porcupine.Ok] == 0 || s.writes == 0 {
		t.Errorf("nothing was checked: verdicts %v, %d conditional writes answered", s.verdicts, s.writes)
	}
}

// newLinRun starts the cluster (configure adjusts each node's
// configuration) and its schema.
func newLinRun(t *testing.T, configure func(*config.Config)) *linRun {
	seed := *linSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (replay with -cqld.lin.seed=%d)", seed, seed)
	tc := startClusterWith(t, 3, func(c *config.Config) {
		// Wide enough windows between the rounds of a transaction for
		// the faults to land in them.
		c.InternodeInjectedDelay = config.Duration{Duration: *linDelay}
		if *linVariant != "" {
			c.PaxosVariant = *linVariant
		}
		if configure != nil {
			configure(c)
		}
	})
	// The setup's sessions are closed once it is done: their drivers
	// would log every kill of a node.
	s := tc.session(0, gocql.Quorum)
	defer s.Close()
	for _, q := range []string{
		`CREATE KEYSPACE lin WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}`,
		`CREATE TABLE lin.r (k int PRIMARY KEY, v bigint)`,
	} {
		if err := s.Query(q).Exec(); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	for i := range tc.nodes {
		si := tc.single(i, gocql.All)
		defer si.Close()
		eventually(t, 30*time.Second, fmt.Sprintf("node%d seeing every replica up", i+1), func() error {
			return si.Query(`INSERT INTO lin.r (k, v) VALUES (-1, -1)`).Exec()
		})
	}
	return &linRun{
		t: t, tc: tc, seed: seed, clients: 6, keys: 3, length: *linHistory,
		levels: []string{"ANY", "ONE", "QUORUM"},
		faults: []lincheck.FaultKind{lincheck.Kill, lincheck.Pause, lincheck.Isolate},
	}
}

// linSession connects a client to node i alone: every request it sends
// is coordinated there. No retries (a retried conditional write is two
// operations), a timeout above the server's, and quick reconnection
// after a node comes back.
func (r *linRun) linSession(i int) *gocql.Session {
	tc := r.tc
	c := gocql.NewCluster(tc.nodes[i].addr)
	c.Port = tc.native
	c.Timeout = 4 * time.Second
	c.ConnectTimeout = 2 * time.Second
	c.Consistency = gocql.Quorum
	c.SerialConsistency = gocql.Serial
	c.RetryPolicy = &gocql.SimpleRetryPolicy{NumRetries: 0}
	c.DisableSkipMetadata = true
	c.ReconnectInterval = 500 * time.Millisecond
	c.DisableInitialHostLookup = true
	c.HostFilter = gocql.WhiteListHostFilter(tc.nodes[i].addr)
	c.Logger = log.New(io.Discard, "", 0) // it reports every failed reconnection to a node down
	s, err := c.CreateSession()
	if err != nil {
		r.t.Fatalf("connect to node%d alone: %v", i+1, err)
	}
	r.t.Cleanup(s.Close)
	return s
}

// run runs histories of -cqld.lin.history until d has passed (or until
// says stop), checking each, and fails the test on a violation.
func (r *linRun) run(d time.Duration) linSummary {
	t := r.t
	var clients []lincheck.Client
	r.gocql = nil
	for i := range r.clients {
		c := lincheck.NewGocqlClient(r.linSession(i%len(r.tc.nodes)), "lin.r", gocql.Serial)
		r.gocql = append(r.gocql, c)
		clients = append(clients, c)
	}
	sum := linSummary{verdicts: map[porcupine.CheckResult]int{}}
	start := time.Now()
	for h := 0; time.Since(start) < d; h++ {
		length := min(r.length, d-time.Since(start))
		res, counts := r.history(h, clients, length)
		sum.histories++
		sum.ops += res.Ops
		sum.unknown += res.Unknown
		sum.verdicts[res.Verdict]++
		sum.checking += res.Took
		for _, k := range []lincheck.Kind{lincheck.Insert, lincheck.CAS, lincheck.Delete} {
			sum.writes += counts[k][lincheck.Definite]
		}
		t.Logf("history %d: %d operations (%d indefinite writes) over %s: %v, checked in %s; %s",
			h, res.Ops, res.Unknown, length.Round(time.Millisecond), res.Verdict, res.Took.Round(time.Millisecond), formatCounts(counts))
		failures := map[string]int{}
		for _, c := range r.gocql {
			for k, v := range c.Failures() {
				failures[k] += v
			}
		}
		if len(failures) > 0 {
			t.Logf("history %d: failures %v", h, failures)
		}
		t.Logf("history %d: Paxos since each node's last start: %s", h, r.casMetrics())
		if res.Verdict == porcupine.Illegal {
			r.keepLogs()
		}
		if res.Verdict == porcupine.Illegal && r.until == nil {
			t.Errorf("history %d is not linearizable (keys %v): porcupine's visualization is %s, the operations are listed in %s, and saved in %s (go test ./internal/lincheck -run TestRecheck -lincheck.history=FILE checks them again)",
				h, res.Keys, res.Visualization, res.Listing, res.History)
		}
		if r.until != nil && r.until(res) {
			break
		}
	}
	t.Logf("%d histories, %d operations (%d indefinite writes) in %s; verdicts %v; checking took %s",
		sum.histories, sum.ops, sum.unknown, time.Since(start).Round(time.Second), sum.verdicts, sum.checking.Round(time.Millisecond))
	return sum
}

// history runs the clients on fresh keys for length while the faults of
// a schedule drawn for it happen, and checks what they did.
func (r *linRun) history(h int, clients []lincheck.Client, length time.Duration) (lincheck.Result, lincheck.Counts) {
	t := r.t
	seed := r.seed + uint64(h)
	w := lincheck.Workload{Levels: r.levels, Seed: seed, Backoff: 20 * time.Millisecond}
	for k := range r.keys {
		w.Keys = append(w.Keys, h*100+k)
	}
	sched := lincheck.NewSchedule(seed, length, lincheck.ScheduleOptions{
		Nodes: len(r.tc.nodes), Kinds: r.faults, Quiet: time.Second, Fault: 2 * time.Second,
	})
	t.Logf("history %d: faults %v", h, sched)

	began := time.Now()
	hist := lincheck.NewHistory(func() int64 { return int64(time.Since(began)) })
	ctx, cancel := context.WithTimeout(context.Background(), length)
	defer cancel()
	var wg sync.WaitGroup
	var runErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		runErr = w.Run(ctx, clients, hist)
	}()
	err := sched.Run(ctx, linInjector{r.tc}, lincheck.Sleep, func(f string, a ...any) {
		t.Logf("%6.2fs "+f, append([]any{time.Since(began).Seconds()}, a...)...)
	})
	<-ctx.Done()
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if runErr != nil {
		t.Fatalf("history %d: %v", h, runErr)
	}
	ops, err := hist.Operations()
	if err != nil {
		t.Fatal(err)
	}
	// The search is exponential in the indefinite writes on one key in
	// the worst case; most histories take milliseconds, one with 30
	// indefinite writes on a key has taken a minute and a half.
	res, err := lincheck.Check(ops, linCheckTimeout, filepath.Join(r.outputDir(), fmt.Sprintf("history-%d.html", h)))
	if err != nil {
		t.Fatal(err)
	}
	return res, hist.Counts()
}

// outputDir is where a violation's visualization goes: the test's
// artifact directory with -artifacts or when the violation is expected
// (then it goes with the test unless -artifacts), otherwise a directory
// kept after the test.
func (r *linRun) outputDir() string {
	if f := flag.Lookup("test.artifacts"); r.until != nil || f != nil && f.Value.String() == "true" {
		return r.t.ArtifactDir()
	}
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("cqld-lincheck-%d", r.seed))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		r.t.Fatal(err)
	}
	return dir
}

// casMetrics sums the nodes' cqld_cas_* counters that show which paths
// of the protocol the run took.
func (r *linRun) casMetrics() string {
	var parts []string
	for _, m := range []struct{ name, label, show string }{
		{"cqld_cas_repeats_total", `outcome="chosen"`, "repeat proposals chosen"},
		{"cqld_cas_repeats_total", `outcome="refused"`, "refused"},
		{"cqld_cas_repeats_total", `outcome="unknown"`, "unknown"},
		{"cqld_cas_unfinished_commits_total", "", "proposals found in progress"},
		{"cqld_cas_reproposals_total", "", "re-proposed"},
		{"cqld_cas_contended_total", "", "rounds lost to contention"},
		{"cqld_cas_timeouts_total", "", "timeouts"},
	} {
		sum := 0.0
		for i := range r.tc.nodes {
			var labels []string
			if m.label != "" {
				labels = append(labels, m.label)
			}
			sum += r.tc.metric(i, m.name, labels...)
		}
		parts = append(parts, fmt.Sprintf("%s %.0f", m.show, sum))
	}
	return strings.Join(parts, ", ")
}

// keepLogs copies the nodes' logs since their last start beside a
// violation's files.
func (r *linRun) keepLogs() {
	for _, nd := range r.tc.nodes {
		if nd.log == nil {
			continue
		}
		err := os.WriteFile(filepath.Join(r.outputDir(), fmt.Sprintf("node%d.log", nd.index)), []byte(nd.log.String()), 0o644)
		if err != nil {
			r.t.Logf("keep node%d's log: %v", nd.index, err)
		}
	}
}

func formatCounts(c lincheck.Counts) string {
	var parts []string
	for _, k := range []lincheck.Kind{lincheck.Read, lincheck.Insert, lincheck.CAS, lincheck.Delete} {
		v := c[k]
		parts = append(parts, fmt.Sprintf("%v %d/%d/%d", k, v[lincheck.Definite], v[lincheck.Indefinite], v[lincheck.Refused]))
	}
	return strings.Join(parts, ", ") + " (definite/indefinite/refused)"
}

// linInjector applies a schedule's faults to the cluster's processes.
type linInjector struct{ tc *testCluster }

var _ lincheck.Injector = linInjector{}

func (l linInjector) Kill(i int) error {
	l.tc.stop(l.tc.nodes[i], syscall.SIGKILL)
	return nil
}

func (l linInjector) Restart(i int) error {
	l.tc.start(l.tc.nodes[i])
	return nil
}

func (l linInjector) Pause(i int) error  { return l.signal(i, syscall.SIGSTOP) }
func (l linInjector) Resume(i int) error { return l.signal(i, syscall.SIGCONT) }

func (l linInjector) signal(i int, sig syscall.Signal) error {
	if err := l.tc.nodes[i].cmd.Process.Signal(sig); err != nil {
		return fmt.Errorf("signal node%d: %w", i+1, err)
	}
	return nil
}

// Isolate cuts node i off from the others through the internode fault
// seam; its clients still reach it.
func (l linInjector) Isolate(i int) error {
	l.tc.partition(i)
	return nil
}

func (l linInjector) Heal(i int) error {
	l.tc.heal(i)
	return nil
}

// TestLinearizabilityCatchesBrokenPaxos runs the clients of
// TestLinearizableLWT, committing at ANY, against a Paxos that does not
// finish the proposals it finds in progress (paxos_unsafe_skip_in_progress,
// test only): a write answered once a quorum accepted it is lost when
// the next round reads the data before its commit arrived. The checker
// must find a history that is not linearizable; the same run with the
// key off finds none (TestLinearizableLWT).
func TestLinearizabilityCatchesBrokenPaxos(t *testing.T) {
	if testing.Short() {
		t.Skip("runs three cqld processes")
	}
	r := newLinRun(t, func(c *config.Config) {
		c.PaxosUnsafeSkipInProgress = true
		// A commit in flight for a one-way delay: room for the next
		// round to read before it lands.
		c.InternodeInjectedDelay = config.Duration{Duration: 10 * time.Millisecond}
	})
	r.levels = []string{"ANY"}
	r.faults = []lincheck.FaultKind{lincheck.Kill, lincheck.Pause}
	// Short histories: a violation comes within seconds, and the fewer
	// operations on a key, the quicker the checker decides.
	r.length = 4 * time.Second
	r.until = func(res lincheck.Result) bool { return res.Verdict == porcupine.Illegal }
	s := r.run(60 * time.Second)
	if s.verdicts[porcupine.Illegal] == 0 {
		t.Fatalf("no violation found in %d histories of Paxos without its in-progress step (%d operations)", s.histories, s.ops)
	}
}
