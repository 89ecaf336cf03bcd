package coordinator

import (
	"github.com/datastax/go-cassandra-native-protocol/datatype"
	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"

	"github.com/cqld/cqld/statements"
	"github.com/cqld/cqld/statements/functions"
	"github.com/cqld/cqld/statements/types"
)

// valueExpr yields a serialized value when a statement runs: a literal
// serialized at analysis, a bind marker's bound value, or a function or
// collection computed from them. A nil result is a null.
type valueExpr interface {
	eval(x *execution) ([]byte, error)
}

type constExpr []byte

func (c constExpr) eval(*execution) ([]byte, error) { return c, nil }

// markerExpr is a bind marker; its bound value is checked against typ.
type markerExpr struct {
	index     int
	typ       datatype.DataType
	name      string
	unordered bool // the type holds sets or maps, which are normalised
}

func (m markerExpr) eval(x *execution) ([]byte, error) {
	if x.unset[m.index] {
		return nil, errUnset
	}
	v := x.values[m.index]
	if err := types.ValidateValue(m.typ, v, m.name); err != nil {
		return nil, err
	}
	if m.unordered {
		return types.NormalizeValue(m.typ, v)
	}
	return v, nil
}

// errUnset reports an unset bound value; statements that allow unset
// values (INSERT, UPDATE) skip the column, the others fail.
var errUnset = invalidf("Invalid unset value")

// binder compiles terms for one statement and records its bind markers.
type binder struct {
	keyspace, table string
	specs           []*message.ColumnMetadata
	// fn resolves function names; nil knows the native functions alone.
	fn *fnScope
}

func newBinder(keyspace, table string, n int) *binder {
	return &binder{keyspace: keyspace, table: table, specs: make([]*message.ColumnMetadata, n)}
}

// bind records marker m as binding a value of type t named name.
func (b *binder) bind(m *statements.BindMarker, t datatype.DataType, name string) (markerExpr, error) {
	if m.Index < 0 || m.Index >= len(b.specs) {
		return markerExpr{}, invalidf("bind marker index %d out of range", m.Index)
	}
	if m.Name != "" {
		name = m.Name
	}
	b.specs[m.Index] = &message.ColumnMetadata{Keyspace: b.keyspace, Table: b.table, Name: name, Index: int32(m.Index), Type: t}
	return markerExpr{index: m.Index, typ: t, name: name, unordered: types.HasUnordered(t)}, nil
}

// check fails if a marker was left unbound (used where cqld cannot bind).
func (b *binder) check() error {
	for i, s := range b.specs {
		if s == nil {
			return invalidf("bind marker %d is used where cqld cannot bind it yet", i)
		}
	}
	return nil
}

// term compiles t as a value of type typ for the receiver named name.
func (b *binder) term(t statements.Term, typ datatype.DataType, name string) (valueExpr, error) {
	switch v := t.(type) {
	case *statements.BindMarker:
		return b.bind(v, typ, name)
	case *statements.Literal:
		bs, err := types.LiteralBytes(typ, v, name)
		if err != nil {
			return nil, err
		}
		return constExpr(bs), nil
	case *statements.TypeHintTerm:
		return b.term(v.Term, typ, name)
	case *statements.ListLiteral:
		switch ct := typ.(type) {
		case *datatype.List:
			return b.collection(v.Elems, nil, ct.ElementType, nil, name, false)
		case *datatype.Set:
			return nil, invalidf("Invalid list literal for %s of type %s", name, statements.TypeString(typ, false))
		}
	case *statements.SetLiteral:
		switch ct := typ.(type) {
		case *datatype.Set:
			return b.collection(v.Elems, nil, ct.ElementType, nil, name, true)
		case *datatype.Map:
			if len(v.Elems) == 0 {
				return constExpr(emptyCollection), nil
			}
		}
	case *statements.MapLiteral:
		if ct, ok := typ.(*datatype.Map); ok {
			return b.collection(v.Keys, v.Values, ct.KeyType, ct.ValueType, name, true)
		}
		if typ.Code() == primitive.DataTypeCodeUdt {
			return nil, invalidf("Invalid map literal for %s of type %s", name, statements.TypeString(typ, false))
		}
	case *statements.UserTypeLiteral:
		return b.userType(v, typ, name)
	case *statements.TupleLiteral:
		if tt, ok := typ.(*datatype.Tuple); ok {
			if len(v.Elems) > len(tt.FieldTypes) {
				return nil, invalidf("Invalid tuple literal for %s: too many elements. Type %s expects %d but got %d", name, statements.TypeString(typ, false), len(tt.FieldTypes), len(v.Elems))
			}
			t := &tupleExpr{}
			for i, e := range v.Elems {
				ex, err := b.term(e, tt.FieldTypes[i], name+"["+string(rune('0'+i%10))+"]")
				if err != nil {
					return nil, err
				}
				t.elems = append(t.elems, ex)
			}
			return t, nil
		}
	case *statements.FunctionTerm:
		return b.function(v, typ, name)
	}
	return nil, invalidf("Invalid value for column %s of type %s", name, statements.TypeString(typ, false))
}

var emptyCollection = []byte{0, 0, 0, 0}

// literalFits is Constants.Literal.testAssignment: whether a constant of
// kind k may be assigned to type t at all (its value is checked later).
func literalFits(k statements.LiteralKind, t datatype.DataType) bool {
	var codes []primitive.DataTypeCode
	switch k {
	case statements.LiteralNull:
		return true
	case statements.LiteralString:
		codes = []primitive.DataTypeCode{primitive.DataTypeCodeAscii, primitive.DataTypeCodeVarchar, primitive.DataTypeCodeText,
			primitive.DataTypeCodeInet, primitive.DataTypeCodeDate, primitive.DataTypeCodeTime, primitive.DataTypeCodeTimestamp}
	case statements.LiteralInteger:
		codes = []primitive.DataTypeCode{primitive.DataTypeCodeBigint, primitive.DataTypeCodeCounter, primitive.DataTypeCodeDate,
			primitive.DataTypeCodeDecimal, primitive.DataTypeCodeDouble, primitive.DataTypeCodeDuration, primitive.DataTypeCodeFloat,
			primitive.DataTypeCodeInt, primitive.DataTypeCodeSmallint, primitive.DataTypeCodeTime, primitive.DataTypeCodeTimestamp,
			primitive.DataTypeCodeTinyint, primitive.DataTypeCodeVarint}
	case statements.LiteralFloat:
		codes = []primitive.DataTypeCode{primitive.DataTypeCodeDecimal, primitive.DataTypeCodeDouble, primitive.DataTypeCodeFloat}
	case statements.LiteralBoolean:
		codes = []primitive.DataTypeCode{primitive.DataTypeCodeBoolean}
	case statements.LiteralUUID:
		codes = []primitive.DataTypeCode{primitive.DataTypeCodeUuid, primitive.DataTypeCodeTimeuuid}
	case statements.LiteralHex:
		codes = []primitive.DataTypeCode{primitive.DataTypeCodeBlob}
	case statements.LiteralDuration:
		codes = []primitive.DataTypeCode{primitive.DataTypeCodeDuration}
	}
	if t.Code() == primitive.DataTypeCodeCustom {
		return true
	}
	for _, c := range codes {
		if t.Code() == c {
			return true
		}
	}
	return false
}

// userType compiles a user type literal {f: v, ...} (UserTypes.Literal):
// fields it leaves out are null.
func (b *binder) userType(v *statements.UserTypeLiteral, typ datatype.DataType, name string) (valueExpr, error) {
	ut, ok := typ.(*datatype.UserDefined)
	if !ok {
		return nil, invalidf("Invalid user type literal for %s of type %s", name, statements.TypeString(typ, false))
	}
	for _, f := range v.Fields {
		if indexOf(ut.FieldNames, f) < 0 {
			return nil, invalidf("Unknown field '%s' in value of user defined type %s", f, ut.Name)
		}
	}
	t := &tupleExpr{elems: make([]valueExpr, len(ut.FieldNames))}
	for i, f := range ut.FieldNames {
		t.elems[i] = constExpr(nil)
		for j, given := range v.Fields {
			if given != f {
				continue
			}
			if lit, ok := v.Values[j].(*statements.Literal); ok && !literalFits(lit.Kind, ut.FieldTypes[i]) {
				return nil, invalidf("Invalid user type literal for %s: field %s is not of type %s", name, f, statements.TypeString(ut.FieldTypes[i], true))
			}
			ex, err := b.term(v.Values[j], ut.FieldTypes[i], name+"."+f)
			if err != nil {
				return nil, err
			}
			t.elems[i] = ex
		}
	}
	return t, nil
}

// collectionExpr serializes a list, set or map literal. Sets and maps are
// sorted and deduplicated by their element order, as Cassandra stores them.
type collectionExpr struct {
	keys, values []valueExpr
	keyType      datatype.DataType
	valueType    datatype.DataType // nil for lists and sets
	sorted       bool
}

func (b *binder) collection(keys, values []statements.Term, kt, vt datatype.DataType, name string, sorted bool) (valueExpr, error) {
	c := &collectionExpr{keyType: kt, sorted: sorted}
	if values != nil {
		c.valueType = vt
	}
	for i, k := range keys {
		ke, err := b.term(k, kt, name)
		if err != nil {
			return nil, err
		}
		c.keys = append(c.keys, ke)
		if values != nil {
			ve, err := b.term(values[i], vt, name)
			if err != nil {
				return nil, err
			}
			c.values = append(c.values, ve)
		}
	}
	return c, nil
}

func (c *collectionExpr) eval(x *execution) ([]byte, error) {
	keys := make([][]byte, len(c.keys))
	var values [][]byte
	if c.values != nil {
		values = make([][]byte, len(c.values))
	}
	for i, ke := range c.keys {
		k, err := ke.eval(x)
		if err != nil {
			return nil, err
		}
		keys[i] = k
		if c.values != nil {
			if values[i], err = c.values[i].eval(x); err != nil {
				return nil, err
			}
		}
	}
	return types.EncodeCollection(keys, values, c.keyType, c.valueType, c.sorted)
}

type tupleExpr struct{ elems []valueExpr }

func (t *tupleExpr) eval(x *execution) ([]byte, error) {
	var buf []byte
	for _, e := range t.elems {
		v, err := e.eval(x)
		if err == errUnset {
			v, err = nil, nil
		}
		if err != nil {
			return nil, err
		}
		buf = types.AppendBytes(buf, v)
	}
	if buf == nil {
		buf = []byte{}
	}
	return buf, nil
}

// funcExpr is a native function evaluated per execution.
type funcExpr struct {
	args []valueExpr
	fn   scalarFn
}

func (f *funcExpr) eval(x *execution) ([]byte, error) {
	args := make([][]byte, len(f.args))
	for i, a := range f.args {
		v, err := a.eval(x)
		if err != nil {
			return nil, err
		}
		args[i] = v
	}
	return f.fn(&selCtx{x: x}, args)
}

// function compiles a native function call used as a value for a receiver
// of type typ named name. Its signature is resolved in the one registry the
// selection uses too (functions.Lookup), as Cassandra's FunctionCall.Raw
// does for terms; fromJson alone takes the receiver's type.
func (b *binder) function(f *statements.FunctionTerm, typ datatype.DataType, name string) (valueExpr, error) {
	if f.Name == "fromjson" && isNativeName(f.Keyspace) {
		if len(f.Args) != 1 {
			return nil, invalidf("Invalid number of arguments in call to function system.fromjson: 1 required but %d provided", len(f.Args))
		}
		a, err := b.term(f.Args[0], datatype.Varchar, name)
		if err != nil {
			return nil, err
		}
		return &funcExpr{args: []valueExpr{a}, fn: func(_ functions.Context, a [][]byte) ([]byte, error) {
			if a[0] == nil {
				return nil, nil
			}
			return types.FromJSONText(typ, string(a[0]))
		}}, nil
	}
	sig, err := b.resolve(f)
	if err != nil {
		return nil, err
	}
	if !functions.SameType(typ, sig.Ret) && !functions.ValueCompatible(typ, sig.Ret) {
		return nil, invalidf("Type error: cannot assign result of function %s (type %s) to %s (type %s)",
			sig.QualifiedName(), typeName(sig.Ret), name, typeName(typ))
	}
	fe := &funcExpr{args: make([]valueExpr, len(f.Args)), fn: sig.Impl}
	for i, a := range f.Args {
		if fe.args[i], err = b.term(a, sig.Params[i], name); err != nil {
			return nil, err
		}
	}
	return fe, nil
}

// isNativeName reports whether a function name qualified by keyspace ks
// ("" when unqualified) may name a native function, as Cassandra's
// FunctionName.equalsNativeFunction.
func isNativeName(ks string) bool { return ks == "" || ks == "system" }

// resolve picks the native function a call used as a value names.
func (b *binder) resolve(f *statements.FunctionTerm) (*functions.Sig, error) {
	if f.Name == "tojson" && isNativeName(f.Keyspace) {
		// Its argument's type is known only in a selection
		// (FunctionResolver.collectCandidates).
		return nil, invalidf("toJson() may only be used within the selection clause of SELECT statements")
	}
	display := f.Name
	if f.Keyspace != "" {
		display = f.Keyspace + "." + f.Name
	}
	sigs, err := b.lookup(f.Keyspace, f.Name)
	if err != nil {
		return nil, err
	}
	if len(sigs) == 0 {
		return nil, invalidf("Unknown function '%s'", display)
	}
	args := make([]selItem, len(f.Args))
	for i, a := range f.Args {
		args[i] = b.argItem(a)
	}
	sig, err := functions.Resolve(display, sigs, resolveArgs(args))
	if err != nil {
		return nil, err
	}
	if sig.Agg != functions.AggNone {
		return nil, invalidf("Aggregation function are not supported in the where clause")
	}
	b.fn.use(sig)
	return sig, nil
}

// lookup returns the signatures a call of qual.name may resolve to.
func (b *binder) lookup(qual, name string) ([]*functions.Sig, error) {
	if b.fn == nil {
		if qual != "" && qual != "system" {
			return nil, nil
		}
		return functions.Lookup(name), nil
	}
	return b.fn.lookup(qual, name)
}

// argItem is a function's argument as the signature resolution sees it:
// a nested call by its return type (Cassandra's FunctionCall.Raw
// testAssignment: weakly assignable when it cannot be resolved, or is
// fromJson, whose type is its receiver's), any other term untyped.
func (b *binder) argItem(a statements.Term) selItem {
	if th, ok := a.(*statements.TypeHintTerm); ok {
		if typ, err := statements.ParseType(th.Type); err == nil {
			return selItem{typ: typ, name: termText(a)}
		}
	}
	f, ok := a.(*statements.FunctionTerm)
	if !ok || f.Name == "fromjson" {
		return selItem{raw: a, name: termText(a)}
	}
	sig, err := b.resolve(f)
	if err != nil {
		return selItem{raw: a, name: termText(a)}
	}
	return selItem{typ: sig.Ret, name: termText(a)}
}

// assignable reports whether a value of type from may be stored as to.
func assignable(from, to datatype.DataType) bool {
	if from.Code() == to.Code() {
		return true
	}
	return from.Code() == primitive.DataTypeCodeTimeuuid && to.Code() == primitive.DataTypeCodeUuid
}
