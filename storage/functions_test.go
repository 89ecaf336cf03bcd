package storage

import (
	"errors"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
)

func TestCatalogFunctions(t *testing.T) {
	fs := vfs.NewMem()
	c, err := OpenCatalog(fs, "schema")
	if err != nil {
		t.Fatal(err)
	}
	if err := c.CreateKeyspace(&KeyspaceDef{Name: "ks", Tables: map[string]*TableDef{}}); err != nil {
		t.Fatal(err)
	}
	empty := c.Digest()
	plus := func(body string, args ...string) *FunctionDef {
		return &FunctionDef{Keyspace: "ks", Name: "plus", ArgNames: []string{"a", "b"}[:len(args)], ArgTypes: args,
			ReturnType: "int", Language: "javascript", Body: body}
	}
	if err := c.PutFunction(plus("a + b", "int", "int")); err != nil {
		t.Fatal(err)
	}
	if err := c.PutFunction(plus("a", "bigint")); err != nil {
		t.Fatal(err)
	}
	if err := c.PutFunction(plus("b + a", "int", "int")); err != nil { // OR REPLACE
		t.Fatal(err)
	}
	init := "0"
	if err := c.PutAggregate(&AggregateDef{Keyspace: "ks", Name: "total", ArgTypes: []string{"int"}, StateFunc: "plus",
		StateType: "int", InitCond: &init, ReturnType: "int"}); err != nil {
		t.Fatal(err)
	}
	if c.Digest() == empty {
		t.Fatal("the digest did not change with the functions")
	}
	c2, err := OpenCatalog(fs, "schema")
	if err != nil {
		t.Fatal(err)
	}
	k, _ := c2.Keyspace("ks")
	if got := len(k.FunctionsNamed("plus")); got != 2 {
		t.Fatalf("%d overloads of plus after reopening, want 2", got)
	}
	if f := k.Function("plus", []string{"int", "int"}); f == nil || f.Body != "b + a" {
		t.Fatalf("plus(int, int) = %+v, want the replacing body", f)
	}
	if a := k.Aggregate("total", []string{"int"}); a == nil || *a.InitCond != "0" {
		t.Fatalf("total(int) = %+v", a)
	}
	if c2.Digest() != c.Digest() {
		t.Fatal("the digest changed across a reopen")
	}
	if err := c.DropAggregate("ks", "total", []string{"int"}); err != nil {
		t.Fatal(err)
	}
	if err := c.DropFunction("ks", "plus", []string{"bigint"}); err != nil {
		t.Fatal(err)
	}
	if err := c.DropFunction("ks", "plus", []string{"bigint"}); !errors.Is(err, ErrFunctionNotFound) {
		t.Fatalf("dropping a dropped function: %v", err)
	}
	if err := c.DropFunction("ks", "plus", []string{"int", "int"}); err != nil {
		t.Fatal(err)
	}
	if c.Digest() != empty {
		t.Fatal("the digest of a keyspace whose functions were all dropped differs from the empty one")
	}
}
