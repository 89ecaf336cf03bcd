package test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/datastax/go-cassandra-native-protocol/primitive"
)

// BenchmarkOptionsRoundTrip measures OPTIONS round trips per second over
// loopback TCP at 1, 16 and 64 connections, one request in flight on each,
// against cqld and against the loopback ceiling server
// ../shared/limits/cqlecho. Each cqlecho step runs just before the cqld step
// with the same connection count, so a ratio is taken from figures measured
// a few seconds apart on this shared, noisy machine.
//
// Both targets are driven by the same client. cqlecho answers every frame
// with RESULT/Void, cqld answers OPTIONS with SUPPORTED on its event loop, so
// the ratio is the frontend's own overhead per request.
func BenchmarkOptionsRoundTrip(b *testing.B) {
	var (
		mu       sync.Mutex
		cqldAddr string
		echoAddr string
	)
	// The targets start on first use, so a -bench filter that picks one
	// target does not pay for (or profile) the other; they live until the
	// whole benchmark ends.
	targets := []struct {
		name  string
		reply primitive.OpCode
		addr  func(sub *testing.B) string
		ready bool // STARTUP -> READY before the clock starts
	}{
		{"cqlecho", primitive.OpCodeResult, func(sub *testing.B) string {
			mu.Lock()
			defer mu.Unlock()
			if echoAddr == "" {
				echoAddr = startCqlecho(sub, parentTB{b, sub})
			}
			return echoAddr
		}, false},
		{"cqld", primitive.OpCodeSupported, func(sub *testing.B) string {
			mu.Lock()
			defer mu.Unlock()
			if cqldAddr == "" {
				tb := parentTB{b, sub}
				cqldAddr = startNode(tb, testConfig(tb, b.TempDir())).Addr()
			}
			return cqldAddr
		}, true},
	}
	for _, conns := range []int{1, 16, 64} {
		for _, tg := range targets {
			b.Run(fmt.Sprintf("target=%s/conns=%d", tg.name, conns), func(b *testing.B) {
				benchRoundTrips(b, tg.addr(b), conns, tg.ready, tg.reply)
			})
		}
	}
}

// benchRoundTrips splits b.N OPTIONS round trips over conns connections,
// each with one request in flight, and reports round trips per second.
func benchRoundTrips(b *testing.B, addr string, conns int, handshake bool, reply primitive.OpCode) {
	cs := make([]*rtConn, conns)
	for i := range cs {
		c, err := dialRT(addr, int16(i+1), reply)
		if err != nil {
			b.Fatal(err)
		}
		defer c.close()
		if handshake {
			if err := c.handshake(); err != nil {
				b.Fatal(err)
			}
		}
		cs[i] = c
	}
	errs := make([]error, conns)
	var wg sync.WaitGroup
	b.ResetTimer()
	for i, c := range cs {
		n := b.N / conns
		if i < b.N%conns {
			n++
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = c.run(n)
		}()
	}
	wg.Wait()
	b.StopTimer()
	for _, err := range errs {
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "rt/s")
}
