package ring

import (
	"fmt"
	"math"
	"math/rand/v2"
	"net/netip"
	"testing"
)

// host is the host id of test node k.
func host(k int) HostID {
	var h HostID
	h[0], h[1], h[15] = byte(k>>8), byte(k), 0xaa
	return h
}

// node is test node k at 127.0.0.k (k < 256) or 127.0.k/256.k%256.
func node(k int, dc, rack string, tokens ...int64) Node {
	return Node{HostID: host(k), Addr: netip.AddrFrom4([4]byte{127, 0, byte(k >> 8), byte(k)}), DC: dc, Rack: rack, Tokens: tokens}
}

func mustRing(t testing.TB, nodes ...Node) *Ring {
	t.Helper()
	r, err := New(nodes)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// randomRing is a ring of random tokens over dcs data centers, each with
// 1 to maxNodes nodes over 1 to maxRacks racks, each node with 1 to
// maxTokens tokens.
func randomRing(t testing.TB, rnd *rand.Rand, dcs, maxNodes, maxRacks, maxTokens int) *Ring {
	t.Helper()
	var nodes []Node
	taken := map[int64]bool{math.MinInt64: true}
	k := 1
	for d := range dcs {
		racks := 1 + rnd.IntN(maxRacks)
		for range 1 + rnd.IntN(maxNodes) {
			n := node(k, fmt.Sprintf("dc%d", d+1), fmt.Sprintf("rack%d", 1+rnd.IntN(racks)))
			for range 1 + rnd.IntN(maxTokens) {
				tok := int64(rnd.Uint64())
				if !taken[tok] {
					taken[tok] = true
					n.Tokens = append(n.Tokens, tok)
				}
			}
			nodes = append(nodes, n)
			k++
		}
	}
	return mustRing(t, nodes...)
}

func hostNames(hs []HostID) []int {
	out := make([]int, len(hs))
	for i, h := range hs {
		out[i] = int(h[0])<<8 | int(h[1])
	}
	return out
}
