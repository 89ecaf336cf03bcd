package storage

import "sort"

// Column kinds, spelled as system_schema.columns.kind spells them.
const (
	KindPartitionKey = "partition_key"
	KindClustering   = "clustering"
	KindRegular      = "regular"
	KindStatic       = "static"
)

// Schema is one immutable version of the user schema. The catalog swaps in
// a new Schema on every change, so readers never lock: they take the
// current *Schema and use it for the whole request. Nothing reachable from
// a Schema is ever modified.
type Schema struct {
	Keyspaces map[string]*KeyspaceDef
	Digest    [16]byte
}

// Keyspace returns the named keyspace, or nil.
func (s *Schema) Keyspace(name string) *KeyspaceDef { return s.Keyspaces[name] }

// Table returns the named table, or nil.
func (s *Schema) Table(keyspace, name string) *TableDef {
	if ks := s.Keyspaces[keyspace]; ks != nil {
		return ks.Tables[name]
	}
	return nil
}

// SortedKeyspaces returns the keyspaces by name.
func (s *Schema) SortedKeyspaces() []*KeyspaceDef {
	out := make([]*KeyspaceDef, 0, len(s.Keyspaces))
	for _, k := range s.Keyspaces {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// KeyspaceDef is a keyspace's definition.
type KeyspaceDef struct {
	Name          string               `json:"name"`
	Replication   map[string]string    `json:"replication"`
	DurableWrites bool                 `json:"durable_writes"`
	Tables        map[string]*TableDef `json:"tables,omitempty"`
	// Types are the keyspace's user-defined types, by name.
	Types map[string]*TypeDef `json:"types,omitempty"`
	// Functions and Aggregates are the keyspace's user-defined functions
	// and aggregates, sorted by signature (name, then argument types).
	Functions  []*FunctionDef  `json:"functions,omitempty"`
	Aggregates []*AggregateDef `json:"aggregates,omitempty"`
}

// TypeDef is a user-defined type: its fields in order, each type spelled as
// system_schema.types.field_types spells it.
type TypeDef struct {
	Keyspace   string   `json:"keyspace"`
	Name       string   `json:"name"`
	FieldNames []string `json:"field_names"`
	FieldTypes []string `json:"field_types"`
}

// SortedTypes returns the keyspace's user types by name.
func (k *KeyspaceDef) SortedTypes() []*TypeDef {
	out := make([]*TypeDef, 0, len(k.Types))
	for _, t := range k.Types {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// SortedTables returns the keyspace's tables by name.
func (k *KeyspaceDef) SortedTables() []*TableDef {
	out := make([]*TableDef, 0, len(k.Tables))
	for _, t := range k.Tables {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// TableDef is a table's definition.
type TableDef struct {
	Keyspace string   `json:"keyspace"`
	Name     string   `json:"name"`
	ID       [16]byte `json:"id"`
	// Columns are in SELECT * order: partition key columns by position,
	// clustering columns by position, then static and regular columns by
	// name.
	Columns []ColumnDef  `json:"columns"`
	Options TableOptions `json:"options"`
	// Dropped records dropped columns: name -> the drop's timestamp
	// (microseconds). Cells of that name written at or before it stay
	// invisible even if a column of that name is added again.
	Dropped map[string]DroppedColumn `json:"dropped,omitempty"`
	// Indexes are the table's secondary indexes, by name.
	Indexes []IndexDef `json:"indexes,omitempty"`
}

// IndexDef is a native secondary index (kind COMPOSITES) on one column.
// Target is what system_schema.indexes.options['target'] shows: the
// column name, full(name) for a frozen collection, or values(name),
// keys(name) or entries(name) for the elements of a non-frozen one.
type IndexDef struct {
	Name   string `json:"name"`
	Column string `json:"column"`
	Target string `json:"target"`
	// Elements is how an index of a non-frozen collection indexes its
	// elements: "values", "keys" (of a map) or "entries" (of a map); ""
	// for an index of whole values.
	Elements string `json:"elements,omitempty"`
	// Building is set until the rows written before the index have
	// entries (a crash can leave it set): until then queries scan.
	Building bool `json:"building,omitempty"`
}

// IndexOn returns the index on the named column, or nil.
func (t *TableDef) IndexOn(column string) *IndexDef {
	for i := range t.Indexes {
		if t.Indexes[i].Column == column {
			return &t.Indexes[i]
		}
	}
	return nil
}

// DroppedColumn is a column ALTER TABLE DROP removed.
type DroppedColumn struct {
	Type string `json:"type"`
	Time int64  `json:"time"`
}

// ColumnDef is one column of a table.
type ColumnDef struct {
	Name string `json:"name"`
	// Type is the CQL type as system_schema.columns.type spells it.
	Type string `json:"type"`
	Kind string `json:"kind"`
	// Position is the index within the partition or clustering key, -1 for
	// regular and static columns.
	Position int `json:"position"`
	// Order is "asc" or "desc" for clustering columns, "none" otherwise.
	Order string `json:"clustering_order"`
}

// TableOptions are the table properties system_schema.tables shows.
type TableOptions struct {
	AdditionalWritePolicy   string            `json:"additional_write_policy"`
	BloomFilterFPChance     float64           `json:"bloom_filter_fp_chance"`
	Caching                 map[string]string `json:"caching"`
	Comment                 string            `json:"comment"`
	Compaction              map[string]string `json:"compaction"`
	Compression             map[string]string `json:"compression"`
	CRCCheckChance          float64           `json:"crc_check_chance"`
	DefaultTimeToLive       int32             `json:"default_time_to_live"`
	Extensions              map[string][]byte `json:"extensions"`
	GCGraceSeconds          int32             `json:"gc_grace_seconds"`
	MaxIndexInterval        int32             `json:"max_index_interval"`
	MemtableFlushPeriodInMs int32             `json:"memtable_flush_period_in_ms"`
	MinIndexInterval        int32             `json:"min_index_interval"`
	ReadRepair              string            `json:"read_repair"`
	SpeculativeRetry        string            `json:"speculative_retry"`
}

// DefaultTableOptions are Cassandra 4.0's defaults for a table created with
// no options (TableParams.java and its Caching/Compaction/Compression
// params).
func DefaultTableOptions() TableOptions {
	return TableOptions{
		AdditionalWritePolicy: "99p",
		BloomFilterFPChance:   0.01,
		Caching:               map[string]string{"keys": "ALL", "rows_per_partition": "NONE"},
		Compaction: map[string]string{
			"class":         "org.apache.cassandra.db.compaction.SizeTieredCompactionStrategy",
			"max_threshold": "32",
			"min_threshold": "4",
		},
		Compression: map[string]string{
			"chunk_length_in_kb": "16",
			"class":              "org.apache.cassandra.io.compress.LZ4Compressor",
		},
		CRCCheckChance:   1.0,
		Extensions:       map[string][]byte{},
		GCGraceSeconds:   864000,
		MaxIndexInterval: 2048,
		MinIndexInterval: 128,
		ReadRepair:       "BLOCKING",
		SpeculativeRetry: "99p",
	}
}

// Column returns the named column, or nil.
func (t *TableDef) Column(name string) *ColumnDef {
	for i := range t.Columns {
		if t.Columns[i].Name == name {
			return &t.Columns[i]
		}
	}
	return nil
}

// IsCounter reports whether t is a counter table: one created with
// counter columns, which stays one (Cassandra's COUNTER flag) when they are
// dropped.
func (t *TableDef) IsCounter() bool {
	for i := range t.Columns {
		if c := &t.Columns[i]; c.Type == "counter" && c.Kind != KindPartitionKey && c.Kind != KindClustering {
			return true
		}
	}
	for _, d := range t.Dropped {
		if d.Type == "counter" {
			return true
		}
	}
	return false
}

// Key returns the partition key or clustering columns, by position.
func (t *TableDef) Key(kind string) []*ColumnDef {
	var out []*ColumnDef
	for i := range t.Columns {
		if t.Columns[i].Kind == kind {
			out = append(out, &t.Columns[i])
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Position < out[j].Position })
	return out
}

// SortColumns puts columns in SELECT * order (see TableDef.Columns).
func SortColumns(cols []ColumnDef) {
	rank := map[string]int{KindPartitionKey: 0, KindClustering: 1, KindStatic: 2, KindRegular: 3}
	sort.SliceStable(cols, func(i, j int) bool {
		a, b := cols[i], cols[j]
		if rank[a.Kind] != rank[b.Kind] {
			return rank[a.Kind] < rank[b.Kind]
		}
		if rank[a.Kind] < 2 {
			return a.Position < b.Position
		}
		// Statics come before regular columns, each kind by name.
		return a.Name < b.Name
	})
}
