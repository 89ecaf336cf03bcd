package schema

import (
	"github.com/datastax/go-cassandra-native-protocol/datatype"
	"github.com/datastax/go-cassandra-native-protocol/primitive"

	"github.com/cqld/cqld/statements"
	"github.com/cqld/cqld/storage"
)

// column is a column's type resolved, for the checks DDL makes.
type column struct {
	def    *storage.ColumnDef // nil while a CREATE TABLE is checked
	typ    datatype.DataType
	frozen bool // for collections and user types: stored as one cell
}

func (c *column) isCollection() bool {
	code := c.typ.Code()
	return code == primitive.DataTypeCodeList || code == primitive.DataTypeCodeSet || code == primitive.DataTypeCodeMap
}

// multiCell reports whether the column is a non-frozen collection or user
// type, stored as one cell per element or field.
func (c *column) multiCell() bool {
	return !c.frozen && (c.isCollection() || c.typ.Code() == primitive.DataTypeCodeUdt)
}

// multiCellUDT returns the type of a non-frozen user type column, or nil.
func (c *column) multiCellUDT() *datatype.UserDefined {
	if c.frozen {
		return nil
	}
	ut, _ := c.typ.(*datatype.UserDefined)
	return ut
}

// table is a table definition compiled: for the engine, and its columns
// for checks.
type table struct {
	st     *storage.Table
	cols   []column // as st.Def.Columns
	byName map[string]int
}

// compile compiles def, whose user types are those of k (the keyspace of
// the same schema).
func compile(def *storage.TableDef, k *storage.KeyspaceDef) (*table, error) {
	lookup := TypeLookup(k)
	st, err := storage.NewTable(def, func(s string) (datatype.DataType, error) {
		dt, _, err := statements.ParseTypeIn(s, def.Keyspace, lookup)
		return dt, err
	})
	if err != nil {
		return nil, err
	}
	t := &table{st: st, byName: make(map[string]int, len(def.Columns))}
	for i := range def.Columns {
		cd := &def.Columns[i]
		typ, frozen, err := statements.ParseTypeIn(cd.Type, def.Keyspace, lookup)
		if err != nil {
			return nil, err
		}
		t.cols = append(t.cols, column{def: cd, typ: typ, frozen: frozen})
		t.byName[cd.Name] = i
	}
	return t, nil
}
