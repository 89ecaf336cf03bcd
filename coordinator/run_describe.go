package coordinator

import (
	"context"
	"net/netip"

	"github.com/datastax/go-cassandra-native-protocol/message"

	"github.com/cqld/cqld/describe"
	"github.com/cqld/cqld/proxy"
	"github.com/cqld/cqld/ring"
	"github.com/cqld/cqld/storage"
	"github.com/cqld/cqld/systables"
)

// Cassandra's DESCRIBE CLUSTER names the partitioner and the snitch
// without their packages. Cassandra wraps the configured snitch in
// DynamicEndpointSnitch (dynamic_snitch, true by default), which is what
// DESCRIBE CLUSTER names.
const (
	describePartitioner = "Murmur3Partitioner"
	describeSnitch      = "DynamicEndpointSnitch"
)

// owners is the view of the ring DESCRIBE CLUSTER reads: proxy.Proxy's.
type owners interface {
	Owners(ks *storage.KeyspaceDef) ([]proxy.RangeOwners, error)
}

var _ owners = (*proxy.Proxy)(nil)

func (p *describePlan) run(_ context.Context, c *Coordinator, x *execution) (message.Message, error) {
	user := c.catalog.Keyspaces()
	own, virtual := systables.Keyspaces()
	res, err := describe.Describe(&describe.Request{
		Statement: p.st,
		Session:   p.session,
		Schema: describe.Schema{
			Keyspaces: append(own[:len(own):len(own)], user...),
			Virtual:   virtual,
			Version:   c.SchemaVersion(),
		},
		Cluster: describe.Cluster{
			Name:        c.node.ClusterName,
			Partitioner: describePartitioner,
			Snitch:      describeSnitch,
			Ownership:   c.rangeOwnership,
		},
		ReleaseVersion: ReleaseVersion,
		PageSize:       x.opts.PageSize,
		PagingState:    x.opts.PagingState,
		Version:        x.version,
	})
	if err != nil {
		return nil, err
	}
	md := &message.RowsMetadata{ColumnCount: int32(len(res.Columns)), PagingState: res.PagingState}
	for _, col := range res.Columns {
		md.Columns = append(md.Columns, &message.ColumnMetadata{Keyspace: "system", Table: "describe", Name: col.Name, Type: col.Type})
	}
	rows := make(message.RowSet, len(res.Rows))
	for i, r := range res.Rows {
		rows[i] = message.Row(r)
	}
	return &message.RowsResult{Metadata: md, Data: rows}, nil
}

// rangeOwnership is keyspace ks's ranges with their replicas' internode
// addresses, for DESCRIBE CLUSTER.
func (c *Coordinator) rangeOwnership(ks string) ([]describe.Range, error) {
	k, ok := c.catalog.Keyspace(ks)
	if !ok {
		return nil, invalidf("Keyspace '%s' does not exist", ks)
	}
	o, ok := c.data.(owners)
	if !ok {
		return nil, invalidf("DESCRIBE CLUSTER cannot show the range ownership of this node's ring")
	}
	ranges, err := o.Owners(k)
	if err != nil {
		return nil, err
	}
	ports := map[netip.Addr]uint16{}
	for _, p := range (sysState{c}).Peers() {
		ports[p.Addr.Addr()] = p.Addr.Port()
	}
	out := make([]describe.Range, len(ranges))
	for i, r := range ranges {
		out[i] = describe.Range{Start: r.Range.Start, End: r.Range.End}
		for j, a := range r.Addrs {
			port, known := ports[a]
			if !known || r.Replicas[j] == ring.HostID(c.node.HostID) {
				port = uint16(c.opts.StoragePort)
			}
			out[i].Endpoints = append(out[i].Endpoints, netip.AddrPortFrom(a, port))
		}
	}
	return out, nil
}
