package gossip

import (
	"fmt"
	"net/netip"
	"time"

	"github.com/hashicorp/memberlist"

	"github.com/cqld/cqld/ring"
)

// delegate is memberlist's view of a Gossip: it reads this node's
// metadata, checks announced peers and turns memberlist's callbacks into
// Events. memberlist calls it with its node lock held, so it never calls
// memberlist back and never blocks.
type delegate struct{ g *Gossip }

var (
	_ memberlist.Delegate         = (*delegate)(nil)
	_ memberlist.EventDelegate    = (*delegate)(nil)
	_ memberlist.AliveDelegate    = (*delegate)(nil)
	_ memberlist.ConflictDelegate = (*delegate)(nil)
)

// NodeMeta implements memberlist.Delegate.
func (d *delegate) NodeMeta(limit int) []byte {
	d.g.mu.Lock()
	defer d.g.mu.Unlock()
	var flags byte
	if d.g.left {
		flags |= flagLeaving
	}
	if 1+len(d.g.metaEnc) > limit {
		// AppendMeta keeps it under memberlist's limit.
		return nil
	}
	return appendNodeMeta(make([]byte, 0, 1+len(d.g.metaEnc)), flags, d.g.metaEnc)
}

// NotifyMsg, GetBroadcasts, LocalState and MergeRemoteState implement
// memberlist.Delegate: gossip sends no messages of its own.
func (d *delegate) NotifyMsg([]byte)                {}
func (d *delegate) GetBroadcasts(int, int) [][]byte { return nil }
func (d *delegate) LocalState(bool) []byte          { return nil }
func (d *delegate) MergeRemoteState([]byte, bool)   {}

// NotifyAlive implements memberlist.AliveDelegate: a peer is refused when
// its name is not a host id, its metadata does not decode, or another
// live node (this one included) has its address.
func (d *delegate) NotifyAlive(n *memberlist.Node) error {
	g := d.g
	if n.Name == g.name {
		return nil
	}
	id, addr, _, _, err := parseNode(n)
	if err != nil {
		return g.refuse(RefusedInvalid, n.Name, err)
	}
	g.mu.Lock()
	var holder ring.HostID
	found := addr == g.self
	if found {
		holder = g.opts.HostID
	}
	for _, m := range g.members {
		if !found && m.Up && m.Addr == addr && m.HostID != id {
			holder, found = m.HostID, true
		}
	}
	g.mu.Unlock()
	if found {
		return g.refuse(RefusedAddress, n.Name, fmt.Errorf("gossip: node %s announces address %s, which live node %s has", id, addr, holder))
	}
	return nil
}

// NotifyConflict implements memberlist.ConflictDelegate: memberlist has
// refused a node announcing the host id of a live node from another
// address.
func (d *delegate) NotifyConflict(existing, other *memberlist.Node) {
	_ = d.g.refuse(RefusedHostID, other.Name, fmt.Errorf("gossip: a node at %s announces host id %s, which the live node at %s has",
		nodeAddr(other), other.Name, nodeAddr(existing)))
}

// refuse counts a refusal, logs it the first time, and returns err.
func (g *Gossip) refuse(reason, name string, err error) error {
	g.metrics.Refused.WithLabelValues(reason).Inc()
	key := reason + " " + name
	g.mu.Lock()
	logged := g.refusals[key]
	if !logged {
		if len(g.refusals) >= 1024 {
			clear(g.refusals)
		}
		g.refusals[key] = true
	}
	g.mu.Unlock()
	if !logged {
		g.log.Warn("gossip: node refused", "reason", reason, "err", err)
	}
	return err
}

// NotifyJoin implements memberlist.EventDelegate: a node is alive that
// was unknown, dead or gone.
func (d *delegate) NotifyJoin(n *memberlist.Node) {
	d.g.withPeer(n, func(g *Gossip, id ring.HostID, addr netip.AddrPort, meta Meta, m *Member) {
		kind := Up
		if m == nil {
			m = &Member{HostID: id}
			g.members[id] = m
			kind = Joined
		} else if m.Up {
			kind = MetaChanged
			if m.Meta == meta && m.Addr == addr {
				return
			}
		}
		m.Addr, m.Up, m.DownSince, m.Meta = addr, true, time.Time{}, meta
		g.changed(kind, m)
	})
}

// NotifyLeave implements memberlist.EventDelegate: a node was declared
// dead, or left.
func (d *delegate) NotifyLeave(n *memberlist.Node) {
	d.g.withPeer(n, func(g *Gossip, id ring.HostID, _ netip.AddrPort, _ Meta, m *Member) {
		switch {
		case m == nil:
		case g.leaving[id]:
			delete(g.members, id)
			delete(g.leaving, id)
			g.changed(Left, m)
		case m.Up:
			m.Up, m.DownSince = false, g.opts.Now()
			g.changed(Down, m)
		}
	})
}

// NotifyUpdate implements memberlist.EventDelegate.
func (d *delegate) NotifyUpdate(n *memberlist.Node) {
	d.g.withPeer(n, func(g *Gossip, _ ring.HostID, addr netip.AddrPort, meta Meta, m *Member) {
		if m == nil || (m.Meta == meta && m.Addr == addr) {
			return
		}
		m.Addr, m.Meta = addr, meta
		if m.Up {
			g.changed(MetaChanged, m)
		}
	})
}

// withPeer runs f, with g.mu held, on what memberlist node n announces
// and the member it is (nil if unknown), after recording whether it is
// leaving. It skips this node and nodes that do not parse (NotifyAlive
// refused those, so none is expected).
func (g *Gossip) withPeer(n *memberlist.Node, f func(g *Gossip, id ring.HostID, addr netip.AddrPort, meta Meta, m *Member)) {
	if n.Name == g.name {
		return
	}
	id, addr, flags, meta, err := parseNode(n)
	if err != nil {
		g.log.Warn("gossip: member ignored", "name", n.Name, "err", err)
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if flags&flagLeaving != 0 {
		g.leaving[id] = true
	} else {
		delete(g.leaving, id)
	}
	f(g, id, addr, meta, g.members[id])
}

// changed records m's new state and queues its event. REQUIRES: g.mu
// held.
func (g *Gossip) changed(kind EventKind, m *Member) {
	g.countMembers()
	switch kind {
	case Joined, Up, Down, Left:
		g.log.Info("gossip: node "+kind.String(), "host_id", m.HostID, "addr", m.Addr)
	}
	if kind == Joined || kind == Up {
		g.markJoinedLocked()
	}
	g.events.push(Event{Kind: kind, Member: *m})
}

func parseNode(n *memberlist.Node) (ring.HostID, netip.AddrPort, byte, Meta, error) {
	id, err := ring.ParseHostID(n.Name)
	if err != nil {
		return id, netip.AddrPort{}, 0, Meta{}, fmt.Errorf("gossip: node name: %w", err)
	}
	addr := nodeAddr(n)
	if !addr.IsValid() {
		return id, addr, 0, Meta{}, fmt.Errorf("gossip: node %s has no valid address", id)
	}
	flags, meta, err := decodeNodeMeta(n.Meta)
	if err != nil {
		return id, addr, 0, meta, fmt.Errorf("gossip: node %s at %s: %w", id, addr, err)
	}
	return id, addr, flags, meta, nil
}

func nodeAddr(n *memberlist.Node) netip.AddrPort {
	ip, ok := netip.AddrFromSlice(n.Addr)
	if !ok {
		return netip.AddrPort{}
	}
	return netip.AddrPortFrom(ip.Unmap(), n.Port)
}
