package proxy

import (
	"fmt"
	"net/netip"
	"strings"
	"sync/atomic"

	"github.com/datastax/go-cassandra-native-protocol/primitive"

	"github.com/cqld/cqld/ring"
	"github.com/cqld/cqld/storage"
)

// Topology says where a keyspace's data lives. Implementations are safe
// for concurrent use; the slices they return are shared and must not be
// modified.
type Topology interface {
	// Replicas returns the natural replicas of token t of keyspace ks, in
	// placement order (the primary first), and the pending ones: nodes
	// joining or taking over a leaving node's range, which get writes but
	// count for no read.
	Replicas(ks *storage.KeyspaceDef, t int64) (natural, pending []ring.HostID, err error)
	// Ranges returns every range of the ring in token order with the
	// natural replicas of ks there.
	Ranges(ks *storage.KeyspaceDef) ([]RangeReplicas, error)
	// Strategy is keyspace ks's replication strategy, for the
	// replication factors that consistency levels count.
	Strategy(ks *storage.KeyspaceDef) (ring.Strategy, error)
	// DC is host h's data center, "" when h is not known.
	DC(h ring.HostID) string
	// Addr is host h's broadcast address, invalid when h is not known.
	Addr(h ring.HostID) netip.Addr
	// Local is this node's host id and data center, which never change.
	Local() (ring.HostID, string)
	// Nodes are the ring's members, with their data centers and racks
	// (where logged batches are kept).
	Nodes() []ring.Node
}

// SoleReplicaTopology is a Topology that knows, without placing a token,
// when one replica holds all of a keyspace and none is pending: a node
// alone skips placing each partition of a write (localOnly).
type SoleReplicaTopology interface {
	Topology
	// SoleReplica is the replica of every token of ks, with the
	// keyspace's strategy, and false when there is not one only.
	SoleReplica(ks *storage.KeyspaceDef) (ring.HostID, ring.Strategy, bool)
	// LocalAlone is what this node meets by itself when it is the sole
	// replica of ks (SoleReplica), nil when it is not. It is worked out
	// once per keyspace definition and topology published, so its answer
	// changes with either; the value returned is shared and immutable.
	LocalAlone(ks *storage.KeyspaceDef) *LocalAlone
}

// LocalAlone is what this node, the sole replica of a keyspace with none
// pending, meets with its own replica: the levels it is available for
// (available, for reads and writes alike, as nothing is pending) and the
// levels that ask no other replica (AllLocal). A request on a node alone
// then asks whether its level is among them, not what the level needs.
type LocalAlone struct {
	Strategy ring.Strategy
	// met and inline have bit cl set for each level cl below 32 they
	// hold for; a level beyond is never set, and is worked out.
	met, inline uint32
}

// newLocalAlone is what replica local of data center localDC, the sole
// replica of a keyspace of strategy st, meets alone; d is the data
// centers of the ring it is the sole replica on.
func newLocalAlone(st ring.Strategy, local ring.HostID, localDC string, d dcs) *LocalAlone {
	a := &LocalAlone{Strategy: st}
	live := []ring.HostID{local}
	for cl := range primitive.ConsistencyLevel(32) {
		n := levelNeed(cl, st, localDC)
		if availableIn(&n, live, d) == nil {
			a.met |= 1 << cl
		}
		if n.total() <= 1 && (n.dc == "" || n.dc == localDC) {
			a.inline |= 1 << cl
		}
	}
	return a
}

// meets reports whether level cl is met by this replica alone; false
// when it is not, or cl is beyond what a was worked out for.
func (a *LocalAlone) meets(cl primitive.ConsistencyLevel) bool {
	return cl < 32 && a.met&(1<<cl) != 0
}

// inlines reports, for a level cl below 32, whether it asks no replica
// but this one; known is false for a level beyond.
func (a *LocalAlone) inlines(cl primitive.ConsistencyLevel) (inline, known bool) {
	if cl >= 32 {
		return false, false
	}
	return a.inline&(1<<cl) != 0, true
}

var _ SoleReplicaTopology = (*RingTopology)(nil)

// RangeReplicas is a token range and its natural replicas.
type RangeReplicas struct {
	Range    ring.Range
	Replicas []ring.HostID
}

// RingState is a topology as the cluster publishes it: the ring of normal
// members and the changes in progress, from which pending ranges follow.
// It is immutable once published.
type RingState struct {
	Ring    *ring.Ring
	Joining []ring.Node
	Leaving []ring.HostID
}

// RingTopology is the Topology of the ring last published, with each
// keyspace's placement and pending ranges computed once per ring.
type RingTopology struct {
	local   ring.HostID
	localDC string
	view    atomic.Pointer[ringView]
	// last is the placement found last: requests mostly follow others
	// of their keyspace, and then find it without hashing into the view's
	// map.
	last atomic.Pointer[keyspacePlacement]
}

var _ Topology = (*RingTopology)(nil)

// NewRingTopology returns the topology of node local, of data center dc,
// over s.
func NewRingTopology(local ring.HostID, dc string, s RingState) *RingTopology {
	t := &RingTopology{local: local, localDC: dc}
	t.Publish(s)
	return t
}

// Publish makes s the topology. Safe for concurrent use with every other
// method; requests already running keep the one they started with.
func (t *RingTopology) Publish(s RingState) {
	if s.Ring == nil {
		s.Ring, _ = ring.New(nil)
	}
	v := &ringView{state: s, nodes: map[ring.HostID]nodeInfo{}}
	for _, n := range append(s.Ring.Nodes(), s.Joining...) {
		v.nodes[n.HostID] = nodeInfo{dc: n.DC, addr: n.Addr}
	}
	t.view.Store(v)
}

// Nodes implements Topology.
func (t *RingTopology) Nodes() []ring.Node { return t.view.Load().state.Ring.Nodes() }

// State is the topology last published.
func (t *RingTopology) State() RingState { return t.view.Load().state }

// ringView is one published topology and what was computed from it.
type ringView struct {
	state RingState
	nodes map[ring.HostID]nodeInfo

	// byKeyspace holds each keyspace's placement, keyed by definition,
	// since definitions are immutable and replaced when a keyspace
	// changes. The map is never changed once stored: a new placement
	// stores a copy with it (placements are made once per keyspace and
	// ring, and read by every request, which then pays no lock and no
	// hashing of an interface).
	byKeyspace atomic.Pointer[map[*storage.KeyspaceDef]*keyspacePlacement]
}

type nodeInfo struct {
	dc   string
	addr netip.Addr
}

// keyspacePlacement is a keyspace's replicas on one ring.
type keyspacePlacement struct {
	// ks and view are what it is the placement of.
	ks        *storage.KeyspaceDef
	view      *ringView
	strategy  ring.Strategy
	placement *ring.Placement
	pending   *ring.Pending
	// localOnly is a keyspace of LocalStrategy (system, system_schema):
	// every node holds its own.
	localOnly bool
	// sole, when not nil, is the one replica of every token, with none
	// pending: this node for LocalStrategy, the ring's member on a ring
	// of one. Replicas answers it without placing the token.
	sole []ring.HostID
	// alone, when sole is this node, is what it meets by itself.
	alone *LocalAlone
}

// maxCached bounds the placements one view keeps: definitions replaced by
// schema changes would otherwise stay until the next ring.
const maxCached = 1024

func (t *RingTopology) placement(ks *storage.KeyspaceDef) (*keyspacePlacement, *ringView, error) {
	v := t.view.Load()
	if kp := t.last.Load(); kp != nil && kp.ks == ks && kp.view == v {
		return kp, v, nil
	}
	if m := v.byKeyspace.Load(); m != nil {
		if kp, ok := (*m)[ks]; ok {
			t.last.Store(kp)
			return kp, v, nil
		}
	}
	kp := &keyspacePlacement{ks: ks, view: v}
	if strings.HasSuffix(ks.Replication["class"], "LocalStrategy") {
		kp.localOnly = true
		kp.strategy = ring.SimpleStrategy{RF: 1}
		kp.sole = []ring.HostID{t.local}
	} else {
		s, err := ring.ParseStrategy(ks.Name, ks.Replication)
		if err != nil {
			return nil, nil, fmt.Errorf("proxy: keyspace %s: %w", ks.Name, err)
		}
		kp.strategy = s
		kp.placement = ring.NewPlacement(v.state.Ring, s)
		if len(v.state.Joining) > 0 || len(v.state.Leaving) > 0 {
			if kp.pending, err = ring.PendingRanges(s, v.state.Ring, v.state.Joining, v.state.Leaving); err != nil {
				return nil, nil, fmt.Errorf("proxy: keyspace %s: pending ranges: %w", ks.Name, err)
			}
		}
		if v.state.Ring.Len() == 1 && kp.pending == nil {
			if reps := kp.placement.Replicas(minToken); len(reps) == 1 {
				kp.sole = reps
			}
		}
	}
	if kp.sole != nil && kp.sole[0] == t.local {
		kp.alone = newLocalAlone(kp.strategy, t.local, t.localDC, viewDCs{t, v})
	}
	for {
		old := v.byKeyspace.Load()
		next := map[*storage.KeyspaceDef]*keyspacePlacement{}
		if old != nil && len(*old) < maxCached {
			for k, p := range *old {
				next[k] = p
			}
		}
		if prev, ok := next[ks]; ok {
			return prev, v, nil // another request placed it meanwhile
		}
		next[ks] = kp
		if v.byKeyspace.CompareAndSwap(old, &next) {
			return kp, v, nil
		}
	}
}

// Replicas implements Topology.
func (t *RingTopology) Replicas(ks *storage.KeyspaceDef, tok int64) (natural, pending []ring.HostID, err error) {
	kp, v, err := t.placement(ks)
	if err != nil {
		return nil, nil, err
	}
	if kp.sole != nil {
		return kp.sole, nil, nil
	}
	if v.state.Ring.Len() == 0 {
		return nil, nil, fmt.Errorf("proxy: keyspace %s: the ring has no members yet", ks.Name)
	}
	natural = kp.placement.Replicas(tok)
	if kp.pending != nil {
		pending = kp.pending.Endpoints(tok)
	}
	return natural, pending, nil
}

// SoleReplica implements SoleReplicaTopology.
func (t *RingTopology) SoleReplica(ks *storage.KeyspaceDef) (ring.HostID, ring.Strategy, bool) {
	kp, _, err := t.placement(ks)
	if err != nil || kp.sole == nil {
		return ring.HostID{}, nil, false
	}
	return kp.sole[0], kp.strategy, true
}

// LocalAlone implements SoleReplicaTopology.
func (t *RingTopology) LocalAlone(ks *storage.KeyspaceDef) *LocalAlone {
	kp, _, err := t.placement(ks)
	if err != nil {
		return nil
	}
	return kp.alone
}

// Ranges implements Topology.
func (t *RingTopology) Ranges(ks *storage.KeyspaceDef) ([]RangeReplicas, error) {
	kp, v, err := t.placement(ks)
	if err != nil {
		return nil, err
	}
	if kp.localOnly {
		return []RangeReplicas{{Range: wholeRing, Replicas: []ring.HostID{t.local}}}, nil
	}
	if v.state.Ring.Len() == 0 {
		return nil, fmt.Errorf("proxy: keyspace %s: the ring has no members yet", ks.Name)
	}
	var out []RangeReplicas
	for rg, reps := range kp.placement.All() {
		out = append(out, RangeReplicas{Range: rg, Replicas: reps})
	}
	return out, nil
}

// wholeRing is the range of every token.
var wholeRing = ring.Range{Start: minToken, End: minToken}

const minToken = -1 << 63

// Strategy implements Topology.
func (t *RingTopology) Strategy(ks *storage.KeyspaceDef) (ring.Strategy, error) {
	kp, _, err := t.placement(ks)
	if err != nil {
		return nil, err
	}
	return kp.strategy, nil
}

// DC implements Topology.
func (t *RingTopology) DC(h ring.HostID) string { return viewDCs{t, t.view.Load()}.DC(h) }

// viewDCs is the data centers of one published topology.
type viewDCs struct {
	t *RingTopology
	v *ringView
}

func (d viewDCs) DC(h ring.HostID) string {
	if n, ok := d.v.nodes[h]; ok {
		return n.dc
	}
	if h == d.t.local {
		return d.t.localDC
	}
	return ""
}

// Addr implements Topology.
func (t *RingTopology) Addr(h ring.HostID) netip.Addr { return t.view.Load().nodes[h].addr }

// Local implements Topology.
func (t *RingTopology) Local() (ring.HostID, string) { return t.local, t.localDC }
