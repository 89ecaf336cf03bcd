package hints

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/cqld/cqld/ring"
)

// BenchmarkWrite writes 256-byte hints for a down target to a real
// directory, flushing as the store would.
func BenchmarkWrite(b *testing.B) {
	e := newEnv(b)
	e.fs = vfs.Default
	e.dir = b.TempDir()
	s, err := open(e.options())
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	e.live.setDown(host(1), e.clock.Now())
	m := make([]byte, 256)
	b.SetBytes(int64(len(m)))
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if err := s.Write(host(1), m, e.clock.Now()); err != nil {
			b.Fatal(err)
		}
		if i%10_000 == 0 {
			if err := s.Flush(); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkDispatch replays hints to a target 1 ms away (a Deliver that
// sleeps a round trip), with one hint in flight and with the default window.
func BenchmarkDispatch(b *testing.B) {
	for _, inFlight := range []int{1, DefaultMaxInFlight} {
		b.Run(fmt.Sprintf("in_flight=%d", inFlight), func(b *testing.B) {
			const n = 200
			for range b.N {
				b.StopTimer()
				e := newEnv(b)
				e.opts = func(o *Options) {
					o.MaxInFlight = inFlight
					o.Deliver = func(context.Context, ring.HostID, time.Time, []byte) error {
						time.Sleep(time.Millisecond)
						return nil
					}
				}
				s, err := open(e.options())
				if err != nil {
					b.Fatal(err)
				}
				e.live.setDown(host(1), e.clock.Now())
				for i := range n {
					if err := s.Write(host(1), []byte(hint(1, i)), e.clock.Now()); err != nil {
						b.Fatal(err)
					}
				}
				e.live.setUp(host(1))
				b.StartTimer()
				s.dispatchRound(s.ctx)
				b.StopTimer()
				if p := s.Pending(host(1)); p != (Pending{}) {
					b.Fatalf("pending %+v", p)
				}
				s.Close()
			}
			b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "hints/s")
		})
	}
}
