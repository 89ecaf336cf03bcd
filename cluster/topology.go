package cluster

import (
	"errors"
	"fmt"
	"maps"
	"net/netip"
	"slices"

	"github.com/cqld/cqld/ring"
)

// Status is a member's state in the ring, as Cassandra's gossip names it.
type Status uint8

const (
	// StatusJoining: the node has tokens but does not serve reads yet;
	// writes reach it as a pending replica.
	StatusJoining Status = iota + 1
	// StatusNormal: a member of the ring.
	StatusNormal
	// StatusLeaving: the node is streaming its ranges away; it still
	// serves, and writes also reach the nodes taking its ranges.
	StatusLeaving
)

func (s Status) String() string {
	switch s {
	case StatusJoining:
		return "JOINING"
	case StatusNormal:
		return "NORMAL"
	case StatusLeaving:
		return "LEAVING"
	}
	return fmt.Sprintf("STATUS_%d", uint8(s))
}

// Member is a node of the cluster as the metadata log records it.
type Member struct {
	HostID ring.HostID `json:"host_id"`
	// Addr is the node's internode address, broadcast_address:storage_port.
	Addr       netip.AddrPort `json:"addr"`
	DataCenter string         `json:"dc"`
	Rack       string         `json:"rack"`
	Tokens     []int64        `json:"tokens"`
	Status     Status         `json:"status"`
}

// Topology is the cluster's members at one log index. It is immutable: a
// change builds a new one.
type Topology struct {
	members map[ring.HostID]Member
	ring    *ring.Ring
	pending pendingChange
}

// pendingChange is what joining and leaving members change, for
// ring.PendingRanges.
type pendingChange struct {
	joining []ring.Node
	leaving []ring.HostID
}

// NewTopology builds the topology of members.
func NewTopology(members []Member) (*Topology, error) {
	t := &Topology{members: make(map[ring.HostID]Member, len(members))}
	var normal []ring.Node
	for _, m := range members {
		if _, dup := t.members[m.HostID]; dup {
			return nil, fmt.Errorf("cluster: host id %s appears twice", m.HostID)
		}
		m.Tokens = slices.Clone(m.Tokens)
		slices.Sort(m.Tokens)
		t.members[m.HostID] = m
		n := m.ringNode()
		switch m.Status {
		case StatusNormal:
			normal = append(normal, n)
		case StatusLeaving:
			normal = append(normal, n)
			t.pending.leaving = append(t.pending.leaving, m.HostID)
		case StatusJoining:
			t.pending.joining = append(t.pending.joining, n)
		default:
			return nil, fmt.Errorf("cluster: member %s has status %s", m.HostID, m.Status)
		}
	}
	r, err := ring.New(normal)
	if err != nil {
		return nil, fmt.Errorf("cluster: %w", err)
	}
	t.ring = r
	return t, nil
}

// RingNode is m as a node of the ring.
func (m Member) RingNode() ring.Node { return m.ringNode() }

func (m Member) ringNode() ring.Node {
	return ring.Node{HostID: m.HostID, Addr: m.Addr.Addr(), DC: m.DataCenter, Rack: m.Rack, Tokens: m.Tokens}
}

// Ring is the ring of the members that serve: normal and leaving ones.
func (t *Topology) Ring() *ring.Ring { return t.ring }

// Pending returns the joining nodes and the leaving members, for
// ring.PendingRanges.
func (t *Topology) Pending() (joining []ring.Node, leaving []ring.HostID) {
	return slices.Clone(t.pending.joining), slices.Clone(t.pending.leaving)
}

// Member returns the member with host id id.
func (t *Topology) Member(id ring.HostID) (Member, bool) {
	m, ok := t.members[id]
	return m, ok
}

// Members returns every member, by host id.
func (t *Topology) Members() []Member {
	ids := slices.SortedFunc(maps.Keys(t.members), func(a, b ring.HostID) int { return slices.Compare(a[:], b[:]) })
	out := make([]Member, len(ids))
	for i, id := range ids {
		out[i] = t.members[id]
	}
	return out
}

// ByAddr returns the member whose internode address is a.
func (t *Topology) ByAddr(a netip.AddrPort) (Member, bool) {
	for _, m := range t.members {
		if m.Addr == a {
			return m, true
		}
	}
	return Member{}, false
}

// ErrMovementInProgress is wrapped by the refusal of a node's joining or
// leaving while another node is: ranges move for one change at a time
// (Cassandra's cassandra.consistent.rangemovement, always on).
var ErrMovementInProgress = errors.New("cluster: another node is joining or leaving the ring")

// checkChange reports whether m may become t's record of its node: a new
// node joins (JOINING) or is a member at once (NORMAL); a joining node
// becomes NORMAL; a normal one LEAVING, and a leaving one NORMAL again (its
// leave given up); a member keeps its tokens. JOINING and LEAVING are
// refused while another member is in either.
func (t *Topology) checkChange(m Member) error {
	old, exists := t.members[m.HostID]
	if exists && !slices.Equal(old.Tokens, sorted(m.Tokens)) {
		return fmt.Errorf("cluster: member %s cannot change its tokens", m.HostID)
	}
	from := Status(0)
	if exists {
		from = old.Status
	}
	ok := from == m.Status
	switch m.Status {
	case StatusJoining:
		ok = ok || from == 0
	case StatusNormal:
		ok = ok || from == 0 || from == StatusJoining || from == StatusLeaving
	case StatusLeaving:
		ok = ok || from == StatusNormal
	}
	if !ok {
		if from == 0 {
			return fmt.Errorf("cluster: node %s cannot be added as %s", m.HostID, m.Status)
		}
		return fmt.Errorf("cluster: member %s cannot go from %s to %s", m.HostID, from, m.Status)
	}
	if m.Status != from && (m.Status == StatusJoining || m.Status == StatusLeaving) {
		for _, o := range t.members {
			if o.HostID != m.HostID && (o.Status == StatusJoining || o.Status == StatusLeaving) {
				return fmt.Errorf("%w: %s (%s) is %s", ErrMovementInProgress, o.HostID, o.Addr.Addr(), o.Status)
			}
		}
	}
	return nil
}

func sorted(ts []int64) []int64 {
	ts = slices.Clone(ts)
	slices.Sort(ts)
	return ts
}

// Moving returns the member joining or leaving, if one is.
func (t *Topology) Moving() (Member, bool) {
	for _, m := range t.Members() {
		if m.Status == StatusJoining || m.Status == StatusLeaving {
			return m, true
		}
	}
	return Member{}, false
}

// with is t with m added or replaced.
func (t *Topology) with(m Member) (*Topology, error) {
	ms := make([]Member, 0, len(t.members)+1)
	for id, o := range t.members {
		if id != m.HostID {
			ms = append(ms, o)
		}
	}
	return NewTopology(append(ms, m))
}

// without is t without member id.
func (t *Topology) without(id ring.HostID) (*Topology, error) {
	ms := make([]Member, 0, len(t.members))
	for hid, o := range t.members {
		if hid != id {
			ms = append(ms, o)
		}
	}
	return NewTopology(ms)
}
