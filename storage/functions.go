package storage

import (
	"fmt"
	"slices"
	"strings"
)

// FunctionDef is a user-defined function (CREATE FUNCTION), kept as the
// data system_schema.functions shows and DESCRIBE prints: a function is
// known by its keyspace, name and argument types (overloads share a name).
// Type strings are spelled as system_schema.functions spells them.
type FunctionDef struct {
	Keyspace          string   `json:"keyspace"`
	Name              string   `json:"name"`
	ArgNames          []string `json:"arg_names"`
	ArgTypes          []string `json:"arg_types"`
	ReturnType        string   `json:"return_type"`
	Language          string   `json:"language"`
	Body              string   `json:"body"`
	CalledOnNullInput bool     `json:"called_on_null_input"`
}

// AggregateDef is a user-defined aggregate (CREATE AGGREGATE), as
// system_schema.aggregates shows it: its state and final functions are
// named without keyspace (they are in the aggregate's) and InitCond is the
// initial state as a CQL literal, nil when there is none.
type AggregateDef struct {
	Keyspace   string   `json:"keyspace"`
	Name       string   `json:"name"`
	ArgTypes   []string `json:"arg_types"`
	StateFunc  string   `json:"state_func"`
	StateType  string   `json:"state_type"`
	FinalFunc  string   `json:"final_func,omitempty"`
	InitCond   *string  `json:"initcond,omitempty"`
	ReturnType string   `json:"return_type"`
}

// Signature is a function's or aggregate's name and argument types, as
// CQL writes it: name(t1, t2).
func Signature(name string, argTypes []string) string {
	return name + "(" + strings.Join(argTypes, ", ") + ")"
}

// Signature is f's name and argument types.
func (f *FunctionDef) Signature() string { return Signature(f.Name, f.ArgTypes) }

// Signature is a's name and argument types.
func (a *AggregateDef) Signature() string { return Signature(a.Name, a.ArgTypes) }

// FunctionsNamed returns k's functions called name, in signature order.
func (k *KeyspaceDef) FunctionsNamed(name string) []*FunctionDef {
	var out []*FunctionDef
	for _, f := range k.Functions {
		if f.Name == name {
			out = append(out, f)
		}
	}
	return out
}

// AggregatesNamed returns k's aggregates called name, in signature order.
func (k *KeyspaceDef) AggregatesNamed(name string) []*AggregateDef {
	var out []*AggregateDef
	for _, a := range k.Aggregates {
		if a.Name == name {
			out = append(out, a)
		}
	}
	return out
}

// Function returns k's function of the given signature, or nil.
func (k *KeyspaceDef) Function(name string, argTypes []string) *FunctionDef {
	for _, f := range k.Functions {
		if f.Name == name && slices.Equal(f.ArgTypes, argTypes) {
			return f
		}
	}
	return nil
}

// Aggregate returns k's aggregate of the given signature, or nil.
func (k *KeyspaceDef) Aggregate(name string, argTypes []string) *AggregateDef {
	for _, a := range k.Aggregates {
		if a.Name == name && slices.Equal(a.ArgTypes, argTypes) {
			return a
		}
	}
	return nil
}

// PutFunction adds def to its keyspace, replacing the function of the same
// signature (CREATE OR REPLACE FUNCTION). The catalog keeps def: callers
// must not change it.
func (c *Catalog) PutFunction(def *FunctionDef) error {
	return c.update(func(ks map[string]*KeyspaceDef) error {
		k := ks[def.Keyspace]
		if k == nil {
			return fmt.Errorf("%w: %s", ErrKeyspaceNotFound, def.Keyspace)
		}
		n := *k
		n.Functions = putSorted(k.Functions, def, (*FunctionDef).Signature)
		ks[def.Keyspace] = &n
		return nil
	})
}

// DropFunction removes the function of the given signature, or fails with
// ErrKeyspaceNotFound or ErrFunctionNotFound. Callers check that no
// aggregate uses it.
func (c *Catalog) DropFunction(keyspace, name string, argTypes []string) error {
	return c.update(func(ks map[string]*KeyspaceDef) error {
		k := ks[keyspace]
		if k == nil {
			return fmt.Errorf("%w: %s", ErrKeyspaceNotFound, keyspace)
		}
		sig := Signature(name, argTypes)
		i := slices.IndexFunc(k.Functions, func(f *FunctionDef) bool { return f.Signature() == sig })
		if i < 0 {
			return fmt.Errorf("%w: %s.%s", ErrFunctionNotFound, keyspace, sig)
		}
		n := *k
		n.Functions = slices.Delete(slices.Clone(k.Functions), i, i+1)
		if len(n.Functions) == 0 {
			n.Functions = nil
		}
		ks[keyspace] = &n
		return nil
	})
}

// PutAggregate adds def to its keyspace, replacing the aggregate of the
// same signature (CREATE OR REPLACE AGGREGATE). The catalog keeps def.
func (c *Catalog) PutAggregate(def *AggregateDef) error {
	return c.update(func(ks map[string]*KeyspaceDef) error {
		k := ks[def.Keyspace]
		if k == nil {
			return fmt.Errorf("%w: %s", ErrKeyspaceNotFound, def.Keyspace)
		}
		n := *k
		n.Aggregates = putSorted(k.Aggregates, def, (*AggregateDef).Signature)
		ks[def.Keyspace] = &n
		return nil
	})
}

// DropAggregate removes the aggregate of the given signature, or fails
// with ErrKeyspaceNotFound or ErrFunctionNotFound.
func (c *Catalog) DropAggregate(keyspace, name string, argTypes []string) error {
	return c.update(func(ks map[string]*KeyspaceDef) error {
		k := ks[keyspace]
		if k == nil {
			return fmt.Errorf("%w: %s", ErrKeyspaceNotFound, keyspace)
		}
		sig := Signature(name, argTypes)
		i := slices.IndexFunc(k.Aggregates, func(a *AggregateDef) bool { return a.Signature() == sig })
		if i < 0 {
			return fmt.Errorf("%w: %s.%s", ErrFunctionNotFound, keyspace, sig)
		}
		n := *k
		n.Aggregates = slices.Delete(slices.Clone(k.Aggregates), i, i+1)
		if len(n.Aggregates) == 0 {
			n.Aggregates = nil
		}
		ks[keyspace] = &n
		return nil
	})
}

// putSorted returns a copy of list with def in it, in place of the entry
// of the same key, and sorted by key, so equal schemas encode (and hash)
// equal.
func putSorted[T any](list []*T, def *T, key func(*T) string) []*T {
	out := make([]*T, 0, len(list)+1)
	k := key(def)
	for _, d := range list {
		if key(d) != k {
			out = append(out, d)
		}
	}
	out = append(out, def)
	slices.SortFunc(out, func(a, b *T) int { return strings.Compare(key(a), key(b)) })
	return out
}
