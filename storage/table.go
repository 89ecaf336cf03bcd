package storage

import (
	"fmt"

	"github.com/datastax/go-cassandra-native-protocol/datatype"
)

// Table is a table's definition compiled for the data path: the key
// columns' types and directions, ready for encoding. The coordinator builds
// it (it owns CQL type parsing) and storage only reads it. A Table is
// immutable.
type Table struct {
	Def             *TableDef
	PartitionTypes  []datatype.DataType
	ClusteringTypes []datatype.DataType
	ClusteringDesc  []bool
	// dropped is Def.Dropped's times, for reads.
	dropped map[string]int64
	// names interns column names (dropped ones too), so reads do not
	// allocate a string per cell.
	names map[string]string
	// indexes are Def.Indexes compiled (index.go).
	indexes []index
}

// NewTable compiles def; typeOf parses a column's CQL type.
func NewTable(def *TableDef, typeOf func(string) (datatype.DataType, error)) (*Table, error) {
	t := &Table{Def: def}
	for _, c := range def.Key(KindPartitionKey) {
		dt, err := typeOf(c.Type)
		if err != nil {
			return nil, fmt.Errorf("storage: %s.%s.%s: %w", def.Keyspace, def.Name, c.Name, err)
		}
		t.PartitionTypes = append(t.PartitionTypes, dt)
	}
	for _, c := range def.Key(KindClustering) {
		dt, err := typeOf(c.Type)
		if err != nil {
			return nil, fmt.Errorf("storage: %s.%s.%s: %w", def.Keyspace, def.Name, c.Name, err)
		}
		t.ClusteringTypes = append(t.ClusteringTypes, dt)
		t.ClusteringDesc = append(t.ClusteringDesc, c.Order == "desc")
	}
	t.names = make(map[string]string, len(def.Columns)+len(def.Dropped))
	for _, c := range def.Columns {
		t.names[c.Name] = c.Name
	}
	for name, d := range def.Dropped {
		if t.dropped == nil {
			t.dropped = map[string]int64{}
		}
		t.dropped[name] = d.Time
		t.names[name] = name
	}
	if len(t.PartitionTypes) == 0 {
		return nil, fmt.Errorf("storage: %s.%s has no partition key", def.Keyspace, def.Name)
	}
	if err := t.compileIndexes(); err != nil {
		return nil, err
	}
	return t, nil
}
