package statements

import (
	"errors"
	"reflect"
	"testing"

	"github.com/datastax/go-cassandra-native-protocol/datatype"
)

func TestParseTypeIn(t *testing.T) {
	addr := &datatype.UserDefined{Keyspace: "ks", Name: "addr", FieldNames: []string{"city"}, FieldTypes: []datatype.DataType{datatype.Varchar}}
	lookup := func(ks, name string) *datatype.UserDefined {
		if ks == "ks" && name == "addr" {
			return addr
		}
		return nil
	}
	for _, tc := range []struct {
		in     string
		want   datatype.DataType
		frozen bool
	}{
		{"addr", addr, false},
		{"frozen<addr>", addr, true},
		{"frozen<ks.addr>", addr, true},
		{"list<frozen<addr>>", datatype.NewList(addr), false},
		{"map<text, frozen<addr>>", datatype.NewMap(datatype.Varchar, addr), false},
		{"frozen<list<addr>>", datatype.NewList(addr), true},
		{"tuple<int, addr>", datatype.NewTuple(datatype.Int, addr), false},
		{"int", datatype.Int, false},
	} {
		got, frozen, err := ParseTypeIn(tc.in, "ks", lookup)
		if err != nil || !reflect.DeepEqual(got, tc.want) || frozen != tc.frozen {
			t.Errorf("ParseTypeIn(%q) = %v, %v, %v; want %v, %v", tc.in, got, frozen, err, tc.want, tc.frozen)
		}
	}
	for _, tc := range []struct{ in, want string }{
		{"nope", "Unknown type ks.nope"},
		{"frozen<list<nope>>", "Unknown type ks.nope"},
		{"list<addr>", "Non-frozen UDTs are not allowed inside collections: list<addr>"},
		{"map<addr, int>", "Non-frozen UDTs are not allowed inside collections: map<addr, int>"},
		{"set<list<int>>", "Non-frozen collections are not allowed inside collections: set<list<int>>"},
		{"list<counter>", "Counters are not allowed inside collections: list<counter>"},
		{"tuple<int, counter>", "Counters are not allowed inside tuples"},
		{"other.addr", "Statement on keyspace ks cannot refer to a user type in keyspace other; user types can only be used in the keyspace they are defined in"},
	} {
		_, _, err := ParseTypeIn(tc.in, "ks", lookup)
		if err == nil || err.Error() != tc.want {
			t.Errorf("ParseTypeIn(%q) error %v, want %q", tc.in, err, tc.want)
		}
	}
	var se *SyntaxError
	if _, _, err := ParseTypeIn("list<", "ks", lookup); !errors.As(err, &se) {
		t.Errorf("ParseTypeIn of a malformed type: %v, want a *SyntaxError", err)
	}
}

func TestNormalizeType(t *testing.T) {
	for in, want := range map[string]string{
		"int":                         "int",
		"list<int>":                   "list<int>",
		"frozen<ks.addr>":             "frozen<addr>",
		"\"Addr\"":                    "\"Addr\"",
		"list<frozen<ks.addr>>":       "list<frozen<addr>>",
		"tuple<int, addr>":            "frozen<tuple<int, frozen<addr>>>",
		"frozen<list<list<int>>>":     "frozen<list<frozen<list<int>>>>",
		"map<text, frozen<set<int>>>": "map<text, frozen<set<int>>>",
		"varchar":                     "text",
		"map<varchar, list<VARCHAR>>": "map<text, list<text>>",
		"tuple<varchar, int>":         "frozen<tuple<text, int>>",
	} {
		if got, err := NormalizeType(in); err != nil || got != want {
			t.Errorf("NormalizeType(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

func TestShapeOf(t *testing.T) {
	sh, err := ShapeOf("map<text, frozen<ks.a>>")
	if err != nil || sh.Frozen || sh.UDT || !sh.Collection || !reflect.DeepEqual(sh.UserTypes, []string{"a"}) {
		t.Errorf("ShapeOf map: %+v, %v", sh, err)
	}
	sh, err = ShapeOf("frozen<b>")
	if err != nil || !sh.Frozen || !sh.UDT || sh.Collection || !reflect.DeepEqual(sh.UserTypes, []string{"b"}) {
		t.Errorf("ShapeOf frozen<b>: %+v, %v", sh, err)
	}
	if sh, _ := ShapeOf("counter"); !sh.Counter {
		t.Errorf("ShapeOf counter: %+v", sh)
	}
}
