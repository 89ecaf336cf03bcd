package systables

import (
	"crypto/md5"
)

// This file records, as data, the layouts of the Cassandra 4.0 system tables
// that drivers and cqlsh read. Everything here was checked against the
// cassandra-4.0 sources: db/SystemKeyspace.java, schema/SchemaKeyspace.java,
// db/virtual/VirtualSchemaKeyspace.java, auth/AuthKeyspace.java,
// tracing/TraceKeyspace.java, and schema/TableParams.java with its
// CachingParams, CompactionParams and CompressionParams.
//
// Type spellings are what Cassandra writes to system_schema.columns.type:
// AbstractType.asCQL3Type().toString(). So a column declared "varchar"
// becomes "text", "UUID" becomes "uuid", and collection arguments are
// separated by ", ".
//
// 4.0 vs 4.1 differences in these tables:
//   - system_schema.tables and system_schema.views gain "memtable text" in
//     4.1. It sorts between max_index_interval and memtable_flush_period_in_ms.
//     4.1 writes it only when a table uses a non-default memtable, so it is
//     null for ordinary tables. cqld serves the 4.0 layout, which lacks the
//     column.
//   - The other tables listed here have the same layout in 4.0 and 4.1. 4.1
//     adds system tables that are not listed (system.top_partitions,
//     system.paxos_repair_history) and columns in system.paxos.
//   - allow_auto_snapshot, incremental_backups and system_schema.column_masks
//     arrived in 5.0 and are in neither 4.x release.

// colKind is a column's role, spelled as system_schema.columns.kind spells it.
type colKind string

const (
	kindPartitionKey colKind = "partition_key"
	kindClustering   colKind = "clustering"
	kindRegular      colKind = "regular"
	kindStatic       colKind = "static"
)

// colDef is one column of a system table. typ is the CQL type as
// system_schema.columns.type spells it ("text", "frozen<map<text, text>>",
// "set<text>", ...). position is the index within the partition key or
// clustering key, -1 for regular and static columns. order is "asc", "desc"
// or "none" (none for non-clustering columns).
type colDef struct {
	name     string
	typ      string
	kind     colKind
	position int
	order    string
}

// tableDef is a system table's definition. comment is the table comment
// Cassandra gives it.
type tableDef struct {
	keyspace string
	name     string
	comment  string
	// cols is in Cassandra's SELECT * order: partition key columns, then
	// clustering columns (each by position), then the rest by name bytes.
	// Columns.selectOrderIterator merges simple and complex columns, and
	// static columns would come before regular ones. No table here has static
	// columns.
	cols []colDef
}

// Helpers keep the table literals short; they only build colDef values.
func sysPK(name, typ string, pos int) colDef {
	return colDef{name: name, typ: typ, kind: kindPartitionKey, position: pos, order: "none"}
}

func sysCK(name, typ string, pos int) colDef {
	return colDef{name: name, typ: typ, kind: kindClustering, position: pos, order: "asc"}
}

func sysReg(name, typ string) colDef {
	return colDef{name: name, typ: typ, kind: kindRegular, position: -1, order: "none"}
}

// Column type spellings used more than once.
const (
	sysTypTextMap  = "frozen<map<text, text>>"
	sysTypTextList = "frozen<list<text>>"
)

// systemTableDefs lists every system table cqld serves.
var systemTableDefs = []tableDef{
	// ---- system (SystemKeyspace.java) ----
	{
		keyspace: "system",
		name:     "local",
		comment:  "information about the local node",
		// 4.0 also records thrift_version text as a dropped column
		// (recordDeprecatedSystemColumn). It appears in
		// system_schema.dropped_columns only, never in SELECT *.
		cols: []colDef{
			sysPK("key", "text", 0),
			sysReg("bootstrapped", "text"),
			sysReg("broadcast_address", "inet"),
			sysReg("broadcast_port", "int"),
			sysReg("cluster_name", "text"),
			sysReg("cql_version", "text"),
			sysReg("data_center", "text"),
			sysReg("gossip_generation", "int"),
			sysReg("host_id", "uuid"),
			sysReg("listen_address", "inet"),
			sysReg("listen_port", "int"),
			sysReg("native_protocol_version", "text"),
			sysReg("partitioner", "text"),
			sysReg("rack", "text"),
			sysReg("release_version", "text"),
			sysReg("rpc_address", "inet"),
			sysReg("rpc_port", "int"),
			sysReg("schema_version", "uuid"),
			sysReg("tokens", "set<text>"), // declared set<varchar>
			sysReg("truncated_at", "map<uuid, blob>"),
		},
	},
	{
		keyspace: "system",
		name:     "peers", // LEGACY_PEERS, deprecated but still present in 4.0
		comment:  "information about known peers in the cluster",
		cols: []colDef{
			sysPK("peer", "inet", 0),
			sysReg("data_center", "text"),
			sysReg("host_id", "uuid"),
			sysReg("preferred_ip", "inet"),
			sysReg("rack", "text"),
			sysReg("release_version", "text"),
			sysReg("rpc_address", "inet"),
			sysReg("schema_version", "uuid"),
			sysReg("tokens", "set<text>"),
		},
	},
	{
		keyspace: "system",
		name:     "peers_v2",
		comment:  "information about known peers in the cluster",
		cols: []colDef{
			sysPK("peer", "inet", 0),
			sysCK("peer_port", "int", 0),
			sysReg("data_center", "text"),
			sysReg("host_id", "uuid"),
			sysReg("native_address", "inet"),
			sysReg("native_port", "int"),
			sysReg("preferred_ip", "inet"),
			sysReg("preferred_port", "int"),
			sysReg("rack", "text"),
			sysReg("release_version", "text"),
			sysReg("schema_version", "uuid"),
			sysReg("tokens", "set<text>"),
		},
	},
	{
		keyspace: "system",
		name:     "size_estimates", // LEGACY_SIZE_ESTIMATES
		comment:  "per-table primary range size estimates, table is deprecated in favor of table_estimates",
		cols: []colDef{
			sysPK("keyspace_name", "text", 0),
			sysCK("table_name", "text", 0),
			sysCK("range_start", "text", 1),
			sysCK("range_end", "text", 2),
			sysReg("mean_partition_size", "bigint"),
			sysReg("partitions_count", "bigint"),
		},
	},
	{
		keyspace: "system",
		name:     "table_estimates", // new in 4.0 (CASSANDRA-15637)
		comment:  "per-table range size estimates",
		cols: []colDef{
			sysPK("keyspace_name", "text", 0),
			sysCK("table_name", "text", 0),
			sysCK("range_type", "text", 1),
			sysCK("range_start", "text", 2),
			sysCK("range_end", "text", 3),
			sysReg("mean_partition_size", "bigint"),
			sysReg("partitions_count", "bigint"),
		},
	},
	{
		keyspace: "system",
		name:     "prepared_statements",
		comment:  "prepared statements",
		cols: []colDef{
			sysPK("prepared_id", "blob", 0),
			sysReg("logged_keyspace", "text"),
			sysReg("query_string", "text"),
		},
	},
	{
		keyspace: "system",
		name:     "paxos",
		comment:  "in-progress paxos proposals",
		cols: []colDef{
			sysPK("row_key", "blob", 0),
			sysCK("cf_id", "uuid", 0),
			sysReg("in_progress_ballot", "timeuuid"),
			sysReg("most_recent_commit", "blob"),
			sysReg("most_recent_commit_at", "timeuuid"),
			sysReg("most_recent_commit_version", "int"),
			sysReg("proposal", "blob"),
			sysReg("proposal_ballot", "timeuuid"),
			sysReg("proposal_version", "int"),
		},
	},
	{
		keyspace: "system",
		name:     "IndexInfo", // quoted identifier: system."IndexInfo"
		comment:  "built column indexes",
		cols: []colDef{
			sysPK("table_name", "text", 0), // really the keyspace name
			sysCK("index_name", "text", 0),
			sysReg("value", "blob"),
		},
	},
	{
		keyspace: "system",
		name:     "available_ranges_v2",
		comment:  "available keyspace/ranges during bootstrap/replace that are ready to be served",
		cols: []colDef{
			sysPK("keyspace_name", "text", 0),
			sysReg("full_ranges", "set<blob>"),
			sysReg("transient_ranges", "set<blob>"),
		},
	},
	{
		keyspace: "system",
		name:     "built_views",
		comment:  "built views",
		cols: []colDef{
			sysPK("keyspace_name", "text", 0),
			sysCK("view_name", "text", 0),
			sysReg("status_replicated", "boolean"),
		},
	},

	// ---- system_schema (SchemaKeyspace.java) ----
	{
		keyspace: "system_schema",
		name:     "keyspaces",
		comment:  "keyspace definitions",
		cols: []colDef{
			sysPK("keyspace_name", "text", 0),
			sysReg("durable_writes", "boolean"),
			sysReg("replication", sysTypTextMap),
		},
	},
	{
		keyspace: "system_schema",
		name:     "tables",
		comment:  "table definitions",
		// 4.1 adds sysReg("memtable", "text") after max_index_interval.
		cols: []colDef{
			sysPK("keyspace_name", "text", 0),
			sysCK("table_name", "text", 0),
			sysReg("additional_write_policy", "text"),
			sysReg("bloom_filter_fp_chance", "double"),
			sysReg("caching", sysTypTextMap),
			sysReg("cdc", "boolean"),
			sysReg("comment", "text"),
			sysReg("compaction", sysTypTextMap),
			sysReg("compression", sysTypTextMap),
			sysReg("crc_check_chance", "double"),
			sysReg("dclocal_read_repair_chance", "double"), // unused since 4.0, always 0.0
			sysReg("default_time_to_live", "int"),
			sysReg("extensions", "frozen<map<text, blob>>"),
			sysReg("flags", "frozen<set<text>>"),
			sysReg("gc_grace_seconds", "int"),
			sysReg("id", "uuid"),
			sysReg("max_index_interval", "int"),
			sysReg("memtable_flush_period_in_ms", "int"),
			sysReg("min_index_interval", "int"),
			sysReg("read_repair", "text"),
			sysReg("read_repair_chance", "double"), // unused since 4.0, always 0.0
			sysReg("speculative_retry", "text"),
		},
	},
	{
		keyspace: "system_schema",
		name:     "columns",
		comment:  "column definitions",
		cols: []colDef{
			sysPK("keyspace_name", "text", 0),
			sysCK("table_name", "text", 0),
			sysCK("column_name", "text", 1),
			sysReg("clustering_order", "text"),
			sysReg("column_name_bytes", "blob"),
			sysReg("kind", "text"),
			sysReg("position", "int"),
			sysReg("type", "text"),
		},
	},
	{
		keyspace: "system_schema",
		name:     "dropped_columns",
		comment:  "dropped column registry",
		cols: []colDef{
			sysPK("keyspace_name", "text", 0),
			sysCK("table_name", "text", 0),
			sysCK("column_name", "text", 1),
			sysReg("dropped_time", "timestamp"),
			sysReg("kind", "text"),
			sysReg("type", "text"),
		},
	},
	{
		keyspace: "system_schema",
		name:     "triggers",
		comment:  "trigger definitions",
		cols: []colDef{
			sysPK("keyspace_name", "text", 0),
			sysCK("table_name", "text", 0),
			sysCK("trigger_name", "text", 1),
			sysReg("options", sysTypTextMap),
		},
	},
	{
		keyspace: "system_schema",
		name:     "views",
		comment:  "view definitions",
		// Same options as tables except flags. 4.1 adds sysReg("memtable",
		// "text") after max_index_interval.
		cols: []colDef{
			sysPK("keyspace_name", "text", 0),
			sysCK("view_name", "text", 0),
			sysReg("additional_write_policy", "text"),
			sysReg("base_table_id", "uuid"),
			sysReg("base_table_name", "text"),
			sysReg("bloom_filter_fp_chance", "double"),
			sysReg("caching", sysTypTextMap),
			sysReg("cdc", "boolean"),
			sysReg("comment", "text"),
			sysReg("compaction", sysTypTextMap),
			sysReg("compression", sysTypTextMap),
			sysReg("crc_check_chance", "double"),
			sysReg("dclocal_read_repair_chance", "double"),
			sysReg("default_time_to_live", "int"),
			sysReg("extensions", "frozen<map<text, blob>>"),
			sysReg("gc_grace_seconds", "int"),
			sysReg("id", "uuid"),
			sysReg("include_all_columns", "boolean"),
			sysReg("max_index_interval", "int"),
			sysReg("memtable_flush_period_in_ms", "int"),
			sysReg("min_index_interval", "int"),
			sysReg("read_repair", "text"),
			sysReg("read_repair_chance", "double"),
			sysReg("speculative_retry", "text"),
			sysReg("where_clause", "text"),
		},
	},
	{
		keyspace: "system_schema",
		name:     "types",
		comment:  "user defined type definitions",
		cols: []colDef{
			sysPK("keyspace_name", "text", 0),
			sysCK("type_name", "text", 0),
			sysReg("field_names", sysTypTextList),
			sysReg("field_types", sysTypTextList),
		},
	},
	{
		keyspace: "system_schema",
		name:     "functions",
		comment:  "user defined function definitions",
		cols: []colDef{
			sysPK("keyspace_name", "text", 0),
			sysCK("function_name", "text", 0),
			sysCK("argument_types", sysTypTextList, 1),
			sysReg("argument_names", sysTypTextList),
			sysReg("body", "text"),
			sysReg("called_on_null_input", "boolean"),
			sysReg("language", "text"),
			sysReg("return_type", "text"),
		},
	},
	{
		keyspace: "system_schema",
		name:     "aggregates",
		comment:  "user defined aggregate definitions",
		cols: []colDef{
			sysPK("keyspace_name", "text", 0),
			sysCK("aggregate_name", "text", 0),
			sysCK("argument_types", sysTypTextList, 1),
			sysReg("final_func", "text"),
			sysReg("initcond", "text"),
			sysReg("return_type", "text"),
			sysReg("state_func", "text"),
			sysReg("state_type", "text"),
		},
	},
	{
		keyspace: "system_schema",
		name:     "indexes",
		comment:  "secondary index definitions",
		cols: []colDef{
			sysPK("keyspace_name", "text", 0),
			sysCK("table_name", "text", 0),
			sysCK("index_name", "text", 1),
			sysReg("kind", "text"),
			sysReg("options", sysTypTextMap),
		},
	},

	// ---- system_virtual_schema (VirtualSchemaKeyspace.java) ----
	// Virtual tables have no system_schema rows and no table options.
	{
		keyspace: "system_virtual_schema",
		name:     "keyspaces",
		comment:  "virtual keyspace definitions",
		cols: []colDef{
			sysPK("keyspace_name", "text", 0),
		},
	},
	{
		keyspace: "system_virtual_schema",
		name:     "tables",
		comment:  "virtual table definitions",
		cols: []colDef{
			sysPK("keyspace_name", "text", 0),
			sysCK("table_name", "text", 0),
			sysReg("comment", "text"),
		},
	},
	{
		keyspace: "system_virtual_schema",
		name:     "columns",
		comment:  "virtual column definitions",
		cols: []colDef{
			sysPK("keyspace_name", "text", 0),
			sysCK("table_name", "text", 0),
			sysCK("column_name", "text", 1),
			sysReg("clustering_order", "text"),
			sysReg("column_name_bytes", "blob"),
			sysReg("kind", "text"),
			sysReg("position", "int"),
			sysReg("type", "text"),
		},
	},

	// ---- system_auth (AuthKeyspace.java) ----
	{
		keyspace: "system_auth",
		name:     "roles",
		comment:  "role definitions",
		cols: []colDef{
			sysPK("role", "text", 0),
			sysReg("can_login", "boolean"),
			sysReg("is_superuser", "boolean"),
			sysReg("member_of", "set<text>"),
			sysReg("salted_hash", "text"),
		},
	},

	// ---- system_traces (TraceKeyspace.java) ----
	{
		keyspace: "system_traces",
		name:     "sessions",
		comment:  "tracing sessions",
		cols: []colDef{
			sysPK("session_id", "uuid", 0),
			sysReg("client", "inet"),
			sysReg("command", "text"),
			sysReg("coordinator", "inet"),
			sysReg("coordinator_port", "int"),
			sysReg("duration", "int"),
			sysReg("parameters", "map<text, text>"),
			sysReg("request", "text"),
			sysReg("started_at", "timestamp"),
		},
	},
	{
		keyspace: "system_traces",
		name:     "events",
		comment:  "tracing events",
		cols: []colDef{
			sysPK("session_id", "uuid", 0),
			sysCK("event_id", "timeuuid", 0),
			sysReg("activity", "text"),
			sysReg("source", "inet"),
			sysReg("source_elapsed", "int"),
			sysReg("source_port", "int"),
			sysReg("thread", "text"),
		},
	},
}

// tableOptionDefaults are the values Cassandra 4.0 shows in
// system_schema.tables (and views) for a table created with no options.
// Sources: TableParams.Builder defaults,
// SchemaKeyspace.addTableParamsToRowBuilder, CachingParams.DEFAULT,
// CompactionParams.DEFAULT, CompressionParams.DEFAULT (16 KiB chunks since
// 4.0) and PercentileSpeculativeRetryPolicy.NINETY_NINE_P, which prints as
// "99p".
//
// Go types: text → string, int → int32, double → float64, boolean → bool,
// frozen<map<text, text>> → map[string]string, frozen<set<text>> → []string
// (sorted, as Cassandra returns sets), frozen<map<text, blob>> →
// map[string][]byte. A nil value means the cell is null.
//
// NB: "cdc" is nil on purpose. 4.0 (and 4.1) write the cdc cell only when
// cdc_enabled is true in cassandra.yaml, which is false by default. A
// default node therefore returns null for system_schema.tables.cdc, although
// server-side DESCRIBE prints "cdc = false".
//
// "flags" belongs to system_schema.tables only; views have no flags column.
// "id" is per table: a time UUID for user tables, systemTableID for system
// tables.
var tableOptionDefaults = map[string]any{
	"additional_write_policy": "99p",
	"bloom_filter_fp_chance":  0.01, // CompactionParams.defaultBloomFilterFbChance: 0.01 for STCS, 0.1 for LCS
	"caching": map[string]string{
		"keys":               "ALL",
		"rows_per_partition": "NONE",
	},
	"cdc":     nil,
	"comment": "",
	"compaction": map[string]string{
		"class":         "org.apache.cassandra.db.compaction.SizeTieredCompactionStrategy",
		"max_threshold": "32",
		"min_threshold": "4",
	},
	"compression": map[string]string{
		"chunk_length_in_kb": "16",
		"class":              "org.apache.cassandra.io.compress.LZ4Compressor",
	},
	"crc_check_chance":            1.0,
	"dclocal_read_repair_chance":  0.0,
	"default_time_to_live":        int32(0),
	"extensions":                  map[string][]byte{}, // frozen, so an empty map rather than null
	"flags":                       []string{"compound"},
	"gc_grace_seconds":            int32(864000),
	"max_index_interval":          int32(2048),
	"memtable_flush_period_in_ms": int32(0),
	"min_index_interval":          int32(128),
	"read_repair":                 "BLOCKING",
	"read_repair_chance":          0.0,
	"speculative_retry":           "99p",
}

// systemKeyspaceOptionOverrides are the options in which 4.0's own system
// tables differ from tableOptionDefaults (each keyspace's parse() helper
// sets them). Each table's comment comes from systemTableDefs.
var systemKeyspaceOptionOverrides = map[string]map[string]any{
	// SystemKeyspace.parse: gcGraceSeconds(0), memtableFlushPeriod(1h).
	"system": {
		"gc_grace_seconds":            int32(0),
		"memtable_flush_period_in_ms": int32(3600000),
	},
	// SchemaKeyspace.parse: gcGraceSeconds(7 days), memtableFlushPeriod(1h).
	"system_schema": {
		"gc_grace_seconds":            int32(604800),
		"memtable_flush_period_in_ms": int32(3600000),
	},
	// AuthKeyspace.parse: gcGraceSeconds(90 days). The flush period is
	// unset (0) since 4.0.
	"system_auth": {
		"gc_grace_seconds": int32(7776000),
	},
	// TraceKeyspace.parse: gcGraceSeconds(0).
	"system_traces": {
		"gc_grace_seconds": int32(0),
	},
}

// systemKeyspaceReplication is system_schema.keyspaces.replication for the
// 4.0 system keyspaces cqld lists (durable_writes is true for all of them).
// Virtual keyspaces are not in system_schema.keyspaces.
var systemKeyspaceReplication = map[string]map[string]string{
	"system":        {"class": "org.apache.cassandra.locator.LocalStrategy"},
	"system_schema": {"class": "org.apache.cassandra.locator.LocalStrategy"},
	"system_auth":   {"class": "org.apache.cassandra.locator.SimpleStrategy", "replication_factor": "1"},
	"system_traces": {"class": "org.apache.cassandra.locator.SimpleStrategy", "replication_factor": "2"},
}

// systemTableID returns the id Cassandra gives a system table:
// TableId.forSystemTable, which is
// UUID.nameUUIDFromBytes(keyspace bytes ++ table bytes), a version 3 (MD5)
// UUID. Virtual tables do not use it.
func systemTableID(keyspace, table string) [16]byte {
	id := md5.Sum([]byte(keyspace + table))
	id[6] = id[6]&0x0f | 0x30 // version 3
	id[8] = id[8]&0x3f | 0x80 // IETF variant
	return id
}
