package gossip_test

import (
	"fmt"
	"net/netip"

	"github.com/cqld/cqld/gossip"
	"github.com/cqld/cqld/messaging"
	"github.com/cqld/cqld/ring"
)

// A node that is its own seed is a cluster of one at once.
func ExampleStart() {
	net := messaging.NewInmemNetwork()
	addr := netip.MustParseAddrPort("127.0.0.1:7000")
	id, _ := ring.ParseHostID("2a1b8c3d-0000-4000-8000-000000000001")
	tr, err := net.NewTransport(messaging.Options{ClusterName: "Test Cluster", HostID: id, Addr: addr})
	if err != nil {
		panic(err)
	}
	defer tr.Close()
	g, err := gossip.Start(gossip.Options{
		Transport: tr,
		HostID:    id,
		Seeds:     []netip.AddrPort{addr},
		Meta: func() gossip.Meta {
			return gossip.Meta{RPCAddr: addr.Addr(), NativePort: 9042, DataCenter: "datacenter1", Rack: "rack1", Status: "NORMAL"}
		},
		OnEvent: func(e gossip.Event) { fmt.Println(e.Kind, e.Member.HostID) },
	})
	if err != nil {
		panic(err)
	}
	defer g.Close()
	<-g.Joined()
	for _, m := range g.Members() {
		fmt.Println(m.HostID, m.Addr, m.Up, m.Meta.DataCenter)
	}
	fmt.Println(g.Alive(id))
	// Output:
	// 2a1b8c3d-0000-4000-8000-000000000001 127.0.0.1:7000 true datacenter1
	// true
}
