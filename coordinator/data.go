package coordinator

import (
	"context"
	"fmt"
	"net/netip"

	"github.com/datastax/go-cassandra-native-protocol/primitive"

	"github.com/cqld/cqld/mutation"
	"github.com/cqld/cqld/proxy"
	"github.com/cqld/cqld/replica"
	"github.com/cqld/cqld/ring"
	"github.com/cqld/cqld/storage"
	"github.com/cqld/cqld/systables"
)

// Data is where the coordinator reads and writes user data, at a
// consistency level: proxy.Proxy, over the replicas the ring places each
// partition on. Every method is safe for concurrent use.
type Data interface {
	Apply(ctx context.Context, cl primitive.ConsistencyLevel, m *mutation.Mutation, wt primitive.WriteType, check func() error) error
	// Conditional runs a lightweight transaction (proxy.CAS).
	Conditional(ctx context.Context, c *proxy.CAS) error
	// ApplyLocal applies a write AllLocal allowed inline to this node's
	// replica without blocking (proxy.Proxy.ApplyLocal).
	ApplyLocal(cl primitive.ConsistencyLevel, m *mutation.Mutation, check func() error, then func(error)) (pending bool, err error)
	ReadPartition(ctx context.Context, cl primitive.ConsistencyLevel, t *storage.Table, pk []byte, o storage.ReadOptions, fn func(*storage.Row) bool) error
	// ReadLocal reads a partition AllLocal allowed inline on this node's
	// replica alone (proxy.Proxy.ReadLocal).
	ReadLocal(ctx context.Context, cl primitive.ConsistencyLevel, t *storage.Table, pk []byte, o storage.ReadOptions, fn func(*storage.Row) bool) error
	Scan(ctx context.Context, cl primitive.ConsistencyLevel, t *storage.Table, o storage.ScanOptions, fn func(pk []byte, row *storage.Row) bool) error
	ScanIndex(ctx context.Context, cl primitive.ConsistencyLevel, t *storage.Table, name string, value []byte, o storage.ScanOptions, fn func(pk []byte, row *storage.Row) bool) error
	Truncate(ctx context.Context, t *storage.Table) error
	// AllLocal reports whether a request on token tok of ks at cl needs
	// this node's replica alone, so that it may run inline on it.
	AllLocal(ks *storage.KeyspaceDef, tok int64, cl primitive.ConsistencyLevel) bool
	// Available answers Unavailable when too few replicas of tok are up
	// for cl.
	Available(ks *storage.KeyspaceDef, tok int64, cl primitive.ConsistencyLevel) error
}

var _ Data = (*proxy.Proxy)(nil)

// aloneData is the Data of a node on its own: a proxy over a ring of this
// node alone, every partition on its local replica.
func aloneData(o Options, local replica.Replica) (Data, error) {
	id := ring.HostID(o.Node.HostID)
	self := &selfOnly{id: id, local: local}
	addr, _ := netip.AddrFromSlice(o.ListenAddress)
	if !addr.IsValid() {
		addr = netip.AddrFrom4([4]byte{127, 0, 0, 1})
	}
	r, err := ring.New([]ring.Node{{HostID: id, Addr: addr.Unmap(), DC: o.DataCenter, Rack: o.Rack, Tokens: o.Node.Tokens}})
	if err != nil {
		return nil, fmt.Errorf("coordinator: the ring of this node alone: %w", err)
	}
	return proxy.New(proxy.Options{
		Topology: proxy.NewRingTopology(id, o.DataCenter, proxy.RingState{Ring: r}),
		Liveness: self,
		Replicas: self,
		Keyspace: systables.WithDistributed(func(name string) *storage.KeyspaceDef { return o.Catalog.Current().Keyspace(name) }),
		Logger:   o.Logger,
	}), nil
}

// selfOnly is the liveness and replicas of a node alone. Its methods
// take a pointer, which an interface holds as it is (a value receiver
// would be called through a wrapper on every request).
type selfOnly struct {
	id    ring.HostID
	local replica.Replica
}

func (s *selfOnly) Alive(h ring.HostID) bool { return h == s.id }

func (s *selfOnly) Replica(h ring.HostID) (replica.Replica, error) {
	if h != s.id {
		return nil, fmt.Errorf("coordinator: no replica %s on a node alone", h)
	}
	return s.local, nil
}

// readLevel is the level a write reads at before it writes (a list's
// current elements): the write's own, ANY being no level for a read.
func readLevel(cl primitive.ConsistencyLevel) primitive.ConsistencyLevel {
	if cl == primitive.ConsistencyLevelAny {
		return primitive.ConsistencyLevelOne
	}
	return cl
}

// writeType is what WRITE_TIMEOUT names the write as.
func (p *writePlan) writeType() primitive.WriteType {
	if p.counter {
		return primitive.WriteTypeCounter
	}
	return primitive.WriteTypeSimple
}

func (p *batchPlan) writeType() primitive.WriteType { return batchWriteType(p.logged, p.counter) }

func batchWriteType(logged, counter bool) primitive.WriteType {
	switch {
	case counter:
		return primitive.WriteTypeCounter
	case logged:
		return primitive.WriteTypeBatch
	}
	return primitive.WriteTypeUnloggedBatch
}

// rowSource is where a SELECT reads its rows at the request's level: Data
// for user tables.
type rowSource interface {
	ReadPartition(ctx context.Context, cl primitive.ConsistencyLevel, t *storage.Table, pk []byte, o storage.ReadOptions, fn func(*storage.Row) bool) error
	Scan(ctx context.Context, cl primitive.ConsistencyLevel, t *storage.Table, o storage.ScanOptions, fn func(pk []byte, row *storage.Row) bool) error
	ScanIndex(ctx context.Context, cl primitive.ConsistencyLevel, t *storage.Table, name string, value []byte, o storage.ScanOptions, fn func(pk []byte, row *storage.Row) bool) error
}

var (
	_ rowSource = Data(nil)
	_ rowSource = nodeLocal{}
)

// source is where t's rows are read.
func (c *Coordinator) source(t *tableInfo) rowSource {
	if t.system && !t.distributed {
		return c.sysRows
	}
	return c.data
}

// nodeLocal reads a replica that only this node holds, as the system
// keyspaces are (Cassandra's LocalStrategy): at any level, that replica
// alone answers.
type nodeLocal struct{ r systables.Reader }

func (n nodeLocal) ReadPartition(ctx context.Context, _ primitive.ConsistencyLevel, t *storage.Table, pk []byte, o storage.ReadOptions, fn func(*storage.Row) bool) error {
	return n.r.ReadPartition(ctx, t, pk, o, fn)
}

func (n nodeLocal) Scan(ctx context.Context, _ primitive.ConsistencyLevel, t *storage.Table, o storage.ScanOptions, fn func(pk []byte, row *storage.Row) bool) error {
	return n.r.Scan(ctx, t, o, fn)
}

func (n nodeLocal) ScanIndex(ctx context.Context, _ primitive.ConsistencyLevel, t *storage.Table, name string, value []byte, o storage.ScanOptions, fn func(pk []byte, row *storage.Row) bool) error {
	return n.r.ScanIndex(ctx, t, name, value, o, fn)
}
