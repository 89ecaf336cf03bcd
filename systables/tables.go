package systables

import (
	"fmt"
	"sort"

	"github.com/datastax/go-cassandra-native-protocol/datatype"
	"github.com/datastax/go-cassandra-native-protocol/primitive"

	"github.com/cqld/cqld/statements"
	"github.com/cqld/cqld/statements/types"
	"github.com/cqld/cqld/storage"
)

// virtualKeyspace is the keyspace whose tables describe virtual keyspaces,
// and viewsKeyspace the one of the node's live figures; like Cassandra,
// cqld does not list virtual keyspaces in system_schema.
const (
	virtualKeyspace = "system_virtual_schema"
	viewsKeyspace   = "system_views"
)

// IsVirtualKeyspace reports whether ks is one of the virtual keyspaces,
// whose tables are made on each read and cannot be written.
func IsVirtualKeyspace(ks string) bool { return ks == virtualKeyspace || ks == viewsKeyspace }

// Table is one system table: its layout, compiled, and where its rows come
// from. It is immutable.
type Table struct {
	// Storage is the table as the data path sees it; Storage.Def is
	// Cassandra 4.0's layout, with the column types spelled as
	// system_schema.columns spells them.
	Storage *storage.Table
	Comment string
	// types are the columns' types, in Storage.Def.Columns' order;
	// frozen says which are stored as one cell (all but the non-frozen
	// collections, whose elements are cells of their own).
	types    []datatype.DataType
	encoders []*types.Encoder
	frozen   []bool
	// rows makes the table's rows from the node's state; nil for a table
	// stored in the engine.
	rows func(State) []Row
}

// Row is one row of a generated table, by column name; a missing column
// is null. Values are Go values of the column's type, as
// types.EncodeValue takes them.
type Row map[string]any

// Stored reports whether t's rows are in the engine, written by the node
// like user data, rather than made from its state on each read.
func (t *Table) Stored() bool { return t.rows == nil }

// generators make the rows of the generated tables. A table listed in
// systemTableDefs that is in neither generators nor stored is empty.
var generators = map[string]func(State) []Row{
	"system.local":                               localRows,
	"system.peers":                               peerRows,
	"system.peers_v2":                            peerV2Rows,
	"system.size_estimates":                      sizeEstimateRows,
	"system_schema.keyspaces":                    keyspaceRows,
	"system_schema.tables":                       tableRows,
	"system_schema.columns":                      columnRows,
	"system_schema.types":                        typeRows,
	"system_schema.indexes":                      indexRows,
	"system_schema.functions":                    functionRows,
	"system_schema.aggregates":                   aggregateRows,
	"system_schema.dropped_columns":              droppedColumnRows,
	virtualKeyspace + ".keyspaces":               virtualKeyspaceRows,
	virtualKeyspace + ".tables":                  virtualTableRows,
	virtualKeyspace + ".columns":                 virtualColumnRows,
	"system_auth.roles":                          roleRows,
	"system_auth.role_members":                   roleMemberRows,
	"system_auth.role_permissions":               rolePermissionRows,
	"system_auth.resource_role_permissons_index": resourceRoleRows,
	viewsKeyspace + ".clients":                   clientRows,
	viewsKeyspace + ".settings":                  settingRows,
	viewsKeyspace + ".sstable_tasks":             sstableTaskRows,
	viewsKeyspace + ".thread_pools":              threadPoolRows,
	viewsKeyspace + ".caches":                    cacheRows,
	viewsKeyspace + ".local_read_latency":        latencyRows(LocalRead),
	viewsKeyspace + ".local_scan_latency":        latencyRows(LocalScan),
	viewsKeyspace + ".local_write_latency":       latencyRows(LocalWrite),
	viewsKeyspace + ".coordinator_read_latency":  latencyRows(CoordinatorRead),
	viewsKeyspace + ".coordinator_scan_latency":  latencyRows(CoordinatorScan),
	viewsKeyspace + ".coordinator_write_latency": latencyRows(CoordinatorWrite),
}

// stored are the system tables kept in the engine: written by the node
// and read through its replica as user tables are.
var stored = map[string]bool{
	"system.prepared_statements": true,
	"system.paxos":               true, // replica/paxos_table.go
	"system_traces.sessions":     true,
	"system_traces.events":       true,
}

// tables are the system tables by keyspace and name, compiled once.
var tables = func() map[string]map[string]*Table {
	out := map[string]map[string]*Table{}
	for i := range systemTableDefs {
		d := &systemTableDefs[i]
		t, err := compile(d)
		if err != nil {
			panic(err) // the definitions are the package's own data
		}
		name := d.keyspace + "." + d.name
		if !stored[name] {
			t.rows = generators[name]
			if t.rows == nil {
				t.rows = func(State) []Row { return nil }
			}
		}
		if out[d.keyspace] == nil {
			out[d.keyspace] = map[string]*Table{}
		}
		out[d.keyspace][d.name] = t
	}
	return out
}()

// compile makes d a Table, its columns in d's order (SELECT *'s).
func compile(d *tableDef) (*Table, error) {
	t := &Table{Comment: d.comment}
	def := d.storageDef()
	for _, col := range d.cols {
		typ, frozen, err := statements.ParseTypeFrozen(col.typ)
		if err != nil {
			return nil, fmt.Errorf("systables: %s.%s.%s: %w", d.keyspace, d.name, col.name, err)
		}
		switch typ.Code() {
		case primitive.DataTypeCodeList, primitive.DataTypeCodeSet, primitive.DataTypeCodeMap:
		default:
			frozen = true
		}
		enc, err := types.NewEncoder(typ)
		if err != nil {
			return nil, fmt.Errorf("systables: %s.%s.%s: %w", d.keyspace, d.name, col.name, err)
		}
		t.types, t.encoders, t.frozen = append(t.types, typ), append(t.encoders, enc), append(t.frozen, frozen)
	}
	st, err := storage.NewTable(def, func(s string) (datatype.DataType, error) { return statements.ParseType(s) })
	if err != nil {
		return nil, fmt.Errorf("systables: %s.%s: %w", d.keyspace, d.name, err)
	}
	t.Storage = st
	return t, nil
}

// storageDef is d as storage defines a table, its columns in d's order.
func (d *tableDef) storageDef() *storage.TableDef {
	def := &storage.TableDef{Keyspace: d.keyspace, Name: d.name, ID: systemTableID(d.keyspace, d.name),
		Options: systemTableOptions(d.keyspace, d.comment)}
	if IsVirtualKeyspace(d.keyspace) {
		// A virtual table has a comment and no other option.
		def.Options = storage.TableOptions{Comment: d.comment}
	}
	for _, col := range d.cols {
		def.Columns = append(def.Columns, storage.ColumnDef{Name: col.name, Type: col.typ, Kind: string(col.kind), Position: col.position, Order: col.order})
	}
	return def
}

// Lookup returns the system table keyspace.name, or nil.
func Lookup(keyspace, name string) *Table { return tables[keyspace][name] }

// All returns every system table, by keyspace and then name.
func All() []*Table {
	var out []*Table
	for _, byName := range tables {
		for _, t := range byName {
			out = append(out, t)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i].Storage.Def, out[j].Storage.Def
		if a.Keyspace != b.Keyspace {
			return a.Keyspace < b.Keyspace
		}
		return a.Name < b.Name
	})
	return out
}

// IsSystemKeyspace reports whether ks is one of the keyspaces the node
// owns, which no schema or data change may modify.
func IsSystemKeyspace(ks string) bool {
	_, ok := systemKeyspaceReplication[ks]
	return ok || IsVirtualKeyspace(ks)
}

// IsReplicatedSystemKeyspace reports whether ks is a system keyspace
// Cassandra replicates (system_auth, system_traces), whose keyspace
// options may be altered but whose tables may not be.
func IsReplicatedSystemKeyspace(ks string) bool {
	r, ok := systemKeyspaceReplication[ks]
	return ok && r["class"] != "org.apache.cassandra.locator.LocalStrategy"
}

// systemKeyspaces are the keyspaces system_schema lists, in order.
func systemKeyspaces() []string {
	out := make([]string, 0, len(systemKeyspaceReplication))
	for ks := range systemKeyspaceReplication {
		out = append(out, ks)
	}
	sort.Strings(out)
	return out
}

// Keyspaces returns the node's own keyspaces as schema definitions, with
// their tables' columns and options (DESCRIBE prints them), and which of
// them are virtual. The definitions are shared: callers must not change
// them.
func Keyspaces() ([]*storage.KeyspaceDef, map[string]bool) { return ownKeyspaces, virtualKeyspaces }

var ownKeyspaces, virtualKeyspaces = func() ([]*storage.KeyspaceDef, map[string]bool) {
	byName := map[string]*storage.KeyspaceDef{}
	virtual := map[string]bool{}
	for _, t := range All() {
		ks := t.Storage.Def.Keyspace
		k := byName[ks]
		if k == nil {
			k = &storage.KeyspaceDef{Name: ks, Tables: map[string]*storage.TableDef{}}
			if repl, ok := systemKeyspaceReplication[ks]; ok {
				k.Replication, k.DurableWrites = repl, true
			} else {
				virtual[ks] = true
			}
			byName[ks] = k
		}
		k.Tables[t.Storage.Def.Name] = t.Storage.Def
	}
	out := make([]*storage.KeyspaceDef, 0, len(byName))
	for _, k := range byName {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, virtual
}()

// tracesKeyspace is system_traces as the data path sees it: a keyspace
// replicated like a user keyspace (SimpleStrategy, replication factor 2,
// as Cassandra's TraceKeyspace), whose tables are stored in the engine.
var tracesKeyspace = &storage.KeyspaceDef{
	Name:          "system_traces",
	Replication:   systemKeyspaceReplication["system_traces"],
	DurableWrites: true,
	Tables: map[string]*storage.TableDef{
		"sessions": tables["system_traces"]["sessions"].Storage.Def,
		"events":   tables["system_traces"]["events"].Storage.Def,
	},
}

// Distributed reports whether ks is a system keyspace replicated across
// the ring (system_traces) rather than held by each node for itself: its
// tables are read and written through the replicas, as user tables are.
func Distributed(ks string) bool { return ks == tracesKeyspace.Name }

// WithDistributed wraps a lookup of the schema's keyspaces so that it
// finds the distributed system keyspaces too (for the proxy's placement).
func WithDistributed(lookup func(string) *storage.KeyspaceDef) func(string) *storage.KeyspaceDef {
	return func(name string) *storage.KeyspaceDef {
		if name == tracesKeyspace.Name {
			return tracesKeyspace
		}
		return lookup(name)
	}
}

// DistributedTables are the tables of the distributed system keyspaces,
// which replicas resolve by id as they resolve user tables.
func DistributedTables() []*storage.Table {
	return []*storage.Table{tables["system_traces"]["sessions"].Storage, tables["system_traces"]["events"].Storage}
}
