package proxy

import (
	"context"
	"testing"

	"github.com/datastax/go-cassandra-native-protocol/primitive"

	"github.com/cqld/cqld/storage"
)

// The proxy's cost on one node: the same writes and reads straight on the
// local replica and through the proxy, side by side.
func BenchmarkOneNode(b *testing.B) {
	t := &testing.T{}
	c := newCluster(t, []string{"dc1"}, rf("1"))
	b.Cleanup(func() {
		for _, p := range c.proxies {
			p.Close()
		}
	})
	local := c.nodes[0].Local
	p := New(Options{Topology: c.topos[0], Liveness: c.live, Replicas: replicaMap{c.hosts[0]: local},
		Keyspace: func(string) *storage.KeyspaceDef { return c.ks }})
	ctx := context.Background()
	m := c.write(1, 0, "x", 10)
	read := func(*storage.Row) bool { return true }
	// Reads are of a partition written once, apart from the one the
	// write benchmarks grow.
	if err := local.Apply(ctx, c.write(2, 0, "x", 10), nil); err != nil {
		b.Fatal(err)
	}
	b.Run("write/local", func(b *testing.B) {
		for range b.N {
			if err := local.Apply(ctx, m, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("write/proxy", func(b *testing.B) {
		for range b.N {
			if err := p.Apply(ctx, primitive.ConsistencyLevelOne, m, primitive.WriteTypeSimple, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("read/local", func(b *testing.B) {
		for range b.N {
			if err := local.ReadPartition(ctx, c.tbl, i32(2), storage.ReadOptions{Now: 1}, read); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("read/proxy", func(b *testing.B) {
		for range b.N {
			if err := p.ReadPartition(ctx, primitive.ConsistencyLevelOne, c.tbl, i32(2), storage.ReadOptions{Now: 1}, read); err != nil {
				b.Fatal(err)
			}
		}
	})
}
