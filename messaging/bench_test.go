package messaging

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkTCPRoundTrip measures request/response round trips between two
// transports on 127.0.0.1 and 127.0.0.2, with 64-byte requests and
// responses, by 1 caller and by 16 concurrent callers (multiplexed on one
// connection). ns/op is per round trip.
func BenchmarkTCPRoundTrip(b *testing.B) {
	for _, callers := range []int{1, 16} {
		b.Run(fmt.Sprintf("callers=%d", callers), func(b *testing.B) {
			a := listenTCP(b, "127.0.0.1:0", nil)
			s := listenTCP(b, "127.0.0.2:0", nil)
			s.Handle(VerbEcho, echo)
			benchRoundTrips(b, a, s, callers)
		})
	}
}

// BenchmarkInmemRoundTrip is the same between in-memory transports: the
// cost of the transport's own machinery, without sockets or framing.
func BenchmarkInmemRoundTrip(b *testing.B) {
	for _, callers := range []int{1, 16} {
		b.Run(fmt.Sprintf("callers=%d", callers), func(b *testing.B) {
			network := NewInmemNetwork()
			var trs []*InmemTransport
			for i := range 2 {
				tr, err := network.NewTransport(testOptions(b, fmt.Sprintf("127.0.0.%d:7000", i+1)))
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { tr.Close() })
				trs = append(trs, tr)
			}
			trs[1].Handle(VerbEcho, echo)
			benchRoundTrips(b, trs[0], trs[1], callers)
		})
	}
}

func benchRoundTrips(b *testing.B, from, to Transport, callers int) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	payload := make([]byte, 64)
	if _, err := from.Request(ctx, to.Addr(), VerbEcho, payload); err != nil {
		b.Fatal(err) // connected
	}
	b.ReportAllocs()
	b.ResetTimer()
	var (
		next atomic.Int64
		wg   sync.WaitGroup
	)
	for range callers {
		wg.Go(func() {
			for next.Add(1) <= int64(b.N) {
				if _, err := from.Request(ctx, to.Addr(), VerbEcho, payload); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
}
