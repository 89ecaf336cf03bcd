package frontend

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/datastax/go-cassandra-native-protocol/message"
)

// BenchmarkWorkerRoundTrip is the round trip of a request answered by a
// worker (not inline), from 1 and 16 connections, each with 1 or 32
// requests in flight: the cost of the pool's queueing.
func BenchmarkWorkerRoundTrip(b *testing.B) {
	for _, conns := range []int{1, 16} {
		for _, depth := range []int{1, 32} {
			b.Run(fmt.Sprintf("conns=%d/depth=%d", conns, depth), func(b *testing.B) {
				s := startServer(b, newFakeHandler(), nil)
				cs := make([]*client, conns)
				for i := range cs {
					cs[i] = s.ready(b)
				}
				var burst []byte
				for i := range depth {
					burst = append(burst, cs[0].frame(int16(i+1), &message.Query{Query: "echo x", Options: &message.QueryOptions{}})...)
				}
				var next atomic.Int64
				b.ResetTimer()
				var wg sync.WaitGroup
				for _, c := range cs {
					wg.Go(func() {
						for next.Add(int64(depth)) <= int64(b.N)+int64(depth)-1 {
							if _, err := c.nc.Write(burst); err != nil {
								b.Error(err)
								return
							}
							for range depth {
								if _, _, err := c.recv(); err != nil {
									b.Error(err)
									return
								}
							}
						}
					})
				}
				wg.Wait()
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
			})
		}
	}
}
