package gossip

import (
	"net/netip"
	"testing"
	"time"

	"github.com/cqld/cqld/messaging"
)

// BenchmarkDownUp measures, with memberlist's LAN timing (this package's
// defaults), how long node 1 of a three-node cluster takes to hold a
// cut-off node 3 down and, once its links heal, up again; reported as
// s-to-down and s-to-up (ns/op means nothing here). Each iteration takes
// seconds: run it with -benchtime=1x or a few x.
func BenchmarkDownUp(b *testing.B) {
	for _, cut := range []string{"partition", "disconnect"} {
		b.Run(cut, func(b *testing.B) {
			var down, up time.Duration
			for range b.N {
				d, u := downUp(b, cut)
				down += d
				up += u
			}
			b.ReportMetric(down.Seconds()/float64(b.N), "s-to-down")
			b.ReportMetric(up.Seconds()/float64(b.N), "s-to-up")
		})
	}
}

func downUp(b *testing.B, cut string) (down, up time.Duration) {
	net := messaging.NewInmemNetwork()
	var gs []*Gossip
	for k := 1; k <= 3; k++ {
		tr, err := net.NewTransport(messaging.Options{ClusterName: "Bench", HostID: hostID(k), Addr: inmemAddr(k)})
		if err != nil {
			b.Fatal(err)
		}
		g, err := Start(Options{Transport: tr, HostID: hostID(k), Seeds: []netip.AddrPort{inmemAddr(1)}, Meta: func() Meta { return testMeta(k) }})
		if err != nil {
			b.Fatal(err)
		}
		defer tr.Close()
		defer g.Close()
		gs = append(gs, g)
	}
	until := func(what string, cond func() bool) time.Duration {
		start := time.Now()
		for !cond() {
			if time.Since(start) > 5*time.Minute {
				b.Fatalf("still not %s", what)
			}
			time.Sleep(5 * time.Millisecond)
		}
		return time.Since(start)
	}
	until("all up", func() bool { return gs[0].Alive(hostID(2)) && gs[0].Alive(hostID(3)) && gs[2].Alive(hostID(1)) })
	if cut == "partition" {
		net.Partition([]netip.AddrPort{inmemAddr(3)}, []netip.AddrPort{inmemAddr(1), inmemAddr(2)})
	} else {
		net.Disconnect(inmemAddr(3), inmemAddr(1))
		net.Disconnect(inmemAddr(3), inmemAddr(2))
	}
	down = until("down", func() bool { return !gs[0].Alive(hostID(3)) })
	net.Heal()
	up = until("up", func() bool { return gs[0].Alive(hostID(3)) })
	return down, up
}
