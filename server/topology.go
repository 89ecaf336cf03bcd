package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cqld/cqld/cluster"
	"github.com/cqld/cqld/replica"
	"github.com/cqld/cqld/ring"
	"github.com/cqld/cqld/storage"
	"github.com/cqld/cqld/systables"
)

// changes runs the topology changes of this node: its own bootstrap at
// start, and the decommission and removenode an operator asks for
// (admin.go), one at a time. Each moves a member through its states in
// the metadata log (cluster.Node), waits until every coordinator routes
// writes by the new state, and streams the ranges that gain replicas
// (ring.Movements) with replica.Stream.
type changes struct {
	node    *cluster.Node
	members *members
	catalog *storage.Catalog
	tables  func(id [16]byte) (*storage.Table, bool)
	metrics *replica.StreamMetrics
	log     *slog.Logger
	// settle is how long a write planned by a coordinator before it
	// applied a change may still land: write_request_timeout, past which
	// it has landed or failed.
	settle time.Duration
	// after is the clock's timer (time.After).
	after func(time.Duration) <-chan time.Time

	// running is set while a change runs on this node.
	running atomic.Bool
	// left is closed once this node has decommissioned.
	left     chan struct{}
	leftOnce sync.Once

	mu       sync.Mutex
	progress Progress
}

// Progress is the change running on this node, or the last one, as
// nodetool netstats shows it.
type Progress struct {
	// Operation is "bootstrap", "decommission", "removenode <host id>" or
	// "" when none has run.
	Operation string    `json:"operation"`
	Running   bool      `json:"running"`
	Started   time.Time `json:"started"`
	// Streaming is when the data began to move, once every node routed
	// by the change.
	Streaming  time.Time `json:"streaming"`
	Finished   time.Time `json:"finished"`
	Error      string    `json:"error,omitempty"`
	Streams    int       `json:"streams"`
	Done       int       `json:"done"`
	Partitions int64     `json:"partitions"`
	Bytes      int64     `json:"bytes"`
}

// ringDelay bounds the wait for every live node to apply a change before
// data moves; a node that has not by then is logged and not waited for.
const ringDelay = 30 * time.Second

// streamParallelism is how many ranges stream at once.
const streamParallelism = 2

// Retries of a range whose sources all failed.
const (
	streamRounds     = 8
	streamRetryFirst = 500 * time.Millisecond
	streamRetryMax   = 5 * time.Second
)

// opError is a refusal with the class of exception Cassandra's nodetool
// names it by.
type opError struct {
	class string // UnsupportedOperationException, IllegalStateException, IllegalArgumentException
	msg   string
}

func (e *opError) Error() string { return e.msg }

func unsupported(format string, args ...any) error {
	return &opError{class: "UnsupportedOperationException", msg: fmt.Sprintf(format, args...)}
}

// claim marks a change running on this node, or refuses with busy when
// one already is; release ends it. A change refused by its checks is not
// recorded; one that started (started) is, with its outcome.
func (c *changes) claim(busy error) error {
	if !c.running.CompareAndSwap(false, true) {
		return busy
	}
	return nil
}

func (c *changes) started(op string) {
	c.mu.Lock()
	c.progress = Progress{Operation: op, Running: true, Started: time.Now()}
	c.mu.Unlock()
}

func (c *changes) release(err error) {
	c.mu.Lock()
	if c.progress.Running {
		c.progress.Running, c.progress.Finished = false, time.Now()
		if err != nil {
			c.progress.Error = err.Error()
		}
	}
	c.mu.Unlock()
	c.running.Store(false)
}

// Progress returns the change running, or the last one.
func (c *changes) Progress() Progress {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.progress
}

// Mode is this node's operation mode as nodetool netstats names it.
func (c *changes) Mode() string {
	select {
	case <-c.left:
		return "DECOMMISSIONED"
	default:
	}
	m, ok := c.node.Self()
	if !ok {
		return "STARTING"
	}
	return m.Status.String()
}

// Left is closed once this node has decommissioned.
func (c *changes) Left() <-chan struct{} { return c.left }

// waitRing waits until every live node has applied the log's entry at
// index, then until writes planned before it have landed, unless there is
// nothing to stream: a table created later is known only to nodes that
// applied the entry before it, which route by it already.
func (c *changes) waitRing(ctx context.Context, index uint64, tasks []*streamTask) error {
	if len(tasks) == 0 {
		return nil
	}
	wctx, cancel := context.WithTimeout(ctx, ringDelay)
	err := c.node.WaitApplied(wctx, index)
	cancel()
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		c.log.Warn("not every node has applied the topology change; streaming anyway", "err", err)
	}
	select {
	case <-c.after(c.settle):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// bootstrap streams the ranges this JOINING node takes over from their
// current replicas, each from the replica it takes the place of when that
// one is up, else from another, nearest first. The caller then makes the
// node NORMAL.
func (c *changes) bootstrap(ctx context.Context) (err error) {
	if err := c.claim(unsupported("a topology change is already running on this node")); err != nil {
		return err
	}
	defer func() { c.release(err) }()
	c.started("bootstrap")
	self, _ := c.node.Self()
	c.log.Info("bootstrapping: this node is JOINING and streams the ranges it takes over", "tokens", len(self.Tokens))
	before := c.node.Topology().Ring()
	after, err := before.With(self.RingNode())
	if err != nil {
		return fmt.Errorf("server: bootstrap: %w", err)
	}
	tasks, err := c.plan(before, after, func(mv ring.Movement, target ring.HostID) []ring.HostID {
		if target != self.HostID {
			return nil
		}
		return c.order(mv.Sources, mv.Losing, self, ring.HostID{})
	})
	if err != nil {
		return err
	}
	if err := c.waitRing(ctx, c.node.Applied(), tasks); err != nil {
		return err
	}
	if err := c.stream(ctx, tasks); err != nil {
		return fmt.Errorf("server: bootstrap: %w", err)
	}
	c.log.Info("bootstrap streaming done", "streams", len(tasks))
	return nil
}

// decommission streams every range this node replicates to the nodes that
// replicate it once it is gone, hands its hints over to another node,
// then takes it out of the ring, the metadata log and gossip. force skips
// the replication factor check.
func (c *changes) decommission(ctx context.Context, force bool) (err error) {
	if err := c.claim(&opError{class: "IllegalStateException", msg: "Node is still decommissioning. Check nodetool netstats."}); err != nil {
		return err
	}
	defer func() { c.release(err) }()
	self, ok := c.node.Self()
	if !ok {
		return unsupported("local node is not a member of the token ring yet")
	}
	topo := c.node.Topology()
	if self.Status != cluster.StatusLeaving {
		if topo.Ring().Len() < 2 {
			return unsupported("no other normal nodes in the ring; decommission would be pointless")
		}
		if self.Status != cluster.StatusNormal {
			return unsupported("Node in %s state; wait for status to become normal or restart", self.Status)
		}
		if !force {
			if err := c.checkReplication(topo.Ring(), self); err != nil {
				return err
			}
		}
	}
	if err := c.node.CheckLeaveQuorum(ctx, self.HostID, "decommission this node"); err != nil {
		return err
	}
	c.started("decommission")
	c.log.Info("decommissioning: this node is LEAVING and streams its ranges to their new replicas")
	index := c.node.Applied()
	if self.Status != cluster.StatusLeaving {
		if index, err = c.setStatus(ctx, self.HostID, cluster.StatusLeaving); err != nil {
			return movementRefusal(err)
		}
	}
	restore := func(cause error) error {
		if _, err := c.setStatus(context.WithoutCancel(ctx), self.HostID, cluster.StatusNormal); err != nil {
			c.log.Error("decommission failed and this node could not become NORMAL again; it stays LEAVING", "err", err)
		}
		return fmt.Errorf("server: decommission: %w", cause)
	}
	before := c.node.Topology().Ring()
	after, err := before.Without(self.HostID)
	if err != nil {
		return restore(err)
	}
	tasks, err := c.plan(before, after, func(mv ring.Movement, target ring.HostID) []ring.HostID {
		return []ring.HostID{self.HostID}
	})
	if err != nil {
		return restore(err)
	}
	if err := c.waitRing(ctx, index, tasks); err != nil {
		return restore(err)
	}
	if err := c.stream(ctx, tasks); err != nil {
		return restore(err)
	}
	if err := c.transferHints(ctx); err != nil {
		return restore(err)
	}
	if err := c.removeMember(ctx, self.HostID); err != nil {
		return fmt.Errorf("server: decommission: leaving the ring: %w", err)
	}
	lctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	if err := c.node.LeaveGossip(lctx); err != nil {
		c.log.Warn("decommission: leaving gossip", "err", err)
	}
	cancel()
	c.log.Info("decommissioned: this node has left the ring", "streams", len(tasks))
	c.leftOnce.Do(func() { close(c.left) })
	return nil
}

// checkReplication refuses a decommission that would leave a keyspace
// fewer nodes than its replication factor, as Cassandra does.
func (c *changes) checkReplication(r *ring.Ring, self cluster.Member) error {
	for _, ks := range c.keyspaces() {
		st, err := ring.ParseStrategy(ks.Name, ks.Replication)
		if err != nil {
			continue
		}
		var rf, nodes int
		if _, ok := st.(ring.NetworkTopologyStrategy); ok {
			rf = st.ReplicationFactor(self.DataCenter)
			for _, n := range r.Nodes() {
				if n.DC == self.DataCenter {
					nodes++
				}
			}
		} else {
			rf, nodes = st.ReplicationFactor(""), r.Len()
		}
		if nodes <= rf {
			return unsupported("Not enough live nodes to maintain replication factor in keyspace %s (RF = %d, N = %d). "+
				"Perform a forceful decommission to ignore.", ks.Name, rf, nodes)
		}
	}
	return nil
}

// removenode takes a dead node out of the ring: it becomes LEAVING, the
// ranges it replicated stream from the replicas left to their new ones,
// and it is removed from the ring and the metadata log.
func (c *changes) removenode(ctx context.Context, hostID string) (err error) {
	id, err := ring.ParseHostID(hostID)
	if err != nil {
		return &opError{class: "IllegalArgumentException", msg: "Invalid UUID string: " + hostID}
	}
	m, ok := c.node.Topology().Member(id)
	switch {
	case !ok:
		return unsupported("Host ID not found.")
	case m.HostID == c.members.self:
		return unsupported("Cannot remove self")
	case c.node.Alive(id):
		return unsupported("Node /%s is alive and owns this ID. Use decommission command to remove it from the ring", m.Addr)
	}
	busy := unsupported("This node is already processing a removal. Wait for it to complete, or use 'removenode force' if this has failed.")
	if err := c.claim(busy); err != nil {
		return err
	}
	defer func() { c.release(err) }()
	c.started("removenode " + id.String())
	index := c.node.Applied()
	switch m.Status {
	case cluster.StatusJoining:
		// A joining node replicates nothing yet: nothing to stream.
		return c.removeMember(ctx, id)
	case cluster.StatusLeaving:
		c.log.Warn("node is already leaving or being removed, continuing removal anyway", "node", m.Addr)
	default:
		if index, err = c.setStatus(ctx, id, cluster.StatusLeaving); err != nil {
			return movementRefusal(err)
		}
	}
	c.log.Info("removing a dead node: its ranges stream from the replicas left to their new ones", "host_id", id, "node", m.Addr)
	before := c.node.Topology().Ring()
	after, err := before.Without(id)
	if err != nil {
		return fmt.Errorf("server: removenode: %w", err)
	}
	tasks, err := c.plan(before, after, func(mv ring.Movement, target ring.HostID) []ring.HostID {
		t, _ := c.node.Topology().Member(target)
		return c.order(mv.Sources, nil, t, id)
	})
	if err != nil {
		return err
	}
	if err := c.waitRing(ctx, index, tasks); err != nil {
		return err
	}
	if err := c.stream(ctx, tasks); err != nil {
		return fmt.Errorf("server: removenode: %w (run removenode again to continue)", err)
	}
	if err := c.removeMember(ctx, id); err != nil {
		return fmt.Errorf("server: removenode: %w", err)
	}
	c.log.Info("removed node", "host_id", id, "node", m.Addr, "streams", len(tasks))
	return nil
}

// proposeTimeout bounds each change of a member through the metadata log:
// a log without a quorum (two members, one of them dead) commits nothing,
// and the operator is told so instead of waiting forever.
const proposeTimeout = 30 * time.Second

func (c *changes) setStatus(ctx context.Context, id ring.HostID, st cluster.Status) (uint64, error) {
	ctx, cancel := context.WithTimeout(ctx, proposeTimeout)
	defer cancel()
	index, err := c.node.SetStatus(ctx, id, st)
	return index, noQuorum(ctx, err)
}

func (c *changes) removeMember(ctx context.Context, id ring.HostID) error {
	ctx, cancel := context.WithTimeout(ctx, proposeTimeout)
	defer cancel()
	_, err := c.node.RemoveMember(ctx, id)
	return noQuorum(ctx, err)
}

// noQuorum says why a proposal timed out.
func noQuorum(ctx context.Context, err error) error {
	if err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("the metadata log did not commit the change within %s: a majority of its members must be up "+
			"(a cluster of two with one dead has none): %w", proposeTimeout, err)
	}
	return err
}

// movementRefusal is the answer to a status change the log refused
// because another node is joining or leaving.
func movementRefusal(err error) error {
	if errors.Is(err, cluster.ErrMovementInProgress) {
		return unsupported("Other bootstrapping/leaving/moving nodes detected, cannot proceed while one is (%v)", err)
	}
	return err
}

// order is the sources to try for target: preferred ones first (in
// placement order), then the others of target's data center, then the
// rest; exclude is never one.
func (c *changes) order(sources, preferred []ring.HostID, target cluster.Member, exclude ring.HostID) []ring.HostID {
	topo := c.node.Topology()
	rank := func(h ring.HostID) int {
		switch m, _ := topo.Member(h); {
		case slices.Contains(preferred, h):
			return 0
		case m.DataCenter == target.DataCenter:
			return 1
		}
		return 2
	}
	var out []ring.HostID
	for _, h := range sources {
		if h != exclude && h != target.HostID {
			out = append(out, h)
		}
	}
	slices.SortStableFunc(out, func(a, b ring.HostID) int { return rank(a) - rank(b) })
	return out
}

// streamTask is one table's range streaming to one node.
type streamTask struct {
	stream  replica.Stream
	target  ring.HostID
	sources []ring.HostID
}

// keyspaces are the keyspaces whose data is placed on the ring.
func (c *changes) keyspaces() []*storage.KeyspaceDef {
	var out []*storage.KeyspaceDef
	for _, ks := range c.catalog.Keyspaces() {
		if systables.IsSystemKeyspace(ks.Name) || strings.HasSuffix(ks.Replication["class"], "LocalStrategy") {
			continue
		}
		out = append(out, ks)
	}
	return out
}

// plan lists the streams that ring before becoming ring after needs, for
// every table of every keyspace placed on the ring: for each range that
// gains a replica, the sources sources names for that target (none: the
// target is not this change's to fill).
func (c *changes) plan(before, after *ring.Ring, sources func(mv ring.Movement, target ring.HostID) []ring.HostID) ([]*streamTask, error) {
	var tasks []*streamTask
	byStrategy := map[string][]ring.Movement{}
	for _, ks := range c.keyspaces() {
		st, err := ring.ParseStrategy(ks.Name, ks.Replication)
		if err != nil {
			return nil, fmt.Errorf("server: keyspace %s: %w", ks.Name, err)
		}
		key := fmt.Sprint(st.Options())
		moves, ok := byStrategy[key]
		if !ok {
			moves = ring.Movements(st, before, after)
			byStrategy[key] = moves
		}
		names := make([]string, 0, len(ks.Tables))
		for name := range ks.Tables {
			names = append(names, name)
		}
		slices.Sort(names)
		for _, name := range names {
			t, ok := c.tables(ks.Tables[name].ID)
			if !ok {
				continue
			}
			for _, mv := range moves {
				for _, target := range mv.Targets {
					srcs := sources(mv, target)
					if len(srcs) == 0 {
						continue
					}
					tasks = append(tasks, &streamTask{
						stream:  replica.Stream{Table: t, Range: storage.TokenRange{Start: mv.Range.Start, End: mv.Range.End}},
						target:  target,
						sources: srcs,
					})
				}
			}
		}
	}
	return tasks, nil
}

// stream runs tasks, streamParallelism at a time, and returns the first
// failure once the others have stopped.
func (c *changes) stream(ctx context.Context, tasks []*streamTask) error {
	c.mu.Lock()
	c.progress.Streams += len(tasks)
	if c.progress.Streaming.IsZero() {
		c.progress.Streaming = time.Now()
	}
	c.mu.Unlock()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	work := make(chan *streamTask)
	errs := make(chan error, streamParallelism)
	var wg sync.WaitGroup
	for range streamParallelism {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for t := range work {
				if err := c.runTask(ctx, t); err != nil {
					errs <- err
					cancel()
					return
				}
				c.mu.Lock()
				c.progress.Done++
				c.mu.Unlock()
			}
		}()
	}
feed:
	for _, t := range tasks {
		select {
		case work <- t:
		case <-ctx.Done():
			break feed
		}
	}
	close(work)
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return err
	}
	return ctx.Err()
}

// runTask streams t from its sources in order, resuming where the last
// one stopped, round after round with a growing wait while none is up or
// every one fails.
func (c *changes) runTask(ctx context.Context, t *streamTask) error {
	to, err := c.members.streamer(t.target)
	if err != nil {
		return err
	}
	wait := streamRetryFirst
	var last error
	for round := 1; ; round++ {
		for _, src := range t.sources {
			if !c.node.Alive(src) {
				last = fmt.Errorf("source %s is down", src)
				continue
			}
			from, err := c.members.streamer(src)
			if err != nil {
				last = err
				continue
			}
			dir := "relay"
			switch c.members.self {
			case t.target:
				dir = "in"
			case src:
				dir = "out"
			}
			err = t.stream.Run(ctx, from, to, replica.StreamOptions{Metrics: c.metrics, Direction: dir, OnPage: c.page})
			if err == nil {
				return nil
			}
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if _, ok := c.tables(t.stream.Table.Def.ID); !ok {
				// Dropped meanwhile: nothing left to stream.
				return nil
			}
			last = err
			c.log.Warn("a stream failed; trying the next source", "table", t.stream.Table.Def.Keyspace+"."+t.stream.Table.Def.Name,
				"range", t.stream.Range, "source", src, "target", t.target, "err", err)
		}
		if round == streamRounds {
			return fmt.Errorf("no source could stream %s.%s (%d, %d] to %s: %w", t.stream.Table.Def.Keyspace, t.stream.Table.Def.Name,
				t.stream.Range.Start, t.stream.Range.End, t.target, last)
		}
		select {
		case <-c.after(wait):
		case <-ctx.Done():
			return ctx.Err()
		}
		wait = min(2*wait, streamRetryMax)
	}
}

func (c *changes) page(partitions, bytes int) {
	c.mu.Lock()
	c.progress.Partitions += int64(partitions)
	c.progress.Bytes += int64(bytes)
	c.mu.Unlock()
}
