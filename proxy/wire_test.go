package proxy

import (
	"net/netip"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/cqld/cqld/messaging"
	"github.com/cqld/cqld/replica"
	"github.com/cqld/cqld/storage"
)

// wired is c's nodes reached over an in-memory network, as a cluster's
// are over TCP: each node serves its replica to the others (replica.Serve)
// and has a proxy whose other replicas are replica.Remotes. Each node's
// messaging metrics count what crosses the network to and from it.
type wired struct {
	proxies []*Proxy
	addrs   []netip.AddrPort
	regs    []*prometheus.Registry
	net     *messaging.InmemNetwork
}

func (c *cluster) wire() *wired {
	t := c.t
	t.Helper()
	w := &wired{net: messaging.NewInmemNetwork()}
	tables := func(id [16]byte) (*storage.Table, bool) {
		for _, tbl := range []*storage.Table{c.tbl, c.ctr} {
			if tbl.Def.ID == id {
				return tbl, true
			}
		}
		return nil, false
	}
	var trs []*messaging.InmemTransport
	for i, h := range c.hosts {
		addr := netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, 0, byte(i + 1)}), 7000)
		reg := prometheus.NewRegistry()
		w.regs = append(w.regs, reg)
		tr, err := w.net.NewTransport(messaging.Options{ClusterName: "test", HostID: h, Addr: addr, Metrics: messaging.NewMetrics(reg)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = tr.Close() })
		replica.Serve(tr, c.nodes[i].Local, tables)
		trs = append(trs, tr)
		w.addrs = append(w.addrs, addr)
	}
	for i, h := range c.hosts {
		reps := replicaMap{h: c.nodes[i]}
		for j, o := range c.hosts {
			if j != i {
				r := replica.NewRemote(trs[i], w.addrs[j], replica.RemoteOptions{})
				t.Cleanup(r.Close)
				reps[o] = r
			}
		}
		p := New(Options{Topology: c.topos[i], Liveness: c.live, Replicas: reps, Hints: c.hints, Metrics: c.metrics,
			Keyspace: func(string) *storage.KeyspaceDef { return c.ks }})
		t.Cleanup(p.Close)
		w.proxies = append(w.proxies, p)
	}
	return w
}

// received is the count and envelope bytes of the messages of verb that
// node i received.
func (w *wired) received(i int, verb messaging.Verb) (messages, bytes float64) {
	mfs, err := w.regs[i].Gather()
	if err != nil {
		panic(err)
	}
	for _, mf := range mfs {
		name := mf.GetName()
		if name != "cqld_internode_messages_total" && name != "cqld_internode_bytes_total" {
			continue
		}
		for _, m := range mf.Metric {
			if label(m, "direction") != "received" || label(m, "verb") != verb.String() {
				continue
			}
			if strings.HasSuffix(name, "messages_total") {
				messages += m.GetCounter().GetValue()
			} else {
				bytes += m.GetCounter().GetValue()
			}
		}
	}
	return messages, bytes
}

func label(m *dto.Metric, name string) string {
	for _, l := range m.Label {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}
