package cluster

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"sync"
	"syscall"
	"time"
)

// DefaultCatchUpTimeout bounds how long a restarted member waits, before
// it serves, to apply the metadata log's entries its peers have applied:
// Cassandra's bound on its wait for schema at start-up
// (cassandra.schema_delay_ms), past which it starts anyway. It exceeds
// the longest back-off (about 10 s) of the log leader's replication to a
// peer that was down.
const DefaultCatchUpTimeout = 30 * time.Second

// peersDownGrace is how long every other server of the log must refuse
// connections (no process listening: they are down, not cut off) before
// a restarting member stops waiting for them: a cluster restarted one
// node after another has nobody for its first node to catch up with. The
// grace covers peers restarted at the same moment.
const peersDownGrace = 2 * time.Second

// errPeersDown is catchUp's answer when every peer refused connections
// for peersDownGrace.
var errPeersDown = errors.New("cluster: no other server of the metadata log is running")

// catchUp returns once this node has applied every entry that the other
// servers of the metadata log had applied when asked (the most any of
// them had), asking again while none answers, until ctx ends or, when
// stopIfDown, until they have all refused connections for peersDownGrace
// (errPeersDown). A node alone in the log's configuration has nothing to
// catch up with.
func (n *Node) catchUp(ctx context.Context, stopIfDown bool) error {
	var target uint64
	var downSince time.Time
	for {
		peers, err := n.logPeers()
		if err != nil {
			return err
		}
		if len(peers) == 0 {
			return nil
		}
		t, answered, down := n.appliedOnAny(ctx, peers)
		if answered {
			target = t
			break
		}
		switch {
		case !down:
			downSince = time.Time{}
		case downSince.IsZero():
			downSince = time.Now()
		case stopIfDown && time.Since(downSince) >= peersDownGrace:
			return fmt.Errorf("%w: %v refuse connections", errPeersDown, peers)
		}
		select {
		case <-time.After(waitAppliedPoll):
		case <-ctx.Done():
			return fmt.Errorf("cluster: catching up with the metadata log: none of %v answered: %w", peers, ctx.Err())
		}
	}
	for n.state.Applied() < target {
		select {
		case <-time.After(waitAppliedPoll):
		case <-ctx.Done():
			return fmt.Errorf("cluster: catching up with the metadata log: entry %d applied here, %d by the cluster: %w",
				n.state.Applied(), target, ctx.Err())
		}
	}
	return nil
}

// catchUpAtStart is catchUp for a member restarting, within
// NodeOptions.CatchUpTimeout: past it, the node starts with what it has
// applied and says so, as a node cut off from the others must still
// start.
func (n *Node) catchUpAtStart(ctx context.Context) {
	start, from := time.Now(), n.state.Applied()
	ctx, cancel := context.WithTimeout(ctx, n.opts.CatchUpTimeout)
	defer cancel()
	err := n.catchUp(ctx, true)
	if errors.Is(err, errPeersDown) {
		n.opts.Logger.Info("no other member is running: this node starts with the cluster's metadata as it last applied it", "entry", from, "reason", err)
		return
	}
	if err != nil {
		n.opts.Logger.Warn("this node starts without having caught up with the cluster's metadata log: "+
			"until it does, it may not know tables, keyspaces or nodes the others know", "waited", n.opts.CatchUpTimeout, "err", err)
		return
	}
	if to := n.state.Applied(); to > from {
		n.opts.Logger.Info("caught up with the cluster's metadata log", "from_entry", from, "to_entry", to, "took", time.Since(start).Round(time.Millisecond))
	}
}

// logPeers are the internode addresses of the other servers of the
// metadata log's configuration as this node knows it.
func (n *Node) logPeers() ([]netip.AddrPort, error) {
	ms, err := n.log.Members()
	if err != nil {
		return nil, fmt.Errorf("cluster: %w", err)
	}
	var out []netip.AddrPort
	for _, m := range ms {
		if m.HostID != n.opts.HostID {
			out = append(out, m.Addr)
		}
	}
	return out, nil
}

// appliedOnAny asks every peer at once for the index it has applied and
// returns the highest answer, whether any answered, and whether every
// one refused the connection.
func (n *Node) appliedOnAny(ctx context.Context, peers []netip.AddrPort) (max uint64, answered, refused bool) {
	var (
		mu       sync.Mutex
		wg       sync.WaitGroup
		nRefused int
	)
	for _, p := range peers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a, err := n.appliedOn(ctx, p)
			mu.Lock()
			defer mu.Unlock()
			if errors.Is(err, syscall.ECONNREFUSED) {
				nRefused++
			}
			if err != nil {
				return
			}
			answered = true
			if a > max {
				max = a
			}
		}()
	}
	wg.Wait()
	return max, answered, nRefused == len(peers)
}
