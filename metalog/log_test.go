package metalog

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cqld/cqld/messaging"
	"github.com/prometheus/client_golang/prometheus"
)

func TestSingleNodeBootstrapsAndApplies(t *testing.T) {
	c := newCluster(t, 1, testTiming)
	l := c.open(0)
	for _, e := range []string{"a", "b", "c"} {
		if got := string(propose(t, l, e)); got != "ok "+e {
			t.Errorf("propose %q = %q, want %q", e, got, "ok "+e)
		}
	}
	// Propose returns once applied here: no waiting.
	if got, want := c.nodes[0].fsm.state(), []string{"a", "b", "c"}; !slices.Equal(got, want) {
		t.Errorf("FSM holds %q, want %q", got, want)
	}
	// raft counts an entry applied once the FSM's Apply has returned, a
	// moment after the FSM counted it: wait for raft to catch up.
	st := l.Stats()
	for deadline := time.Now().Add(5 * time.Second); st.AppliedIndex < c.nodes[0].fsm.Applied() && time.Now().Before(deadline); st = l.Stats() {
		time.Sleep(time.Millisecond)
	}
	if st.State != "Leader" || st.Leader != c.nodes[0].host || st.LeaderAddr != c.nodes[0].addr || st.Term == 0 {
		t.Errorf("stats %+v: want this node leading", st)
	}
	if st.AppliedIndex < c.nodes[0].fsm.Applied() {
		t.Errorf("stats applied index %d < the FSM's %d", st.AppliedIndex, c.nodes[0].fsm.Applied())
	}
	if v := gauge(t, c.nodes[0].reg, "cqld_metalog_leader"); v != 1 {
		t.Errorf("cqld_metalog_leader = %v, want 1", v)
	}
	if v := gauge(t, c.nodes[0].reg, "cqld_metalog_applied_index"); v != float64(st.AppliedIndex) {
		t.Errorf("cqld_metalog_applied_index = %v, want %d", v, st.AppliedIndex)
	}
	if v := gauge(t, c.nodes[0].reg, "cqld_metalog_term"); v != float64(st.Term) {
		t.Errorf("cqld_metalog_term = %v, want %d", v, st.Term)
	}
}

func gauge(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name {
			return mf.GetMetric()[0].GetGauge().GetValue()
		}
	}
	t.Fatalf("no metric %s", name)
	return 0
}

func TestSingleNodeReopens(t *testing.T) {
	c := newCluster(t, 1, testTiming)
	propose(t, c.open(0), "a")
	c.close(0)
	l := c.open(0) // Bootstrap again: it has state, so it is ignored.
	propose(t, l, "b")
	if got := c.nodes[0].fsm.state(); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("FSM holds %q, want [a b]", got)
	}
	if _, n := c.nodes[0].fsm.counts(); n != 0 {
		t.Errorf("%d entries applied a second time", n)
	}
}

// An FSM that keeps nothing (Applied 0) gets the whole log again.
func TestReopenWithAnEmptyFSMReplays(t *testing.T) {
	c := newCluster(t, 1, testTiming)
	propose(t, c.open(0), "a")
	propose(t, c.nodes[0].log, "b")
	c.close(0)
	c.nodes[0].fsm = newTestFSM()
	l := c.open(0)
	propose(t, l, "c")
	if got := c.nodes[0].fsm.state(); !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Errorf("FSM holds %q, want [a b c]", got)
	}
}

func TestThreeNodesApplyTheSameEntriesInOrder(t *testing.T) {
	c := newCluster(t, 3, testTiming)
	c.start()
	members, err := c.nodes[2].log.Members()
	if err != nil || len(members) != 3 {
		t.Fatalf("members = %v, %v; want 3", members, err)
	}
	// Concurrent proposals through every node, followers' forwarded.
	var wg sync.WaitGroup
	errs := make(chan error, 30)
	for i, nd := range c.nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range 10 {
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				_, err := nd.log.Propose(ctx, fmt.Appendf(nil, "n%d-%d", i+1, k))
				cancel()
				if err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("propose: %v", err)
	}
	eventually(t, func() bool { return len(c.nodes[0].fsm.state()) == 30 }, "node 1 to apply 30 entries")
	want := c.nodes[0].fsm.state()
	c.waitConverged(want)
	// Each proposal once, each node's in the order it proposed them.
	next := make([]int, 3)
	for _, e := range want {
		var i, k int
		if _, err := fmt.Sscanf(e, "n%d-%d", &i, &k); err != nil || k != next[i-1] {
			t.Fatalf("entry %q out of order in %q", e, want)
		}
		next[i-1]++
	}
}

func TestProposalOnFollowerIsForwardedAndAppliedThere(t *testing.T) {
	c := newCluster(t, 3, testTiming)
	c.start()
	leader := c.waitLeader(c.nodes)
	follower := c.nodes[(leader+1)%3]
	if got := string(propose(t, follower.log, "x")); got != "ok x" {
		t.Errorf("result %q, want %q", got, "ok x")
	}
	// Applied on the proposer's node before Propose returned.
	if got := follower.fsm.state(); !slices.Equal(got, []string{"x"}) {
		t.Errorf("follower's FSM holds %q, want [x]", got)
	}
}

// The leader's answer to a forwarded proposal is lost; the proposer
// still returns its result, once its own node applies the entry.
func TestLostForwardAnswerStillFindsTheOutcome(t *testing.T) {
	c := newCluster(t, 3, testTiming)
	c.start()
	leader := c.waitLeader(c.nodes)
	follower := c.nodes[(leader+1)%3]
	from, to := c.nodes[leader].addr, follower.addr
	c.net.SetFault(func(f, t netip.AddrPort, verb messaging.Verb, response bool) messaging.Fault {
		return messaging.Fault{Drop: f == from && t == to && verb == messaging.VerbMetadata && response}
	})
	if got := string(propose(t, follower.log, "y")); got != "ok y" {
		t.Errorf("result %q, want %q", got, "ok y")
	}
	c.net.SetFault(nil)
	c.waitConverged([]string{"y"})
}

func TestFSMErrorReachesTheProposer(t *testing.T) {
	c := newCluster(t, 3, testTiming)
	c.start()
	leader := c.waitLeader(c.nodes)
	for _, nd := range []*testNode{c.nodes[leader], c.nodes[(leader+1)%3]} {
		table := "create:" + nd.addr.String()
		propose(t, nd.log, table)
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		_, err := nd.log.Propose(ctx, []byte(table))
		cancel()
		if !errors.Is(err, errExists) {
			t.Errorf("second %q through %s: %v, want errExists", table, nd.addr, err)
		}
	}
}

func TestLeaderPartitionedAway(t *testing.T) {
	c := newCluster(t, 3, testTiming)
	c.start()
	propose(t, c.nodes[0].log, "before")
	old := c.waitLeader(c.nodes)
	var majority []*testNode
	var majorityAddrs []netip.AddrPort
	for i, nd := range c.nodes {
		if i != old {
			majority = append(majority, nd)
			majorityAddrs = append(majorityAddrs, nd.addr)
		}
	}
	c.net.Partition([]netip.AddrPort{c.nodes[old].addr}, majorityAddrs)

	// The minority's proposal cannot commit: it fails by its deadline.
	minority := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_, err := c.nodes[old].log.Propose(ctx, []byte("minority"))
		minority <- err
	}()

	next := c.waitLeader(majority)
	if next == old {
		t.Fatal("the partitioned leader still leads the majority")
	}
	propose(t, majority[0].log, "after-1")
	propose(t, majority[1].log, "after-2")
	if err := <-minority; !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("minority propose: %v, want its deadline", err)
	}

	c.net.Heal()
	want := majority[1].fsm.state() // the last proposer: it applied both
	if !slices.Equal(want, []string{"before", "after-1", "after-2"}) {
		t.Fatalf("majority applied %q", want)
	}
	c.waitConverged(want)
	propose(t, c.nodes[old].log, "healed")
	c.waitConverged(append(want, "healed"))
}

func TestReopenedNodeAppliesWhatItMissedOnce(t *testing.T) {
	c := newCluster(t, 3, testTiming)
	c.start()
	propose(t, c.nodes[0].log, "a")
	propose(t, c.nodes[1].log, "b")
	c.waitConverged([]string{"a", "b"})
	c.close(2)
	propose(t, c.nodes[0].log, "c")
	propose(t, c.nodes[1].log, "d")

	// The same FSM: it keeps what it applied and says so in Applied.
	l := c.open(2)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := l.Join(ctx); err != nil {
		t.Fatalf("join of a member: %v", err)
	}
	c.waitConverged([]string{"a", "b", "c", "d"})
	if _, n := c.nodes[2].fsm.counts(); n != 0 {
		t.Errorf("the reopened node applied %d entries a second time", n)
	}
	propose(t, l, "e")
	c.waitConverged([]string{"a", "b", "c", "d", "e"})
}

func TestFarBehindNodeCatchesUpBySnapshot(t *testing.T) {
	timing := testTiming
	timing.SnapshotThreshold = 4
	timing.SnapshotInterval = 20 * time.Millisecond
	timing.TrailingLogs = 2
	c := newCluster(t, 3, timing)
	c.start()
	propose(t, c.nodes[0].log, "first")
	c.waitConverged([]string{"first"})
	c.close(2)
	want := []string{"first"}
	for k := range 20 {
		e := fmt.Sprintf("e%d", k)
		propose(t, c.nodes[k%2].log, e)
		want = append(want, e)
	}
	// The live nodes compact their logs past what node 3 has.
	eventually(t, func() bool {
		for _, nd := range c.nodes[:2] {
			first, err := nd.log.store.FirstIndex()
			if err != nil || first <= c.nodes[2].fsm.Applied()+1 {
				return false
			}
		}
		return true
	}, "the logs to be compacted")
	c.open(2)
	c.waitConverged(want)
	restores, n := c.nodes[2].fsm.counts()
	if restores == 0 {
		t.Error("node 3 caught up without restoring a snapshot")
	}
	if n != 0 {
		t.Errorf("node 3 applied %d entries a second time", n)
	}
	propose(t, c.nodes[2].log, "last")
	c.waitConverged(append(want, "last"))
}

func TestRemove(t *testing.T) {
	c := newCluster(t, 3, testTiming)
	c.start()
	leader := c.waitLeader(c.nodes)
	gone := c.nodes[(leader+1)%3]
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := c.nodes[(leader+2)%3].log.Remove(ctx, gone.host); err != nil {
		t.Fatalf("remove: %v", err)
	}
	members, err := c.nodes[leader].log.Members()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range members {
		if m.HostID == gone.host {
			t.Errorf("removed node still a member: %v", members)
		}
	}
	propose(t, c.nodes[leader].log, "without")
}

func TestJoinRetriesUntilItsSeedIsUp(t *testing.T) {
	c := newCluster(t, 2, testTiming)
	c.open(1)
	joined := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		joined <- c.nodes[1].log.Join(ctx)
	}()
	// Node 2's seed, node 1, has not opened yet: its Join retries.
	c.open(0)
	if err := <-joined; err != nil {
		t.Fatalf("join: %v", err)
	}
	propose(t, c.nodes[1].log, "x")
	c.waitConverged([]string{"x"})
}

func TestJoinGivesUpAtItsDeadline(t *testing.T) {
	c := newCluster(t, 2, testTiming)
	l := c.open(1)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	err := l.Join(ctx)
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), c.nodes[0].addr.String()) {
		t.Errorf("join with no seed up: %v, want its deadline naming the seed", err)
	}
}

func TestGarbageOnVerbMetadataChangesNothing(t *testing.T) {
	c := newCluster(t, 1, testTiming)
	l := c.open(0)
	propose(t, l, "a")
	before := l.Stats()
	peer, err := c.net.NewTransport(messaging.Options{ClusterName: "test", Addr: netip.MustParseAddrPort("127.0.0.9:7000")})
	if err != nil {
		t.Fatal(err)
	}
	defer peer.Close()
	badEnvelope, _ := encodeMessage(&forward{kind: kindPropose, entry: []byte("no envelope")})
	badJoin, _ := encodeMessage(&forward{kind: kindJoin, id: "not a host id", addr: "127.0.0.9:7000"})
	for _, p := range [][]byte{nil, {0}, {codecVersion}, {codecVersion, 0}, {codecVersion, byte(kindEnd)},
		{9, byte(kindAppendEntries)}, []byte("\x01\x01garbage"), badEnvelope, badJoin} {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, err := peer.Request(ctx, c.nodes[0].addr, messaging.VerbMetadata, p)
		cancel()
		if code, ok := remoteCode(err); !ok || code != codeBadMessage {
			t.Errorf("%q answered %v, want code %d", p, err, codeBadMessage)
		}
	}
	after := l.Stats()
	if after.LastIndex != before.LastIndex || after.Term != before.Term || after.State != "Leader" {
		t.Errorf("stats %+v after garbage, were %+v", after, before)
	}
	if got := c.nodes[0].fsm.state(); !slices.Equal(got, []string{"a"}) {
		t.Errorf("FSM holds %q", got)
	}
}

func TestEntryOverMaxEntrySizeIsRefused(t *testing.T) {
	c := newCluster(t, 1, testTiming)
	l := c.open(0)
	if l.MaxEntrySize() < 64<<10 {
		t.Errorf("MaxEntrySize %d with the default message size", l.MaxEntrySize())
	}
	_, err := l.Propose(context.Background(), make([]byte, l.MaxEntrySize()+1))
	if !errors.Is(err, ErrEntryTooLarge) {
		t.Errorf("propose over MaxEntrySize: %v, want ErrEntryTooLarge", err)
	}
	if res := propose(t, l, strings.Repeat("x", l.MaxEntrySize())); len(res) == 0 {
		t.Error("an entry of MaxEntrySize was not applied")
	}
}

func TestCloseEndsCallsInFlight(t *testing.T) {
	c := newCluster(t, 3, testTiming)
	c.start()
	leader := c.waitLeader(c.nodes)
	follower := (leader + 1) % 3
	// The follower's forward to the leader is lost: only Close ends it
	// before its hour is up.
	c.net.Partition([]netip.AddrPort{c.nodes[follower].addr}, []netip.AddrPort{c.nodes[leader].addr, c.nodes[(leader+2)%3].addr})
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
		defer cancel()
		_, err := c.nodes[follower].log.Propose(ctx, []byte("x"))
		done <- err
	}()
	eventually(t, func() bool { return c.nodes[follower].log.fsm.waiting() == 1 }, "the proposal to be waiting")
	c.close(follower)
	if err := <-done; !errors.Is(err, ErrClosed) {
		t.Errorf("propose cut short by Close: %v, want ErrClosed", err)
	}
}

func TestClosedLogRefusesCalls(t *testing.T) {
	c := newCluster(t, 1, testTiming)
	l := c.open(0)
	c.close(0)
	if _, err := l.Propose(context.Background(), []byte("x")); !errors.Is(err, ErrClosed) {
		t.Errorf("propose after close: %v, want ErrClosed", err)
	}
	if err := l.Close(); err != nil {
		t.Errorf("second close: %v", err)
	}
}
