package coordinator

import (
	"github.com/datastax/go-cassandra-native-protocol/datatype"
	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"
)

// durationCustom is how protocols before v5, which have no duration type
// code, describe a duration column: as Cassandra's custom type class.
var durationCustom = datatype.NewCustom("org.apache.cassandra.db.marshal.DurationType")

// adaptForVersion rewrites result metadata for the client's protocol
// version. Metadata is shared by plans, so it is copied, never changed.
func adaptForVersion(msg message.Message, v primitive.ProtocolVersion) {
	if v >= primitive.ProtocolVersion5 {
		return
	}
	switch m := msg.(type) {
	case *message.RowsResult:
		if m.Metadata != nil {
			m.Metadata.Columns = adaptColumns(m.Metadata.Columns)
		}
	case *message.PreparedResult:
		if m.ResultMetadata != nil {
			m.ResultMetadata.Columns = adaptColumns(m.ResultMetadata.Columns)
		}
		if m.VariablesMetadata != nil {
			m.VariablesMetadata.Columns = adaptColumns(m.VariablesMetadata.Columns)
		}
	}
}

func adaptColumns(cols []*message.ColumnMetadata) []*message.ColumnMetadata {
	var out []*message.ColumnMetadata
	for i, c := range cols {
		t := adaptType(c.Type)
		if t == c.Type {
			continue
		}
		if out == nil {
			out = append([]*message.ColumnMetadata(nil), cols...)
		}
		cp := *c
		cp.Type = t
		out[i] = &cp
	}
	if out == nil {
		return cols
	}
	return out
}

// adaptType replaces duration, at any depth, by its custom form.
func adaptType(t datatype.DataType) datatype.DataType {
	switch x := t.(type) {
	case *datatype.PrimitiveType:
		if x.Code() == primitive.DataTypeCodeDuration {
			return durationCustom
		}
	case *datatype.List:
		if e := adaptType(x.ElementType); e != x.ElementType {
			return datatype.NewList(e)
		}
	case *datatype.Set:
		if e := adaptType(x.ElementType); e != x.ElementType {
			return datatype.NewSet(e)
		}
	case *datatype.Map:
		k, v := adaptType(x.KeyType), adaptType(x.ValueType)
		if k != x.KeyType || v != x.ValueType {
			return datatype.NewMap(k, v)
		}
	case *datatype.Tuple:
		if fields := adaptFields(x.FieldTypes); fields != nil {
			return datatype.NewTuple(fields...)
		}
	case *datatype.UserDefined:
		if fields := adaptFields(x.FieldTypes); fields != nil {
			return &datatype.UserDefined{Keyspace: x.Keyspace, Name: x.Name, FieldNames: x.FieldNames, FieldTypes: fields}
		}
	}
	return t
}

// adaptFields adapts tuple or user type fields, returning nil when none
// changes.
func adaptFields(types []datatype.DataType) []datatype.DataType {
	var fields []datatype.DataType
	for i, f := range types {
		if a := adaptType(f); a != f {
			if fields == nil {
				fields = append([]datatype.DataType(nil), types...)
			}
			fields[i] = a
		}
	}
	return fields
}
