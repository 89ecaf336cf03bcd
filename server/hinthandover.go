package server

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/cqld/cqld/cluster"
	"github.com/cqld/cqld/hints"
	"github.com/cqld/cqld/replica"
	"github.com/cqld/cqld/ring"
)

// hintSink is where a peer's handed-over hints for other nodes go: this
// node's hints store.
type hintSink struct {
	store   *hints.Store
	members *members
}

var _ replica.HintSink = hintSink{}

// Write implements replica.HintSink. A hint for a node down longer than
// max_hint_window is dropped, counted by the store, and answered as kept:
// this node would not have written it either, and refusing it would only
// stop the handover of the others. So is one for a node that is not a
// member of the cluster any more: this node deleted its hints for it when
// it left, and would keep these for ever.
func (s hintSink) Write(target ring.HostID, hint []byte, created time.Time) error {
	if _, ok := s.members.node.Load().Topology().Member(target); !ok {
		s.members.log.Warn("dropping a hint handed over for a node that is not a member of the cluster", "target", target)
		return nil
	}
	if err := s.store.Write(target, hint, created); err != nil && !errors.Is(err, hints.ErrWindowExpired) {
		return err
	}
	return nil
}

// transferHints hands this leaving node's hints over to a live NORMAL
// node, as Cassandra's decommission does (StorageService.unbootstrap,
// HintsService.transferHints): that node applies those for itself and
// keeps the others as hints of its own, delivered when their target is
// up. The nearest node is tried first (this node's data center and rack
// first, as Cassandra's snitch sorts), the next one if it fails.
//
// A decommission whose hints could not all be handed over fails (and the
// node becomes NORMAL again), as Cassandra's waits for the transfer and
// fails with it: the hints are writes acknowledged to clients, of which a
// hint is the only copy a replica that missed them will get without a
// repair (the only copy at all for a write at ANY), and they would leave
// with this node. The operator runs decommission again once a node can
// take them; what was handed over is not sent again.
func (c *changes) transferHints(ctx context.Context) error {
	store := c.members.hints
	if store == nil || len(store.Targets()) == 0 {
		return nil
	}
	receivers := c.hintReceivers()
	if len(receivers) == 0 {
		return errors.New("unable to hand this node's hints over since no live endpoints seen")
	}
	var errs []error
	for _, to := range receivers {
		r, err := c.members.remote(to.HostID)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		c.log.Info("decommission: handing this node's hints over", "to", to.Addr, "host_id", to.HostID, "targets", len(store.Targets()))
		err = store.Transfer(ctx, func(ctx context.Context, target ring.HostID, created time.Time, hint []byte) error {
			ctx, cancel := context.WithTimeout(ctx, c.settle)
			defer cancel()
			return r.TransferHint(ctx, target, created, hint)
		})
		if err == nil {
			c.log.Info("decommission: hints handed over", "to", to.Addr, "host_id", to.HostID)
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		c.log.Warn("decommission: failed to hand every hint over; trying another node", "to", to.Addr, "host_id", to.HostID, "err", err)
		errs = append(errs, fmt.Errorf("to %s: %w", to.Addr, err))
	}
	return fmt.Errorf("failed to hand this node's hints over: %w", errors.Join(errs...))
}

// hintReceivers are the nodes that can take this node's hints: the live
// NORMAL members, this node's data center first, then its rack, then by
// host id.
func (c *changes) hintReceivers() []cluster.Member {
	self, _ := c.node.Self()
	var out []cluster.Member
	for _, m := range c.node.Topology().Members() {
		if m.HostID != self.HostID && m.Status == cluster.StatusNormal && c.node.Alive(m.HostID) {
			out = append(out, m)
		}
	}
	far := func(m cluster.Member) int {
		switch {
		case m.DataCenter != self.DataCenter:
			return 2
		case m.Rack != self.Rack:
			return 1
		}
		return 0
	}
	slices.SortFunc(out, func(a, b cluster.Member) int {
		return cmp.Or(cmp.Compare(far(a), far(b)), slices.Compare(a.HostID[:], b.HostID[:]))
	})
	return out
}
