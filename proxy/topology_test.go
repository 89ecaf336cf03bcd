package proxy

import (
	"math"
	"slices"
	"testing"

	"github.com/cqld/cqld/ring"
	"github.com/cqld/cqld/storage"
)

// The topology answers the placement of the ring last published, per
// keyspace definition; a LocalStrategy keyspace is this node's alone.
func TestRingTopology(t *testing.T) {
	c := newCluster(t, []string{"dc1", "dc1", "dc2"}, rf("2"))
	topo := c.topos[0]
	tok := storage.Token(i32(9))
	natural, pending, err := topo.Replicas(c.ks, tok)
	if err != nil || len(natural) != 2 || len(pending) != 0 {
		t.Fatalf("%v %v %v", natural, pending, err)
	}
	st, _ := ring.ParseStrategy("ks", c.ks.Replication)
	if want := st.Replicas(c.ring, tok); !slices.Equal(natural, want) {
		t.Fatalf("replicas %v, placement %v", natural, want)
	}
	ranges, err := topo.Ranges(c.ks)
	if err != nil || len(ranges) != len(c.ring.Tokens()) {
		t.Fatalf("%d ranges, %d tokens: %v", len(ranges), len(c.ring.Tokens()), err)
	}
	if topo.DC(c.hosts[2]) != "dc2" || topo.Addr(c.hosts[2]).String() != "127.0.0.3" {
		t.Fatalf("dc %q addr %v", topo.DC(c.hosts[2]), topo.Addr(c.hosts[2]))
	}

	// A new ring replaces the placements.
	smaller, _ := c.ring.Without(c.hosts[2], c.hosts[1])
	topo.Publish(RingState{Ring: smaller})
	if natural, _, _ := topo.Replicas(c.ks, tok); len(natural) != 1 || natural[0] != c.hosts[0] {
		t.Fatalf("after the ring shrank: %v", natural)
	}

	sys := &storage.KeyspaceDef{Name: "system", Replication: map[string]string{"class": "org.apache.cassandra.locator.LocalStrategy"}}
	if natural, _, err := topo.Replicas(sys, tok); err != nil || !slices.Equal(natural, []ring.HostID{c.hosts[0]}) {
		t.Fatalf("LocalStrategy: %v %v", natural, err)
	}
	bad := &storage.KeyspaceDef{Name: "bad", Replication: map[string]string{"class": "Nope"}}
	if _, _, err := topo.Replicas(bad, tok); err == nil {
		t.Fatal("an unknown strategy placed")
	}
	empty := NewRingTopology(c.hosts[0], "dc1", RingState{})
	if _, _, err := empty.Replicas(c.ks, tok); err == nil {
		t.Fatal("an empty ring placed")
	}
}

// A range is its tokens in order, the wrapping one in two pieces.
func TestIntervals(t *testing.T) {
	for _, tc := range []struct {
		r    ring.Range
		want [][2]int64
	}{
		{ring.Range{Start: 1, End: 10}, [][2]int64{{2, 10}}},
		{ring.Range{Start: 10, End: 1}, [][2]int64{{math.MinInt64, 1}, {11, math.MaxInt64}}},
		{ring.Range{Start: 5, End: 5}, [][2]int64{{math.MinInt64, 5}, {6, math.MaxInt64}}},
		{ring.Range{Start: math.MaxInt64, End: 0}, [][2]int64{{math.MinInt64, 0}}},
	} {
		if got := intervals(tc.r); !slices.Equal(got, tc.want) {
			t.Errorf("%v: %v, want %v", tc.r, got, tc.want)
		}
	}
}

// A keyspace has a sole replica on a ring of one member with nothing
// pending, when its strategy places a replica there, and for
// LocalStrategy; then Replicas answers it for every token.
func TestSoleReplica(t *testing.T) {
	c := newCluster(t, []string{"dc1", "dc1"}, rf("3"))
	topo := c.topos[0]
	if _, _, ok := topo.SoleReplica(c.ks); ok {
		t.Fatal("a ring of two has a sole replica")
	}
	sys := &storage.KeyspaceDef{Name: "system", Replication: map[string]string{"class": "org.apache.cassandra.locator.LocalStrategy"}}
	if h, _, ok := topo.SoleReplica(sys); !ok || h != c.hosts[0] {
		t.Fatalf("LocalStrategy: %v %v", h, ok)
	}
	one, _ := c.ring.Without(c.hosts[1])
	topo.Publish(RingState{Ring: one})
	if h, _, ok := topo.SoleReplica(c.ks); !ok || h != c.hosts[0] {
		t.Fatalf("a ring of one: %v %v", h, ok)
	}
	for _, k := range []int{1, 2, 3, 1000} {
		if natural, pending, err := topo.Replicas(c.ks, storage.Token(i32(k))); err != nil || !slices.Equal(natural, []ring.HostID{c.hosts[0]}) || pending != nil {
			t.Fatalf("token of %d: %v %v %v", k, natural, pending, err)
		}
	}
	nts := &storage.KeyspaceDef{Name: "elsewhere", Replication: map[string]string{"class": "org.apache.cassandra.locator.NetworkTopologyStrategy", "dc9": "1"}}
	if _, _, ok := topo.SoleReplica(nts); ok {
		t.Fatal("a keyspace with no replica in the ring has a sole one")
	}
	joining := ring.Node{HostID: c.hosts[1], Addr: c.ring.Nodes()[1].Addr, DC: "dc1", Rack: "r1", Tokens: []int64{42}}
	topo.Publish(RingState{Ring: one, Joining: []ring.Node{joining}})
	if _, _, ok := topo.SoleReplica(c.ks); ok {
		t.Fatal("a ring of one with a node joining has a sole replica")
	}
}
