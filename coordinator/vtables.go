package coordinator

import (
	"encoding/binary"
	"fmt"
	"net"
	"sort"
	"time"

	"github.com/datastax/go-cassandra-native-protocol/datatype"
	"github.com/datastax/go-cassandra-native-protocol/message"

	"github.com/cqld/cqld/statements"
	"github.com/cqld/cqld/storage"
)

// virtualKeyspace is the keyspace whose tables describe virtual keyspaces;
// like Cassandra, cqld does not list it in system_schema.
const virtualKeyspace = "system_virtual_schema"

// vtable is a system table answered from live state rather than storage.
type vtable struct {
	def   *tableDef
	types []datatype.DataType       // per column of def.cols
	meta  []*message.ColumnMetadata // per column of def.cols
	index map[string]int            // column name -> position in def.cols
	pk    []int                     // partition key columns, by position
	rows  func(c *Coordinator) []row
	// info is the table as the user read path's selection compiler sees
	// it (no storage: the rows are made on each read).
	info *tableInfo
}

// row is one row of a vtable, by column name; a missing column is null.
type row map[string]any

// vtables indexes the system tables by keyspace and table name.
type vtables map[string]map[string]*vtable

func newVTables() (vtables, error) {
	gens := map[string]func(c *Coordinator) []row{
		"system.local":                 (*Coordinator).localRows,
		"system.peers":                 (*Coordinator).peerRows,
		"system.peers_v2":              (*Coordinator).peerV2Rows,
		"system.prepared_statements":   (*Coordinator).preparedRows,
		"system.paxos":                 (*Coordinator).paxosRows,
		"system_schema.keyspaces":      (*Coordinator).keyspaceRows,
		"system_schema.tables":         (*Coordinator).tableRows,
		"system_schema.columns":        (*Coordinator).columnRows,
		"system_schema.types":          (*Coordinator).typeRows,
		"system_schema.indexes":        (*Coordinator).indexRows,
		virtualKeyspace + ".keyspaces": (*Coordinator).virtualKeyspaceRows,
		virtualKeyspace + ".tables":    (*Coordinator).virtualTableRows,
		virtualKeyspace + ".columns":   (*Coordinator).virtualColumnRows,
	}
	vt := vtables{}
	for i := range systemTableDefs {
		d := &systemTableDefs[i]
		t := &vtable{def: d, index: map[string]int{}, rows: gens[d.keyspace+"."+d.name]}
		if t.rows == nil {
			t.rows = func(*Coordinator) []row { return nil }
		}
		for j, col := range d.cols {
			typ, err := statements.ParseType(col.typ)
			if err != nil {
				return nil, fmt.Errorf("coordinator: %s.%s.%s: %w", d.keyspace, d.name, col.name, err)
			}
			t.types = append(t.types, typ)
			t.meta = append(t.meta, &message.ColumnMetadata{Keyspace: d.keyspace, Table: d.name, Name: col.name, Index: int32(j), Type: typ})
			t.index[col.name] = j
			if col.kind == kindPartitionKey {
				t.pk = append(t.pk, j)
			}
		}
		sort.Slice(t.pk, func(a, b int) bool { return d.cols[t.pk[a]].position < d.cols[t.pk[b]].position })
		t.info = t.selInfo()
		if vt[d.keyspace] == nil {
			vt[d.keyspace] = map[string]*vtable{}
		}
		vt[d.keyspace][d.name] = t
	}
	return vt, nil
}

// selInfo describes t as a tableInfo for compiling selections. Its
// values are whole (frozen): a system table's rows are encoded values.
func (t *vtable) selInfo() *tableInfo {
	d := t.def
	def := &storage.TableDef{Keyspace: d.keyspace, Name: d.name}
	for _, col := range d.cols {
		def.Columns = append(def.Columns, storage.ColumnDef{Name: col.name, Type: col.typ, Kind: string(col.kind), Position: col.position, Order: col.order})
	}
	ti := &tableInfo{def: def, byName: t.index, pk: t.pk, meta: t.meta}
	for i := range def.Columns {
		ti.cols = append(ti.cols, colInfo{def: &def.Columns[i], typ: t.types[i], frozen: true})
	}
	return ti
}

// systemKeyspaces are the keyspaces cqld owns, in system_schema order.
func systemKeyspaces() []string {
	out := make([]string, 0, len(systemKeyspaceReplication))
	for ks := range systemKeyspaceReplication {
		out = append(out, ks)
	}
	sort.Strings(out)
	return out
}

func isSystemKeyspace(ks string) bool {
	_, ok := systemKeyspaceReplication[ks]
	return ok || ks == virtualKeyspace
}

func (c *Coordinator) localRows() []row {
	tokens := tokenStrings(c.localTokens())
	return []row{{
		"key":                     "local",
		"bootstrapped":            "COMPLETED",
		"broadcast_address":       c.opts.ListenAddress,
		"broadcast_port":          int32(c.opts.StoragePort),
		"cluster_name":            c.node.ClusterName,
		"cql_version":             statementsCQLVersion,
		"data_center":             c.opts.DataCenter,
		"gossip_generation":       c.generation,
		"host_id":                 c.node.HostID,
		"listen_address":          c.opts.ListenAddress,
		"listen_port":             int32(c.opts.StoragePort),
		"native_protocol_version": "5",
		"partitioner":             "org.apache.cassandra.dht.Murmur3Partitioner",
		"rack":                    c.opts.Rack,
		"release_version":         ReleaseVersion,
		"rpc_address":             c.opts.RPCAddress,
		"rpc_port":                int32(c.opts.NativePort),
		"schema_version":          c.SchemaVersion(),
		"tokens":                  tokens,
	}}
}

func (c *Coordinator) keyspaceRows() []row {
	var rows []row
	for _, ks := range systemKeyspaces() {
		rows = append(rows, row{"keyspace_name": ks, "durable_writes": true, "replication": systemKeyspaceReplication[ks]})
	}
	for _, k := range c.catalog.Keyspaces() {
		rows = append(rows, row{"keyspace_name": k.Name, "durable_writes": k.DurableWrites, "replication": k.Replication})
	}
	return sortRows(rows, "keyspace_name")
}

// userTableRow is a user table's row of system_schema.tables.
func userTableRow(t *storage.TableDef) row {
	o := t.Options
	return row{
		"keyspace_name":               t.Keyspace,
		"table_name":                  t.Name,
		"additional_write_policy":     o.AdditionalWritePolicy,
		"bloom_filter_fp_chance":      o.BloomFilterFPChance,
		"caching":                     o.Caching,
		"comment":                     o.Comment,
		"compaction":                  o.Compaction,
		"compression":                 o.Compression,
		"crc_check_chance":            o.CRCCheckChance,
		"dclocal_read_repair_chance":  0.0,
		"default_time_to_live":        o.DefaultTimeToLive,
		"extensions":                  o.Extensions,
		"flags":                       []string{"compound"},
		"gc_grace_seconds":            o.GCGraceSeconds,
		"id":                          t.ID,
		"max_index_interval":          o.MaxIndexInterval,
		"memtable_flush_period_in_ms": o.MemtableFlushPeriodInMs,
		"min_index_interval":          o.MinIndexInterval,
		"read_repair":                 o.ReadRepair,
		"read_repair_chance":          0.0,
		"speculative_retry":           o.SpeculativeRetry,
	}
}

// schemaTables are the system tables listed in system_schema, in order.
func schemaTables() []*tableDef {
	var out []*tableDef
	for i := range systemTableDefs {
		if d := &systemTableDefs[i]; d.keyspace != virtualKeyspace {
			out = append(out, d)
		}
	}
	return out
}

func (c *Coordinator) tableRows() []row {
	var rows []row
	for _, d := range schemaTables() {
		r := row{}
		for k, v := range tableOptionDefaults {
			r[k] = v
		}
		for k, v := range systemKeyspaceOptionOverrides[d.keyspace] {
			r[k] = v
		}
		r["keyspace_name"] = d.keyspace
		r["table_name"] = d.name
		r["comment"] = d.comment
		r["id"] = systemTableID(d.keyspace, d.name)
		rows = append(rows, r)
	}
	for _, k := range c.catalog.Keyspaces() {
		for _, t := range k.SortedTables() {
			rows = append(rows, userTableRow(t))
		}
	}
	return sortRows(rows, "keyspace_name", "table_name")
}

func (c *Coordinator) droppedColumnRows() []row {
	var rows []row
	for _, k := range c.catalog.Keyspaces() {
		for _, t := range k.SortedTables() {
			for name, d := range t.Dropped {
				rows = append(rows, row{
					"keyspace_name": t.Keyspace,
					"table_name":    t.Name,
					"column_name":   name,
					"dropped_time":  time.UnixMicro(d.Time),
					"kind":          storage.KindRegular,
					"type":          d.Type,
				})
			}
		}
	}
	return sortRows(rows, "keyspace_name", "table_name", "column_name")
}

func columnRowsOf(defs []*tableDef) []row {
	var rows []row
	for _, d := range defs {
		for _, col := range d.cols {
			rows = append(rows, row{
				"keyspace_name":     d.keyspace,
				"table_name":        d.name,
				"column_name":       col.name,
				"clustering_order":  col.order,
				"column_name_bytes": []byte(col.name),
				"kind":              string(col.kind),
				"position":          int32(col.position),
				"type":              col.typ,
			})
		}
	}
	return sortRows(rows, "keyspace_name", "table_name", "column_name")
}

func (c *Coordinator) columnRows() []row {
	rows := columnRowsOf(schemaTables())
	for _, k := range c.catalog.Keyspaces() {
		for _, t := range k.SortedTables() {
			for _, col := range t.Columns {
				rows = append(rows, row{
					"keyspace_name":     t.Keyspace,
					"table_name":        t.Name,
					"column_name":       col.Name,
					"clustering_order":  col.Order,
					"column_name_bytes": []byte(col.Name),
					"kind":              col.Kind,
					"position":          int32(col.Position),
					"type":              col.Type,
				})
			}
		}
	}
	return sortRows(rows, "keyspace_name", "table_name", "column_name")
}

func (c *Coordinator) typeRows() []row {
	var rows []row
	for _, k := range c.catalog.Keyspaces() {
		for _, t := range k.SortedTypes() {
			rows = append(rows, row{
				"keyspace_name": t.Keyspace,
				"type_name":     t.Name,
				"field_names":   t.FieldNames,
				"field_types":   t.FieldTypes,
			})
		}
	}
	return rows
}

func virtualTables() []*tableDef {
	var out []*tableDef
	for i := range systemTableDefs {
		if d := &systemTableDefs[i]; d.keyspace == virtualKeyspace {
			out = append(out, d)
		}
	}
	return out
}

func (c *Coordinator) virtualKeyspaceRows() []row {
	return []row{{"keyspace_name": virtualKeyspace}}
}

func (c *Coordinator) virtualTableRows() []row {
	var rows []row
	for _, d := range virtualTables() {
		rows = append(rows, row{"keyspace_name": d.keyspace, "table_name": d.name, "comment": d.comment})
	}
	return sortRows(rows, "keyspace_name", "table_name")
}

func (c *Coordinator) virtualColumnRows() []row { return columnRowsOf(virtualTables()) }

// sortRows orders rows by the given text key columns.
func sortRows(rows []row, keys ...string) []row {
	sort.SliceStable(rows, func(i, j int) bool {
		for _, k := range keys {
			a, _ := rows[i][k].(string)
			b, _ := rows[j][k].(string)
			if a != b {
				return a < b
			}
		}
		return false
	})
	return rows
}

// ipOf returns the IP of an address, for inet cells.
func ipOf(s string) net.IP {
	if ip := net.ParseIP(s); ip != nil {
		return ip
	}
	if ips, err := net.LookupIP(s); err == nil && len(ips) > 0 {
		return ips[0]
	}
	return nil
}

// pagingState encodes the offset of the next row of a system-table read.
func pagingState(offset int) []byte {
	return binary.BigEndian.AppendUint32(nil, uint32(offset))
}

func parsePagingState(b []byte) (int, error) {
	if len(b) != 4 {
		return 0, protocolErrorf("Invalid value for the paging state")
	}
	return int(binary.BigEndian.Uint32(b)), nil
}

// indexRows are system_schema.indexes.
func (c *Coordinator) indexRows() []row {
	var rows []row
	for _, k := range c.catalog.Keyspaces() {
		for _, t := range k.SortedTables() {
			for _, ix := range t.Indexes {
				rows = append(rows, row{
					"keyspace_name": t.Keyspace,
					"table_name":    t.Name,
					"index_name":    ix.Name,
					"kind":          "COMPOSITES",
					"options":       map[string]string{"target": ix.Target},
				})
			}
		}
	}
	return sortRows(rows, "keyspace_name", "table_name", "index_name")
}
