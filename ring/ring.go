package ring

import (
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"net/netip"
	"slices"
	"sort"
	"strings"
)

// HostID is a node's host id, the UUID of system.local.host_id.
type HostID [16]byte

// String is the UUID's 8-4-4-4-12 form.
func (h HostID) String() string {
	var b [36]byte
	hex.Encode(b[0:8], h[0:4])
	b[8] = '-'
	hex.Encode(b[9:13], h[4:6])
	b[13] = '-'
	hex.Encode(b[14:18], h[6:8])
	b[18] = '-'
	hex.Encode(b[19:23], h[8:10])
	b[23] = '-'
	hex.Encode(b[24:], h[10:])
	return string(b[:])
}

// ParseHostID reads a UUID in the 8-4-4-4-12 form.
func ParseHostID(s string) (HostID, error) {
	var h HostID
	if len(s) != 36 || s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' {
		return h, fmt.Errorf("ring: host id %q is not a UUID", s)
	}
	if _, err := hex.Decode(h[:], []byte(strings.ReplaceAll(s, "-", ""))); err != nil {
		return h, fmt.Errorf("ring: host id %q is not a UUID: %w", s, err)
	}
	return h, nil
}

func (h HostID) less(o HostID) bool { return string(h[:]) < string(o[:]) }

// Node is a member of the ring with its tokens: a node in Cassandra's
// NORMAL state. Joining and leaving nodes are not members; PendingRanges
// says what they change.
type Node struct {
	HostID HostID
	// Addr is the node's broadcast address (system.peers.peer).
	Addr netip.Addr
	// DC and Rack are the node's data center and rack as its snitch
	// reports them.
	DC, Rack string
	Tokens   []int64
}

// ErrInvalid is wrapped by every error about a ring that cannot be built.
var ErrInvalid = errors.New("ring: invalid topology")

// ErrUnknownNode is wrapped by errors naming a host id the ring lacks.
var ErrUnknownNode = errors.New("ring: unknown node")

// Ring is an immutable token ring: its members and their Murmur3 tokens,
// sorted, with each token's owner. A topology change builds a new Ring
// (With, Without); a *Ring is never modified, so it is safe for concurrent
// use without locks and can be published through an atomic.Pointer.
type Ring struct {
	nodes  []Node // by HostID; each node's Tokens sorted
	index  map[HostID]int
	tokens []int64 // sorted, distinct
	owner  []int   // owner[i] is the index in nodes of tokens[i]'s node

	// Topology, by node index: the node's data center and its rack, as
	// small integers so that placement compares ints, not strings.
	dcs       []string // sorted
	nodeDC    []int    // index in dcs
	nodeRack  []int    // a (dc, rack) pair's number, unique over the ring
	dcNodes   []int    // nodes per data center
	dcRacks   []int    // racks per data center
	rackNames []string
}

// New builds a ring of the given nodes. It keeps none of the slices it is
// given. Every node needs a unique host id and address, a data center, a
// rack and at least one token; no token may belong to two nodes, and none
// may be math.MinInt64, which Cassandra's Murmur3 partitioner reserves as
// the ring's minimum (no partition key hashes to it). New(nil) is the empty
// ring of a cluster that has no member yet.
func New(nodes []Node) (*Ring, error) {
	ids := make(map[HostID]bool, len(nodes))
	addrs := make(map[netip.Addr]HostID, len(nodes))
	for _, n := range nodes {
		if err := checkNode(n); err != nil {
			return nil, err
		}
		if len(n.Tokens) == 0 {
			return nil, fmt.Errorf("%w: node %s has no tokens", ErrInvalid, n.HostID)
		}
		if ids[n.HostID] {
			return nil, fmt.Errorf("%w: host id %s appears twice", ErrInvalid, n.HostID)
		}
		if other, dup := addrs[n.Addr]; dup {
			return nil, fmt.Errorf("%w: nodes %s and %s share the address %s", ErrInvalid, other, n.HostID, n.Addr)
		}
		ids[n.HostID] = true
		addrs[n.Addr] = n.HostID
	}
	return build(nodes)
}

// build is New without the checks of each node, and with nodes that have
// no token allowed: members of the topology (counted by placement) that
// own no range yet, as a node being given tokens is.
func build(nodes []Node) (*Ring, error) {
	r := &Ring{index: make(map[HostID]int, len(nodes))}
	total := 0
	for _, n := range nodes {
		total += len(n.Tokens)
	}
	r.nodes = make([]Node, len(nodes))
	for i, n := range nodes {
		n.Tokens = slices.Clone(n.Tokens)
		slices.Sort(n.Tokens)
		r.nodes[i] = n
	}
	sort.Slice(r.nodes, func(i, j int) bool { return r.nodes[i].HostID.less(r.nodes[j].HostID) })

	type tokenOwner struct {
		t int64
		n int
	}
	all := make([]tokenOwner, 0, total)
	for i, n := range r.nodes {
		r.index[n.HostID] = i
		for _, t := range n.Tokens {
			all = append(all, tokenOwner{t, i})
		}
	}
	slices.SortFunc(all, func(a, b tokenOwner) int {
		switch {
		case a.t < b.t:
			return -1
		case a.t > b.t:
			return 1
		}
		return 0
	})
	r.tokens = make([]int64, len(all))
	r.owner = make([]int, len(all))
	for i, to := range all {
		if i > 0 && all[i-1].t == to.t {
			return nil, fmt.Errorf("%w: token %d belongs to both %s and %s",
				ErrInvalid, to.t, r.nodes[all[i-1].n].HostID, r.nodes[to.n].HostID)
		}
		r.tokens[i], r.owner[i] = to.t, to.n
	}
	r.buildTopology()
	return r, nil
}

func checkNode(n Node) error {
	switch {
	case n.HostID == HostID{}:
		return fmt.Errorf("%w: a node at %s has no host id", ErrInvalid, n.Addr)
	case !n.Addr.IsValid():
		return fmt.Errorf("%w: node %s has no address", ErrInvalid, n.HostID)
	case n.DC == "":
		return fmt.Errorf("%w: node %s has no data center", ErrInvalid, n.HostID)
	case n.Rack == "":
		return fmt.Errorf("%w: node %s has no rack", ErrInvalid, n.HostID)
	}
	for _, t := range n.Tokens {
		if t == math.MinInt64 {
			return fmt.Errorf("%w: node %s has the token %d, the ring's minimum", ErrInvalid, n.HostID, t)
		}
	}
	return nil
}

func (r *Ring) buildTopology() {
	dcIndex := map[string]int{}
	for _, n := range r.nodes {
		dcIndex[n.DC] = 0
	}
	for dc := range dcIndex {
		r.dcs = append(r.dcs, dc)
	}
	sort.Strings(r.dcs)
	for i, dc := range r.dcs {
		dcIndex[dc] = i
	}
	r.dcNodes = make([]int, len(r.dcs))
	r.dcRacks = make([]int, len(r.dcs))
	type dcRack struct{ dc, rack string }
	rackIndex := map[dcRack]int{}
	r.nodeDC = make([]int, len(r.nodes))
	r.nodeRack = make([]int, len(r.nodes))
	for i, n := range r.nodes {
		d := dcIndex[n.DC]
		r.nodeDC[i] = d
		r.dcNodes[d]++
		k := dcRack{n.DC, n.Rack}
		id, ok := rackIndex[k]
		if !ok {
			id = len(r.rackNames)
			rackIndex[k] = id
			r.rackNames = append(r.rackNames, n.Rack)
			r.dcRacks[d]++
		}
		r.nodeRack[i] = id
	}
}

// Len is the number of nodes.
func (r *Ring) Len() int { return len(r.nodes) }

// Nodes returns the members, ordered by host id, as copies the caller may
// keep and modify.
func (r *Ring) Nodes() []Node {
	out := make([]Node, len(r.nodes))
	for i, n := range r.nodes {
		n.Tokens = slices.Clone(n.Tokens)
		out[i] = n
	}
	return out
}

// Node returns the member with host id id (a copy), if there is one.
func (r *Ring) Node(id HostID) (Node, bool) {
	i, ok := r.index[id]
	if !ok {
		return Node{}, false
	}
	n := r.nodes[i]
	n.Tokens = slices.Clone(n.Tokens)
	return n, true
}

// Tokens returns every token of the ring in ascending order, as a copy.
func (r *Ring) Tokens() []int64 { return slices.Clone(r.tokens) }

// Datacenters returns the data centers that have members, sorted.
func (r *Ring) Datacenters() []string { return slices.Clone(r.dcs) }

// search is TokenMetadata.firstTokenIndex: the index of the first ring
// token >= t, wrapping to 0 past the last. REQUIRES: a non-empty ring.
func (r *Ring) search(t int64) int {
	i, _ := slices.BinarySearch(r.tokens, t)
	if i == len(r.tokens) {
		return 0
	}
	return i
}

// rangeAt is the range that ends at the ring's i-th token.
func (r *Ring) rangeAt(i int) Range {
	prev := i - 1
	if prev < 0 {
		prev = len(r.tokens) - 1
	}
	return Range{Start: r.tokens[prev], End: r.tokens[i]}
}

// Owner returns the primary owner of token t: the node of the first ring
// token at or after t, clockwise. ok is false on the empty ring.
func (r *Ring) Owner(t int64) (id HostID, ok bool) {
	if len(r.tokens) == 0 {
		return HostID{}, false
	}
	return r.nodes[r.owner[r.search(t)]].HostID, true
}

// PrimaryRange returns the ring range that holds token t: (the previous
// ring token, the first ring token >= t]. ok is false on the empty ring.
func (r *Ring) PrimaryRange(t int64) (rg Range, ok bool) {
	if len(r.tokens) == 0 {
		return Range{}, false
	}
	return r.rangeAt(r.search(t)), true
}

// PrimaryRanges returns the ranges node id is the primary owner of (those
// ending at its tokens), in token order, or nil when id is not a member.
func (r *Ring) PrimaryRanges(id HostID) []Range {
	ni, ok := r.index[id]
	if !ok {
		return nil
	}
	var out []Range
	for i, o := range r.owner {
		if o == ni {
			out = append(out, r.rangeAt(i))
		}
	}
	return out
}

// With returns a new ring of r's members and the given nodes, as after
// they finished joining. It keeps none of the slices it is given.
func (r *Ring) With(nodes ...Node) (*Ring, error) {
	all := append(r.Nodes(), nodes...)
	return New(all)
}

// Without returns a new ring of r's members except the given ones, as
// after they left. Every id must be a member.
func (r *Ring) Without(ids ...HostID) (*Ring, error) {
	drop := make(map[HostID]bool, len(ids))
	for _, id := range ids {
		if _, ok := r.index[id]; !ok {
			return nil, fmt.Errorf("%w: %s", ErrUnknownNode, id)
		}
		drop[id] = true
	}
	var keep []Node
	for _, n := range r.nodes {
		if !drop[n.HostID] {
			keep = append(keep, n)
		}
	}
	return New(keep)
}
