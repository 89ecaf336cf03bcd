package types

import (
	"encoding/hex"
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/datastax/go-cassandra-native-protocol/datatype"

	"github.com/cqld/cqld/statements"
)

func mustType(t *testing.T, s string) datatype.DataType {
	t.Helper()
	dt, err := statements.ParseType(s)
	if err != nil {
		t.Fatalf("type %s: %v", s, err)
	}
	return dt
}

// TestFromJSONValues converts one JSON value per case, as Cassandra's
// fromJSONObject does (the cases and messages follow Cassandra's JsonTest).
func TestFromJSONValues(t *testing.T) {
	for _, tc := range []struct {
		typ, json string
		want      string // hex of the serialized value; "null" for null
		err       string // substring of the error instead
	}{
		// text, ascii
		{typ: "text", json: `"abcd"`, want: "61626364"},
		{typ: "text", json: `""`, want: ""},
		{typ: "text", json: `"\u2013"`, want: "e28093"},
		{typ: "text", json: `123`, err: "Expected a UTF-8 string, but got a Integer: 123"},
		{typ: "ascii", json: `"a \" b"`, want: "61202220 62"},
		{typ: "ascii", json: `"\u1fff"`, err: "Invalid ASCII character in string literal"},
		{typ: "ascii", json: `123`, err: "Expected an ascii string, but got a Integer: 123"},
		// integers
		{typ: "int", json: `123123`, want: "0001e0f3"},
		{typ: "int", json: `"123123"`, want: "0001e0f3"},
		{typ: "int", json: `-1`, want: "ffffffff"},
		{typ: "int", json: `""`, want: ""},
		{typ: "int", json: `2147483648`, err: "Expected an int value, but got a Long: 2147483648"},
		{typ: "int", json: `123.456`, err: "Expected an int value, but got a Double: 123.456"},
		{typ: "int", json: `"xyzz"`, err: "Unable to make int from 'xyzz'"},
		{typ: "int", json: `true`, err: "Expected an int value, but got a Boolean: true"},
		{typ: "bigint", json: `123123123123`, want: "0000001caab5c3b3"},
		{typ: "bigint", json: `"123123123123"`, want: "0000001caab5c3b3"},
		{typ: "bigint", json: `7`, want: "0000000000000007"},
		{typ: "bigint", json: `9223372036854775808`, err: "Expected a bigint value, but got a BigInteger: 9223372036854775808"},
		{typ: "bigint", json: `123.456`, err: "Expected a bigint value, but got a Double"},
		{typ: "bigint", json: `"abc"`, err: "Unable to make long from 'abc'"},
		{typ: "bigint", json: `["abc"]`, err: "Expected a bigint value, but got a ArrayList: [abc]"},
		{typ: "smallint", json: `32767`, want: "7fff"},
		{typ: "smallint", json: `"-32768"`, want: "8000"},
		{typ: "smallint", json: `32768`, err: "Unable to make short from '32768'"},
		{typ: "smallint", json: `123.456`, err: "Unable to make short from '123.456'"},
		{typ: "smallint", json: `true`, err: "Expected a short value, but got a Boolean: true"},
		{typ: "tinyint", json: `127`, want: "7f"},
		{typ: "tinyint", json: `"-1"`, want: "ff"},
		{typ: "tinyint", json: `128`, err: "Unable to make byte from '128'"},
		{typ: "tinyint", json: `true`, err: "Expected a byte value, but got a Boolean: true"},
		{typ: "varint", json: `123123123123`, want: "1caab5c3b3"},
		{typ: "varint", json: `"1234567890123456789012345678901234567890"`, want: "03a0c92075c0dbf3b8acbc5f96ce3f0ad2"},
		{typ: "varint", json: `1234567890123456789012345678901234567890`, want: "03a0c92075c0dbf3b8acbc5f96ce3f0ad2"},
		{typ: "varint", json: `-128`, want: "80"},
		{typ: "varint", json: `123123.123`, err: "Value '123123.123' is not a valid representation of a varint value"},
		{typ: "varint", json: `"xyzz"`, err: "Value 'xyzz' is not a valid representation of a varint value"},
		{typ: "varint", json: `""`, err: "Value '' is not a valid representation of a varint value"},
		{typ: "varint", json: `true`, err: "Value 'true' is not a valid representation of a varint value"},
		// decimal: numbers with a fraction go through Java's double, as
		// Jackson decodes them
		{typ: "decimal", json: `123123.123123`, want: "00000006" + "1caab5c3b3"},
		{typ: "decimal", json: `123123`, want: "00000000" + "01e0f3"},
		{typ: "decimal", json: `"123123.123123"`, want: "00000006" + "1caab5c3b3"},
		{typ: "decimal", json: `1.50`, want: "00000001" + "0f"},
		{typ: "decimal", json: `"1.50"`, want: "00000002" + "0096"},
		{typ: "decimal", json: `"-1.23E-12"`, want: "0000000e" + "85"},
		{typ: "decimal", json: `1e-7`, want: "00000008" + "0a"},
		{typ: "decimal", json: `"xyzz"`, err: "Value 'xyzz' is not a valid representation of a decimal value"},
		{typ: "decimal", json: `true`, err: "Value 'true' is not a valid representation of a decimal value"},
		{typ: "decimal", json: `""`, err: "Value '' is not a valid representation of a decimal value"},
		// floating point
		{typ: "double", json: `123123.123123`, want: "40fe0f31f84fd2a6"},
		{typ: "double", json: `123123`, want: "40fe0f3000000000"},
		{typ: "double", json: `"123123"`, want: "40fe0f3000000000"},
		{typ: "double", json: `"NaN"`, want: "7ff8000000000001"},
		{typ: "double", json: `"-Infinity"`, want: "fff0000000000000"},
		{typ: "double", json: `"1e3d"`, want: "408f400000000000"},
		{typ: "double", json: `"xyzz"`, err: "Unable to make double from 'xyzz'"},
		{typ: "double", json: `true`, err: "Expected a double value, but got a Boolean: true"},
		{typ: "float", json: `123123.123123`, want: "47f07990"},
		{typ: "float", json: `"123123.0"`, want: "47f07980"},
		{typ: "float", json: `1.5`, want: "3fc00000"},
		{typ: "float", json: `"xyzz"`, err: "Unable to make float from 'xyzz'"},
		{typ: "float", json: `true`, err: "Expected a float value, but got a Boolean: true"},
		// boolean
		{typ: "boolean", json: `true`, want: "01"},
		{typ: "boolean", json: `false`, want: "00"},
		{typ: "boolean", json: `"fALSe"`, want: "00"},
		{typ: "boolean", json: `"TRUE"`, want: "01"},
		{typ: "boolean", json: `"abc"`, err: "Unable to make boolean from 'abc'"},
		{typ: "boolean", json: `123`, err: "Expected a boolean value, but got a Integer: 123"},
		// time types
		{typ: "timestamp", json: `123123123123`, want: "0000001caab5c3b3"},
		{typ: "timestamp", json: `0`, want: "0000000000000000"},
		{typ: "timestamp", json: `"123123123123"`, want: "0000001caab5c3b3"},
		{typ: "timestamp", json: `"2014-01-01"`, want: "000001434b198400"},
		{typ: "timestamp", json: `"2011-02-03 04:05:00.000Z"`, want: "0000012de9b1cde0"},
		{typ: "timestamp", json: `"2011-02-03T04:05:00+0000"`, want: "0000012de9b1cde0"},
		{typ: "timestamp", json: `123.456`, err: "Expected a long or a datestring representation of a timestamp value, but got a Double: 123.456"},
		{typ: "timestamp", json: `"abcd"`, err: "Unable to coerce 'abcd' to a formatted date (long)"},
		{typ: "date", json: `"1987-03-23"`, want: "80001892"},
		{typ: "date", json: `"1970-01-01"`, want: "80000000"},
		{typ: "date", json: `"2147483648"`, want: "80000000"},
		{typ: "date", json: `"1969-12-31"`, want: "7fffffff"},
		{typ: "date", json: `123`, err: "Expected a string representation of a date value, but got a Integer: 123"},
		{typ: "date", json: `"xyz"`, err: "Unable to coerce 'xyz' to a formatted date (long)"},
		{typ: "date", json: `"2011-02-30"`, err: "Unable to coerce '2011-02-30' to a formatted date (long)"},
		{typ: "time", json: `"07:35:07.000111222"`, want: "000018d5e80aa076"},
		{typ: "time", json: `"00:00:01"`, want: "000000003b9aca00"},
		{typ: "time", json: `"123"`, want: "000000000000007b"},
		{typ: "time", json: `123456`, err: "Expected a string representation of a time value, but got a Integer: 123456"},
		{typ: "time", json: `"xyz"`, err: "(TimeType) Unable to coerce 'xyz' to a formatted time (long)"},
		{typ: "duration", json: `"53us"`, want: "0000c19e10"},
		{typ: "duration", json: `"P2W"`, want: "001c00"},
		{typ: "duration", json: `"1y2mo3d4h5m6s7ms"`, want: "1c06fc1ac004a58780"},
		{typ: "duration", json: `"P1Y2M3DT4H5M6S"`, want: "1c06fc1ac003cfe800"},
		{typ: "duration", json: `"-P0001-02-03T04:05:06"`, want: "1b05fc1ac003cfe7ff"},
		{typ: "duration", json: `"xyz"`, err: "Unable to convert 'xyz' to a duration"},
		{typ: "duration", json: `1`, err: "Expected a string representation of a duration, but got a Integer: 1"},
		// uuids
		{typ: "uuid", json: `"6BDDC89A-5644-11E4-97FC-56847AFE9799"`, want: "6bddc89a564411e497fc56847afe9799"},
		{typ: "uuid", json: `"00000000-0000-0000-zzzz-000000000000"`, err: "Unable to make UUID from '00000000-0000-0000-zzzz-000000000000'"},
		{typ: "uuid", json: `123`, err: "Expected a string representation of a uuid, but got a Integer: 123"},
		{typ: "timeuuid", json: `"6bddc89a-5644-11e4-97fc-56847afe9799"`, want: "6bddc89a564411e497fc56847afe9799"},
		{typ: "timeuuid", json: `"00000000-0000-0000-0000-000000000000"`, err: "TimeUUID supports only version 1 UUIDs"},
		{typ: "timeuuid", json: `123`, err: "Expected a string representation of a timeuuid, but got a Integer: 123"},
		// inet, blob
		{typ: "inet", json: `"127.0.0.1"`, want: "7f000001"},
		{typ: "inet", json: `"::1"`, want: "00000000000000000000000000000001"},
		{typ: "inet", json: `"0:0:0:0:0:0:0:1"`, want: "00000000000000000000000000000001"},
		{typ: "inet", json: `"xyzz"`, err: "Unable to make inet address from 'xyzz'"},
		{typ: "inet", json: `123`, err: "Expected a string representation of an inet value, but got a Integer: 123"},
		{typ: "blob", json: `"0x00000001"`, want: "00000001"},
		{typ: "blob", json: `"0x"`, want: ""},
		{typ: "blob", json: `"xyzz"`, err: "Value 'xyzz' is not a valid blob representation: String representation of blob is missing 0x prefix: xyzz"},
		{typ: "blob", json: `"0x123"`, err: "Value '0x123' is not a valid blob representation: cannot parse '123' as hex bytes"},
		{typ: "blob", json: `123`, err: "Value '123' is not a valid blob representation"},
		// collections
		{typ: "list<int>", json: `[1, 2, 3]`, want: "00000003" + "0000000400000001" + "0000000400000002" + "0000000400000003"},
		{typ: "list<int>", json: `[]`, want: "00000000"},
		{typ: "list<int>", json: `"[1]"`, want: "00000001" + "0000000400000001"},
		{typ: "list<int>", json: `123`, err: "Expected a list, but got a Integer: 123"},
		{typ: "list<int>", json: `["abc"]`, err: "Unable to make int from 'abc'"},
		{typ: "list<int>", json: `[null]`, err: "Invalid null element in list"},
		{typ: "set<int>", json: `[3, 1, 2, 1]`, want: "00000003" + "0000000400000001" + "0000000400000002" + "0000000400000003"},
		{typ: "set<int>", json: `123`, err: "Expected a list (representing a set), but got a Integer: 123"},
		{typ: "set<int>", json: `[null]`, err: "Invalid null element in set"},
		{typ: "map<text, int>", json: `{"b": 2, "a": 1}`, want: "00000002" + "0000000161" + "0000000400000001" + "0000000162" + "0000000400000002"},
		{typ: "map<text, int>", json: `{}`, want: "00000000"},
		{typ: "map<text, int>", json: `123`, err: "Expected a map, but got a Integer: 123"},
		{typ: "map<text, int>", json: `{"a": null}`, err: "Invalid null value in map"},
		{typ: "map<ascii, int>", json: `{"\u1fff": 1}`, err: "Invalid ASCII character in string literal"},
		{typ: "map<int, boolean>", json: `{"1": true, "0": false}`, want: "00000002" + "0000000400000000" + "0000000100" + "0000000400000001" + "0000000101"},
		{typ: "map<frozen<set<int>>, boolean>", json: `{"[3, 4]": false}`, want: "00000001" + "00000014" + "00000002" + "0000000400000003" + "0000000400000004" + "0000000100"},
		{typ: "map<frozen<tuple<int, text>>, boolean>", json: `{"[0, \"a\"]": true}`, want: "00000001" + "0000000d" + "0000000400000000" + "0000000161" + "0000000101"},
		{typ: "map<frozen<set<int>>, boolean>", json: `{"[3, ": false}`, err: "Error decoding JSON string"},
		{typ: "frozen<tuple<int, text, uuid>>", json: `[1, "foobar", "6bddc89a-5644-11e4-97fc-56847afe9799"]`,
			want: "0000000400000001" + "00000006666f6f626172" + "000000106bddc89a564411e497fc56847afe9799"},
		{typ: "frozen<tuple<int, text>>", json: `[1, null]`, want: "0000000400000001" + "ffffffff"},
		{typ: "frozen<tuple<int, text>>", json: `[1, "a", 2]`, err: "Tuple contains extra items (expected 2): [1, a, 2]"},
		{typ: "frozen<tuple<int, text>>", json: `[1]`, err: "Tuple is missing items (expected 2): [1]"},
		{typ: "frozen<tuple<int, text>>", json: `["x", "a"]`, err: "Unable to make int from 'x'"},
		{typ: "frozen<tuple<int, text>>", json: `{"a": 1}`, err: "Expected a list representation of a tuple, but got a LinkedHashMap: {a=1}"},
		// null
		{typ: "int", json: `null`, want: "null"},
		{typ: "list<int>", json: `null`, want: "null"},
	} {
		name := tc.typ + " " + tc.json
		got, err := FromJSONText(mustType(t, tc.typ), tc.json)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: got %x, %v; want error %q", name, got, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if tc.want == "null" {
			if got != nil {
				t.Errorf("%s: got %x, want null", name, got)
			}
			continue
		}
		want, _ := hex.DecodeString(strings.ReplaceAll(tc.want, " ", ""))
		if got == nil || hex.EncodeToString(got) != hex.EncodeToString(want) {
			t.Errorf("%s: got %x, want %x", name, got, want)
		}
	}
}

func TestFromJSONUserType(t *testing.T) {
	ut := &datatype.UserDefined{Keyspace: "ks", Name: "t1", FieldNames: []string{"a", "Foo", "c"},
		FieldTypes: []datatype.DataType{datatype.Int, datatype.Int, datatype.NewSet(datatype.Varchar)}}
	for _, tc := range []struct{ json, want, err string }{
		{json: `{"a": 1, "\"Foo\"": 2, "c": ["y", "x"]}`, want: "0000000400000001" + "0000000400000002" + "0000000e" + "00000002" + "0000000178" + "0000000179"},
		{json: `{"A": 1}`, want: "0000000400000001" + "ffffffff" + "ffffffff"},
		{json: `{"a": null, "\"Foo\"": 2}`, want: "ffffffff" + "0000000400000002" + "ffffffff"},
		{json: `{"xxx": 1}`, err: "Unknown field 'xxx' in value of user defined type t1"},
		{json: `{"foo": 1}`, err: "Unknown field 'foo' in value of user defined type t1"},
		{json: `{"a": "foobar"}`, err: "Unable to make int from 'foobar'"},
		{json: `[1]`, err: "Expected a map, but got a ArrayList: [1]"},
	} {
		got, err := FromJSONText(ut, tc.json)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: got %x, %v; want error %q", tc.json, got, err, tc.err)
			}
			continue
		}
		if err != nil || hex.EncodeToString(got) != tc.want {
			t.Errorf("%s: got %x, %v; want %s", tc.json, got, err, tc.want)
		}
	}
}

// TestParseJSONRow is Json.parseJson: keys to columns, case, unknown keys,
// explicit nulls and the errors about the object itself.
func TestParseJSONRow(t *testing.T) {
	cols := []JSONReceiver{{"k", datatype.Int}, {"Foo", datatype.Int}, {"v", datatype.Varchar}}
	type want struct {
		present []bool
		vals    []string // hex, "" for none
	}
	for _, tc := range []struct {
		json string
		want want
		err  string
	}{
		{json: `{"k": 0, "\"Foo\"": 1, "v": "a"}`, want: want{[]bool{true, true, true}, []string{"00000000", "00000001", "61"}}},
		{json: `{"K": 0}`, want: want{[]bool{true, false, false}, []string{"00000000", "", ""}}},
		{json: `{"\"k\"": 0, "v": null}`, want: want{[]bool{true, false, true}, []string{"00000000", "", ""}}},
		{json: `{"k": 0} trailing`, want: want{[]bool{true, false, false}, []string{"00000000", "", ""}}},
		{json: `{"k": 0, "foo": 1}`, err: "JSON values map contains unrecognized column: foo"},
		{json: `{"k": 0, "\"K\"": 1}`, err: "JSON values map contains unrecognized column: K"},
		{json: `{"zzz": 0, "k": "x"}`, err: "Error decoding JSON value for k: Unable to make int from 'x'"},
		{json: `{"k": 0, "v": 0, "zzz": 0}`, err: "Error decoding JSON value for v: Expected a UTF-8 string, but got a Integer: 0"},
		{json: `null`, err: "Got null for INSERT JSON values"},
		{json: `"notamap"`, err: "Could not decode JSON string as a map: "},
		{json: `12.34`, err: "Could not decode JSON string as a map: "},
		{json: `{"k": `, err: "Could not decode JSON string as a map: "},
		{json: ``, err: "Could not decode JSON string as a map: "},
	} {
		row, err := ParseJSONRow(tc.json, cols)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: got %v; want error %q", tc.json, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.json, err)
			continue
		}
		var vals []string
		for _, v := range row.Vals {
			vals = append(vals, hex.EncodeToString(v))
		}
		if !reflect.DeepEqual(row.Present, tc.want.present) || !reflect.DeepEqual(vals, tc.want.vals) {
			t.Errorf("%s: got %v %v, want %v %v", tc.json, row.Present, vals, tc.want.present, tc.want.vals)
		}
	}
}

func TestJSONDecodeJacksonTypes(t *testing.T) {
	v, err := decodeJSON(`{"a": 1, "b": 3000000000, "c": 99999999999999999999, "d": 1.0, "e": [true, null, "x"], "a": 2, "f": {}}`)
	if err != nil {
		t.Fatal(err)
	}
	if got := javaString(v); got != "{a=2, b=3000000000, c=99999999999999999999, d=1.0, e=[true, null, x], f={}}" {
		t.Errorf("javaString = %s", got)
	}
	var classes []string
	for _, e := range v.(*jsonObject).vals {
		classes = append(classes, javaClass(e))
	}
	if want := []string{"Integer", "Long", "BigInteger", "Double", "ArrayList", "LinkedHashMap"}; !reflect.DeepEqual(classes, want) {
		t.Errorf("classes = %v, want %v", classes, want)
	}
}

// TestJSONLimits is Jackson's StreamReadConstraints: 1000 levels of
// arrays and objects, numbers of 1000 digits; a document past them is
// refused at the first level too many, whatever its size.
func TestJSONLimits(t *testing.T) {
	deep := func(open, close string, n int) string {
		return strings.Repeat(open, n) + strings.Repeat(close, n)
	}
	cols := []JSONReceiver{{"k", datatype.Int}, {"v", datatype.NewList(datatype.Int)}}
	for _, tc := range []struct {
		name, json, err string
	}{
		{name: "arrays at the limit", json: `{"k": 1, "v": ` + deep("[", "]", 999) + `}`,
			err: "Error decoding JSON value for v: Expected an int value, but got a ArrayList: " + deep("[", "]", 998)[:1024] + "...[972 bytes more]"},
		{name: "arrays past the limit", json: `{"k": 1, "v": ` + deep("[", "]", 1000) + `}`,
			err: "Could not decode JSON string as a map: Depth (1001) exceeds the maximum allowed nesting depth (1000). (String was: "},
		{name: "objects past the limit", json: `{"k": 1, "v": ` + strings.Repeat(`{"a":`, 1000) + `1` + strings.Repeat("}", 1000) + `}`,
			err: "Depth (1001) exceeds the maximum allowed nesting depth (1000)"},
		{name: "seven million brackets", json: `{"k": 1, "v": ` + deep("[", "]", 7_000_000) + `}`,
			err: "Depth (1001) exceeds the maximum allowed nesting depth (1000)"},
		{name: "unclosed brackets", json: `{"k": 1, "v": ` + strings.Repeat("[", 7_000_000),
			err: "Depth (1001) exceeds the maximum allowed nesting depth (1000)"},
		{name: "integer at the limit", json: `{"k": 1, "v": [-` + strings.Repeat("9", 1000) + `]}`,
			err: "Expected an int value, but got a BigInteger: -999"},
		{name: "integer past the limit", json: `{"k": 1, "v": [` + strings.Repeat("9", 1001) + `]}`,
			err: "Could not decode JSON string as a map: Number length (1001) exceeds the maximum length (1000)"},
		{name: "float past the limit", json: `{"k": 1, "v": [0.` + strings.Repeat("9", 999) + `]}`,
			err: "Number length (1001) exceeds the maximum length (1000)"},
	} {
		_, err := ParseJSONRow(tc.json, cols)
		if err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s: got %.300v; want error %q", tc.name, err, tc.err)
		}
	}
	// The same bound for fromJson() and for a collection given as a
	// string of JSON.
	if _, err := FromJSONText(datatype.NewList(datatype.Int), deep("[", "]", 5000)); err == nil ||
		!strings.Contains(err.Error(), "Depth (1001) exceeds the maximum allowed nesting depth (1000)") {
		t.Errorf("fromJson: %.300v", err)
	}
	nested, _ := json.Marshal(deep("[", "]", 5000))
	if _, err := FromJSONText(datatype.NewList(datatype.Int), string(nested)); err == nil ||
		!strings.Contains(err.Error(), "Error decoding JSON string: Depth (1001) exceeds the maximum allowed nesting depth (1000)") {
		t.Errorf("fromJson of a string: %.300v", err)
	}
}

// handleCaseSensitivityByRemoveAndPut is Json.handleCaseSensitivity
// step by step (a remove and a put per changed key), the reference for
// the linear version.
func handleCaseSensitivityByRemoveAndPut(keys []string, vals []any) ([]string, []any) {
	keys, vals = append([]string(nil), keys...), append([]any(nil), vals...)
	find := func(k string) int {
		for i, key := range keys {
			if key == k {
				return i
			}
		}
		return -1
	}
	for _, k := range append([]string(nil), keys...) {
		renamed := strings.ToLower(k)
		if len(k) >= 2 && k[0] == '"' && k[len(k)-1] == '"' {
			renamed = k[1 : len(k)-1]
		} else if renamed == k {
			continue
		}
		i := find(k)
		v := vals[i]
		keys = append(keys[:i:i], keys[i+1:]...)
		vals = append(vals[:i:i], vals[i+1:]...)
		if j := find(renamed); j >= 0 {
			vals[j] = v
			continue
		}
		keys, vals = append(keys, renamed), append(vals, v)
	}
	return keys, vals
}

func TestHandleCaseSensitivity(t *testing.T) {
	alphabet := []string{"a", "A", `"a"`, `"A"`, "b", "B", `"B"`, `""`, `"`, `""a""`, `"b`, "ab", "aB"}
	rng := rand.New(rand.NewPCG(16, 1))
	for round := 0; round < 2000; round++ {
		obj := &jsonObject{}
		for n := rng.IntN(8); n > 0; n-- {
			obj.put(alphabet[rng.IntN(len(alphabet))], int32(rng.IntN(100)))
		}
		wantKeys, wantVals := handleCaseSensitivityByRemoveAndPut(obj.keys, obj.vals)
		before := javaString(obj)
		obj.handleCaseSensitivity()
		if !reflect.DeepEqual(obj.keys, wantKeys) || !reflect.DeepEqual(obj.vals, wantVals) {
			t.Fatalf("%s: got %v %v, want %v %v", before, obj.keys, obj.vals, wantKeys, wantVals)
		}
		for i, k := range obj.keys {
			if obj.index(k) != i {
				t.Fatalf("%s: index(%q) = %d, want %d", before, k, obj.index(k), i)
			}
		}
	}
}

// FuzzDecodeJSON: any text decodes to a value or an error, within the
// depth bound, without a panic.
func FuzzDecodeJSON(f *testing.F) {
	for _, s := range []string{
		`{"k": 1, "v": [1, 2]}`, `[[[[]]]]`, `{"a": {"b": {"c": null}}}`, `"x"`, `1e400`, `-0`,
		`{"A": 1, "\"A\"": 2, "a": 3}`, strings.Repeat("[", 1001), strings.Repeat(`{"a":`, 1001),
		strings.Repeat("[", 1000) + strings.Repeat("]", 1000), strings.Repeat("7", 1001),
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := decodeJSON(s)
		if err != nil {
			return
		}
		if d := jsonDepth(v); d > maxJSONDepth {
			t.Fatalf("decoded a value %d deep", d)
		}
		if obj, ok := v.(*jsonObject); ok {
			obj.handleCaseSensitivity()
		}
		_ = javaString(v)
	})
}

func jsonDepth(v any) int {
	var elems []any
	switch x := v.(type) {
	case []any:
		elems = x
	case *jsonObject:
		elems = x.vals
	default:
		return 0
	}
	d := 0
	for _, e := range elems {
		d = max(d, jsonDepth(e))
	}
	return d + 1
}
