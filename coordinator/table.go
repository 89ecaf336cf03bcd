package coordinator

import (
	"slices"
	"sync"

	"github.com/datastax/go-cassandra-native-protocol/datatype"
	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"

	"github.com/cqld/cqld/schema"
	"github.com/cqld/cqld/statements"
	"github.com/cqld/cqld/storage"
)

// tableInfo is a user table compiled for analysis and execution. It is
// immutable and cached per *storage.TableDef, which is itself immutable: a
// schema change makes a new definition and so a new tableInfo.
type tableInfo struct {
	def    *storage.TableDef
	st     *storage.Table
	cols   []colInfo // as def.Columns
	byName map[string]int
	pk, ck []int // indexes into cols, by position
	meta   []*message.ColumnMetadata
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
	st, err := storage.NewTable(def, func(s string) (datatype.DataType, error) {
		dt, _, err := statements.ParseTypeIn(s, def.Keyspace, lookup)
		return dt, err
	})
	if err != nil {
		return nil, err
	}
	ti := &tableInfo{def: def, st: st, byName: map[string]int{}}
	for i := range def.Columns {
		cd := &def.Columns[i]
		typ, frozen, err := statements.ParseTypeIn(cd.Type, def.Keyspace, lookup)
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
	actual, _ := tableCache.LoadOrStore(def, ti)
	return actual.(*tableInfo), nil
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
		c.byID.Store(idx)
	}
	t, ok := idx.byID[id]
	return t, ok
}
