package test

import (
	"errors"
	"fmt"
	"math/rand"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gocql/gocql"

	"github.com/cqld/cqld/config"
)

// TestClusterModel runs the randomized model test (model_test.go) on a
// three-node cluster: the model keyspace has replication factor 3, every
// statement goes at QUORUM through a node drawn at random among those up,
// and between operations nodes are killed -9: some stay down for a
// while (the others hold them down, writes go on to two replicas and to
// hints), some are restarted at once (their peers may never notice). Every
// read, at QUORUM, must agree with the model, so a node that missed
// writes is reconciled and repaired by the reads that meet it.
//
//	go test -count=1 -run TestClusterModel -v ./test/ -args -model.seed=42 -model.runs=1 -model.ops=600
//
// -model.seed, -model.runs and -model.ops are TestModel's flags (defaults
// here: 1 schema of 150 operations, about half a minute); no shrinking: a failure reports the
// operations up to it and the faults between them. Purges (the node's own
// tombstone purge, run in the test's process for TestModel) are left out.
func TestClusterModel(t *testing.T) {
	if testing.Short() {
		t.Skip("runs three cqld processes")
	}
	seed := *modelSeedFlag
	switch {
	case seed != 0:
	case os.Getenv("CI") != "":
		seed = 20261206
	default:
		seed = time.Now().UnixNano() % 1000000000
	}
	nops, runs := *modelOpsFlag, *modelRunsFlag
	if nops <= 0 {
		nops = 150
	}
	if runs <= 0 {
		runs = 1
	}
	t.Logf("seed %d, %d schemas of %d operations (rerun with -args -model.seed=%d)", seed, runs, nops, seed)
	start := time.Now()
	env := newClusterModelEnv(t, seed)
	t.Logf("cluster up in %v", time.Since(start).Round(time.Millisecond))
	for i := 0; i < runs; i++ {
		s := seed + int64(i)
		t.Run(fmt.Sprintf("seed=%d", s), func(t *testing.T) {
			// The faults are drawn from the run's seed too, so that
			// -model.seed=s -model.runs=1 replays them.
			env.t, env.rng = t, rand.New(rand.NewSource(s))
			rng := rand.New(rand.NewSource(s))
			r := &modelRun{env: env, seed: s, s: genSchema(rng), every: max(1, *modelCheckFlag), test: "TestClusterModel"}
			var ops []*mop
			for _, o := range genOps(rng, r.s, nops) {
				if o.kind != oPurge {
					ops = append(ops, o)
				}
			}
			t.Logf("seed %d: %s", s, r.s.createCQL("t"))
			start := time.Now()
			f := r.execute(ops, true, nil)
			t.Logf("faults: %s", strings.Join(env.faults, "; "))
			env.faults, env.ops = nil, 0
			if f != nil {
				failing := ops
				if f.at >= 0 {
					failing = ops[:f.at+1]
				}
				t.Fatalf("%s", r.report(failing, f, nops))
			}
			t.Logf("seed %d: %d statements, %d reads compared (%d rows) in %v", s, r.stmts, r.reads, r.rows,
				time.Since(start).Round(time.Millisecond))
		})
	}
}

// clusterModelEnv is the model's target on a three-node cluster, with
// nodes killed between operations.
type clusterModelEnv struct {
	t        *testing.T
	tc       *testCluster
	rng      *rand.Rand
	sessions []*gocql.Session // by node; nil until used, and while down
	down     int              // the node killed and kept down, or -1
	downFor  int              // operations it stays down yet
	table    string           // the table being run
	ops      int              // operations so far
	faults   []string         // what was done between operations, for a report
}

var _ modelTarget = (*clusterModelEnv)(nil)

func newClusterModelEnv(t *testing.T, seed int64) *clusterModelEnv {
	tc := newTestCluster(t, 3)
	for _, nd := range tc.nodes {
		// A node killed -9 keeps what it acknowledged; in periodic mode
		// a QUORUM write could live on one replica alone.
		tc.reconfigure(nd, func(c *config.Config) { c.CommitlogSync = config.Default().CommitlogSync })
		tc.start(nd)
	}
	e := &clusterModelEnv{t: t, tc: tc, rng: rand.New(rand.NewSource(seed)), sessions: make([]*gocql.Session, 3), down: -1}
	t.Cleanup(func() {
		for _, s := range e.sessions {
			if s != nil {
				s.Close()
			}
		}
	})
	s := tc.single(0, gocql.Quorum)
	for _, q := range []string{
		`CREATE KEYSPACE model WITH replication = ` + e.replication(),
		`CREATE TABLE model.probe (k int PRIMARY KEY)`,
	} {
		if err := s.Query(q).Exec(); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if err := e.awaitAll(); err != nil {
		t.Fatal(err)
	}
	return e
}

func (e *clusterModelEnv) replication() string {
	return "{'class': 'SimpleStrategy', 'replication_factor': 3}"
}

// session implements modelTarget: a node drawn among those up.
func (e *clusterModelEnv) session() (*gocql.Session, error) {
	i := e.rng.Intn(3)
	for i == e.down {
		i = e.rng.Intn(3)
	}
	return e.sessionOf(i)
}

func (e *clusterModelEnv) sessionOf(i int) (*gocql.Session, error) {
	if e.sessions[i] != nil {
		return e.sessions[i], nil
	}
	c := e.tc.singleConfig(i)
	c.Keyspace = "model"
	c.Consistency = gocql.Quorum
	s, err := c.CreateSession()
	if err != nil {
		return nil, fmt.Errorf("connect to node%d: %w", i+1, err)
	}
	e.sessions[i] = s
	return s, nil
}

// created implements modelTarget: every node knows the table before the
// first operation goes through it.
func (e *clusterModelEnv) created(table string) error {
	e.table = table
	return e.awaitAll()
}

// before implements modelTarget: the faults between operations.
func (e *clusterModelEnv) before(o *mop) error {
	e.ops++
	switch {
	case e.down >= 0 && (e.downFor <= 0 || o.kind == oTruncate):
		// TRUNCATE is at ALL: every node must be up.
		return e.bringBack()
	case e.down >= 0:
		e.downFor--
	case e.rng.Intn(40) == 0:
		return e.killAndKeepDown(e.rng.Intn(3), 3+e.rng.Intn(20))
	}
	return nil
}

// restart implements modelTarget: a node killed -9 and restarted at once.
func (e *clusterModelEnv) restart() error {
	if e.down >= 0 {
		return e.bringBack()
	}
	i := e.rng.Intn(3)
	e.fault("before operation %d: node%d killed -9 and restarted", e.ops, i+1)
	e.kill(i)
	return e.startAgain(i)
}

// purge implements modelTarget: not on a cluster (TestClusterModel draws
// no purges).
func (e *clusterModelEnv) purge() error { return errors.New("no purge on a cluster") }

func (e *clusterModelEnv) fault(format string, args ...any) {
	e.faults = append(e.faults, fmt.Sprintf(format, args...))
}

func (e *clusterModelEnv) kill(i int) {
	if s := e.sessions[i]; s != nil {
		s.Close()
		e.sessions[i] = nil
	}
	e.tc.stop(e.tc.nodes[i], syscall.SIGKILL)
}

// killAndKeepDown kills node i and waits until the others hold it down,
// so that the operations while it is down go to the two others.
func (e *clusterModelEnv) killAndKeepDown(i, ops int) error {
	e.fault("before operation %d: node%d killed -9 for %d operations", e.ops, i+1, ops)
	e.kill(i)
	e.down, e.downFor = i, ops
	for j := range 3 {
		if j == i {
			continue
		}
		s, err := e.sessionOf(j)
		if err != nil {
			return err
		}
		if err := e.retry(fmt.Sprintf("node%d holding node%d down", j+1, i+1), func() error {
			err := s.Query(`INSERT INTO probe (k) VALUES (1)`).Consistency(gocql.All).Exec()
			if unavailable(err, 3, 2) {
				return nil
			}
			return fmt.Errorf("ALL answered %v", err)
		}); err != nil {
			return err
		}
	}
	return nil
}

// bringBack restarts the node kept down.
func (e *clusterModelEnv) bringBack() error {
	i := e.down
	e.down = -1
	e.fault("before operation %d: node%d restarted", e.ops, i+1)
	return e.startAgain(i)
}

// startAgain starts node i and waits until every node holds every other
// up and knows the table being run.
func (e *clusterModelEnv) startAgain(i int) error {
	e.tc.start(e.tc.nodes[i])
	return e.awaitAll()
}

// awaitAll waits until a write at ALL succeeds through every node (each
// holds the others up) and every node reads the table being run (it has
// applied the schema change that made it).
func (e *clusterModelEnv) awaitAll() error {
	for i := range 3 {
		s, err := e.sessionOf(i)
		if err != nil {
			return err
		}
		if err := e.retry(fmt.Sprintf("node%d seeing every node up", i+1), func() error {
			if err := s.Query(`INSERT INTO probe (k) VALUES (1)`).Consistency(gocql.All).Exec(); err != nil {
				return err
			}
			if e.table != "" {
				return s.Query(`SELECT * FROM ` + e.table + ` LIMIT 1`).Consistency(gocql.One).Exec()
			}
			return nil
		}); err != nil {
			return err
		}
	}
	return nil
}

// retry runs f until it succeeds, for at most a minute.
func (e *clusterModelEnv) retry(what string, f func() error) error {
	var err error
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if err = f(); err == nil {
			return nil
		}
	}
	return fmt.Errorf("%s: still %w after a minute", what, err)
}
