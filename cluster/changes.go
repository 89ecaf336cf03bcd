package cluster

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"time"

	"github.com/cqld/cqld/messaging"
	"github.com/cqld/cqld/ring"
)

// What a topology change (a join, a decommission, a removenode) needs of
// the node running it. The data moves elsewhere (the caller streams); here
// are the member's states through the log and the wait that makes sure
// every coordinator routes by the new state before data moves.

// Self is this node's member record, if the topology has one.
func (n *Node) Self() (Member, bool) { return n.Topology().Member(n.opts.HostID) }

// Bootstrapping reports whether this node is JOINING: it must stream its
// ranges, then SetStatus NORMAL.
func (n *Node) Bootstrapping() bool {
	m, ok := n.Self()
	return ok && m.Status == StatusJoining
}

// SetStatus proposes member id's status, keeping the rest of its record,
// and returns the index of the entry once this node has applied it.
func (n *Node) SetStatus(ctx context.Context, id ring.HostID, st Status) (uint64, error) {
	m, ok := n.Topology().Member(id)
	if !ok {
		return 0, fmt.Errorf("cluster: no member %s", id)
	}
	m.Status = st
	if err := n.checkQuorum(ctx, "change the ring"); err != nil {
		return 0, err
	}
	r, err := n.propose(ctx, Entry{Kind: KindMember, Member: m})
	return r.Index, err
}

// RemoveMember takes member id out of the ring, then out of the metadata
// log's configuration (the raft group), and returns the ring entry's
// index. A member that is not in the ring any more is only taken out of
// the log's configuration.
func (n *Node) RemoveMember(ctx context.Context, id ring.HostID) (uint64, error) {
	if err := n.checkQuorum(ctx, "change the ring"); err != nil {
		return 0, err
	}
	var index uint64
	if _, ok := n.Topology().Member(id); ok {
		r, err := n.propose(ctx, Entry{Kind: KindRemove, Member: Member{HostID: id}})
		if err != nil {
			return 0, err
		}
		index = r.Index
	}
	if err := n.log.Remove(ctx, id); err != nil {
		return index, fmt.Errorf("cluster: removing %s from the metadata log: %w", id, err)
	}
	return index, nil
}

// LeaveGossip tells the other nodes this one is leaving, so they see it
// left rather than down.
func (n *Node) LeaveGossip(ctx context.Context) error {
	g := n.gossip.Load()
	if g == nil {
		return nil
	}
	return g.Leave(ctx)
}

// ForgetGossip drops a removed node from this node's gossip members.
func (n *Node) ForgetGossip(id ring.HostID) {
	if g := n.gossip.Load(); g != nil {
		g.Forget(id)
	}
}

// Applied is the index of the last metadata log entry this node applied.
func (n *Node) Applied() uint64 { return n.state.Applied() }

// waitAppliedPoll is how often WaitApplied asks the nodes that are behind.
const waitAppliedPoll = 50 * time.Millisecond

// WaitApplied returns once every other member gossip says is up has
// applied the log's entry at index (so it routes writes by the topology
// of that entry), or with an error naming those that have not when ctx
// ends. A member down is not waited for: it applies the entry before it
// coordinates again.
func (n *Node) WaitApplied(ctx context.Context, index uint64) error {
	for {
		var behind []string
		var lastErr error
		for _, m := range n.Topology().Members() {
			if m.HostID == n.opts.HostID || !n.Alive(m.HostID) {
				continue
			}
			applied, err := n.appliedOn(ctx, m.Addr)
			if err == nil && applied >= index {
				continue
			}
			if err != nil {
				lastErr = err
			}
			behind = append(behind, m.Addr.Addr().String())
		}
		if len(behind) == 0 {
			return nil
		}
		select {
		case <-time.After(waitAppliedPoll):
		case <-ctx.Done():
			return fmt.Errorf("cluster: %v have not applied metadata entry %d: %w (last error: %v)", behind, index, ctx.Err(), lastErr)
		}
	}
}

// VerbTopology's messages, version 1: a request is the version and a
// kind; the answer to topologyApplied is the applied index as an unsigned
// varint.
const (
	topologyVersion = 1
	topologyApplied = 1
)

// errBadTopologyMessage is wrapped by decoding errors of VerbTopology.
var errBadTopologyMessage = errors.New("cluster: malformed topology message")

func (n *Node) appliedOn(ctx context.Context, peer netip.AddrPort) (uint64, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	out, err := n.transport.Request(ctx, peer, messaging.VerbTopology, []byte{topologyVersion, topologyApplied})
	if err != nil {
		return 0, err
	}
	return decodeApplied(out)
}

func decodeApplied(b []byte) (uint64, error) {
	v, k := binary.Uvarint(b)
	if k <= 0 || k != len(b) {
		return 0, fmt.Errorf("%w: applied index of %d bytes", errBadTopologyMessage, len(b))
	}
	return v, nil
}

func decodeTopologyRequest(b []byte) error {
	if len(b) != 2 || b[0] != topologyVersion || b[1] != topologyApplied {
		return fmt.Errorf("%w: request % x", errBadTopologyMessage, b)
	}
	return nil
}

// serveTopology answers VerbTopology.
func (n *Node) serveTopology(_ context.Context, in messaging.Inbound) ([]byte, error) {
	if err := decodeTopologyRequest(in.Payload); err != nil {
		return nil, err
	}
	return binary.AppendUvarint(nil, n.state.Applied()), nil
}
