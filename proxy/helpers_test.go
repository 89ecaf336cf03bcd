package proxy

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/netip"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/datastax/go-cassandra-native-protocol/datatype"
	"github.com/datastax/go-cassandra-native-protocol/primitive"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/cqld/cqld/commitlog"
	"github.com/cqld/cqld/mutation"
	"github.com/cqld/cqld/replica"
	"github.com/cqld/cqld/ring"
	"github.com/cqld/cqld/storage"
)

// A test cluster: real engines behind fault wrappers, one proxy per node.

type fault int32

const (
	healthy fault = iota
	failing       // every call fails at once
	hanging       // every call waits for its context to end
)

var errDisk = errors.New("disk on fire")

// faulty is a replica.Local whose calls can fail or hang, and which counts
// them.
type faulty struct {
	*replica.Local
	engine *storage.Engine
	mode   atomic.Int32
	calls  atomic.Int64
	// applied are the mutations Apply was given, for identity checks.
	mu      sync.Mutex
	applied []*mutation.Mutation
}

var (
	_ replica.Replica = (*faulty)(nil)
)

func (f *faulty) fault(ctx context.Context) error {
	f.calls.Add(1)
	switch fault(f.mode.Load()) {
	case failing:
		return errDisk
	case hanging:
		<-ctx.Done()
		return ctx.Err()
	}
	return nil
}

func (f *faulty) Apply(ctx context.Context, m *mutation.Mutation, check func() error) error {
	if err := f.fault(ctx); err != nil {
		return err
	}
	f.mu.Lock()
	f.applied = append(f.applied, m)
	f.mu.Unlock()
	return f.Local.Apply(ctx, m, check)
}

func (f *faulty) Read(ctx context.Context, t *storage.Table, pk []byte, s storage.Slice) (*storage.Partition, error) {
	if err := f.fault(ctx); err != nil {
		return nil, err
	}
	return f.Local.Read(ctx, t, pk, s)
}

func (f *faulty) Digest(ctx context.Context, t *storage.Table, pk []byte, s storage.Slice) (storage.Digest, error) {
	if err := f.fault(ctx); err != nil {
		return storage.Digest{}, err
	}
	return f.Local.Digest(ctx, t, pk, s)
}

func (f *faulty) ReadRange(ctx context.Context, t *storage.Table, rc replica.RangeCommand) ([]*storage.Partition, bool, error) {
	if err := f.fault(ctx); err != nil {
		return nil, false, err
	}
	return f.Local.ReadRange(ctx, t, rc)
}

func (f *faulty) ReadPartition(ctx context.Context, t *storage.Table, pk []byte, o storage.ReadOptions, fn func(*storage.Row) bool) error {
	if err := f.fault(ctx); err != nil {
		return err
	}
	return f.Local.ReadPartition(ctx, t, pk, o, fn)
}

func (f *faulty) Scan(ctx context.Context, t *storage.Table, o storage.ScanOptions, fn func([]byte, *storage.Row) bool) error {
	if err := f.fault(ctx); err != nil {
		return err
	}
	return f.Local.Scan(ctx, t, o, fn)
}

func (f *faulty) Truncate(ctx context.Context, t *storage.Table) error {
	if err := f.fault(ctx); err != nil {
		return err
	}
	return f.engine.Truncate(t)
}

type liveness struct {
	mu   sync.Mutex
	down map[ring.HostID]bool
}

func (l *liveness) Alive(h ring.HostID) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return !l.down[h]
}

type hintStore struct {
	mu    sync.Mutex
	byFor map[ring.HostID]int
	// gate, when set before the proxies are used, holds every Store until
	// it is closed: a hints file whose writes wait on the disk.
	gate chan struct{}
}

func (h *hintStore) Store(target ring.HostID, m *mutation.Mutation) error {
	if len(m.Updates) == 0 {
		return fmt.Errorf("empty hint")
	}
	if h.gate != nil {
		<-h.gate
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.byFor[target]++
	return nil
}

func (h *hintStore) count(target ring.HostID) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.byFor[target]
}

type replicaMap map[ring.HostID]replica.Replica

func (m replicaMap) Replica(h ring.HostID) (replica.Replica, error) {
	r, ok := m[h]
	if !ok {
		return nil, fmt.Errorf("no replica %s", h)
	}
	return r, nil
}

type cluster struct {
	t        *testing.T
	hosts    []ring.HostID
	nodes    []*faulty
	proxies  []*Proxy
	topos    []*RingTopology
	live     *liveness
	hints    *hintStore
	ring     *ring.Ring
	metrics  *Metrics
	tbl, ctr *storage.Table
	ks       *storage.KeyspaceDef
}

// nodeSpec is a node's data center; tokens are spread evenly.
func newCluster(t *testing.T, dcs []string, replication map[string]string) *cluster {
	t.Helper()
	c := &cluster{t: t, live: &liveness{down: map[ring.HostID]bool{}}, hints: &hintStore{byFor: map[ring.HostID]int{}}}
	c.ks = &storage.KeyspaceDef{Name: "ks", Replication: replication}
	c.tbl = table(t, &storage.TableDef{Keyspace: "ks", Name: "t", ID: [16]byte{1}, Indexes: []storage.IndexDef{{Name: "v_idx", Column: "v", Target: "v"}}, Columns: []storage.ColumnDef{
		{Name: "k", Type: "int", Kind: storage.KindPartitionKey, Position: 0, Order: "none"},
		{Name: "c", Type: "int", Kind: storage.KindClustering, Position: 0, Order: "asc"},
		{Name: "s", Type: "set<int>", Kind: storage.KindRegular, Position: -1, Order: "none"},
		{Name: "st", Type: "text", Kind: storage.KindStatic, Position: -1, Order: "none"},
		{Name: "v", Type: "text", Kind: storage.KindRegular, Position: -1, Order: "none"},
	}})
	c.ctr = table(t, &storage.TableDef{Keyspace: "ks", Name: "ctr", ID: [16]byte{2}, Columns: []storage.ColumnDef{
		{Name: "k", Type: "int", Kind: storage.KindPartitionKey, Position: 0, Order: "none"},
		{Name: "n", Type: "counter", Kind: storage.KindRegular, Position: -1, Order: "none"},
	}})
	var members []ring.Node
	const tokensPerNode = 4
	step := uint64(math.MaxUint64 / uint64(len(dcs)*tokensPerNode))
	reps := replicaMap{}
	for i, dc := range dcs {
		h := ring.HostID{byte(i + 1)}
		c.hosts = append(c.hosts, h)
		n := ring.Node{HostID: h, Addr: netip.AddrFrom4([4]byte{127, 0, 0, byte(i + 1)}), DC: dc, Rack: "r1"}
		for j := range tokensPerNode {
			n.Tokens = append(n.Tokens, int64(uint64(1<<63)+step*uint64(j*len(dcs)+i)+12345))
		}
		members = append(members, n)
		dir := t.TempDir()
		e, err := storage.OpenEngine(storage.EngineOptions{
			FS: vfs.Default, Dir: filepath.Join(dir, "data"), CacheSize: 1 << 20, MemTableSize: 1 << 20,
			Log:    commitlog.Options{Dir: filepath.Join(dir, "commitlog"), Sync: "periodic", SegmentSize: 1 << 20},
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = e.Close() })
		f := &faulty{Local: replica.NewLocal(e), engine: e}
		c.nodes = append(c.nodes, f)
		reps[h] = f
	}
	r, err := ring.New(members)
	if err != nil {
		t.Fatal(err)
	}
	c.ring = r
	c.metrics = NewMetrics(prometheus.NewRegistry())
	for i, h := range c.hosts {
		topo := NewRingTopology(h, dcs[i], RingState{Ring: r})
		c.topos = append(c.topos, topo)
		p := New(Options{
			Topology: topo,
			Liveness: c.live,
			Replicas: reps,
			Hints:    c.hints,
			Metrics:  c.metrics,
			Keyspace: func(name string) *storage.KeyspaceDef {
				if name == "ks" {
					return c.ks
				}
				return nil
			},
		})
		t.Cleanup(p.Close)
		c.proxies = append(c.proxies, p)
	}
	return c
}

func table(t *testing.T, def *storage.TableDef) *storage.Table {
	t.Helper()
	tbl, err := storage.NewTable(def, func(s string) (datatype.DataType, error) {
		switch s {
		case "int":
			return datatype.Int, nil
		case "counter":
			return datatype.Counter, nil
		case "text":
			return datatype.Varchar, nil
		case "set<int>":
			return datatype.NewSet(datatype.Int), nil
		}
		return nil, fmt.Errorf("type %s", s)
	})
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

func (c *cluster) setDown(i int, down bool) {
	c.live.mu.Lock()
	defer c.live.mu.Unlock()
	c.live.down[c.hosts[i]] = down
}

// replicasOf are the indexes of partition k's natural replicas, in
// placement order.
func (c *cluster) replicasOf(k int) []int { return replicaIndexes(c.t, c.ks, c.ring, c.hosts, k) }

// replicaIndexes are the indexes in hosts of partition k's natural
// replicas of ks on r, in placement order.
func replicaIndexes(t testing.TB, ks *storage.KeyspaceDef, r *ring.Ring, hosts []ring.HostID, k int) []int {
	st, err := ring.ParseStrategy("ks", ks.Replication)
	if err != nil {
		t.Fatal(err)
	}
	var out []int
	for _, h := range st.Replicas(r, storage.Token(i32(k))) {
		out = append(out, slices.Index(hosts, h))
	}
	return out
}

func i32(n int) []byte { return binary.BigEndian.AppendUint32(nil, uint32(n)) }

// write is a mutation setting row (k, c)'s v at ts.
func (c *cluster) write(k, ck int, v string, ts int64) *mutation.Mutation {
	m := &mutation.Mutation{}
	m.WriteCell(c.tbl, i32(k), storage.CellTarget{Clustering: [][]byte{i32(ck)}, Column: "v"}, storage.Cell{Timestamp: ts, Value: []byte(v)})
	return m
}

// rowsOf reads partition k straight from node i: clustering -> v.
func (c *cluster) rowsOf(i, k int) map[int]string {
	c.t.Helper()
	out := map[int]string{}
	err := c.nodes[i].Local.ReadPartition(context.Background(), c.tbl, i32(k), storage.ReadOptions{Now: 1}, func(r *storage.Row) bool {
		collect(out, r)
		return true
	})
	if err != nil {
		c.t.Fatal(err)
	}
	return out
}

func collect(out map[int]string, r *storage.Row) {
	for _, cc := range r.Cells {
		if cc.Column == "v" {
			out[int(binary.BigEndian.Uint32(r.Clustering[0]))] = string(cc.Cell.Value)
		}
	}
}

// cas is a lightweight transaction on partition k of c.tbl at SERIAL,
// committed at cl, reading the whole partition.
func (c *cluster) cas(k int, cl primitive.ConsistencyLevel, decide func(*storage.Partition) (*mutation.Update, error)) *CAS {
	return &CAS{Table: c.tbl, Key: i32(k), Serial: primitive.ConsistencyLevelSerial, Commit: cl, Decide: decide}
}
