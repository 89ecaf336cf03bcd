package test

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/datastax/go-cassandra-native-protocol/primitive"
	"github.com/gocql/gocql"

	"github.com/cqld/cqld/config"
	"github.com/cqld/cqld/ring"
)

// writeLoad writes k = v for growing keys through one session from four
// goroutines, each waiting pace between its writes (0: none), and
// remembers every write acknowledged.
type writeLoad struct {
	t      *testing.T
	mu     sync.Mutex
	acked  []int
	next   atomic.Int64 // the last key tried
	failed atomic.Int64 // writes not acknowledged
	stop   chan struct{}
	wg     sync.WaitGroup
}

func startWriteLoad(t *testing.T, s *gocql.Session, table string, from int, pace time.Duration) *writeLoad {
	w := &writeLoad{t: t, stop: make(chan struct{})}
	w.next.Store(int64(from))
	for range 4 {
		w.wg.Add(1)
		go func() {
			defer w.wg.Done()
			for {
				select {
				case <-w.stop:
					return
				default:
				}
				time.Sleep(pace)
				k := int(w.next.Add(1))
				if err := s.Query(`INSERT INTO `+table+` (k, v) VALUES (?, ?)`, k, k).Exec(); err != nil {
					w.failed.Add(1)
					continue
				}
				w.mu.Lock()
				w.acked = append(w.acked, k)
				w.mu.Unlock()
			}
		}()
	}
	t.Cleanup(func() { w.finish() })
	return w
}

func (w *writeLoad) count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.acked)
}

// progress waits until n more writes have been acknowledged.
func (w *writeLoad) progress(what string, n int) {
	w.t.Helper()
	base := w.count()
	eventually(w.t, 60*time.Second, what, func() error {
		if got := w.count() - base; got < n {
			return fmt.Errorf("%d writes acknowledged", got)
		}
		return nil
	})
}

// finish stops the writers and returns the keys acknowledged.
func (w *writeLoad) finish() []int {
	select {
	case <-w.stop:
	default:
		close(w.stop)
	}
	w.wg.Wait()
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]int(nil), w.acked...)
}

// preload writes keys 0..n-1 (k = v) at QUORUM, 16 at a time.
func preload(t *testing.T, s *gocql.Session, table string, n int) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for w := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := w; k < n; k += 16 {
				if err := s.Query(`INSERT INTO `+table+` (k, v) VALUES (?, ?)`, k, k).Exec(); err != nil {
					errs <- fmt.Errorf("preload of %d: %w", k, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		t.Fatal(err)
	}
}

// ringOf reads each node's host id and tokens from its system.local and
// builds the ring they make.
func (tc *testCluster) ringOf(t *testing.T, nodes ...int) (*ring.Ring, map[int]ring.HostID) {
	t.Helper()
	var members []ring.Node
	ids := map[int]ring.HostID{}
	for _, i := range nodes {
		s := tc.single(i, gocql.One)
		var id gocql.UUID
		var tokens []string
		var dc, rack string
		err := s.Query(`SELECT host_id, tokens, data_center, rack FROM system.local`).Scan(&id, &tokens, &dc, &rack)
		s.Close()
		if err != nil {
			t.Fatalf("node%d's system.local: %v", i+1, err)
		}
		n := ring.Node{HostID: ring.HostID(id), Addr: netip.MustParseAddr(tc.nodes[i].addr), DC: dc, Rack: rack}
		for _, tok := range tokens {
			v, err := strconv.ParseInt(tok, 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			n.Tokens = append(n.Tokens, v)
		}
		members = append(members, n)
		ids[i] = n.HostID
	}
	r, err := ring.New(members)
	if err != nil {
		t.Fatal(err)
	}
	return r, ids
}

// execAll runs each query through s, failing at the first error.
func execAll(t *testing.T, s *gocql.Session, queries ...string) {
	t.Helper()
	for _, q := range queries {
		if err := s.Query(q).Exec(); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// firstKeys is 0..n-1, the keys preload writes.
func firstKeys(n int) []int {
	keys := make([]int, n)
	for k := range keys {
		keys[k] = k
	}
	return keys
}

// intKey is an int partition key as it is serialized.
func intKey(k int) []byte { return binary.BigEndian.AppendUint32(nil, uint32(k)) }

// pause stops the given nodes (SIGSTOP) until the returned function
// resumes them; a node paused answers nothing, so whatever reads back
// meanwhile came from the nodes left.
func (tc *testCluster) pause(t *testing.T, nodes ...int) (resume func()) {
	t.Helper()
	for _, i := range nodes {
		if err := tc.nodes[i].cmd.Process.Signal(syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
	}
	var once sync.Once
	resume = func() {
		once.Do(func() {
			for _, i := range nodes {
				_ = tc.nodes[i].cmd.Process.Signal(syscall.SIGCONT)
			}
		})
	}
	t.Cleanup(resume)
	return resume
}

// readsBack checks that every key of keys that node i replicates (of a
// keyspace of strategy st on ring r) reads back k = v at ONE with node i
// coordinating and every other node paused: from node i's own data. It
// returns how many keys it checked.
func (tc *testCluster) readsBack(t *testing.T, i int, r *ring.Ring, self ring.HostID, st ring.Strategy, table string, keys []int) int {
	t.Helper()
	p := ring.NewPlacement(r, st)
	var mine []int
	for _, k := range keys {
		for _, h := range p.ReplicasForKey(intKey(k)) {
			if h == self {
				mine = append(mine, k)
			}
		}
	}
	var others []int
	for j := range tc.nodes {
		select {
		case <-tc.nodes[j].done:
		default:
			if j != i {
				others = append(others, j)
			}
		}
	}
	s := tc.single(i, gocql.One)
	resume := tc.pause(t, others...)
	defer resume()
	readAll(t, s, table, mine)
	return len(mine)
}

// readAll checks that every key of keys reads back k = v through s, 8 at
// a time.
func readAll(t *testing.T, s *gocql.Session, table string, keys []int) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := w; j < len(keys); j += 8 {
				k := keys[j]
				var v int
				if err := s.Query(`SELECT v FROM `+table+` WHERE k = ?`, k).Scan(&v); err != nil || v != k {
					errs <- fmt.Errorf("acknowledged key %d reads back %d, %v (%d keys)", k, v, err, len(keys))
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		t.Fatal(err)
	}
}

// topologyEvents registers a connection to node i for TOPOLOGY_CHANGE
// events and returns them as they come, "NEW_NODE 127.0.0.3".
func (tc *testCluster) topologyEvents(t *testing.T, i int) <-chan string {
	t.Helper()
	return tc.nodeEvents(t, i, "TOPOLOGY_CHANGE")
}

// nodeEvents registers a connection to node i for TOPOLOGY_CHANGE or
// STATUS_CHANGE events (the kinds given) and returns them as they come,
// "NEW_NODE 127.0.0.3", "DOWN 127.0.0.2".
func (tc *testCluster) nodeEvents(t *testing.T, i int, kinds ...string) <-chan string {
	t.Helper()
	w := dial(t, net.JoinHostPort(tc.nodes[i].addr, strconv.Itoa(tc.native)))
	w.handshake()
	w.send(4, 2, primitive.OpCodeRegister, registerBody(kinds...))
	if r := w.mustRead(); r.op != primitive.OpCodeReady {
		t.Fatalf("REGISTER answered %s", fmtReply(r))
	}
	out := make(chan string, 16)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			r, err := w.read()
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			if err != nil {
				return
			}
			if r.op != primitive.OpCodeEvent {
				continue
			}
			kind, rest := readString(r.body)
			change, rest := readString(rest)
			if !slices.Contains(kinds, kind) || len(rest) < 1 || len(rest) < 1+int(rest[0]) {
				continue
			}
			addr, _ := netip.AddrFromSlice(rest[1 : 1+int(rest[0])])
			select {
			case out <- change + " " + addr.String():
			default:
			}
		}
	}()
	t.Cleanup(func() {
		w.c.Close()
		<-done
	})
	return out
}

// waitEvent waits for event want on events.
func waitEvent(t *testing.T, events <-chan string, want string, d time.Duration) {
	t.Helper()
	deadline := time.After(d)
	for {
		select {
		case got := <-events:
			if got == want {
				return
			}
			t.Logf("event %q while waiting for %q", got, want)
		case <-deadline:
			t.Fatalf("no %s event within %s", want, d)
		}
	}
}

// watchState polls node i's /nodetool/status until stop closes and
// reports, once stopped, whether it ever showed the member at addr in
// state (JOINING, LEAVING).
func (tc *testCluster) watchState(i int, addr, state string) (stop func() bool) {
	url := "http://" + net.JoinHostPort(tc.nodes[i].addr, strconv.Itoa(tc.metrics)) + "/nodetool/status"
	done := make(chan struct{})
	var seen atomic.Bool
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		for {
			select {
			case <-done:
				return
			case <-time.After(50 * time.Millisecond):
			}
			resp, err := http.Get(url)
			if err != nil {
				continue
			}
			var st struct {
				Nodes []struct{ Address, State string }
			}
			_ = json.NewDecoder(resp.Body).Decode(&st)
			resp.Body.Close()
			for _, n := range st.Nodes {
				if n.Address == addr && n.State == state {
					seen.Store(true)
				}
			}
		}
	}()
	return func() bool {
		close(done)
		<-finished
		return seen.Load()
	}
}

// nodetoolRun runs `cqld nodetool -h <node i> args...` and returns its
// combined output and exit status.
func (tc *testCluster) nodetoolRun(i int, args ...string) (string, error) {
	full := append([]string{"nodetool", "-h", tc.nodes[i].addr, "-p", strconv.Itoa(tc.metrics)}, args...)
	out, err := exec.Command(cqldBinary(tc.t), full...).CombinedOutput()
	return string(out), err
}

// TestClusterJoinStreams: two nodes hold an RF 2 keyspace with a few
// thousand rows; a third node joins while a driver writes at QUORUM.
// Drivers hear of it (NEW_NODE) only once it serves; once it is NORMAL,
// every acknowledged row it is a replica of, written before or during its
// join, reads back at ONE from it alone with the two others paused: its
// data came by streaming, not by read repair.
func TestClusterJoinStreams(t *testing.T) {
	if testing.Short() {
		t.Skip("runs three cqld processes")
	}
	tc := startCluster(t, 2)
	s := tc.session(0, gocql.Quorum)
	execAll(t, s,
		`CREATE KEYSPACE j WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 2}`,
		`CREATE TABLE j.t (k int PRIMARY KEY, v int)`,
	)
	const before = 3000
	preload(t, s, "j.t", before)
	events := tc.topologyEvents(t, 0)
	// A steady load, not a flood: the test reads every
	// acknowledged key back.
	load := startWriteLoad(t, s, "j.t", 1_000_000, 5*time.Millisecond)
	load.progress("writes before the join", 100)

	// NEW_NODE comes once node3 serves: it answers a connection made the
	// moment the event arrives (tc.add returns only once node3 serves,
	// so a check after it would pass whenever the event came).
	announced := make(chan error, 1)
	go func() {
		deadline := time.After(120 * time.Second)
		for {
			select {
			case ev := <-events:
				if ev != "NEW_NODE 127.0.0.3" {
					continue
				}
				c, err := net.Dial("tcp", net.JoinHostPort("127.0.0.3", strconv.Itoa(tc.native)))
				if err == nil {
					c.Close()
				}
				announced <- err
			case <-deadline:
				announced <- errors.New("no NEW_NODE event for node3")
			}
			return
		}
	}()
	// node3 is JOINING for at least write_request_timeout (2 s) before
	// it streams: node1's status shows it UJ meanwhile.
	sawJoining := tc.watchState(0, "127.0.0.3", "JOINING")
	nd := tc.add()
	if !sawJoining() {
		t.Error("node1's status never showed node3 JOINING")
	}
	if err := <-announced; err != nil {
		t.Fatalf("node3 announced but not serving: %v", err)
	}
	eventually(t, 30*time.Second, "node3 UN in node1's status", func() error {
		if out := tc.nodetool(0); !strings.Contains(out, "UN  127.0.0.3") {
			return fmt.Errorf("status:\n%s", out)
		}
		return nil
	})
	load.progress("writes after the join", 100)
	during := load.finish()

	r, ids := tc.ringOf(t, 0, 1, 2)
	keys := append(firstKeys(before), during...)
	checked := tc.readsBack(t, 2, r, ids[2], ring.SimpleStrategy{RF: 2}, "j.t", keys)
	if checked < before/3 {
		t.Fatalf("node3 replicates only %d of %d keys", checked, len(keys))
	}
	t.Logf("node3 alone answered all %d of %d keys it replicates (%d written during the join)", checked, len(keys), len(during))

	// And the ring agrees: two peers each, node3's tokens among them.
	for i := range tc.nodes {
		var n int
		if err := tc.single(i, gocql.One).Query(`SELECT count(*) FROM system.peers`).Scan(&n); err != nil || n != 2 {
			t.Fatalf("node%d has %d peers (%v)", i+1, n, err)
		}
	}
	if out, _ := tc.nodetoolRun(2, "netstats"); !strings.Contains(out, "Mode: NORMAL") || !strings.Contains(out, "bootstrap (done)") {
		t.Errorf("node3's netstats:\n%s", out)
	}
	// Restarted with its data, node3 is NORMAL at once and streams nothing.
	tc.stop(nd, syscall.SIGTERM)
	tc.start(nd)
	tc.waitNormal(nd)
	if out, _ := tc.nodetoolRun(2, "netstats"); !strings.Contains(out, "Mode: NORMAL\nNot sending any streams.") {
		t.Errorf("node3's netstats after a restart:\n%s", out)
	}
}

// TestClusterDecommission: a node of three leaves while a driver writes at
// QUORUM to an RF 2 keyspace. A decommission that would leave a keyspace
// fewer nodes than its replication factor is refused first; then the node
// streams its ranges away, leaves (drivers get REMOVED_NODE) and its
// process exits; every acknowledged write reads back at QUORUM from the
// two survivors, and each survivor alone holds every row (RF 2 on two
// nodes), its share streamed from the leaving node.
func TestClusterDecommission(t *testing.T) {
	if testing.Short() {
		t.Skip("runs three cqld processes")
	}
	tc := startCluster(t, 3)
	s := tc.session(0, gocql.Quorum)
	execAll(t, s,
		`CREATE KEYSPACE d WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 2}`,
		`CREATE TABLE d.t (k int PRIMARY KEY, v int)`,
		`CREATE KEYSPACE d3 WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}`,
	)
	out, err := tc.nodetoolRun(2, "decommission")
	if err == nil || !strings.Contains(out, "nodetool: Unsupported operation: Not enough live nodes to maintain replication factor in keyspace d3 (RF = 3, N = 3). Perform a forceful decommission to ignore.") {
		t.Fatalf("decommission with an RF 3 keyspace on three nodes: %v\n%s", err, out)
	}
	if err := s.Query(`DROP KEYSPACE d3`).Exec(); err != nil {
		t.Fatal(err)
	}
	const before = 2000
	preload(t, s, "d.t", before)
	events := tc.topologyEvents(t, 0)
	// A steady load, not a flood: the test reads every
	// acknowledged key back.
	load := startWriteLoad(t, s, "d.t", 1_000_000, 5*time.Millisecond)
	load.progress("writes before the decommission", 100)

	sawLeaving := tc.watchState(0, "127.0.0.3", "LEAVING")
	if out, err := tc.nodetoolRun(2, "decommission"); err != nil {
		t.Fatalf("decommission: %v\n%s", err, out)
	}
	if !sawLeaving() {
		t.Error("node1's status never showed node3 LEAVING")
	}
	waitEvent(t, events, "REMOVED_NODE 127.0.0.3", 30*time.Second)
	select {
	case <-tc.nodes[2].done:
	case <-time.After(30 * time.Second):
		t.Fatalf("node3 still runs after its decommission:\n%s", tc.nodes[2].logTail(40))
	}
	load.progress("writes after the decommission", 100)
	during := load.finish()

	keys := append(firstKeys(before), during...)
	readAll(t, tc.single(0, gocql.Quorum), "d.t", keys)
	for i := range 2 {
		var n int
		if err := tc.single(i, gocql.One).Query(`SELECT count(*) FROM system.peers`).Scan(&n); err != nil || n != 1 {
			t.Fatalf("node%d has %d peers after the decommission (%v)", i+1, n, err)
		}
	}
	r, ids := tc.ringOf(t, 0, 1)
	for i := range 2 {
		if got := tc.readsBack(t, i, r, ids[i], ring.SimpleStrategy{RF: 2}, "d.t", keys); got != len(keys) {
			t.Fatalf("node%d replicates %d of %d keys", i+1, got, len(keys))
		}
	}
	if out := tc.nodetool(0); strings.Contains(out, "127.0.0.3") {
		t.Errorf("node3 still in the ring:\n%s", out)
	}
}

// TestClusterRemoveNode: a node of three is killed; removenode of it is
// refused while it is up, then, once it is down, its ranges stream from
// the survivors to their new replicas and it leaves the ring: each
// survivor alone then holds every row of the RF 2 keyspace.
func TestClusterRemoveNode(t *testing.T) {
	if testing.Short() {
		t.Skip("runs three cqld processes")
	}
	tc := startCluster(t, 3)
	s := tc.session(0, gocql.Quorum)
	execAll(t, s,
		`CREATE KEYSPACE rm WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 2}`,
		`CREATE TABLE rm.t (k int PRIMARY KEY, v int)`,
	)
	const n = 2000
	preload(t, s, "rm.t", n)
	_, ids := tc.ringOf(t, 0, 1, 2)
	gone := ids[2].String()

	out, err := tc.nodetoolRun(0, "removenode", gone)
	if err == nil || !strings.Contains(out, "Node /127.0.0.3:"+strconv.Itoa(tc.storage)+" is alive and owns this ID. Use decommission command to remove it from the ring") {
		t.Fatalf("removenode of a live node: %v\n%s", err, out)
	}
	if out, err := tc.nodetoolRun(0, "removenode", ids[0].String()); err == nil || !strings.Contains(out, "Cannot remove self") {
		t.Fatalf("removenode of the node asked: %v\n%s", err, out)
	}
	tc.stop(tc.nodes[2], syscall.SIGKILL)
	eventually(t, 60*time.Second, "node3 DN in node1's status", func() error {
		if out := tc.nodetool(0); !strings.Contains(out, "DN  127.0.0.3") {
			return fmt.Errorf("status:\n%s", out)
		}
		return nil
	})
	if out, err := tc.nodetoolRun(0, "removenode", gone); err != nil {
		t.Fatalf("removenode: %v\n%s", err, out)
	}
	if out := tc.nodetool(1); strings.Contains(out, "127.0.0.3") {
		t.Errorf("node3 still in node2's ring:\n%s", out)
	}
	keys := firstKeys(n)
	r, ids2 := tc.ringOf(t, 0, 1)
	for i := range 2 {
		if got := tc.readsBack(t, i, r, ids2[i], ring.SimpleStrategy{RF: 2}, "rm.t", keys); got != n {
			t.Fatalf("node%d replicates %d of %d keys", i+1, got, n)
		}
	}
	if out, _ := tc.nodetoolRun(0, "removenode", "status"); !strings.Contains(out, "RemovalStatus: No removals in process.") {
		t.Errorf("removenode status:\n%s", out)
	}
}

// TestClusterGossipingSnitch: nodes under GossipingPropertyFileSnitch take
// their data center and rack from cassandra-rackdc.properties beside
// their configuration. A node of a second data center joins a keyspace
// replicated once in each: it streams every row (the keyspace's one dc2
// replica of everything) and answers each alone.
func TestClusterGossipingSnitch(t *testing.T) {
	if testing.Short() {
		t.Skip("runs two cqld processes")
	}
	tc := startCluster(t, 0)
	tc.configure = func(i int, c *config.Config, home string) {
		props := map[int]string{1: "dc=dc1\nrack=r1\n", 2: "# dc2's one node\ndc=dc\ndc_suffix=2\nrack=r2\nprefer_local=true\n"}[i]
		if err := os.WriteFile(filepath.Join(home, config.RackDCFile), []byte(props), 0o644); err != nil {
			t.Fatal(err)
		}
		c.EndpointSnitch = "org.apache.cassandra.locator.GossipingPropertyFileSnitch"
	}
	tc.add()
	s := tc.session(0, gocql.One)
	execAll(t, s,
		`CREATE KEYSPACE g WITH replication = {'class': 'NetworkTopologyStrategy', 'dc1': 1, 'dc2': 1}`,
		`CREATE TABLE g.t (k int PRIMARY KEY, v int)`,
	)
	const n = 1000
	preload(t, s, "g.t", n)
	tc.add()

	var dc, rack string
	if err := tc.single(1, gocql.One).Query(`SELECT data_center, rack FROM system.local`).Scan(&dc, &rack); err != nil || dc != "dc2" || rack != "r2" {
		t.Fatalf("node2's system.local: %q %q %v", dc, rack, err)
	}
	// node1 lists node2 once gossip has told it node2's addresses.
	s1 := tc.single(0, gocql.One)
	eventually(t, 30*time.Second, "node1's system.peers listing node2 in dc2, rack r2", func() error {
		if err := s1.Query(`SELECT data_center, rack FROM system.peers`).Scan(&dc, &rack); err != nil || dc != "dc2" || rack != "r2" {
			return fmt.Errorf("%q %q %v", dc, rack, err)
		}
		return nil
	})
	out := tc.nodetool(0)
	if !strings.Contains(out, "Datacenter: dc1") || !strings.Contains(out, "Datacenter: dc2") {
		t.Fatalf("status:\n%s", out)
	}
	r, ids := tc.ringOf(t, 0, 1)
	st := ring.NetworkTopologyStrategy{RF: map[string]int{"dc1": 1, "dc2": 1}}
	if got := tc.readsBack(t, 1, r, ids[1], st, "g.t", firstKeys(n)); got != n {
		t.Fatalf("node2 replicates %d of %d keys", got, n)
	}
}
