package systables

import (
	"time"

	"github.com/cqld/cqld/storage"
)

// The rows of system_schema: the system keyspaces and tables (their
// layouts are systemTableDefs) and then the user schema.

func keyspaceRows(s State) []Row {
	var rows []Row
	for _, ks := range systemKeyspaces() {
		rows = append(rows, Row{"keyspace_name": ks, "durable_writes": true, "replication": systemKeyspaceReplication[ks]})
	}
	for _, k := range s.Schema().SortedKeyspaces() {
		rows = append(rows, Row{"keyspace_name": k.Name, "durable_writes": k.DurableWrites, "replication": k.Replication})
	}
	return rows
}

// userTableRow is a table's row of system_schema.tables.
func userTableRow(t *storage.TableDef) Row {
	o := t.Options
	return Row{
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
		if d := &systemTableDefs[i]; !IsVirtualKeyspace(d.keyspace) {
			out = append(out, d)
		}
	}
	return out
}

func tableRows(s State) []Row {
	var rows []Row
	for _, d := range schemaTables() {
		rows = append(rows, userTableRow(d.storageDef()))
	}
	for _, k := range s.Schema().SortedKeyspaces() {
		for _, t := range k.SortedTables() {
			rows = append(rows, userTableRow(t))
		}
	}
	return rows
}

func droppedColumnRows(s State) []Row {
	var rows []Row
	for _, k := range s.Schema().SortedKeyspaces() {
		for _, t := range k.SortedTables() {
			for name, d := range t.Dropped {
				rows = append(rows, Row{
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
	return rows
}

// columnRowsOf are the rows of system_schema.columns for tables.
func columnRowsOf(tables []*storage.TableDef) []Row {
	var rows []Row
	for _, t := range tables {
		for _, col := range t.Columns {
			rows = append(rows, Row{
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
	return rows
}

func columnRows(s State) []Row {
	var defs []*storage.TableDef
	for _, d := range schemaTables() {
		defs = append(defs, d.storageDef())
	}
	for _, k := range s.Schema().SortedKeyspaces() {
		defs = append(defs, k.SortedTables()...)
	}
	return columnRowsOf(defs)
}

func typeRows(s State) []Row {
	var rows []Row
	for _, k := range s.Schema().SortedKeyspaces() {
		for _, t := range k.SortedTypes() {
			rows = append(rows, Row{
				"keyspace_name": t.Keyspace,
				"type_name":     t.Name,
				"field_names":   t.FieldNames,
				"field_types":   t.FieldTypes,
			})
		}
	}
	return rows
}

// functionRows are system_schema.functions: the user-defined functions.
func functionRows(s State) []Row {
	var rows []Row
	for _, k := range s.Schema().SortedKeyspaces() {
		for _, f := range k.Functions {
			rows = append(rows, Row{
				"keyspace_name":        f.Keyspace,
				"function_name":        f.Name,
				"argument_types":       f.ArgTypes,
				"argument_names":       f.ArgNames,
				"body":                 f.Body,
				"called_on_null_input": f.CalledOnNullInput,
				"language":             f.Language,
				"return_type":          f.ReturnType,
			})
		}
	}
	return rows
}

// aggregateRows are system_schema.aggregates: the user-defined aggregates.
func aggregateRows(s State) []Row {
	var rows []Row
	for _, k := range s.Schema().SortedKeyspaces() {
		for _, a := range k.Aggregates {
			r := Row{
				"keyspace_name":  a.Keyspace,
				"aggregate_name": a.Name,
				"argument_types": a.ArgTypes,
				"return_type":    a.ReturnType,
				"state_func":     a.StateFunc,
				"state_type":     a.StateType,
			}
			if a.FinalFunc != "" {
				r["final_func"] = a.FinalFunc
			}
			if a.InitCond != nil {
				r["initcond"] = *a.InitCond
			}
			rows = append(rows, r)
		}
	}
	return rows
}

// indexRows are system_schema.indexes.
func indexRows(s State) []Row {
	var rows []Row
	for _, k := range s.Schema().SortedKeyspaces() {
		for _, t := range k.SortedTables() {
			for _, ix := range t.Indexes {
				rows = append(rows, Row{
					"keyspace_name": t.Keyspace,
					"table_name":    t.Name,
					"index_name":    ix.Name,
					"kind":          "COMPOSITES",
					"options":       map[string]string{"target": ix.Target},
				})
			}
		}
	}
	return rows
}
