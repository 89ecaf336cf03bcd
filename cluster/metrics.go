package cluster

import (
	"github.com/prometheus/client_golang/prometheus"
)

// ringCollector exposes the ring as this node's applied log has it,
// computed when scraped: cqld_ring_members by status, this node's tokens,
// and the fraction of the ring's tokens whose primary range is its.
type ringCollector struct {
	n                      *Node
	members, tokens, owned *prometheus.Desc
}

var _ prometheus.Collector = (*ringCollector)(nil)

func newRingCollector(n *Node) *ringCollector {
	return &ringCollector{
		n: n,
		members: prometheus.NewDesc("cqld_ring_members", "Members of the ring this node's metadata log has applied, by status.",
			[]string{"status"}, nil),
		tokens: prometheus.NewDesc("cqld_ring_tokens", "Tokens this node holds in the ring.", nil, nil),
		owned: prometheus.NewDesc("cqld_ring_owned_ratio",
			"Fraction of the ring whose primary range is this node's (before replication).", nil, nil),
	}
}

// Describe implements prometheus.Collector.
func (c *ringCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.members
	ch <- c.tokens
	ch <- c.owned
}

// Collect implements prometheus.Collector.
func (c *ringCollector) Collect(ch chan<- prometheus.Metric) {
	t := c.n.state.Topology()
	counts := map[Status]int{StatusJoining: 0, StatusNormal: 0, StatusLeaving: 0}
	for _, m := range t.Members() {
		counts[m.Status]++
	}
	for s, n := range counts {
		ch <- prometheus.MustNewConstMetric(c.members, prometheus.GaugeValue, float64(n), s.String())
	}
	self, _ := t.Member(c.n.opts.HostID)
	ch <- prometheus.MustNewConstMetric(c.tokens, prometheus.GaugeValue, float64(len(self.Tokens)))
	ch <- prometheus.MustNewConstMetric(c.owned, prometheus.GaugeValue, t.Ring().Ownership()[c.n.opts.HostID])
}
