package jsudf

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/datastax/go-cassandra-native-protocol/datatype"

	"github.com/cqld/cqld/statements"
	"github.com/cqld/cqld/statements/types"
)

// lit is a CQL literal of type t, serialized.
func lit(t *testing.T, typ datatype.DataType, text string) []byte {
	t.Helper()
	if text == "null" {
		return nil
	}
	b, err := types.FromJSONText(typ, text)
	if err != nil {
		t.Fatalf("%s as %s: %v", text, typeName(typ), err)
	}
	return b
}

func mustType(t *testing.T, s string) datatype.DataType {
	t.Helper()
	typ, err := statements.ParseType(s)
	if err != nil {
		t.Fatal(err)
	}
	return typ
}

func TestCallConverts(t *testing.T) {
	for _, tc := range []struct {
		body    string
		args    []string // type=JSON value, bound as a, b, ...
		ret     string
		want    string // JSON of the result, or "null"
		wantErr string
	}{
		{body: "a + b", args: []string{"int=1", "int=2"}, ret: "int", want: "3"},
		{body: "a / b", args: []string{"int=7", "int=2"}, ret: "int", want: "3"}, // intValue truncates
		{body: "a * 2", args: []string{"int=2000000000"}, ret: "int", want: "-294967296"},
		{body: "a + 1", args: []string{"bigint=9007199254740000"}, ret: "bigint", want: "9007199254740001"},
		{body: "a / 2", args: []string{"double=3.0"}, ret: "double", want: "1.5"},
		{body: "a + 0.5", args: []string{"decimal=1.25"}, ret: "decimal", want: "1.75"},
		{body: "a * 10n", args: []string{"varint=123456789012345678901234567890"}, ret: "varint", want: "1234567890123456789012345678900"},
		{body: "a.toUpperCase() + b", args: []string{`text="ab"`, `text="c"`}, ret: "text", want: `"ABc"`},
		{body: "a.length", args: []string{`list<int>=[1,2,3]`}, ret: "int", want: "3"},
		{body: "a.map(function(x) { return x * 2; })", args: []string{`list<int>=[3,1]`}, ret: "list<int>", want: "[6, 2]"},
		{body: "a", args: []string{`set<text>=["b","a"]`}, ret: "set<text>", want: `["a", "b"]`},
		{body: "a.get('k') + a.size", args: []string{`map<text, int>={"k": 5}`}, ret: "int", want: "6"},
		{body: "var m = new Map(); m.set(2, 'two'); m", args: nil, ret: "map<int, text>", want: `{"2": "two"}`},
		{body: "({x: 1})", args: nil, ret: "map<text, int>", want: `{"x": 1}`},
		{body: "[a[1], a[0]]", args: []string{`tuple<int, text>=[1, "x"]`}, ret: "tuple<text, int>", want: `["x", 1]`},
		{body: "a.getTime() + 1000", args: []string{`timestamp=1000`}, ret: "bigint", want: "2000"},
		{body: "new Date(a.getTime() + 1000)", args: []string{`timestamp=1000`}, ret: "timestamp", want: `"1970-01-01 00:00:02.000Z"`},
		{body: "a", args: []string{`date="2024-02-29"`}, ret: "date", want: `"2024-02-29"`},
		{body: "a", args: []string{`uuid="5b6962dd-3f90-4c93-8f61-eabfa4a803e2"`}, ret: "uuid", want: `"5b6962dd-3f90-4c93-8f61-eabfa4a803e2"`},
		{body: "a", args: []string{`inet="127.0.0.1"`}, ret: "inet", want: `"127.0.0.1"`},
		{body: "new Uint8Array(a)[1]", args: []string{`blob="0x0102"`}, ret: "int", want: "2"},
		{body: "a", args: []string{`blob="0x0102"`}, ret: "blob", want: `"0x0102"`},
		{body: "a == null ? 'none' : a", args: []string{"text=null"}, ret: "text", want: `"none"`},
		{body: "a > 1", args: []string{"int=2"}, ret: "boolean", want: "true"},
		{body: "undefined", ret: "int", want: "null"},
		{body: "typeof require + typeof console + typeof process", ret: "text", want: `"undefinedundefinedundefined"`},
		{body: "'x'", ret: "int", wantErr: "cannot return a string as int"},
		{body: "1", ret: "text", wantErr: "cannot return a number as text"},
		{body: "throw new Error('boom')", ret: "int", wantErr: "boom"},
		{body: "function f() { return f(); } f()", ret: "int", wantErr: "stack"},
	} {
		p, err := Compile("ks.f", tc.body)
		if err != nil {
			t.Fatalf("%s: %v", tc.body, err)
		}
		var names []string
		var argTypes []datatype.DataType
		var args [][]byte
		for i, a := range tc.args {
			typ, val, _ := strings.Cut(a, "=")
			names = append(names, string(rune('a'+i)))
			dt := mustType(t, typ)
			argTypes = append(argTypes, dt)
			args = append(args, lit(t, dt, val))
		}
		ret := mustType(t, tc.ret)
		out, err := p.Call(names, argTypes, args, ret, Limits{})
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%s: error %v, want one with %q", tc.body, err, tc.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.body, err)
			continue
		}
		got := "null"
		if out != nil {
			got = string(types.AppendJSONValue(nil, ret, out))
		}
		if got != tc.want {
			t.Errorf("%s = %s, want %s", tc.body, got, tc.want)
		}
	}
}

func TestCallsDoNotShareGlobals(t *testing.T) {
	p, err := Compile("ks.f", "if (typeof seen === 'undefined') { seen = 0; } seen = seen + 1; seen")
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		out, err := p.Call(nil, nil, nil, datatype.Int, Limits{})
		if err != nil {
			t.Fatal(err)
		}
		if string(types.AppendJSONValue(nil, datatype.Int, out)) != "1" {
			t.Fatalf("a call saw a global an earlier call set: %x", out)
		}
	}
}

func TestCallInterruptedAtFailTimeout(t *testing.T) {
	p, err := Compile("ks.f", "while (true) {}")
	if err != nil {
		t.Fatal(err)
	}
	// The timer fires at once: the limit, not the wall clock, ends the loop.
	fire := func(_ time.Duration, f func()) func() bool { go f(); return func() bool { return true } }
	_, err = p.Call(nil, nil, nil, datatype.Int, Limits{Fail: time.Millisecond, AfterFunc: fire})
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("err %v, want ErrTimeout", err)
	}
}

func TestCompileError(t *testing.T) {
	if _, err := Compile("ks.f", "a +"); err == nil {
		t.Fatal("a body that is not JavaScript compiled")
	}
}

// A body that doubles a string until memory runs out is interrupted once
// the heap has grown past the limit, whatever its time limit.
func TestCallInterruptedAtHeapGrowth(t *testing.T) {
	p, err := Compile("ks.f", "var s = 'x'; while (true) { s = s + s; }")
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Call(nil, nil, nil, datatype.Int, Limits{Fail: time.Minute, MaxHeapGrowth: 64 << 20})
	if !errors.Is(err, ErrMemory) {
		t.Fatalf("err %v, want ErrMemory", err)
	}
}
