package server

import (
	"context"
	"crypto/md5"
	"encoding/binary"
	"net"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/cqld/cqld/config"
	"github.com/cqld/cqld/metrics"
	"github.com/cqld/cqld/storage"
	"github.com/cqld/cqld/systables"
)

// views are the node's live figures for system_views: its clients and
// pools from the frontend, its configuration, its caches and latencies,
// and its compactions from the engine.
type views struct {
	n         *Node
	settings  []systables.Setting
	latencies *metrics.TableLatencies
	gather    prometheus.Gatherer
}

var _ systables.Views = (*views)(nil)

func newViews(n *Node, cfg config.Config, lat *metrics.TableLatencies, g prometheus.Gatherer) (*views, error) {
	st, err := cfg.Settings()
	if err != nil {
		return nil, err
	}
	v := &views{n: n, latencies: lat, gather: g}
	for _, s := range st {
		v.settings = append(v.settings, systables.Setting{Name: s.Name, Value: s.Value})
	}
	return v, nil
}

// hostnameWait bounds the reverse look-up of a client's address.
const hostnameWait = 100 * time.Millisecond

func (v *views) Clients() []systables.Client {
	fe := v.n.fe.Load()
	if fe == nil {
		return nil
	}
	names := map[string]string{}
	var out []systables.Client
	for _, c := range fe.Clients() {
		ip := c.Addr.Addr().Unmap().String()
		host, ok := names[ip]
		if !ok {
			// Cassandra's InetSocketAddress.getHostName: the name, or the
			// address when it has none.
			host = ip
			ctx, cancel := context.WithTimeout(context.Background(), hostnameWait)
			if hs, err := net.DefaultResolver.LookupAddr(ctx, ip); err == nil && len(hs) > 0 {
				host = trimDot(hs[0])
			}
			cancel()
			names[ip] = host
		}
		out = append(out, systables.Client{Addr: c.Addr, Hostname: host, Username: c.Username, Stage: c.Stage,
			ProtocolVersion: c.ProtocolVersion, DriverName: c.DriverName, DriverVersion: c.DriverVersion,
			Requests: c.Requests, SSL: c.SSL, SSLProtocol: c.SSLProtocol, SSLCipherSuite: c.SSLCipher})
	}
	return out
}

func trimDot(s string) string {
	if n := len(s); n > 1 && s[n-1] == '.' {
		return s[:n-1]
	}
	return s
}

func (v *views) Settings() []systables.Setting { return v.settings }

func (v *views) ThreadPools() []systables.ThreadPool {
	var out []systables.ThreadPool
	if fe := v.n.fe.Load(); fe != nil {
		for _, p := range fe.Pools() {
			out = append(out, systables.ThreadPool{Name: p.Name, Active: p.Active, ActiveLimit: p.ActiveLimit,
				Pending: p.Pending, Completed: p.Completed, BlockedAll: p.BlockedAll})
		}
	}
	if e := v.n.engine; e != nil {
		st := e.LSMStats()
		out = append(out,
			systables.ThreadPool{Name: "CompactionExecutor", Active: int32(st.CompactionsInProgress),
				ActiveLimit: int32(storage.MaxCompactions), Completed: st.Compactions},
			systables.ThreadPool{Name: "MemtableFlushWriter", ActiveLimit: 1, Completed: st.Flushes})
	}
	out = append(out, systables.ThreadPool{Name: "COMMIT-LOG-WRITER", ActiveLimit: 1, Completed: v.counter("cqld_commitlog_syncs_total")})
	return out
}

// counter reads a counter of the node's registry, 0 when it has none.
func (v *views) counter(name string) int64 {
	mfs, err := v.gather.Gather()
	if err != nil {
		return 0
	}
	for _, mf := range mfs {
		if mf.GetName() == name && len(mf.GetMetric()) == 1 {
			return int64(mf.GetMetric()[0].GetCounter().GetValue())
		}
	}
	return 0
}

func (v *views) Caches() []systables.Cache {
	c := v.n.coordRef.Load()
	if c == nil {
		return nil
	}
	st := c.PreparedStats()
	return []systables.Cache{{Name: "prepared_statements", CapacityBytes: st.Capacity, SizeBytes: st.Bytes,
		Entries: int32(st.Entries), Requests: st.Requests, Hits: st.Hits,
		RecentRequestRate: int64(st.RecentRequestRate), RecentHitRate: int64(st.RecentHitRate)}}
}

func (v *views) SSTableTasks() []systables.SSTableTask {
	e := v.n.engine
	if e == nil {
		return nil
	}
	var out []systables.SSTableTask
	for _, c := range e.Compactions() {
		// A task's id, the same for the whole compaction.
		var seed [16]byte
		binary.BigEndian.PutUint64(seed[:], uint64(c.JobID))
		binary.BigEndian.PutUint64(seed[8:], uint64(c.Started.UnixNano()))
		id := md5.Sum(seed[:])
		id[6], id[8] = id[6]&0x0f|0x30, id[8]&0x3f|0x80
		// pebble does not tell how far a compaction got: its progress is
		// 0 of its input.
		out = append(out, systables.SSTableTask{Keyspace: "*", Table: "*", ID: id, Kind: "compaction", Unit: "bytes", Total: int64(c.InputBytes)})
	}
	return out
}

func (v *views) Latencies(kind systables.LatencyKind) []systables.Latency {
	cat := v.n.catalog
	if v.latencies == nil || cat == nil {
		return nil
	}
	tables := map[[16]byte][2]string{}
	for _, k := range cat.Keyspaces() {
		for _, t := range k.Tables {
			tables[t.ID] = [2]string{t.Keyspace, t.Name}
		}
	}
	var out []systables.Latency
	for _, l := range v.latencies.Snapshot(string(kind), func(id [16]byte) (string, string, bool) {
		n, ok := tables[id]
		return n[0], n[1], ok
	}) {
		out = append(out, systables.Latency{Keyspace: l.Keyspace, Table: l.Table, Count: l.Count,
			P50: l.P50, P99: l.P99, Max: l.Max, PerSecond: l.PerSecond})
	}
	return out
}
