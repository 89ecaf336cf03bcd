package statements

import (
	"errors"
	"reflect"
	"testing"

	"github.com/datastax/go-cassandra-native-protocol/datatype"
	"github.com/datastax/go-cassandra-native-protocol/primitive"
)

func TestParseTypeNative(t *testing.T) {
	tests := []struct {
		in   string
		want datatype.DataType
		str  string // TypeString spelling
	}{
		{"ascii", datatype.Ascii, "ascii"},
		{"bigint", datatype.Bigint, "bigint"},
		{"blob", datatype.Blob, "blob"},
		{"boolean", datatype.Boolean, "boolean"},
		{"counter", datatype.Counter, "counter"},
		{"date", datatype.Date, "date"},
		{"decimal", datatype.Decimal, "decimal"},
		{"double", datatype.Double, "double"},
		{"duration", datatype.Duration, "duration"},
		{"float", datatype.Float, "float"},
		{"inet", datatype.Inet, "inet"},
		{"int", datatype.Int, "int"},
		{"smallint", datatype.Smallint, "smallint"},
		{"text", datatype.Varchar, "text"},
		{"time", datatype.Time, "time"},
		{"timestamp", datatype.Timestamp, "timestamp"},
		{"timeuuid", datatype.Timeuuid, "timeuuid"},
		{"tinyint", datatype.Tinyint, "tinyint"},
		{"uuid", datatype.Uuid, "uuid"},
		{"varchar", datatype.Varchar, "text"},
		{"varint", datatype.Varint, "varint"},
		{"  INT ", datatype.Int, "int"},
		{"VarChar", datatype.Varchar, "text"},
	}
	for _, tc := range tests {
		got, err := ParseType(tc.in)
		if err != nil {
			t.Errorf("ParseType(%q): %v", tc.in, err)
			continue
		}
		if got != tc.want {
			t.Errorf("ParseType(%q) = %v, want %v", tc.in, got, tc.want)
		}
		if s := TypeString(got, false); s != tc.str {
			t.Errorf("TypeString(%v) = %q, want %q", got, s, tc.str)
		}
	}
	// text and varchar are the same protocol type, 0x000D.
	if c := datatype.Varchar.Code(); c != primitive.DataTypeCodeVarchar || primitive.DataTypeCodeVarchar != 0x0D {
		t.Errorf("varchar code %v", c)
	}
}

func TestParseTypeComplex(t *testing.T) {
	tests := []struct {
		in     string
		want   datatype.DataType
		frozen bool
		str    string // canonical system_schema spelling
	}{
		{"set<text>", datatype.NewSet(datatype.Varchar), false, "set<text>"},
		{"list<int>", datatype.NewList(datatype.Int), false, "list<int>"},
		{"map<uuid, blob>", datatype.NewMap(datatype.Uuid, datatype.Blob), false, "map<uuid, blob>"},
		{"map<uuid,blob>", datatype.NewMap(datatype.Uuid, datatype.Blob), false, "map<uuid, blob>"},
		{"frozen<map<text, text>>", datatype.NewMap(datatype.Varchar, datatype.Varchar), true, "frozen<map<text, text>>"},
		{" FROZEN < MAP < VARCHAR , TEXT > > ", datatype.NewMap(datatype.Varchar, datatype.Varchar), true, "frozen<map<text, text>>"},
		{"tuple<int,int>", datatype.NewTuple(datatype.Int, datatype.Int), false, "frozen<tuple<int, int>>"},
		{"frozen<tuple<int, text>>", datatype.NewTuple(datatype.Int, datatype.Varchar), true, "frozen<tuple<int, text>>"},
		{"list<frozen<tuple<int, text>>>", datatype.NewList(datatype.NewTuple(datatype.Int, datatype.Varchar)), false, "list<frozen<tuple<int, text>>>"},
		{"map<text, frozen<list<int>>>", datatype.NewMap(datatype.Varchar, datatype.NewList(datatype.Int)), false, "map<text, frozen<list<int>>>"},
		{"frozen<set<frozen<map<int, frozen<set<text>>>>>>",
			datatype.NewSet(datatype.NewMap(datatype.Int, datatype.NewSet(datatype.Varchar))), true,
			"frozen<set<frozen<map<int, frozen<set<text>>>>>>"},
		{"tuple<int, list<text>, frozen<map<int, int>>>",
			datatype.NewTuple(datatype.Int, datatype.NewList(datatype.Varchar), datatype.NewMap(datatype.Int, datatype.Int)), false,
			"frozen<tuple<int, frozen<list<text>>, frozen<map<int, int>>>>"},
		// Marshal classes: one of a native type is that type, a name
		// without a package is in org.apache.cassandra.db.marshal.
		{"'org.apache.cassandra.db.marshal.Int32Type'", datatype.Int, false, "int"},
		{"'UTF8Type'", datatype.Varchar, false, "text"},
		{"'DateType'", datatype.Timestamp, false, "timestamp"},
		{"'LexicalUUIDType'", datatype.NewCustom("org.apache.cassandra.db.marshal.LexicalUUIDType"), false,
			"'org.apache.cassandra.db.marshal.LexicalUUIDType'"},
	}
	for _, tc := range tests {
		got, frozen, err := ParseTypeFrozen(tc.in)
		if err != nil {
			t.Errorf("ParseTypeFrozen(%q): %v", tc.in, err)
			continue
		}
		if !reflect.DeepEqual(got, tc.want) || frozen != tc.frozen {
			t.Errorf("ParseTypeFrozen(%q) = %v, %v; want %v, %v", tc.in, got, frozen, tc.want, tc.frozen)
		}
		s := TypeString(got, frozen)
		if s != tc.str {
			t.Errorf("TypeString(ParseType(%q)) = %q, want %q", tc.in, s, tc.str)
		}
		// Round trip: the canonical spelling parses back to the same type and is stable.
		again, frozen2, err := ParseTypeFrozen(s)
		if err != nil || !reflect.DeepEqual(again, got) || TypeString(again, frozen2) != s {
			t.Errorf("round trip of %q: %v, %v, %v", s, again, frozen2, err)
		}
		if dt, err := ParseType(tc.in); err != nil || !reflect.DeepEqual(dt, tc.want) {
			t.Errorf("ParseType(%q) = %v, %v", tc.in, dt, err)
		}
	}
}

func TestTypeStringOtherTypes(t *testing.T) {
	udt, err := datatype.NewUserDefined("ks", "address", []string{"street"}, []datatype.DataType{datatype.Varchar})
	if err != nil {
		t.Fatal(err)
	}
	quoted, _ := datatype.NewUserDefined("ks", "My Type", []string{"a"}, []datatype.DataType{datatype.Int})
	tests := []struct {
		t      datatype.DataType
		frozen bool
		want   string
	}{
		{udt, true, "frozen<address>"},
		{udt, false, "address"},
		{datatype.NewList(udt), false, "list<frozen<address>>"},
		{quoted, true, `frozen<"My Type">`},
		{datatype.NewSet(datatype.Int), true, "frozen<set<int>>"},
		{datatype.Int, true, "int"},
		{datatype.NewCustom("it's"), false, "'it''s'"},
	}
	for _, tc := range tests {
		if got := TypeString(tc.t, tc.frozen); got != tc.want {
			t.Errorf("TypeString(%v, %v) = %q, want %q", tc.t, tc.frozen, got, tc.want)
		}
	}
}

func TestParseTypeErrors(t *testing.T) {
	// User-defined types need a schema.
	_, err := ParseType("address")
	var ute *UnknownTypeError
	if !errors.As(err, &ute) || ute.Name != "address" || ute.Keyspace != "" || err.Error() != "Unknown type address" {
		t.Errorf("ParseType(address): %v", err)
	}
	_, err = ParseType(`frozen<list<frozen<ks."Addr">>>`)
	if !errors.As(err, &ute) || ute.Name != "Addr" || ute.Keyspace != "ks" || err.Error() != "Unknown type ks.Addr" {
		t.Errorf("ParseType(ks.Addr): %v", err)
	}
	_, err = ParseType("vector<float, 3>")
	var ust *UnsupportedTypeError
	if !errors.As(err, &ust) || ust.Type != "vector<float, 3>" {
		t.Errorf("ParseType(vector): %v", err)
	}
	// Cassandra's marshal classes cqld cannot represent name themselves.
	_, err = ParseType("'org.apache.cassandra.db.marshal.DynamicCompositeType(s=>UTF8Type)'")
	if !errors.As(err, &ust) || ust.Type != "'org.apache.cassandra.db.marshal.DynamicCompositeType(s=>UTF8Type)'" {
		t.Errorf("ParseType(DynamicCompositeType): %v", err)
	}
	for _, tc := range []struct{ in, want string }{
		{"'com.example.MyType'", "Error setting type com.example.MyType: Unable to find abstract-type class 'com.example.MyType'"},
		{"", "line 0:-1 no viable alternative at input '<EOF>'"},
		{"map<int>", "line 1:7 mismatched input '>' expecting ','"},
		{"list<int", "line 0:-1 mismatched input '<EOF>' expecting '>'"},
		{"list<int>>", "line 1:9 mismatched input '>' expecting EOF"},
		{"int int", "line 1:4 mismatched input 'int' expecting EOF"},
		{"set", "line 1:0 no viable alternative at input 'set'"},
		{"frozen<int>", "frozen<> is only allowed on collections, tuples, and user-defined types (got int)"},
		{"byte", "Invalid (reserved) user type name byte"},
		{"list<'abc", "line 1:9 mismatched character '<EOF>' expecting '''"},
	} {
		_, err := ParseType(tc.in)
		var se *SyntaxError
		if !errors.As(err, &se) || err.Error() != tc.want {
			t.Errorf("ParseType(%q) = %v, want syntax error %q", tc.in, err, tc.want)
		}
	}
}

func TestTypeStringsInAST(t *testing.T) {
	st, _, err := Parse(`SELECT (frozen<MAP<Text,ks."T">>)?, CAST(a AS VARCHAR), (tuple<int, list<int>>)(1, [2]) FROM t`)
	if err != nil {
		t.Fatal(err)
	}
	s := st.(*Select)
	if got := s.Selectors[0].Expr.(*TypeHintSelector).Type; got != `frozen<map<text, ks."T">>` {
		t.Errorf("hint type %q", got)
	}
	if got := s.Selectors[1].Expr.(*Cast).Type; got != "varchar" {
		t.Errorf("cast type %q", got)
	}
	if got := s.Selectors[2].Expr.(*TypeHintSelector).Type; got != "tuple<int, list<int>>" {
		t.Errorf("hint type %q", got)
	}
}
