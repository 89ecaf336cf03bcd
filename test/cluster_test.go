package test

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gocql/gocql"
	"gopkg.in/yaml.v3"

	"github.com/cqld/cqld/config"
)

// clusterNode is one cqld process of a test cluster, on its own loopback
// address (127.0.0.i) with the cluster's ports, as ccm runs Cassandra.
type clusterNode struct {
	index  int
	addr   string // rpc address = listen address
	native int
	config string // its cassandra.yaml
	cmd    *exec.Cmd
	log    *syncBuffer // the process's stderr, read while it runs
	done   chan struct{}
}

// testCluster is n cqld processes on 127.0.0.1..n sharing one native and
// one internode port, the first node their seed.
type testCluster struct {
	t       *testing.T
	dir     string // the nodes' directories
	nodes   []*clusterNode
	native  int
	storage int
	// metrics is every node's prometheus_port, where `cqld nodetool`
	// asks.
	metrics int
	// configure, when set, adjusts node i's configuration (its directory
	// is home) before add writes it.
	configure func(i int, c *config.Config, home string)
}

// startCluster starts n nodes one after another, each once the one
// before is NORMAL.
func startCluster(t *testing.T, n int) *testCluster {
	t.Helper()
	return startClusterWith(t, n, nil)
}

// startClusterWith is startCluster with each node's configuration passed
// through configure (when not nil) before it is written.
func startClusterWith(t *testing.T, n int, configure func(*config.Config)) *testCluster {
	t.Helper()
	tc := newTestCluster(t, n)
	for _, nd := range tc.nodes {
		if configure != nil {
			*nd = *tc.newNode(nd.index, filepath.Base(filepath.Dir(nd.config)), configure)
		}
		tc.start(nd)
		tc.waitNormal(nd)
	}
	return tc
}

// add starts node len(tc.nodes)+1 on 127.0.0.<that> and waits until it
// is NORMAL: a node joining a cluster with data has streamed its ranges
// by then.
func (tc *testCluster) add() *clusterNode {
	t := tc.t
	t.Helper()
	i := len(tc.nodes) + 1
	addr := fmt.Sprintf("127.0.0.%d", i)
	for _, p := range []int{tc.native, tc.storage, tc.metrics} {
		if !portFreeOn(addr, p) {
			t.Fatalf("port %d is taken on %s", p, addr)
		}
	}
	name := "node" + strconv.Itoa(i)
	home := filepath.Join(tc.dir, name)
	if err := os.MkdirAll(home, 0o755); err != nil {
		t.Fatal(err)
	}
	nd := tc.newNode(i, name, func(c *config.Config) {
		if tc.configure != nil {
			tc.configure(i, c, home)
		}
	})
	tc.nodes = append(tc.nodes, nd)
	tc.start(nd)
	tc.waitNormal(nd)
	return nd
}

// waitNormal waits until nd says it is NORMAL: a joining node serves
// clients a moment before the ring has it NORMAL.
func (tc *testCluster) waitNormal(nd *clusterNode) {
	tc.t.Helper()
	url := "http://" + net.JoinHostPort(nd.addr, strconv.Itoa(tc.metrics)) + "/nodetool/netstats"
	eventually(tc.t, 30*time.Second, fmt.Sprintf("node%d NORMAL", nd.index), func() error {
		resp, err := http.Get(url)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		var ns struct{ Mode string }
		if err := json.NewDecoder(resp.Body).Decode(&ns); err != nil {
			return err
		}
		if ns.Mode != "NORMAL" {
			return fmt.Errorf("mode %s", ns.Mode)
		}
		return nil
	})
}

// newTestCluster writes the configurations of n nodes and starts none.
func newTestCluster(t *testing.T, n int) *testCluster {
	t.Helper()
	native, storage, prom := freePort(t), freePort(t), freePort(t)
	for i := 1; i <= n; i++ {
		for _, p := range []int{native, storage, prom} {
			if !portFreeOn(fmt.Sprintf("127.0.0.%d", i), p) {
				t.Fatalf("port %d is taken on 127.0.0.%d", p, i)
			}
		}
	}
	tc := &testCluster{t: t, native: native, storage: storage, metrics: prom, dir: t.TempDir()}
	for i := 1; i <= n; i++ {
		tc.nodes = append(tc.nodes, tc.newNode(i, "node"+strconv.Itoa(i), nil))
	}
	t.Cleanup(func() {
		for _, nd := range tc.nodes {
			tc.stop(nd, syscall.SIGKILL)
		}
		if t.Failed() {
			for _, nd := range tc.nodes {
				t.Logf("node%d's log since its last start, last lines:\n%s", nd.index, nd.logTail(80))
			}
		}
	})
	return tc
}

// logTail is the last n lines nd's process logged since it last started.
func (nd *clusterNode) logTail(n int) string {
	if nd.log == nil {
		return "(never started)"
	}
	lines := strings.Split(strings.TrimRight(nd.log.String(), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// newNode writes the configuration of a node on 127.0.0.i, with the
// cluster's ports and node1 its seed, in the directory name, with mod
// applied; it does not start it.
func (tc *testCluster) newNode(i int, name string, mod func(*config.Config)) *clusterNode {
	t := tc.t
	t.Helper()
	addr := fmt.Sprintf("127.0.0.%d", i)
	home := filepath.Join(tc.dir, name)
	c := config.Default()
	c.ClusterName = "test cluster"
	c.ListenAddress, c.RPCAddress = addr, addr
	c.NativeTransportPort, c.StoragePort = tc.native, tc.storage
	c.PrometheusAddress, c.PrometheusPort = addr, tc.metrics
	c.InternodeFaultInjection = true // tc.partition, tc.heal
	c.NumTokens = 8
	c.DataFileDirectories = []string{filepath.Join(home, "data")}
	c.CommitlogDirectory = filepath.Join(home, "commitlog")
	c.SavedCachesDirectory = filepath.Join(home, "saved_caches")
	c.HintsDirectory = filepath.Join(home, "hints")
	c.CommitlogSync = "periodic"
	c.SeedProvider.Parameters = map[string]string{"seeds": fmt.Sprintf("127.0.0.1:%d", tc.storage)}
	// The corpus (udf.cql) and the function tests run user-defined
	// functions on every node.
	c.UserDefinedFunctionsEnabled, c.ScriptedUserDefinedFunctionsEnabled = true, true
	if mod != nil {
		mod(&c)
	}
	if err := os.MkdirAll(home, 0o755); err != nil {
		t.Fatal(err)
	}
	data, err := yaml.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	nd := &clusterNode{index: i, addr: addr, native: tc.native, config: filepath.Join(home, "cassandra.yaml")}
	if err := os.WriteFile(nd.config, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return nd
}

func portFreeOn(host string, port int) bool {
	l, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(port)))
	if err != nil {
		return false
	}
	l.Close()
	return true
}

// start starts nd's process and waits until it serves clients.
func (tc *testCluster) start(nd *clusterNode) {
	tc.t.Helper()
	tc.spawn(nd)
	tc.waitServing(nd)
}

// spawn starts nd's process.
func (tc *testCluster) spawn(nd *clusterNode) {
	t := tc.t
	t.Helper()
	nd.log = &syncBuffer{}
	nd.done = make(chan struct{})
	nd.cmd = exec.Command(cqldBinary(t), "-config", nd.config)
	nd.cmd.Stderr = nd.log
	if err := nd.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := nd.done
	cmd := nd.cmd
	go func() { _ = cmd.Wait(); close(done) }()
}

// waitServing waits until nd's process serves clients.
func (tc *testCluster) waitServing(nd *clusterNode) {
	t := tc.t
	t.Helper()
	done := nd.done
	for deadline := time.Now().Add(60 * time.Second); ; {
		if c, err := net.Dial("tcp", net.JoinHostPort(nd.addr, strconv.Itoa(nd.native))); err == nil {
			c.Close()
			return
		}
		select {
		case <-done:
			t.Fatalf("node%d exited at start:\n%s", nd.index, nd.logTail(200))
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("node%d does not serve clients:\n%s", nd.index, nd.logTail(200))
		}
	}
}

// stop signals nd's process and waits for it to exit.
func (tc *testCluster) stop(nd *clusterNode, sig syscall.Signal) {
	if nd.cmd == nil || nd.cmd.Process == nil {
		return
	}
	select {
	case <-nd.done:
		return
	default:
	}
	_ = nd.cmd.Process.Signal(sig)
	select {
	case <-nd.done:
	case <-time.After(30 * time.Second):
		_ = nd.cmd.Process.Kill()
		<-nd.done
	}
}

// ownsSum adds up the percentages of nodetool status's output.
func ownsSum(t *testing.T, out string) float64 {
	t.Helper()
	var sum float64
	for _, f := range strings.Fields(out) {
		if p, ok := strings.CutSuffix(f, "%"); ok {
			v, err := strconv.ParseFloat(p, 64)
			if err != nil {
				t.Fatalf("%q in nodetool status:\n%s", f, out)
			}
			sum += v
		}
	}
	return sum
}

// nodetool runs `cqld nodetool -h <node i> status` and returns its output.
func (tc *testCluster) nodetool(i int) string {
	tc.t.Helper()
	out, err := exec.Command(cqldBinary(tc.t), "nodetool", "-h", tc.nodes[i].addr, "-p", strconv.Itoa(tc.metrics), "status").CombinedOutput()
	if err != nil {
		tc.t.Fatalf("cqld nodetool: %v\n%s", err, out)
	}
	return string(out)
}

// session connects gocql to node i alone as contact point (it discovers
// the others).
func (tc *testCluster) session(i int, cl gocql.Consistency) *gocql.Session {
	t := tc.t
	t.Helper()
	c := gocql.NewCluster(tc.nodes[i].addr)
	c.Port = tc.native
	c.Timeout = 10 * time.Second
	c.ConnectTimeout = 5 * time.Second
	c.Consistency = cl
	c.PoolConfig.HostSelectionPolicy = gocql.TokenAwareHostPolicy(gocql.RoundRobinHostPolicy())
	s, err := c.CreateSession()
	if err != nil {
		t.Fatalf("connect to node%d: %v", i+1, err)
	}
	t.Cleanup(s.Close)
	return s
}

// single connects gocql to node i only, so every request is coordinated
// there.
func (tc *testCluster) single(i int, cl gocql.Consistency) *gocql.Session {
	t := tc.t
	t.Helper()
	c := tc.singleConfig(i)
	c.Consistency = cl
	s, err := c.CreateSession()
	if err != nil {
		t.Fatalf("connect to node%d alone: %v", i+1, err)
	}
	t.Cleanup(s.Close)
	return s
}

// singleConfig is gocql's configuration for a session with node i as its
// only host.
func (tc *testCluster) singleConfig(i int) *gocql.ClusterConfig {
	c := gocql.NewCluster(tc.nodes[i].addr)
	c.Port = tc.native
	c.Timeout = 10 * time.Second
	c.ConnectTimeout = 5 * time.Second
	c.DisableInitialHostLookup = true
	c.HostFilter = gocql.WhiteListHostFilter(tc.nodes[i].addr)
	// No ring refreshes: a refresh on another node's UP event left such a
	// session with no host for a minute (gocql v1.7.0).
	c.Events.DisableNodeStatusEvents = true
	c.Events.DisableTopologyEvents = true
	return c
}

// eventually retries f until it returns nil, for at most d.
func eventually(t *testing.T, d time.Duration, what string, f func() error) {
	t.Helper()
	var err error
	for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if err = f(); err == nil {
			return
		}
	}
	t.Fatalf("%s: still %v after %s", what, err, d)
}

// TestClusterOfThree runs three cqld processes on 127.0.0.1-3: every node
// sees the others in system.peers; a keyspace created through one node is
// on all; of two CREATE TABLEs of one name through two nodes at once one
// wins on every node; the Python and Node.js drivers discover the nodes
// from one and route to replicas; system.size_estimates lists on each
// node the ranges it is primary of; nodetool status prints the ownership as
// Cassandra's; concurrent counter increments through the three nodes all
// count; writes at QUORUM are read at QUORUM and at ONE through
// every node; data of an RF 1 keyspace spreads over the nodes and reads
// back whole from any of them; with a node killed, QUORUM still works and ALL
// answers UNAVAILABLE, and clients hear it DOWN and then UP; the node
// restarted gets what it missed (hints) and answers at ONE.
func TestClusterOfThree(t *testing.T) {
	if testing.Short() {
		t.Skip("runs three cqld processes")
	}
	tc := startCluster(t, 3)
	for i := range tc.nodes {
		s := tc.single(i, gocql.One)
		eventually(t, 30*time.Second, fmt.Sprintf("node%d's peers", i+1), func() error {
			var n int
			if err := s.Query(`SELECT count(*) FROM system.peers`).Scan(&n); err != nil {
				return err
			}
			if n != 2 {
				return fmt.Errorf("%d peers", n)
			}
			var tokens []string
			var rpc net.IP
			iter := s.Query(`SELECT rpc_address, tokens FROM system.peers`).Iter()
			for iter.Scan(&rpc, &tokens) {
				if rpc == nil || len(tokens) != 8 {
					return fmt.Errorf("peer %v with %d tokens", rpc, len(tokens))
				}
			}
			return iter.Close()
		})
	}

	// nodetool status as Cassandra's: with no user keyspace, the
	// ownership is system_traces' (RF 2), so 200% in all.
	if out := tc.nodetool(0); !strings.Contains(out, "Owns (effective)") || ownsSum(t, out) < 199 || ownsSum(t, out) > 201 {
		t.Errorf("nodetool status, no user keyspace: the effective ownerships do not sum to 200%%:\n%s", out)
	}

	s := tc.session(0, gocql.Quorum)
	for _, q := range []string{
		`CREATE KEYSPACE rf3 WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}`,
		`CREATE TABLE rf3.t (k int PRIMARY KEY, v text)`,
		`CREATE KEYSPACE rf1 WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}`,
		`CREATE TABLE rf1.t (k int PRIMARY KEY, v int)`,
	} {
		if err := s.Query(q).Exec(); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	// Schema changes are answered once applied on their coordinator; the
	// others apply them from the log right after.
	singles := make([]*gocql.Session, 3)
	for i := range tc.nodes {
		singles[i] = tc.single(i, gocql.One)
		eventually(t, 30*time.Second, fmt.Sprintf("node%d's schema", i+1), func() error {
			var n int
			return singles[i].Query(`SELECT count(*) FROM rf1.t`).Scan(&n)
		})
	}
	var versions []gocql.UUID
	for i := range tc.nodes {
		var v gocql.UUID
		if err := singles[i].Query(`SELECT schema_version FROM system.local`).Scan(&v); err != nil {
			t.Fatal(err)
		}
		versions = append(versions, v)
	}
	if versions[0] != versions[1] || versions[1] != versions[2] {
		t.Errorf("schema versions differ: %v", versions)
	}

	// Two CREATE TABLEs of one name at once through two nodes, the
	// columns' types differing: the log orders them, so one is created
	// and the other is answered AlreadyExists, and every node has the
	// winner's table.
	for round := 0; round < 4; round++ {
		name := fmt.Sprintf("rf3.race%d", round)
		types := []string{"int", "text"}
		errs := make([]error, 2)
		var wg sync.WaitGroup
		for i := range types {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = singles[i].Query(fmt.Sprintf(`CREATE TABLE %s (k int PRIMARY KEY, v %s)`, name, types[i])).Exec()
			}()
		}
		wg.Wait()
		var won string
		for i, err := range errs {
			var ae *gocql.RequestErrAlreadyExists
			switch {
			case err == nil && won == "":
				won = types[i]
			case err == nil:
				t.Fatalf("%s: both CREATE TABLEs succeeded", name)
			case !errors.As(err, &ae):
				t.Fatalf("%s through node%d: %v, want AlreadyExists", name, i+1, err)
			}
		}
		if won == "" {
			t.Fatalf("%s: neither CREATE TABLE succeeded: %v", name, errs)
		}
		_, table, _ := strings.Cut(name, ".")
		for i := range tc.nodes {
			eventually(t, 30*time.Second, fmt.Sprintf("node%d's %s", i+1, name), func() error {
				var typ string
				if err := singles[i].Query(`SELECT type FROM system_schema.columns WHERE keyspace_name = 'rf3' AND table_name = ? AND column_name = 'v'`, table).Scan(&typ); err != nil {
					return err
				}
				if typ != won {
					return fmt.Errorf("v is %s, the winner's is %s", typ, won)
				}
				return nil
			})
		}
	}

	// Every node sees the others up (gossip) before the writes.
	for i := range tc.nodes {
		eventually(t, 30*time.Second, fmt.Sprintf("node%d seeing every replica up", i+1), func() error {
			return singles[i].Query(`INSERT INTO rf3.t (k, v) VALUES (-1, 'all')`).Consistency(gocql.All).Exec()
		})
	}

	// Counters: concurrent increments of one counter through the three
	// coordinators at once are all counted (a leader replica applies each
	// delta and sends the others its result, as Cassandra's do).
	if err := s.Query(`CREATE TABLE rf3.c (k int PRIMARY KEY, n counter)`).Exec(); err != nil {
		t.Fatal(err)
	}
	const increments = 40
	var cwg sync.WaitGroup
	cerrs := make(chan error, len(singles))
	for i := range singles {
		cwg.Add(1)
		go func() {
			defer cwg.Done()
			for range increments {
				err := singles[i].Query(`UPDATE rf3.c SET n = n + 1 WHERE k = 1`).Consistency(gocql.Quorum).Exec()
				if err != nil {
					cerrs <- fmt.Errorf("increment through node%d: %w", i+1, err)
					return
				}
			}
		}()
	}
	cwg.Wait()
	close(cerrs)
	if err := <-cerrs; err != nil {
		t.Fatal(err)
	}
	for i, si := range singles {
		var n int64
		if err := si.Query(`SELECT n FROM rf3.c WHERE k = 1`).Consistency(gocql.All).Scan(&n); err != nil || n != increments*int64(len(singles)) {
			t.Fatalf("node%d: the counter at ALL is %d, %v; want %d", i+1, n, err, increments*len(singles))
		}
	}
	const rows = 60
	for k := 0; k < rows; k++ {
		if err := s.Query(`INSERT INTO rf3.t (k, v) VALUES (?, ?)`, k, fmt.Sprint("v", k)).Exec(); err != nil {
			t.Fatalf("write %d at QUORUM: %v", k, err)
		}
		if err := s.Query(`INSERT INTO rf1.t (k, v) VALUES (?, ?)`, k, k).Exec(); err != nil {
			t.Fatalf("write %d to rf1: %v", k, err)
		}
	}
	for i, si := range singles {
		// Every replica of rf3 holds every row: ONE through any node.
		for k := 0; k < rows; k++ {
			var v string
			if err := si.Query(`SELECT v FROM rf3.t WHERE k = ?`, k).Consistency(gocql.One).Scan(&v); err != nil || v != fmt.Sprint("v", k) {
				t.Fatalf("node%d: rf3 row %d at ONE: %q, %v", i+1, k, v, err)
			}
		}
		// rf1's rows are spread over the nodes; a range read gathers them.
		var n int
		if err := si.Query(`SELECT count(*) FROM rf1.t`).Scan(&n); err != nil || n != rows {
			t.Fatalf("node%d: count(*) of rf1.t = %d, %v; want %d", i+1, n, err, rows)
		}
	}
	// system.size_estimates on every node: the ranges it is the primary
	// replica of (ending at its own tokens, the wrapping one split at the
	// minimum token), whose partition counts at RF 1 add up, over the
	// nodes, to the table's rows.
	estimated := int64(0)
	for i, si := range singles {
		var tokens []string
		if err := si.Query(`SELECT tokens FROM system.local`).Scan(&tokens); err != nil {
			t.Fatal(err)
		}
		own := map[string]bool{"-9223372036854775808": true}
		for _, tok := range tokens {
			own[tok] = true
		}
		iter := si.Query(`SELECT range_end, partitions_count FROM system.size_estimates WHERE keyspace_name = 'rf1' AND table_name = 't'`).Iter()
		var end string
		var count int64
		ends := 0
		for iter.Scan(&end, &count) {
			if !own[end] {
				t.Errorf("node%d: size_estimates range ending at %s, not one of its tokens", i+1, end)
			}
			ends++
			estimated += count
		}
		if err := iter.Close(); err != nil || ends < len(tokens) {
			t.Errorf("node%d: %d size_estimates ranges for its %d tokens, %v", i+1, ends, len(tokens), err)
		}
	}
	if estimated != rows {
		t.Errorf("size_estimates of rf1.t add up to %d partitions over the nodes, want %d", estimated, rows)
	}

	// The Python and Node.js drivers, given node1 alone, discover the
	// three nodes and route by their own token maps: at RF 1 each request
	// goes to the one replica and no node forwards it.
	t.Run("python", func(t *testing.T) {
		needPythonDriver(t)
		runDriverScript(t, "drivers/python", debianPython, "cluster.py", tc.nodes[0].addr, strconv.Itoa(tc.native), "3", "ks_python_cluster", strconv.Itoa(tc.metrics))
	})
	t.Run("nodejs", func(t *testing.T) {
		needNodejsDriver(t)
		runDriverScript(t, nodejsDriverDir, "node", "cluster.js", tc.nodes[0].addr, strconv.Itoa(tc.native), "3", "ks_nodejs_cluster", strconv.Itoa(tc.metrics))
	})

	// nodetool status through node2: three nodes up and normal.
	if out := tc.nodetool(1); strings.Count(out, "UN  127.0.0.") != 3 {
		t.Errorf("nodetool status, all up:\n%s", out)
	}
	// rf1 and rf3 replicate differently: no effective ownership but for
	// one keyspace named, where RF 3 of three nodes is 100% each.
	if out := tc.nodetool(1); !strings.Contains(out, "Owns  ") || strings.Count(out, "  ?  ") != 3 ||
		!strings.Contains(out, "\nNote: Non-system keyspaces don't have the same replication settings, effective ownership information is meaningless\n") {
		t.Errorf("nodetool status, keyspaces replicated differently:\n%s", out)
	}
	if out, err := tc.nodetoolRun(1, "status", "rf3"); err != nil || strings.Count(out, "  100.0%  ") != 3 || !strings.Contains(out, "Owns (effective)") {
		t.Errorf("nodetool status rf3: %v\n%s", err, out)
	}
	if out, err := tc.nodetoolRun(1, "status", "nosuch"); err == nil || out != "\nError: The keyspace nosuch, does not exist\n" {
		t.Errorf("nodetool status nosuch: %v %q", err, out)
	}

	// Kill node3: QUORUM works, ALL is UNAVAILABLE once node1 sees it down,
	// and node1 tells its clients (STATUS_CHANGE DOWN, then UP when node3
	// is back).
	status := tc.nodeEvents(t, 0, "STATUS_CHANGE")
	tc.stop(tc.nodes[2], syscall.SIGKILL)
	waitEvent(t, status, "DOWN 127.0.0.3", 60*time.Second)
	s1 := singles[0]
	eventually(t, 60*time.Second, "node3 seen down", func() error {
		err := s1.Query(`INSERT INTO rf3.t (k, v) VALUES (1000, 'x')`).Consistency(gocql.All).Exec()
		var ua *gocql.RequestErrUnavailable
		if errors.As(err, &ua) {
			if ua.Required != 3 || ua.Alive != 2 {
				t.Errorf("UNAVAILABLE with required %d alive %d, want 3 and 2", ua.Required, ua.Alive)
			}
			return nil
		}
		return fmt.Errorf("ALL answered %v", err)
	})
	if out := tc.nodetool(0); !strings.Contains(out, "DN  127.0.0.3") || strings.Count(out, "UN  127.0.0.") != 2 {
		t.Errorf("nodetool status, node3 down:\n%s", out)
	}
	// TRUNCATE needs every replica: with one down it answers as
	// Cassandra's TruncateStatement does, TRUNCATE_ERROR.
	var re gocql.RequestError
	if err := s1.Query(`TRUNCATE rf3.race0`).Exec(); !errors.As(err, &re) || re.Code() != gocql.ErrCodeTruncate ||
		re.Message() != "Error during truncate: Cannot achieve consistency level ALL" {
		t.Errorf("TRUNCATE with node3 down: %v", err)
	}
	for k := rows; k < 2*rows; k++ {
		if err := s1.Query(`INSERT INTO rf3.t (k, v) VALUES (?, ?)`, k, fmt.Sprint("v", k)).Consistency(gocql.Quorum).Exec(); err != nil {
			t.Fatalf("write %d at QUORUM with node3 down: %v", k, err)
		}
		var v string
		if err := s1.Query(`SELECT v FROM rf3.t WHERE k = ?`, k).Consistency(gocql.Quorum).Scan(&v); err != nil || v != fmt.Sprint("v", k) {
			t.Fatalf("read %d at QUORUM with node3 down: %q, %v", k, v, err)
		}
	}

	// node3 back: the writes it missed reach it as hints.
	tc.start(tc.nodes[2])
	waitEvent(t, status, "UP 127.0.0.3", 60*time.Second)
	s3 := tc.single(2, gocql.One)
	eventually(t, 60*time.Second, "node3 holding the writes it missed", func() error {
		for k := rows; k < 2*rows; k++ {
			var v string
			if err := s3.Query(`SELECT v FROM rf3.t WHERE k = ?`, k).Consistency(gocql.One).Scan(&v); err != nil {
				return err
			}
			if v != fmt.Sprint("v", k) {
				return fmt.Errorf("row %d: %q", k, v)
			}
		}
		return nil
	})
}

// TestCQLCorpusOnCluster runs the whole CQL corpus on a three-node
// cluster, each file's keyspace with replication factor 3 (every node
// holds everything) at QUORUM and at ALL, and then 1 (the data spread over
// the nodes), through a driver given one node as contact point, which
// sends each statement to any node: every statement must answer as on one
// node.
func TestCQLCorpusOnCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("runs three cqld processes")
	}
	files, err := filepath.Glob("testdata/cql/*.cql")
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	if len(files) == 0 {
		t.Fatal("no testdata/cql/*.cql files")
	}
	// Every file runs, the conditional writes of lwt.cql and udt.cql
	// included: the corpus sends its statements as unprepared queries,
	// which drivers cannot route, so they reach coordinators that are not
	// their partition's replicas too, and run Paxos among the replicas.
	// The levels at which a statement reads what the one before it wrote,
	// whichever coordinator each goes through: at RF 3 QUORUM (as TWO and
	// LOCAL_QUORUM: two replicas of three) and ALL (as THREE); at RF 1
	// QUORUM, which is ONE and ALL there. ONE at RF 3 promises no such
	// thing, in Cassandra either: a write acknowledged by one replica may
	// not have reached the one the next read asks.
	//
	// The files about schema alone (DDL, keyspaces, DESCRIBE, functions)
	// run at the first level only: their statements go through the
	// metadata log, or read what it holds, whatever the level and the
	// replication factor.
	schemaOnly := map[string]bool{"ddl.cql": true, "keyspaces.cql": true, "describes.cql": true, "udf.cql": true}
	var dataFiles []string
	for _, f := range files {
		if !schemaOnly[filepath.Base(f)] {
			dataFiles = append(dataFiles, f)
		}
	}
	tc := startCluster(t, 3)
	for i, c := range []struct {
		name string
		rf   int
		cl   gocql.Consistency
	}{{"rf3", 3, gocql.Quorum}, {"rf3-all", 3, gocql.All}, {"rf1", 1, gocql.Quorum}} {
		files := files
		if i > 0 {
			files = dataFiles
		}
		t.Run(c.name, func(t *testing.T) {
			runCorpus(t, files, false, func(t *testing.T, ks string) corpusSession {
				return gocqlCorpusSession{tc.keyspaceSessionAt(t, ks, c.rf, c.cl)}
			})
		})
	}
}

// keyspaceSession creates keyspace ks afresh with replication factor rf
// and connects to it (through node1, discovering the others).
func (tc *testCluster) keyspaceSession(t *testing.T, ks string, rf int) *gocql.Session {
	t.Helper()
	return tc.keyspaceSessionAt(t, ks, rf, gocql.Quorum)
}

// keyspaceSessionAt is keyspaceSession whose requests go at level cl. The
// level is the session's from its start: gocql's SetConsistency on a live
// session races with its pool's connections.
func (tc *testCluster) keyspaceSessionAt(t *testing.T, ks string, rf int, cl gocql.Consistency) *gocql.Session {
	t.Helper()
	c := gocql.NewCluster(tc.nodes[0].addr)
	c.Port = tc.native
	c.Timeout = 10 * time.Second
	c.Consistency = gocql.Quorum
	s, err := c.CreateSession()
	if err != nil {
		t.Fatal(err)
	}
	err = s.Query(`DROP KEYSPACE IF EXISTS ` + ks).Exec()
	if err == nil {
		err = s.Query(fmt.Sprintf(`CREATE KEYSPACE %s WITH replication = {'class': 'SimpleStrategy', 'replication_factor': %d}`, ks, rf)).Exec()
	}
	s.Close()
	if err != nil {
		t.Fatal(err)
	}
	c.Keyspace = ks
	c.Consistency = cl
	s, err = c.CreateSession()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// TestClusterFaults writes at QUORUM through a driver to a three-node RF 3
// cluster while one node is killed (kill -9) and restarted and then
// another is paused (SIGSTOP) and resumed (SIGCONT): every write the
// cluster acknowledged reads back at QUORUM afterwards, and writes keep
// being acknowledged while one node of three is gone.
func TestClusterFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("runs three cqld processes")
	}
	tc := startCluster(t, 3)
	s := tc.session(0, gocql.Quorum)
	for _, q := range []string{
		`CREATE KEYSPACE f WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}`,
		`CREATE TABLE f.t (k int PRIMARY KEY, v int)`,
	} {
		if err := s.Query(q).Exec(); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	for i := range tc.nodes {
		si := tc.single(i, gocql.All)
		eventually(t, 30*time.Second, fmt.Sprintf("node%d seeing every replica up", i+1), func() error {
			return si.Query(`INSERT INTO f.t (k, v) VALUES (-1, -1)`).Exec()
		})
	}

	load := startWriteLoad(t, s, "f.t", 0, 0)
	load.progress("writes before the faults", 200)
	tc.stop(tc.nodes[2], syscall.SIGKILL)
	load.progress("writes with node3 killed", 200)
	tc.start(tc.nodes[2])
	load.progress("writes with node3 back", 200)
	if err := tc.nodes[1].cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	load.progress("writes with node2 paused", 100)
	if err := tc.nodes[1].cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	load.progress("writes with node2 resumed", 200)
	keys := load.finish()
	r := tc.single(0, gocql.Quorum)
	for _, k := range keys {
		// A read that fails (a connection closed on a loaded machine) is
		// asked again; a read that answers must answer the write.
		var v int
		var err error
		for try := 0; try < 3; try++ {
			if err = r.Query(`SELECT v FROM f.t WHERE k = ?`, k).Scan(&v); err == nil {
				break
			}
			time.Sleep(time.Second)
		}
		if err != nil || v != k {
			t.Fatalf("acknowledged write %d reads back %d, %v (of %d acknowledged)", k, v, err, len(keys))
		}
	}
	t.Logf("%d acknowledged writes of %d attempted all read back at QUORUM", len(keys), load.next.Load())

	// The seed, restarted, serves clients once it has heard from its
	// peers: a write at ALL through it alone, the moment it serves,
	// finds every replica up. (No other seed names the peers to it: they
	// reach it when they next try the node they held down.)
	tc.stop(tc.nodes[0], syscall.SIGKILL)
	tc.start(tc.nodes[0])
	if err := tc.single(0, gocql.All).Query(`INSERT INTO f.t (k, v) VALUES (-2, -2)`).Exec(); err != nil {
		t.Fatalf("a write at ALL through the restarted seed as it starts serving: %v", err)
	}
}
