package coordinator

import (
	"fmt"
	"slices"
	"sync"

	"github.com/datastax/go-cassandra-native-protocol/datatype"
	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"

	"github.com/cqld/cqld/schema"
	"github.com/cqld/cqld/statements"
	"github.com/cqld/cqld/storage"
	"github.com/cqld/cqld/systables"
)

// tableInfo is a table compiled for analysis and execution. It is
// immutable. A user table's is cached per *storage.TableDef, which is
// itself immutable: a schema change makes a new definition and so a new
// tableInfo.
type tableInfo struct {
	def    *storage.TableDef
	st     *storage.Table
	cols   []colInfo // as def.Columns
	byName map[string]int
	pk, ck []int // indexes into cols, by position
	meta   []*message.ColumnMetadata
	// system: a system table (package systables), read on this node
	// alone and never written by statements.
	system bool
	// distributed: a system table replicated over the ring
	// (system_traces), read through the replicas as user tables are.
	distributed bool
}

type colInfo struct {
	def    *storage.ColumnDef
	typ    datatype.DataType
	frozen bool // for collections: stored as one cell
}

// multiCell reports whether a column is a non-frozen collection or user
// type, stored as one cell per element or field.
func (c *colInfo) multiCell() bool {
	return !c.frozen && (c.isCollection() || c.typ.Code() == primitive.DataTypeCodeUdt)
}

// isCollection reports whether the column is a list, set or map.
func (c *colInfo) isCollection() bool {
	switch c.typ.Code() {
	case primitive.DataTypeCodeList, primitive.DataTypeCodeSet, primitive.DataTypeCodeMap:
		return true
	}
	return false
}

// multiCellKind is how Cassandra names a multi-cell column's kind in
// errors: "collection" or "UDT".
func multiCellKind(c *colInfo) string {
	if c.isCollection() {
		return "collection"
	}
	return "UDT"
}

// multiCellUDT returns the type of a non-frozen user type column, or nil.
func (c *colInfo) multiCellUDT() *datatype.UserDefined {
	if c.frozen {
		return nil
	}
	ut, _ := c.typ.(*datatype.UserDefined)
	return ut
}

// A non-frozen user type column (Cassandra 3.6+) is stored like a
// collection: one cell per non-null field, its path the field's position
// (udtFieldPath), so that c.f = v and DELETE c.f change one field and
// concurrent writes of different fields both win.

// udtFieldPath is the cell path of field i of a non-frozen user type: the
// field's position as a smallint, as Cassandra's UserType.cellPathForField.
// The paths of the first fields are shared (storage copies paths into its
// keys), so writes of fields allocate none.
func udtFieldPath(i int) []byte {
	if i < len(fieldPaths) {
		return fieldPaths[i][:]
	}
	return []byte{byte(i >> 8), byte(i)}
}

var fieldPaths = func() (p [64][2]byte) {
	for i := range p {
		p[i] = [2]byte{0, byte(i)}
	}
	return p
}()

func (c *colInfo) isStatic() bool { return c.def.Kind == storage.KindStatic }
func (c *colInfo) isKey() bool {
	return c.def.Kind == storage.KindPartitionKey || c.def.Kind == storage.KindClustering
}

var tableCache sync.Map // *storage.TableDef -> *tableInfo

// compileTable returns the compiled form of def, whose user types are
// those of k (the keyspace of the same schema). The cache is keyed by def
// alone: a type change renews the definitions of the tables using it
// (storage.Catalog.ReplaceType).
func compileTable(def *storage.TableDef, k *storage.KeyspaceDef) (*tableInfo, error) {
	if ti, ok := tableCache.Load(def); ok {
		return ti.(*tableInfo), nil
	}
	lookup := schema.TypeLookup(k)
	parse := func(s string) (datatype.DataType, bool, error) {
		return statements.ParseTypeIn(s, def.Keyspace, lookup)
	}
	st, err := storage.NewTable(def, func(s string) (datatype.DataType, error) {
		dt, _, err := parse(s)
		return dt, err
	})
	if err != nil {
		return nil, err
	}
	ti, err := newTableInfo(st, parse)
	if err != nil {
		return nil, err
	}
	actual, _ := tableCache.LoadOrStore(def, ti)
	return actual.(*tableInfo), nil
}

// newTableInfo compiles st, parsing its column types with parse.
func newTableInfo(st *storage.Table, parse func(string) (datatype.DataType, bool, error)) (*tableInfo, error) {
	def := st.Def
	ti := &tableInfo{def: def, st: st, byName: map[string]int{}}
	for i := range def.Columns {
		cd := &def.Columns[i]
		typ, frozen, err := parse(cd.Type)
		if err != nil {
			return nil, err
		}
		ti.cols = append(ti.cols, colInfo{def: cd, typ: typ, frozen: frozen})
		ti.byName[cd.Name] = i
		ti.meta = append(ti.meta, &message.ColumnMetadata{Keyspace: def.Keyspace, Table: def.Name, Name: cd.Name, Index: int32(i), Type: typ})
	}
	for _, c := range def.Key(storage.KindPartitionKey) {
		ti.pk = append(ti.pk, ti.byName[c.Name])
	}
	for _, c := range def.Key(storage.KindClustering) {
		ti.ck = append(ti.ck, ti.byName[c.Name])
	}
	return ti, nil
}

// systemTables compiles the system tables, by keyspace and name.
func systemTables() (map[string]map[string]*tableInfo, error) {
	out := map[string]map[string]*tableInfo{}
	for _, t := range systables.All() {
		ti, err := newTableInfo(t.Storage, statements.ParseTypeFrozen)
		if err != nil {
			return nil, fmt.Errorf("coordinator: %s.%s: %w", t.Storage.Def.Keyspace, t.Storage.Def.Name, err)
		}
		ti.system = true
		d := t.Storage.Def
		ti.distributed = systables.Distributed(d.Keyspace)
		if out[d.Keyspace] == nil {
			out[d.Keyspace] = map[string]*tableInfo{}
		}
		out[d.Keyspace][d.Name] = ti
	}
	return out, nil
}

// readTable finds the table a SELECT reads: a system table, or a user
// table of the current schema.
func (c *Coordinator) readTable(ks, name string) (*tableInfo, error) {
	if systables.IsSystemKeyspace(ks) {
		if t := c.sys[ks][name]; t != nil {
			return t, nil
		}
		return nil, invalidf("unconfigured table %s", name)
	}
	return c.userTable(ks, name)
}

// userTable finds and compiles ks.name in the current schema.
func (c *Coordinator) userTable(ks, name string) (*tableInfo, error) {
	s := c.catalog.Current()
	k := s.Keyspace(ks)
	if k == nil {
		return nil, invalidf("Keyspace %s does not exist", ks)
	}
	def := k.Tables[name]
	if def == nil {
		return nil, invalidf("unconfigured table %s", name)
	}
	return compileTable(def, k)
}

func (t *tableInfo) column(name string) (int, *colInfo, error) {
	i, ok := t.byName[name]
	if !ok {
		return 0, nil, invalidf("Undefined column name %s in table %s.%s", name, t.def.Keyspace, t.def.Name)
	}
	return i, &t.cols[i], nil
}

// partitionKey serializes a partition key from its components' values.
func (t *tableInfo) partitionKey(vals [][]byte) []byte {
	if len(vals) == 1 {
		return vals[0]
	}
	return storage.CompositeKey(vals...)
}

// isCounter reports whether t is a counter table: its non-key columns are
// counters.
func (t *tableInfo) isCounter() bool {
	for _, c := range t.cols {
		if !c.isKey() && c.typ.Code() == primitive.DataTypeCodeCounter {
			return true
		}
	}
	return false
}

func (t *tableInfo) hasStatic() bool {
	for i := range t.cols {
		if t.cols[i].isStatic() {
			return true
		}
	}
	return false
}

func indexOf(xs []string, x string) int { return slices.Index(xs, x) }

// tablesByID indexes one schema's tables by id, for replicas resolving the
// ids other nodes' requests name.
type tablesByID struct {
	schema *storage.Schema
	byID   map[[16]byte]*storage.Table
}

// TableByID returns the current schema's table with id id, for the
// replica serving other nodes (replica.Serve).
func (c *Coordinator) TableByID(id [16]byte) (*storage.Table, bool) {
	s := c.catalog.Current()
	idx := c.byID.Load()
	if idx == nil || idx.schema != s {
		idx = &tablesByID{schema: s, byID: map[[16]byte]*storage.Table{}}
		for _, k := range s.Keyspaces {
			for _, def := range k.Tables {
				if ti, err := compileTable(def, k); err == nil {
					idx.byID[def.ID] = ti.st
				}
			}
		}
		for _, t := range systables.DistributedTables() {
			idx.byID[t.Def.ID] = t
		}
		c.byID.Store(idx)
	}
	t, ok := idx.byID[id]
	return t, ok
}
