package proxy

import (
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/cqld/cqld/batchlog"
	"github.com/cqld/cqld/messaging"
	"github.com/cqld/cqld/replica"
	"github.com/cqld/cqld/ring"
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
	// batches is each node's batchlog, served to the others.
	batches []*batchlog.Store
}

func (c *cluster) wire() *wired { return c.wireWith(false) }

// wireWith is wire, with each node's own replica its replica.Local
// itself rather than its fault wrapper when plain is set: the path of a
// real node.
func (c *cluster) wireWith(plain bool) *wired {
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
		replica.Serve(tr, c.nodes[i].Local, tables, nil)
		bs, err := batchlog.OpenStore(c.nodes[i].engine, nil)
		if err != nil {
			t.Fatal(err)
		}
		batchlog.Serve(tr, bs, nil)
		w.batches = append(w.batches, bs)
		trs = append(trs, tr)
		w.addrs = append(w.addrs, addr)
	}
	for i, h := range c.hosts {
		reps := replicaMap{h: c.nodes[i]}
		if plain {
			reps[h] = c.nodes[i].Local
		}
		for j, o := range c.hosts {
			if j != i {
				r := replica.NewRemote(trs[i], w.addrs[j], replica.RemoteOptions{})
				t.Cleanup(r.Close)
				reps[o] = r
			}
		}
		addr := func(h ring.HostID) (netip.AddrPort, bool) {
			j := slices.Index(c.hosts, h)
			if j < 0 {
				return netip.AddrPort{}, false
			}
			return w.addrs[j], true
		}
		p := New(Options{Topology: c.topos[i], Liveness: c.live, Replicas: reps, Hints: c.hints, Metrics: c.metrics,
			Batchlog: batchlog.NewClient(h, w.batches[i], trs[i], addr, nil),
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

// sent is the count of the messages of verb that node i sent.
func (w *wired) sent(i int, verb messaging.Verb) float64 {
	mfs, err := w.regs[i].Gather()
	if err != nil {
		panic(err)
	}
	n := 0.0
	for _, mf := range mfs {
		if mf.GetName() != "cqld_internode_messages_total" {
			continue
		}
		for _, m := range mf.Metric {
			if label(m, "direction") == "sent" && label(m, "verb") == verb.String() {
				n += m.GetCounter().GetValue()
			}
		}
	}
	return n
}

// logged is how many batches each node's batchlog holds.
func (w *wired) logged(t *testing.T) []int {
	t.Helper()
	out := make([]int, len(w.batches))
	for i, s := range w.batches {
		if err := s.Each(func(batchlog.ID, []byte) bool { out[i]++; return true }); err != nil {
			t.Fatal(err)
		}
	}
	return out
}
