package proxy

import (
	"slices"

	"github.com/datastax/go-cassandra-native-protocol/primitive"

	"github.com/cqld/cqld/cqlerr"
	"github.com/cqld/cqld/ring"
	"github.com/cqld/cqld/storage"
)

// need is what a consistency level asks of one partition's replicas
// (ConsistencyLevel.blockFor and blockForWrite, and which replies count:
// the local data center's alone for the LOCAL_ levels, a quorum in every
// data center for EACH_QUORUM).
type need struct {
	cl primitive.ConsistencyLevel
	// dc, when set, is the one data center whose replies count.
	dc       string
	blockFor int
	// perDC, for EACH_QUORUM over NetworkTopologyStrategy, replaces
	// blockFor with a count for each data center.
	perDC map[string]int
}

func (n *need) total() int {
	if n.perDC == nil {
		return n.blockFor
	}
	t := 0
	for _, c := range n.perDC {
		t += c
	}
	return t
}

// counts reports whether a reply from a replica of data center dc counts.
func (n *need) counts(dc string) bool {
	if n.perDC != nil {
		_, ok := n.perDC[dc]
		return ok
	}
	return n.dc == "" || n.dc == dc
}

func (p *Proxy) strategy(ks *storage.KeyspaceDef) (ring.Strategy, error) {
	return p.opts.Topology.Strategy(ks)
}

func (p *Proxy) localDC() string { return p.localDCName }

// totalRF is the replication factor summed over every data center the
// strategy names (ReplicationFactor.allReplicas).
func totalRF(st ring.Strategy) int {
	if nts, ok := st.(ring.NetworkTopologyStrategy); ok {
		n := 0
		for _, rf := range nts.RF {
			n += rf
		}
		return n
	}
	return st.ReplicationFactor("")
}

// localQuorum is a quorum of data center dc's replicas; a strategy that
// knows no data centers has one quorum of all its replicas.
func localQuorum(st ring.Strategy, dc string) int {
	if _, ok := st.(ring.NetworkTopologyStrategy); ok {
		return st.ReplicationFactor(dc)/2 + 1
	}
	return totalRF(st)/2 + 1
}

// needFor is level cl's need for a partition of strategy st; a write
// also counts its pending replicas.
func (p *Proxy) needFor(cl primitive.ConsistencyLevel, st ring.Strategy, pending []ring.HostID, write bool) need {
	n := levelNeed(cl, st, p.localDC())
	if !write || cl == primitive.ConsistencyLevelAny {
		return n
	}
	for _, h := range pending {
		switch {
		case n.perDC != nil:
			n.perDC[p.opts.Topology.DC(h)]++
		case n.counts(p.opts.Topology.DC(h)):
			n.blockFor++
		}
	}
	return n
}

// levelNeed is level cl's need for a partition of strategy st, on a node
// of data center localDC, before pending replicas are counted.
func levelNeed(cl primitive.ConsistencyLevel, st ring.Strategy, localDC string) need {
	n := need{cl: cl}
	switch cl {
	case primitive.ConsistencyLevelAny, primitive.ConsistencyLevelOne:
		n.blockFor = 1
	case primitive.ConsistencyLevelLocalOne:
		n.blockFor, n.dc = 1, localDC
	case primitive.ConsistencyLevelTwo:
		n.blockFor = 2
	case primitive.ConsistencyLevelThree:
		n.blockFor = 3
	case primitive.ConsistencyLevelQuorum, primitive.ConsistencyLevelSerial:
		n.blockFor = totalRF(st)/2 + 1
	case primitive.ConsistencyLevelAll:
		n.blockFor = totalRF(st)
	case primitive.ConsistencyLevelLocalQuorum, primitive.ConsistencyLevelLocalSerial:
		n.blockFor, n.dc = localQuorum(st, localDC), localDC
	case primitive.ConsistencyLevelEachQuorum:
		nts, ok := st.(ring.NetworkTopologyStrategy)
		if !ok {
			n.blockFor = totalRF(st)/2 + 1
			break
		}
		n.perDC = map[string]int{}
		for dc := range nts.RF {
			n.perDC[dc] = localQuorum(st, dc)
		}
	default:
		n.blockFor = 1
	}
	return n
}

// dcs says which data center a host is in (Topology.DC).
type dcs interface {
	DC(h ring.HostID) string
}

// available refuses, before anything is sent, a request whose level
// needs more of its replicas than live are up.
func (p *Proxy) available(n *need, live []ring.HostID) error {
	return availableIn(n, live, p.opts.Topology)
}

// availableIn is available with the data centers of d.
func availableIn(n *need, live []ring.HostID, d dcs) error {
	if n.cl == primitive.ConsistencyLevelAny {
		return nil // a hint is always possible
	}
	if n.perDC != nil {
		for _, dc := range sortedDCs(n.perDC) {
			if c := countIn(live, dc, d); c < n.perDC[dc] {
				return unavailable(n.cl, n.perDC[dc], c)
			}
		}
		return nil
	}
	c := len(live)
	if n.dc != "" {
		c = countIn(live, n.dc, d)
	}
	if c < n.blockFor {
		return unavailable(n.cl, n.blockFor, c)
	}
	return nil
}

func countIn(hosts []ring.HostID, dc string, d dcs) int {
	c := 0
	for _, h := range hosts {
		if d.DC(h) == dc {
			c++
		}
	}
	return c
}

func sortedDCs(m map[string]int) []string {
	out := make([]string, 0, len(m))
	for dc := range m {
		out = append(out, dc)
	}
	slices.Sort(out)
	return out
}

// tally counts the replies to one partition's request against its need.
type tally struct {
	n     *need
	got   int
	perDC map[string]int
}

func newTally(n *need) tally {
	t := tally{n: n}
	if n.perDC != nil {
		t.perDC = map[string]int{}
	}
	return t
}

// ack counts a reply from a replica of data center dc.
func (t *tally) ack(dc string) {
	switch {
	case t.perDC != nil:
		if _, ok := t.n.perDC[dc]; ok {
			t.perDC[dc]++
		}
	case t.n.counts(dc):
		t.got++
	}
}

// ackAny counts a reply whatever its data center: a hint under ANY.
func (t *tally) ackAny() { t.got++ }

func (t *tally) met() bool {
	if t.perDC == nil {
		return t.got >= t.n.blockFor
	}
	for dc, c := range t.n.perDC {
		if t.perDC[dc] < c {
			return false
		}
	}
	return true
}

func (t *tally) received() int {
	n := t.got
	for _, c := range t.perDC {
		n += c
	}
	return n
}

// reachable reports whether the need can still be met when the replies
// still to come are from replicas of these data centers.
func (t *tally) reachable(pendingDCs []string) bool {
	if t.perDC == nil {
		c := t.got
		for _, dc := range pendingDCs {
			if t.n.counts(dc) {
				c++
			}
		}
		return c >= t.n.blockFor
	}
	for dc, need := range t.n.perDC {
		c := t.perDC[dc]
		for _, d := range pendingDCs {
			if d == dc {
				c++
			}
		}
		if c < need {
			return false
		}
	}
	return true
}

// checkRead refuses the levels Cassandra 4.0 refuses for reads, with its
// words (ConsistencyLevel.validateForRead): ANY alone. EACH_QUORUM reads,
// refused by Cassandra before 3.0, are served, as 4.0 serves them.
func checkRead(cl primitive.ConsistencyLevel) error {
	if cl == primitive.ConsistencyLevelAny {
		return cqlerr.Invalidf("ANY ConsistencyLevel is only supported for writes")
	}
	return nil
}

func isSerial(cl primitive.ConsistencyLevel) bool {
	return cl == primitive.ConsistencyLevelSerial || cl == primitive.ConsistencyLevelLocalSerial
}
