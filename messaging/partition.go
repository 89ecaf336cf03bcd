package messaging

import (
	"net/netip"
	"slices"
	"sync/atomic"
)

// Partitioner is the fault seam of a transport in a running process: it
// cuts this node off from chosen peers as a network partition does, for
// tests of cqld processes (InmemNetwork's Partition is the in-process
// one). TCPTransport implements it.
type Partitioner interface {
	// Partition drops, from now until Heal, every message this node sends
	// to one of peers and every message it receives from one, silently:
	// requests across the cut time out, one-way messages are lost, and
	// each drop is counted in Metrics.Dropped with reason DropFault. A
	// peer with port 0 stands for every port of its address. It replaces
	// the set of a previous Partition.
	Partition(peers []netip.AddrPort)
	// Heal ends the partition.
	Heal()
	// Partitioned returns the peers cut off now.
	Partitioned() []netip.AddrPort
}

var _ Partitioner = (*TCPTransport)(nil)

// partition is the set of peers a TCPTransport is cut off from, read on
// every batch written and message received. Safe for concurrent use.
type partition struct {
	peers atomic.Pointer[[]netip.AddrPort] // nil or empty: none
}

func (p *partition) set(peers []netip.AddrPort) {
	cut := slices.Clone(peers)
	p.peers.Store(&cut)
}

func (p *partition) list() []netip.AddrPort {
	if cut := p.peers.Load(); cut != nil {
		return slices.Clone(*cut)
	}
	return nil
}

// cuts reports whether messages to or from peer are dropped.
func (p *partition) cuts(peer netip.AddrPort) bool {
	cut := p.peers.Load()
	if cut == nil {
		return false
	}
	for _, c := range *cut {
		if c == peer || c.Port() == 0 && c.Addr() == peer.Addr() {
			return true
		}
	}
	return false
}

// Partition implements Partitioner. Connections stay open, as they do
// across a real partition; what was already written may still arrive.
func (t *TCPTransport) Partition(peers []netip.AddrPort) {
	t.cut.set(peers)
	t.log.Warn("messaging: fault injection: partitioned from peers, dropping every message to and from them",
		"peers", peers)
}

// Heal implements Partitioner.
func (t *TCPTransport) Heal() {
	t.cut.set(nil)
	t.log.Warn("messaging: fault injection: partition healed")
}

// Partitioned implements Partitioner.
func (t *TCPTransport) Partitioned() []netip.AddrPort { return t.cut.list() }

// cutWrite wraps a connection's write to peer so that, while the
// partition cuts peer, a batch is dropped instead of written. Requests
// among it stay in their call table and time out.
func (t *TCPTransport) cutWrite(peer netip.AddrPort, label string, write func([]*outMsg) error) func([]*outMsg) error {
	return func(batch []*outMsg) error {
		if !t.cut.cuts(peer) {
			return write(batch)
		}
		for _, m := range batch {
			t.metrics.dropped(m.verb, label, DropFault)
		}
		return nil
	}
}

// cutRead reports whether m, received from peer, is dropped by the
// partition, and counts it if so.
func (t *TCPTransport) cutRead(peer netip.AddrPort, label string, m message) bool {
	if !t.cut.cuts(peer) {
		return false
	}
	t.metrics.dropped(m.verb, label, DropFault)
	return true
}
