package systables

import (
	"math"
	"net"
	"net/netip"
	"strings"
)

// The tables of system_views (Cassandra 4.0's db/virtual: ClientsTable,
// SettingsTable, SSTableTasksTable, ThreadPoolsTable, CachesTable and
// TableMetricTables' latency tables): the node's live figures, made from
// State.Views on each read. Like every virtual table they cannot be
// written.

// Views are the node's figures system_views shows. Implementations are
// safe for concurrent use and answer from memory.
type Views interface {
	// Clients are the connected clients.
	Clients() []Client
	// Settings are the configuration's keys and values.
	Settings() []Setting
	// ThreadPools are the node's pools of work: workers, event loops,
	// the commit log, flushes and compactions.
	ThreadPools() []ThreadPool
	// Caches are the node's caches.
	Caches() []Cache
	// SSTableTasks are the compactions and flushes running.
	SSTableTasks() []SSTableTask
	// Latencies are the latencies of kind of every table that has some.
	Latencies(kind LatencyKind) []Latency
}

// Client is one connection, as system_views.clients shows it; empty
// strings are null.
type Client struct {
	Addr            netip.AddrPort
	Hostname        string
	Username        string
	Stage           string // established, authenticating or ready
	ProtocolVersion int
	DriverName      string
	DriverVersion   string
	Requests        int64
	SSL             bool
	SSLProtocol     string
	SSLCipherSuite  string
}

// Setting is a configuration key and its value, nil when it has none.
type Setting struct {
	Name  string
	Value *string
}

// ThreadPool is one pool of work.
type ThreadPool struct {
	Name                           string
	Active, ActiveLimit, Pending   int32
	Completed, Blocked, BlockedAll int64
}

// Cache is one cache; the recent rates are per second over the last
// fifteen minutes.
type Cache struct {
	Name                             string
	CapacityBytes, SizeBytes         int64
	Entries                          int32
	Requests, Hits                   int64
	RecentRequestRate, RecentHitRate int64
}

// SSTableTask is a compaction or flush under way; Keyspace and Table are
// "*" when it is not one table's.
type SSTableTask struct {
	Keyspace, Table string
	ID              [16]byte
	Kind, Unit      string
	Progress, Total int64
}

// LatencyKind names a latency table.
type LatencyKind string

const (
	LocalRead        LatencyKind = "local_read_latency"
	LocalScan        LatencyKind = "local_scan_latency"
	LocalWrite       LatencyKind = "local_write_latency"
	CoordinatorRead  LatencyKind = "coordinator_read_latency"
	CoordinatorScan  LatencyKind = "coordinator_scan_latency"
	CoordinatorWrite LatencyKind = "coordinator_write_latency"
)

// Latency is one table's latencies of a kind: how many, their median,
// 99th percentile and maximum in milliseconds, and the rate per second
// over the last five minutes.
type Latency struct {
	Keyspace, Table string
	Count           int64
	P50, P99, Max   float64
	PerSecond       float64
}

var latencyKinds = []LatencyKind{LocalRead, LocalScan, LocalWrite, CoordinatorRead, CoordinatorScan, CoordinatorWrite}

// systemTableDefs are every system table cqld serves.
var systemTableDefs = append(append([]tableDef(nil), baseTableDefs...), viewTableDefs()...)

func viewTableDefs() []tableDef {
	defs := []tableDef{
		{keyspace: viewsKeyspace, name: "caches", comment: "system caches", cols: []colDef{
			sysPK("name", "text", 0),
			sysReg("capacity_bytes", "bigint"),
			sysReg("entry_count", "int"),
			sysReg("hit_count", "bigint"),
			sysReg("hit_ratio", "double"),
			sysReg("recent_hit_rate_per_second", "bigint"),
			sysReg("recent_request_rate_per_second", "bigint"),
			sysReg("request_count", "bigint"),
			sysReg("size_bytes", "bigint"),
		}},
		{keyspace: viewsKeyspace, name: "clients", comment: "currently connected clients", cols: []colDef{
			sysPK("address", "inet", 0),
			sysCK("port", "int", 0),
			sysReg("connection_stage", "text"),
			sysReg("driver_name", "text"),
			sysReg("driver_version", "text"),
			sysReg("hostname", "text"),
			sysReg("protocol_version", "int"),
			sysReg("request_count", "bigint"),
			sysReg("ssl_cipher_suite", "text"),
			sysReg("ssl_enabled", "boolean"),
			sysReg("ssl_protocol", "text"),
			sysReg("username", "text"),
		}},
		{keyspace: viewsKeyspace, name: "settings", comment: "current settings", cols: []colDef{
			sysPK("name", "text", 0),
			sysReg("value", "text"),
		}},
		{keyspace: viewsKeyspace, name: "sstable_tasks", comment: "current sstable tasks", cols: []colDef{
			sysPK("keyspace_name", "text", 0),
			sysCK("table_name", "text", 0),
			sysCK("task_id", "uuid", 1),
			sysReg("completion_ratio", "double"),
			sysReg("kind", "text"),
			sysReg("progress", "bigint"),
			sysReg("total", "bigint"),
			sysReg("unit", "text"),
		}},
		// ThreadPoolsTable sets no comment.
		{keyspace: viewsKeyspace, name: "thread_pools", cols: []colDef{
			sysPK("name", "text", 0),
			sysReg("active_tasks", "int"),
			sysReg("active_tasks_limit", "int"),
			sysReg("blocked_tasks", "bigint"),
			sysReg("blocked_tasks_all_time", "bigint"),
			sysReg("completed_tasks", "bigint"),
			sysReg("pending_tasks", "int"),
		}},
	}
	// TableMetricTables' latency tables: a timer per table, no comment.
	for _, k := range latencyKinds {
		defs = append(defs, tableDef{keyspace: viewsKeyspace, name: string(k), cols: []colDef{
			sysPK("keyspace_name", "text", 0),
			sysPK("table_name", "text", 1),
			sysReg("count", "bigint"),
			sysReg("max_ms", "double"),
			sysReg("p50th_ms", "double"),
			sysReg("p99th_ms", "double"),
			sysReg("per_second", "double"),
		}})
	}
	return defs
}

func views(s State) Views {
	if v := s.Views(); v != nil {
		return v
	}
	return noViews{}
}

func clientRows(s State) []Row {
	var rows []Row
	for _, c := range views(s).Clients() {
		rows = append(rows, Row{
			"address":          net.IP(c.Addr.Addr().Unmap().AsSlice()),
			"port":             int32(c.Addr.Port()),
			"connection_stage": c.Stage,
			"driver_name":      nonEmptyOrNil(c.DriverName),
			"driver_version":   nonEmptyOrNil(c.DriverVersion),
			"hostname":         nonEmptyOrNil(c.Hostname),
			"protocol_version": int32(c.ProtocolVersion),
			"request_count":    c.Requests,
			"ssl_cipher_suite": nonEmptyOrNil(c.SSLCipherSuite),
			"ssl_enabled":      c.SSL,
			"ssl_protocol":     nonEmptyOrNil(c.SSLProtocol),
			"username":         nonEmptyOrNil(c.Username),
		})
	}
	return rows
}

func settingRows(s State) []Row {
	var rows []Row
	for _, st := range views(s).Settings() {
		r := Row{"name": st.Name}
		if st.Value != nil {
			r["value"] = *st.Value
		}
		rows = append(rows, r)
	}
	return rows
}

func threadPoolRows(s State) []Row {
	var rows []Row
	for _, p := range views(s).ThreadPools() {
		rows = append(rows, Row{
			"name":                   p.Name,
			"active_tasks":           p.Active,
			"active_tasks_limit":     p.ActiveLimit,
			"pending_tasks":          p.Pending,
			"completed_tasks":        p.Completed,
			"blocked_tasks":          p.Blocked,
			"blocked_tasks_all_time": p.BlockedAll,
		})
	}
	return rows
}

func cacheRows(s State) []Row {
	var rows []Row
	for _, c := range views(s).Caches() {
		ratio := math.NaN() // Codahale's RatioGauge of no requests
		if c.Requests > 0 {
			ratio = float64(c.Hits) / float64(c.Requests)
		}
		rows = append(rows, Row{
			"name":                           c.Name,
			"capacity_bytes":                 c.CapacityBytes,
			"size_bytes":                     c.SizeBytes,
			"entry_count":                    c.Entries,
			"request_count":                  c.Requests,
			"hit_count":                      c.Hits,
			"hit_ratio":                      ratio,
			"recent_request_rate_per_second": c.RecentRequestRate,
			"recent_hit_rate_per_second":     c.RecentHitRate,
		})
	}
	return rows
}

func sstableTaskRows(s State) []Row {
	var rows []Row
	for _, t := range views(s).SSTableTasks() {
		ratio := 1.0
		if t.Total != 0 {
			ratio = float64(t.Progress) / float64(t.Total)
		}
		rows = append(rows, Row{
			"keyspace_name":    t.Keyspace,
			"table_name":       t.Table,
			"task_id":          t.ID,
			"completion_ratio": ratio,
			"kind":             strings.ToLower(t.Kind),
			"progress":         t.Progress,
			"total":            t.Total,
			"unit":             strings.ToLower(t.Unit),
		})
	}
	return rows
}

func latencyRows(kind LatencyKind) func(State) []Row {
	return func(s State) []Row {
		var rows []Row
		for _, l := range views(s).Latencies(kind) {
			rows = append(rows, Row{
				"keyspace_name": l.Keyspace,
				"table_name":    l.Table,
				"count":         l.Count,
				"p50th_ms":      l.P50,
				"p99th_ms":      l.P99,
				"max_ms":        l.Max,
				"per_second":    l.PerSecond,
			})
		}
		return rows
	}
}

// noViews is a node without figures: every table of system_views empty.
type noViews struct{}

func (noViews) Clients() []Client               { return nil }
func (noViews) Settings() []Setting             { return nil }
func (noViews) ThreadPools() []ThreadPool       { return nil }
func (noViews) Caches() []Cache                 { return nil }
func (noViews) SSTableTasks() []SSTableTask     { return nil }
func (noViews) Latencies(LatencyKind) []Latency { return nil }
