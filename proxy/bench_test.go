package proxy

import (
	"context"
	"syscall"
	"testing"
	"time"

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
		defer reportCPU(b)()
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
		defer reportCPU(b)()
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

// Three nodes at RF 3 over an in-memory network, the coordinator a
// replica: a QUORUM write and a QUORUM read through the proxy, with the
// internode encodings, the remote replicas' handlers and the commit log
// (periodic sync) of every replica, so that the work per operation is the
// cluster's, less the system calls of TCP.
func BenchmarkCluster(b *testing.B) {
	t := &testing.T{}
	c := newCluster(t, []string{"dc1", "dc1", "dc1"}, rf("3"))
	w := c.wireWith(true)
	b.Cleanup(func() {
		for _, p := range append(c.proxies, w.proxies...) {
			p.Close()
		}
	})
	p := w.proxies[0]
	// As the coordinator gives requests their timeout.
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	read := func(*storage.Row) bool { return true }
	if err := p.Apply(ctx, primitive.ConsistencyLevelAll, c.write(2, 0, "x", 10), primitive.WriteTypeSimple, nil); err != nil {
		b.Fatal(err)
	}
	b.Run("write", func(b *testing.B) {
		b.ReportAllocs()
		defer reportCPU(b)()
		b.RunParallel(func(pb *testing.PB) {
			m := c.write(1, 0, "x", 10)
			for pb.Next() {
				if err := p.Apply(ctx, primitive.ConsistencyLevelQuorum, m, primitive.WriteTypeSimple, nil); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
	b.Run("read", func(b *testing.B) {
		b.ReportAllocs()
		defer reportCPU(b)()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if err := p.ReadPartition(ctx, primitive.ConsistencyLevelQuorum, c.tbl, i32(2), storage.ReadOptions{Now: 1}, read); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
}

// reportCPU reports, when the function it returns is called, the
// process's CPU time (user and system, every goroutine's) per operation
// since it was called: the cluster's cost, where ns/op is its latency.
func reportCPU(b *testing.B) func() {
	start := cpuTime()
	return func() {
		b.ReportMetric(float64((cpuTime()-start).Nanoseconds())/float64(b.N), "cpu-ns/op")
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
