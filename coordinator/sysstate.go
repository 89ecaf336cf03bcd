package coordinator

import (
	"math"
	"slices"
	"time"

	"github.com/cqld/cqld/auth"
	"github.com/cqld/cqld/ring"
	"github.com/cqld/cqld/storage"
	"github.com/cqld/cqld/systables"
)

// sysState is the node's state as the system tables read it.
type sysState struct{ c *Coordinator }

var _ systables.State = sysState{}

func (s sysState) Schema() *storage.Schema { return s.c.catalog.Current() }

func (s sysState) Local() systables.Local {
	c := s.c
	return systables.Local{
		ClusterName:   c.node.ClusterName,
		HostID:        c.node.HostID,
		DataCenter:    c.opts.DataCenter,
		Rack:          c.opts.Rack,
		ListenAddress: c.opts.ListenAddress,
		RPCAddress:    c.opts.RPCAddress,
		NativePort:    c.opts.NativePort,
		StoragePort:   c.opts.StoragePort,
		Generation:    c.generation,
		Tokens:        c.localTokens(),
	}
}

func (s sysState) Peers() []systables.Peer {
	if s.c.opts.Cluster == nil {
		return nil
	}
	return s.c.opts.Cluster.Peers()
}

func (s sysState) Roles() *auth.State { return s.c.roles() }

func (s sysState) Views() systables.Views { return s.c.opts.Views }

func (c *Coordinator) localTokens() []int64 {
	if c.opts.Cluster != nil {
		return c.opts.Cluster.LocalTokens()
	}
	return c.node.Tokens
}

// latencyStart is when a request observed in Options.Latencies begins.
func (c *Coordinator) latencyStart() time.Time {
	if c.opts.Latencies == nil {
		return time.Time{}
	}
	return c.opts.Latencies.Now()
}

// observed records the latency of a read, scan or write of a user table
// that p ran from start, as Cassandra's coordinator latencies count them:
// answered ones.
func (c *Coordinator) observed(p plan, start time.Time, err error) {
	if c.opts.Latencies != nil && err == nil {
		c.observe(p, start)
	}
}

// observe is observed of an answered request, with latencies kept.
func (c *Coordinator) observe(p plan, start time.Time) {
	lat := c.opts.Latencies
	var writes []*writePlan
	switch p := p.(type) {
	case *tableSelectPlan:
		if p.t.system {
			return
		}
		kind := string(systables.CoordinatorScan)
		if p.keys.pkComplete() {
			kind = string(systables.CoordinatorRead)
		}
		lat.Observe(kind, p.t.def.ID, start)
		return
	case *writePlan:
		writes = []*writePlan{p}
	case *batchPlan:
		writes = p.children
	case *casPlan:
		for _, w := range p.writes {
			writes = append(writes, w.w)
		}
	}
	var seen [][16]byte
	for _, w := range writes {
		if id := w.t.def.ID; !slices.Contains(seen, id) {
			seen = append(seen, id)
			lat.Observe(string(systables.CoordinatorWrite), id, start)
		}
	}
}

// SizeEstimates estimates each user table's partitions in every token
// range this node is the primary replica of, a range that wraps around
// the ring split in two at its end, as Cassandra's SizeEstimatesRecorder
// records them.
func (s sysState) SizeEstimates() []systables.SizeEstimate {
	c := s.c
	o, ok := c.data.(owners)
	if !ok || c.engine == nil {
		return nil
	}
	self := ring.HostID(c.node.HostID)
	var out []systables.SizeEstimate
	for _, k := range c.catalog.Keyspaces() {
		ranges, err := o.Owners(k)
		if err != nil {
			c.log.Warn("size estimates: no ranges", "keyspace", k.Name, "err", err)
			continue
		}
		var primary []ring.Range
		for _, r := range ranges {
			if len(r.Replicas) > 0 && r.Replicas[0] == self {
				primary = append(primary, unwrap(r.Range)...)
			}
		}
		for _, t := range k.SortedTables() {
			st, err := c.userTable(k.Name, t.Name)
			if err != nil {
				continue
			}
			for _, r := range primary {
				end := r.End
				if end == math.MinInt64 { // to the end of the ring
					end = math.MaxInt64
				}
				n, size, err := c.engine.EstimateRange(st.st, r.Start, end)
				if err != nil {
					c.log.Warn("size estimates", "table", k.Name+"."+t.Name, "err", err)
					continue
				}
				out = append(out, systables.SizeEstimate{Keyspace: k.Name, Table: t.Name, RangeStart: r.Start, RangeEnd: r.End,
					MeanPartitionSize: size, PartitionsCount: n})
			}
		}
	}
	return out
}

// unwrap is Range.unwrap: a range that wraps around the ring as the two
// ranges it covers, split at the minimum token.
func unwrap(r ring.Range) []ring.Range {
	if r.Start < r.End {
		return []ring.Range{r}
	}
	if r.End == math.MinInt64 {
		return []ring.Range{{Start: r.Start, End: math.MinInt64}}
	}
	return []ring.Range{{Start: r.Start, End: math.MinInt64}, {Start: math.MinInt64, End: r.End}}
}
