package coordinator

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/big"
	"strings"
	"time"

	"github.com/datastax/go-cassandra-native-protocol/datatype"
	"github.com/datastax/go-cassandra-native-protocol/primitive"

	"github.com/cqld/cqld/statements"
	"github.com/cqld/cqld/statements/types"
	"github.com/cqld/cqld/storage"
)

// This file compiles the SELECT clause of a query on a user table when it
// is more than stored values in order: native scalar functions, casts,
// terms, aggregates and GROUP BY. Everything is resolved at analysis into
// small evaluators; names and types of the result columns follow
// Cassandra 4.0 (cql3/selection/Selectable.java, AbstractFunction.columnName:
// "system.<name>(<args>)", count(*) is "count", writetime(c), ttl(c),
// cast(c as <type>)).

// selection is a compiled SELECT clause. Its inputs are the plan's
// projections (column values, writetimes, ttls), fetched per row.
type selection struct {
	exprs []selExpr  // one per result column
	aggs  []*aggSpec // the aggregate functions, by index
	// aggregate is set when rows are folded into groups (aggregate
	// functions or GROUP BY): the selectors that are not aggregates see the
	// first row of each group, as in Cassandra.
	aggregate bool
	// groupCK is the number of clustering columns in GROUP BY's key (the
	// partition key is always in it), -1 without GROUP BY (one group of
	// every row).
	groupCK int
}

// selCtx is what evaluators see besides their input row.
type selCtx struct {
	x   *execution
	agg [][]byte // results of the aggregates of the group being output
}

// selExpr is one compiled selector. in is the row's inputs (nil for the
// one row of an aggregation over no rows).
type selExpr interface {
	eval(c *selCtx, in [][]byte) ([]byte, error)
}

type inputSel int

func (i inputSel) eval(_ *selCtx, in [][]byte) ([]byte, error) {
	if in == nil {
		return nil, nil
	}
	return in[i], nil
}

type constSel []byte

func (v constSel) eval(*selCtx, [][]byte) ([]byte, error) { return v, nil }

// termSel is a bind marker (or a term computed per execution).
type termSel struct{ v valueExpr }

func (t termSel) eval(c *selCtx, _ [][]byte) ([]byte, error) { return t.v.eval(c.x) }

// aggSel is the result of aggregate i.
type aggSel int

func (i aggSel) eval(c *selCtx, _ [][]byte) ([]byte, error) { return c.agg[i], nil }

type scalarFn func(c *selCtx, args [][]byte) ([]byte, error)

// fnSel is a scalar function of other selectors.
type fnSel struct {
	args []selExpr
	fn   scalarFn
}

func (f *fnSel) eval(c *selCtx, in [][]byte) ([]byte, error) {
	args := make([][]byte, len(f.args))
	for i, a := range f.args {
		v, err := a.eval(c, in)
		if err != nil {
			return nil, err
		}
		args[i] = v
	}
	return f.fn(c, args)
}

// row evaluates the selection over one row (no aggregates).
func (s *selection) row(c *selCtx, in [][]byte) ([][]byte, error) {
	out := make([][]byte, len(s.exprs))
	for i, e := range s.exprs {
		v, err := e.eval(c, in)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

// add feeds one row to the aggregates.
func (s *selection) add(c *selCtx, in [][]byte, st []aggState) error {
	for i, a := range s.aggs {
		if err := a.add(&st[i], c, in); err != nil {
			return err
		}
	}
	return nil
}

// output is the result row of a group whose first row is first.
func (s *selection) output(c *selCtx, first [][]byte, st []aggState) ([][]byte, error) {
	c.agg = make([][]byte, len(s.aggs))
	for i, a := range s.aggs {
		c.agg[i] = a.result(&st[i])
	}
	return s.row(c, first)
}

// selCompiler compiles selectors against a table.
type selCompiler struct {
	t    *tableInfo
	b    *binder
	proj []projection // the inputs, deduplicated
	aggs []*aggSpec
}

// selItem is a compiled selector with its result column's name and type.
type selItem struct {
	e    selExpr
	typ  datatype.DataType
	name string
	agg  bool            // an aggregate is computed in it
	raw  statements.Term // an untyped literal or marker, compiled when its type is known
}

// input returns the index of the input fetching column col as kind.
func (c *selCompiler) input(col int, kind projKind) int {
	p := projection{col: col, kind: kind}
	for i, q := range c.proj {
		if q == p {
			return i
		}
	}
	c.proj = append(c.proj, p)
	return len(c.proj) - 1
}

func (c *selCompiler) addAgg(a *aggSpec) int {
	c.aggs = append(c.aggs, a)
	return len(c.aggs) - 1
}

// top compiles one element of the SELECT clause.
func (c *selCompiler) top(e statements.SelectorExpr) (selItem, error) {
	it, err := c.compile(e)
	if err != nil {
		return it, err
	}
	if it.raw != nil {
		return it, cannotInfer(it.name)
	}
	return it, nil
}

func cannotInfer(name string) error {
	return invalidf("Cannot infer type for term %s in selection clause (try using a cast to force a type)", name)
}

func (c *selCompiler) compile(e statements.SelectorExpr) (selItem, error) {
	switch e := e.(type) {
	case *statements.ColumnRef:
		i, col, err := c.t.column(e.Name)
		if err != nil {
			return selItem{}, err
		}
		return selItem{e: inputSel(c.input(i, projValue)), typ: col.typ, name: col.def.Name}, nil
	case *statements.FunctionCall:
		return c.function(e)
	case *statements.Cast:
		return c.cast(e)
	case *statements.TermSelector:
		if th, ok := e.Term.(*statements.TypeHintTerm); ok {
			return c.typeHint(th.Type, th.Term)
		}
		return selItem{raw: e.Term, name: termText(e.Term)}, nil
	case *statements.TypeHintSelector:
		if ts, ok := e.Expr.(*statements.TermSelector); ok {
			return c.typeHint(e.Type, ts.Term)
		}
	case *statements.ElementSelector:
		return c.elements(e.Expr, e.Key, nil, nil, false)
	case *statements.SliceSelector:
		return c.elements(e.Expr, nil, e.From, e.To, true)
	case *statements.FieldSelector:
		return c.field(e)
	}
	return selItem{}, invalidf("This kind of selection is not supported yet")
}

// elements compiles c[key] (slice false) and c[from..to] on a set or a
// map (Selectable.WithElementSelection, WithSliceSelection).
func (c *selCompiler) elements(on statements.SelectorExpr, key, from, to statements.Term, slice bool) (selItem, error) {
	in, err := c.compile(on)
	if err != nil {
		return selItem{}, err
	}
	if in.raw != nil {
		return selItem{}, cannotInfer(in.name)
	}
	what := "Element"
	if slice {
		what = "Slice"
	}
	es := &elemSel{coll: in.e, slice: slice, on: in.name}
	var specName string
	switch ct := in.typ.(type) {
	case *datatype.Map:
		es.kt, es.isMap, specName = ct.KeyType, true, "key("+in.name+")"
	case *datatype.Set:
		es.kt, specName = ct.ElementType, "value("+in.name+")"
	case *datatype.List:
		return selItem{}, invalidf("%s selection is only allowed on sets and maps, but %s is a list", what, in.name)
	default:
		return selItem{}, invalidf("Invalid %s selection: %s is of type %s is not a collection", strings.ToLower(what), in.name, typeName(in.typ))
	}
	bound := func(t statements.Term) (selExpr, error) {
		if t == nil {
			return nil, nil
		}
		v, err := c.b.term(t, es.kt, specName)
		if err != nil {
			return nil, err
		}
		return termSel{v}, nil
	}
	typ := in.typ
	var name string
	if slice {
		if es.from, err = bound(from); err != nil {
			return selItem{}, err
		}
		if es.to, err = bound(to); err != nil {
			return selItem{}, err
		}
		fromText, toText := "", ""
		if from != nil {
			fromText = termText(from)
		}
		if to != nil {
			toText = termText(to)
		}
		name = in.name + "[" + fromText + ".." + toText + "]"
	} else {
		if es.key, err = bound(key); err != nil {
			return selItem{}, err
		}
		if m, ok := in.typ.(*datatype.Map); ok {
			typ = m.ValueType
		} else {
			typ = es.kt
		}
		name = in.name + "[" + termText(key) + "]"
	}
	return selItem{e: es, typ: typ, name: name, agg: in.agg}, nil
}

// elemSel selects an element or a slice of a set or map value.
type elemSel struct {
	coll          selExpr
	key, from, to selExpr // from and to are nil when open
	kt            datatype.DataType
	isMap, slice  bool
	on            string // the collection's name, for errors
}

func (s *elemSel) eval(c *selCtx, in [][]byte) ([]byte, error) {
	v, err := s.coll.eval(c, in)
	if err != nil || v == nil {
		return nil, err
	}
	n := 1
	if s.isMap {
		n = 2
	}
	elems, ok := types.SplitCollection(v, n)
	if !ok {
		return nil, nil
	}
	keyOf := func(e selExpr, what string) ([]byte, error) {
		k, err := e.eval(c, in)
		if err == errUnset {
			return nil, invalidf("Invalid unset value for %s selection on %s", what, s.on)
		}
		if err != nil {
			return nil, err
		}
		if k == nil {
			return nil, invalidf("Invalid null value for %s selection on %s", what, s.on)
		}
		enc, err := storage.AppendKey(nil, s.kt, k, false)
		if err != nil {
			return nil, invalidf("Invalid value for %s selection on %s", what, s.on)
		}
		return enc, nil
	}
	if !s.slice {
		want, err := keyOf(s.key, "element")
		if err != nil {
			return nil, err
		}
		for i := 0; i+n-1 < len(elems); i += n {
			if k, err := storage.AppendKey(nil, s.kt, elems[i], false); err == nil && bytes.Equal(k, want) {
				return elems[i+n-1], nil
			}
		}
		return nil, nil
	}
	var lo, hi []byte
	if s.from != nil {
		if lo, err = keyOf(s.from, "slice"); err != nil {
			return nil, err
		}
	}
	if s.to != nil {
		if hi, err = keyOf(s.to, "slice"); err != nil {
			return nil, err
		}
	}
	var kept [][]byte
	for i := 0; i+n-1 < len(elems); i += n {
		k, err := storage.AppendKey(nil, s.kt, elems[i], false)
		if err != nil || (lo != nil && bytes.Compare(k, lo) < 0) || (hi != nil && bytes.Compare(k, hi) > 0) {
			continue
		}
		kept = append(kept, elems[i:i+n]...)
	}
	out := binary.BigEndian.AppendUint32(nil, uint32(len(kept)/n))
	for _, e := range kept {
		out = types.AppendBytes(out, e)
	}
	return out, nil
}

// field compiles u.f on a user type value (Selectable.WithFieldSelection).
func (c *selCompiler) field(f *statements.FieldSelector) (selItem, error) {
	in, err := c.compile(f.Expr)
	if err != nil {
		return selItem{}, err
	}
	if in.raw != nil {
		return selItem{}, cannotInfer(in.name)
	}
	ut, ok := in.typ.(*datatype.UserDefined)
	if !ok {
		return selItem{}, invalidf("Invalid field selection: %s of type %s is not a user type", in.name, typeName(in.typ))
	}
	// Cassandra names the type as the column declares it: user types are
	// frozen except a non-frozen column's own.
	frozen := true
	if ref, isCol := f.Expr.(*statements.ColumnRef); isCol {
		if _, col, err := c.t.column(ref.Name); err == nil {
			frozen = col.frozen
		}
	}
	idx := -1
	for i, n := range ut.FieldNames {
		if n == f.Field {
			idx = i
		}
	}
	if idx < 0 {
		return selItem{}, invalidf("%s of type %s has no field %s", in.name, statements.TypeString(in.typ, frozen), f.Field)
	}
	nf := len(ut.FieldTypes)
	fn := func(_ *selCtx, a [][]byte) ([]byte, error) {
		if a[0] == nil {
			return nil, nil
		}
		return types.SplitFields(a[0], nf)[idx], nil
	}
	return selItem{e: &fnSel{args: []selExpr{in.e}, fn: fn}, typ: ut.FieldTypes[idx], name: in.name + "." + f.Field, agg: in.agg}, nil
}

func (c *selCompiler) typeHint(typeName string, t statements.Term) (selItem, error) {
	typ, err := statements.ParseType(typeName)
	if err != nil {
		return selItem{}, invalidf("Unknown type %s", typeName)
	}
	ex, err := c.term(t, typ)
	if err != nil {
		return selItem{}, err
	}
	return selItem{e: ex, typ: typ, name: "(" + typeName + ")" + termText(t)}, nil
}

// term compiles a literal or marker of the selection as a value of typ.
func (c *selCompiler) term(t statements.Term, typ datatype.DataType) (selExpr, error) {
	v, err := c.b.term(t, typ, "[selection]")
	if err != nil {
		return nil, err
	}
	if k, ok := v.(constExpr); ok {
		return constSel(k), nil
	}
	return termSel{v}, nil
}

// termText is a term as Cassandra names it in a selection (Term.Raw.getText).
func termText(t statements.Term) string {
	switch v := t.(type) {
	case *statements.Literal:
		switch v.Kind {
		case statements.LiteralString:
			return "'" + v.Text + "'"
		case statements.LiteralNull:
			return "NULL"
		}
		return v.Text
	case *statements.BindMarker:
		if v.Name != "" {
			return ":" + v.Name
		}
		return "?"
	case *statements.TypeHintTerm:
		return "(" + v.Type + ")" + termText(v.Term)
	case *statements.FunctionTerm:
		args := make([]string, len(v.Args))
		for i, a := range v.Args {
			args[i] = termText(a)
		}
		name := v.Name
		if v.Keyspace != "" {
			name = v.Keyspace + "." + name
		}
		return name + "(" + strings.Join(args, ", ") + ")"
	}
	return "?"
}

func (c *selCompiler) function(f *statements.FunctionCall) (selItem, error) {
	display := f.Name
	if f.Keyspace != "" {
		display = f.Keyspace + "." + f.Name
		if f.Keyspace != "system" {
			return selItem{}, invalidf("Unknown function '%s'", display)
		}
	}
	switch f.Name {
	case "writetime", "ttl":
		return c.writetimeOrTTL(f)
	case "count":
		// count(*) and count(<literal>) count rows (countRows, named "count").
		if len(f.Args) == 1 && countsRows(f.Args[0]) {
			idx := c.addAgg(&aggSpec{kind: aggCountRows})
			return selItem{e: aggSel(idx), typ: datatype.Bigint, name: "count", agg: true}, nil
		}
	case "tojson":
		return c.toJSON(f)
	}
	var sigs []*fnSig
	if f.Name == "token" {
		sigs = []*fnSig{c.tokenSig()}
	} else {
		sigs = nativeFunctions[f.Name]
	}
	if len(sigs) == 0 {
		return selItem{}, invalidf("Unknown function '%s'", display)
	}
	args := make([]selItem, len(f.Args))
	for i, a := range f.Args {
		if _, ok := a.(statements.Star); ok {
			return selItem{}, invalidf("Invalid use of * in call to function %s", display)
		}
		it, err := c.compile(a)
		if err != nil {
			return selItem{}, err
		}
		args[i] = it
	}
	sig, err := resolveFunction(display, sigs, args)
	if err != nil {
		return selItem{}, err
	}
	exprs := make([]selExpr, len(args))
	names := make([]string, len(args))
	anyAgg := false
	for i, a := range args {
		if a.raw != nil {
			ex, err := c.term(a.raw, sig.params[i])
			if err != nil {
				return selItem{}, typeError(a.name, i, sig)
			}
			exprs[i] = ex
		} else {
			exprs[i] = a.e
		}
		names[i] = a.name
		anyAgg = anyAgg || a.agg
	}
	name := "system." + sig.name + "(" + strings.Join(names, ", ") + ")"
	if sig.agg != aggNone {
		if anyAgg {
			return selItem{}, invalidf("aggregate functions cannot be used as arguments of aggregate functions")
		}
		a := &aggSpec{kind: sig.agg, typ: sig.params[0], arg: exprs[0]}
		if a.typ.Code() == primitive.DataTypeCodeCounter {
			a.typ = datatype.Bigint
		}
		return selItem{e: aggSel(c.addAgg(a)), typ: sig.ret, name: name, agg: true}, nil
	}
	return selItem{e: &fnSel{args: exprs, fn: sig.impl}, typ: sig.ret, name: name, agg: anyAgg}, nil
}

// countsRows reports whether count(x) is count(*): x is * or a non-null
// literal.
func countsRows(a statements.SelectorExpr) bool {
	switch a := a.(type) {
	case statements.Star:
		return true
	case *statements.TermSelector:
		l, ok := a.Term.(*statements.Literal)
		return ok && l.Kind != statements.LiteralNull
	}
	return false
}

func (c *selCompiler) writetimeOrTTL(f *statements.FunctionCall) (selItem, error) {
	fname := map[string]string{"writetime": "writeTime", "ttl": "ttl"}[f.Name]
	if len(f.Args) != 1 {
		return selItem{}, invalidf("Invalid number of arguments for %s", f.Name)
	}
	ref, ok := f.Args[0].(*statements.ColumnRef)
	if !ok {
		return selItem{}, invalidf("Cannot use selection function %s on an element or field yet", fname)
	}
	i, col, err := c.t.column(ref.Name)
	if err != nil {
		return selItem{}, err
	}
	if col.isKey() {
		return selItem{}, invalidf("Cannot use selection function %s on PRIMARY KEY part %s", fname, col.def.Name)
	}
	if col.multiCell() {
		return selItem{}, invalidf("Cannot use selection function %s on non-frozen %s %s", fname, multiCellKind(col), col.def.Name)
	}
	kind, typ := projWritetime, datatype.DataType(datatype.Bigint)
	if f.Name == "ttl" {
		kind, typ = projTTL, datatype.Int
	}
	return selItem{e: inputSel(c.input(i, kind)), typ: typ, name: f.Name + "(" + col.def.Name + ")"}, nil
}

func (c *selCompiler) toJSON(f *statements.FunctionCall) (selItem, error) {
	if len(f.Args) != 1 {
		return selItem{}, invalidf("toJson() only accepts one argument (got %d)", len(f.Args))
	}
	a, err := c.compile(f.Args[0])
	if err != nil {
		return selItem{}, err
	}
	if a.raw != nil {
		return selItem{}, cannotInfer(a.name)
	}
	typ := a.typ
	fn := func(_ *selCtx, args [][]byte) ([]byte, error) {
		if args[0] == nil {
			return []byte("null"), nil
		}
		return types.AppendJSONValue(nil, typ, args[0]), nil
	}
	return selItem{e: &fnSel{args: []selExpr{a.e}, fn: fn}, typ: datatype.Varchar, name: "system.tojson(" + a.name + ")", agg: a.agg}, nil
}

// tokenSig is token() for this table: the Murmur3 token of the partition
// key made of its arguments (TokenFct).
func (c *selCompiler) tokenSig() *fnSig {
	t := c.t
	s := &fnSig{name: "token", ret: datatype.Bigint}
	for _, ci := range t.pk {
		s.params = append(s.params, t.cols[ci].typ)
	}
	s.impl = func(_ *selCtx, args [][]byte) ([]byte, error) {
		for _, a := range args {
			if a == nil {
				return nil, nil
			}
		}
		return binary.BigEndian.AppendUint64(nil, uint64(storage.Token(t.partitionKey(args)))), nil
	}
	return s
}

func (c *selCompiler) cast(e *statements.Cast) (selItem, error) {
	in, err := c.compile(e.Expr)
	if err != nil {
		return selItem{}, err
	}
	if in.raw != nil {
		return selItem{}, cannotInfer(in.name)
	}
	to, err := statements.ParseType(e.Type)
	if err != nil {
		return selItem{}, invalidf("Unknown type %s", e.Type)
	}
	if sameType(in.typ, to) {
		return in, nil // a cast to its own type is ignored, name included
	}
	fn := castFunc(in.typ, to)
	if fn == nil {
		first := in.name
		if len(c.proj) > 0 {
			first = c.t.cols[c.proj[0].col].def.Name
		}
		return selItem{}, invalidf("%s cannot be cast to %s", first, typeName(to))
	}
	name := "cast(" + in.name + " as " + typeName(to) + ")"
	return selItem{e: &fnSel{args: []selExpr{in.e}, fn: fn}, typ: to, name: name, agg: in.agg}, nil
}

// ---- function resolution ----

// fnSig is one signature of a native function.
type fnSig struct {
	name   string // without "system."
	params []datatype.DataType
	ret    datatype.DataType
	impl   scalarFn // scalar functions
	agg    aggKind  // aggregate functions
}

func (s *fnSig) String() string {
	ps := make([]string, len(s.params))
	for i, p := range s.params {
		ps[i] = typeName(p)
	}
	return "system." + s.name + " : (" + strings.Join(ps, ", ") + ") -> " + typeName(s.ret)
}

func typeName(t datatype.DataType) string { return statements.TypeString(t, false) }

func sameType(a, b datatype.DataType) bool {
	if a.Code() == b.Code() {
		switch a.(type) {
		case *datatype.PrimitiveType:
			return true
		}
	}
	return typeName(a) == typeName(b)
}

type match uint8

const (
	matchNone match = iota
	matchWeak
	matchExact
)

// argMatch is AssignmentTestable.testAssignment of an argument to a
// parameter type.
func argMatch(a selItem, p datatype.DataType) match {
	if a.raw != nil {
		switch t := a.raw.(type) {
		case *statements.BindMarker:
			return matchWeak
		case *statements.Literal:
			if t.Kind == statements.LiteralNull {
				return matchWeak
			}
			if _, err := types.LiteralBytes(p, t, ""); err != nil {
				return matchNone
			}
			if pt := preferredType(t); pt != nil && sameType(pt, p) {
				return matchExact
			}
			return matchWeak
		case *statements.FunctionTerm:
			return matchWeak
		}
		return matchNone
	}
	if sameType(a.typ, p) {
		return matchExact
	}
	if valueCompatible(p, a.typ) {
		return matchWeak
	}
	return matchNone
}

// preferredType is the type a literal is an exact match for
// (Constants.Literal's preferedType).
func preferredType(l *statements.Literal) datatype.DataType {
	switch l.Kind {
	case statements.LiteralString:
		return datatype.Varchar
	case statements.LiteralInteger:
		n, ok := new(big.Int).SetString(l.Text, 10)
		switch {
		case !ok:
			return nil
		case n.IsInt64() && n.Int64() == int64(int32(n.Int64())):
			return datatype.Int
		case n.IsInt64():
			return datatype.Bigint
		}
		return datatype.Varint
	case statements.LiteralFloat:
		return datatype.Double
	case statements.LiteralBoolean:
		return datatype.Boolean
	case statements.LiteralUUID:
		return datatype.Uuid
	case statements.LiteralHex:
		return datatype.Blob
	case statements.LiteralDuration:
		return datatype.Duration
	}
	return nil
}

// valueCompatible is AbstractType.isValueCompatibleWith: whether a value
// of type from can be read as type to.
func valueCompatible(to, from datatype.DataType) bool {
	tc, fc := to.Code(), from.Code()
	switch tc {
	case primitive.DataTypeCodeBlob:
		return true
	case primitive.DataTypeCodeVarchar, primitive.DataTypeCodeText:
		return fc == primitive.DataTypeCodeAscii || fc == primitive.DataTypeCodeVarchar || fc == primitive.DataTypeCodeText
	case primitive.DataTypeCodeVarint:
		return fc == primitive.DataTypeCodeInt || fc == primitive.DataTypeCodeBigint || fc == primitive.DataTypeCodeTimestamp
	case primitive.DataTypeCodeBigint:
		return fc == primitive.DataTypeCodeTimestamp
	case primitive.DataTypeCodeTimestamp:
		return fc == primitive.DataTypeCodeBigint
	case primitive.DataTypeCodeUuid:
		return fc == primitive.DataTypeCodeTimeuuid
	}
	return false
}

func typeError(arg string, i int, s *fnSig) error {
	return invalidf("Type error: %s cannot be passed as argument %d of function system.%s of type %s", arg, i, s.name, typeName(s.params[i]))
}

// resolveFunction picks the signature a call matches, as
// FunctionResolver.get does.
func resolveFunction(display string, sigs []*fnSig, args []selItem) (*fnSig, error) {
	if len(sigs) == 1 {
		s := sigs[0]
		if len(args) != len(s.params) {
			return nil, invalidf("Invalid number of arguments in call to function system.%s: %d required but %d provided", s.name, len(s.params), len(args))
		}
		for i, a := range args {
			if argMatch(a, s.params[i]) == matchNone {
				return nil, typeError(a.name, i, s)
			}
		}
		return s, nil
	}
	var compat []*fnSig
	for _, s := range sigs {
		if len(s.params) != len(args) {
			continue
		}
		m := matchExact
		for i, a := range args {
			if am := argMatch(a, s.params[i]); am < m {
				m = am
			}
		}
		switch m {
		case matchExact:
			return s, nil
		case matchWeak:
			compat = append(compat, s)
		}
	}
	list := func(ss []*fnSig) string {
		parts := make([]string, len(ss))
		for i, s := range ss {
			parts[i] = s.String()
		}
		return strings.Join(parts, ", ")
	}
	if len(compat) == 0 {
		return nil, invalidf("Invalid call to function %s, none of its type signatures match (known type signatures: %s)", display, list(sigs))
	}
	if len(compat) > 1 {
		return nil, invalidf("Ambiguous call to function %s (can be matched by following signatures: %s): use type casts to disambiguate", display, list(compat))
	}
	return compat[0], nil
}

// ---- native functions ----

// nativeFunctions are the native functions by name, each with its
// signatures in Cassandra's declaration order.
var nativeFunctions = map[string][]*fnSig{}

func regFn(name string, ret datatype.DataType, impl scalarFn, params ...datatype.DataType) {
	nativeFunctions[name] = append(nativeFunctions[name], &fnSig{name: name, params: params, ret: ret, impl: impl})
}

func regAgg(name string, kind aggKind, ret datatype.DataType, param datatype.DataType) {
	nativeFunctions[name] = append(nativeFunctions[name], &fnSig{name: name, params: []datatype.DataType{param}, ret: ret, agg: kind})
}

// nativeTypes are CQL3Type.Native in declaration order, varchar aside.
var nativeTypes = []datatype.DataType{
	datatype.Ascii, datatype.Bigint, datatype.Blob, datatype.Boolean, datatype.Counter, datatype.Date,
	datatype.Decimal, datatype.Double, datatype.Duration, datatype.Float, datatype.Inet, datatype.Int,
	datatype.Smallint, datatype.Varchar, datatype.Time, datatype.Timestamp, datatype.Timeuuid,
	datatype.Tinyint, datatype.Uuid, datatype.Varint,
}

// numericTypes are the types sum and avg accept, in AggregateFcts order.
var numericTypes = []datatype.DataType{
	datatype.Tinyint, datatype.Smallint, datatype.Int, datatype.Bigint, datatype.Float,
	datatype.Double, datatype.Decimal, datatype.Varint, datatype.Counter,
}

func init() {
	// Aggregates (AggregateFcts.all).
	for _, t := range numericTypes {
		regAgg("sum", aggSum, t, t)
	}
	for _, t := range numericTypes {
		regAgg("avg", aggAvg, t, t)
	}
	for _, t := range nativeTypes {
		regAgg("count", aggCount, datatype.Bigint, t)
		regAgg("max", aggMax, t, t)
		regAgg("min", aggMin, t, t)
	}

	// Time functions (TimeFcts.all).
	now := func(c *selCtx, _ [][]byte) ([]byte, error) { return newTimeUUID(c.x.now()), nil }
	regFn("now", datatype.Timeuuid, now)
	regFn("currenttimeuuid", datatype.Timeuuid, now)
	regFn("currenttimestamp", datatype.Timestamp, func(c *selCtx, _ [][]byte) ([]byte, error) {
		return binary.BigEndian.AppendUint64(nil, uint64(c.x.now().UnixMilli())), nil
	})
	regFn("currentdate", datatype.Date, func(c *selCtx, _ [][]byte) ([]byte, error) { return types.DateOf(c.x.now()), nil })
	regFn("currenttime", datatype.Time, func(c *selCtx, _ [][]byte) ([]byte, error) {
		n := c.x.now().UTC()
		d := n.Sub(time.Date(n.Year(), n.Month(), n.Day(), 0, 0, 0, 0, time.UTC))
		return binary.BigEndian.AppendUint64(nil, uint64(d.Nanoseconds())), nil
	})
	regFn("mintimeuuid", datatype.Timeuuid, timeuuidBound(false), datatype.Timestamp)
	regFn("maxtimeuuid", datatype.Timeuuid, timeuuidBound(true), datatype.Timestamp)
	regFn("dateof", datatype.Timestamp, toMillis(datatype.Timeuuid, datatype.Timestamp), datatype.Timeuuid)
	regFn("unixtimestampof", datatype.Bigint, toMillis(datatype.Timeuuid, datatype.Bigint), datatype.Timeuuid)
	regFn("todate", datatype.Date, toMillis(datatype.Timeuuid, datatype.Date), datatype.Timeuuid)
	regFn("todate", datatype.Date, toMillis(datatype.Timestamp, datatype.Date), datatype.Timestamp)
	regFn("totimestamp", datatype.Timestamp, toMillis(datatype.Timeuuid, datatype.Timestamp), datatype.Timeuuid)
	regFn("totimestamp", datatype.Timestamp, toMillis(datatype.Date, datatype.Timestamp), datatype.Date)
	regFn("tounixtimestamp", datatype.Bigint, toMillis(datatype.Timeuuid, datatype.Bigint), datatype.Timeuuid)
	regFn("tounixtimestamp", datatype.Bigint, toMillis(datatype.Timestamp, datatype.Bigint), datatype.Timestamp)
	regFn("tounixtimestamp", datatype.Bigint, toMillis(datatype.Date, datatype.Bigint), datatype.Date)

	regFn("uuid", datatype.Uuid, func(*selCtx, [][]byte) ([]byte, error) { return newRandomUUID(), nil })

	// Blob conversions (BytesConversionFcts.all): <type>asblob and
	// blobas<type> for the native types but blob and counter, and varchar.
	for _, t := range nativeTypes {
		switch t.Code() {
		case primitive.DataTypeCodeBlob, primitive.DataTypeCodeCounter:
			continue
		}
		regBlobConversions(typeName(t), t)
	}
	regBlobConversions("varchar", datatype.Varchar)
}

func regBlobConversions(name string, t datatype.DataType) {
	regFn(name+"asblob", datatype.Blob, func(_ *selCtx, a [][]byte) ([]byte, error) { return a[0], nil }, t)
	from := "blobas" + name
	regFn(from, t, func(_ *selCtx, a [][]byte) ([]byte, error) {
		if a[0] != nil {
			if err := types.ValidateValue(t, a[0], from); err != nil {
				return nil, invalidf("In call to function %s, value 0x%x is not a valid binary representation for type %s", from, a[0], typeName(t))
			}
		}
		return a[0], nil
	}, datatype.Blob)
}

func timeuuidBound(max bool) scalarFn {
	return func(_ *selCtx, a [][]byte) ([]byte, error) {
		if len(a[0]) != 8 {
			return nil, nil
		}
		return boundTimeUUID(int64(binary.BigEndian.Uint64(a[0])), max), nil
	}
}

// toMillis converts between the temporal types through milliseconds since
// the epoch (TemporalType.toTimeInMillis / fromTimeInMillis).
func toMillis(from, to datatype.DataType) scalarFn {
	return func(_ *selCtx, a [][]byte) ([]byte, error) {
		v := a[0]
		if len(v) == 0 {
			return nil, nil
		}
		var ms int64
		switch from.Code() {
		case primitive.DataTypeCodeTimeuuid:
			m, ok := timeUUIDMillis(v)
			if !ok {
				return nil, invalidf("Invalid timeuuid %s", types.ValueString(from, v))
			}
			ms = m
		case primitive.DataTypeCodeTimestamp:
			if len(v) != 8 {
				return nil, nil
			}
			ms = int64(binary.BigEndian.Uint64(v))
		case primitive.DataTypeCodeDate:
			if len(v) != 4 {
				return nil, nil
			}
			ms = (int64(binary.BigEndian.Uint32(v)) - 1<<31) * 86400000
		}
		if to.Code() == primitive.DataTypeCodeDate {
			// SimpleDateSerializer.timeInMillisToDay: toDays truncates.
			return binary.BigEndian.AppendUint32(nil, uint32(int32(ms/86400000))-1<<31), nil
		}
		return binary.BigEndian.AppendUint64(nil, uint64(ms)), nil
	}
}

// ---- casts (CastFcts) ----

func isNumeric(c primitive.DataTypeCode) bool {
	switch c {
	case primitive.DataTypeCodeTinyint, primitive.DataTypeCodeSmallint, primitive.DataTypeCodeInt,
		primitive.DataTypeCodeBigint, primitive.DataTypeCodeFloat, primitive.DataTypeCodeDouble,
		primitive.DataTypeCodeDecimal, primitive.DataTypeCodeCounter, primitive.DataTypeCodeVarint:
		return true
	}
	return false
}

func isText(c primitive.DataTypeCode) bool {
	return c == primitive.DataTypeCodeVarchar || c == primitive.DataTypeCodeText || c == primitive.DataTypeCodeAscii
}

// castFunc is the CAST conversion between two types, nil when Cassandra
// has none.
func castFunc(from, to datatype.DataType) scalarFn {
	fc, tc := from.Code(), to.Code()
	switch {
	case isNumeric(fc) && isText(tc):
		return castToText(from)
	case isNumeric(fc) && isNumeric(tc) && tc != primitive.DataTypeCodeCounter:
		return func(_ *selCtx, a [][]byte) ([]byte, error) {
			if len(a[0]) == 0 {
				return nil, nil
			}
			n, ok := decodeNumber(from, a[0])
			if !ok {
				return nil, invalidf("Invalid %s value for cast", typeName(from))
			}
			return n.convert(to)
		}
	case fc == primitive.DataTypeCodeAscii && isText(tc):
		return func(_ *selCtx, a [][]byte) ([]byte, error) { return a[0], nil }
	case isText(tc):
		switch fc {
		case primitive.DataTypeCodeInet, primitive.DataTypeCodeBoolean, primitive.DataTypeCodeTimeuuid,
			primitive.DataTypeCodeTimestamp, primitive.DataTypeCodeDate, primitive.DataTypeCodeTime,
			primitive.DataTypeCodeUuid:
			return castToText(from)
		}
	case fc == primitive.DataTypeCodeTimeuuid && (tc == primitive.DataTypeCodeDate || tc == primitive.DataTypeCodeTimestamp),
		fc == primitive.DataTypeCodeTimestamp && tc == primitive.DataTypeCodeDate,
		fc == primitive.DataTypeCodeDate && tc == primitive.DataTypeCodeTimestamp:
		return toMillis(from, to)
	}
	return nil
}

// castToText renders a value as CastAsTextFunction does (toCQLLiteral).
func castToText(from datatype.DataType) scalarFn {
	return func(_ *selCtx, a [][]byte) ([]byte, error) {
		switch {
		case a[0] == nil:
			return nil, nil
		case len(a[0]) == 0:
			return []byte("null"), nil
		}
		return []byte(types.ValueString(from, a[0])), nil
	}
}

// number is a decoded numeric value, converted with Java's Number
// semantics.
type number struct {
	kind  byte // 'i' integer, 'f' floating point, 'v' varint, 'd' decimal
	i     int64
	f     float64
	b     *big.Int
	scale int32
}

func decodeNumber(t datatype.DataType, v []byte) (number, bool) {
	switch t.Code() {
	case primitive.DataTypeCodeTinyint, primitive.DataTypeCodeSmallint, primitive.DataTypeCodeInt,
		primitive.DataTypeCodeBigint, primitive.DataTypeCodeCounter:
		i, ok := types.IntValue(v)
		return number{kind: 'i', i: i}, ok
	case primitive.DataTypeCodeFloat, primitive.DataTypeCodeDouble:
		f, ok := types.FloatValue(t, v)
		return number{kind: 'f', f: f}, ok
	case primitive.DataTypeCodeVarint:
		return number{kind: 'v', b: types.DecodeVarint(v)}, true
	case primitive.DataTypeCodeDecimal:
		u, s, ok := types.DecodeDecimal(v)
		return number{kind: 'd', b: u, scale: s}, ok
	}
	return number{}, false
}

// javaF2L is Java's (long) of a double: truncation, saturation, NaN is 0.
func javaF2L(f float64) int64 {
	switch {
	case f != f:
		return 0
	case f >= math.MaxInt64:
		return math.MaxInt64
	case f <= math.MinInt64:
		return math.MinInt64
	}
	return int64(f)
}

// javaF2I is Java's (int) of a double.
func javaF2I(f float64) int32 {
	switch {
	case f != f:
		return 0
	case f >= math.MaxInt32:
		return math.MaxInt32
	case f <= math.MinInt32:
		return math.MinInt32
	}
	return int32(f)
}

// integer returns the value truncated to an integer (BigDecimal.toBigInteger).
func (n number) bigInteger() *big.Int {
	if n.kind == 'v' {
		return n.b
	}
	if n.scale <= 0 {
		return new(big.Int).Mul(n.b, pow10(-n.scale))
	}
	return new(big.Int).Quo(n.b, pow10(n.scale))
}

func pow10(n int32) *big.Int {
	return new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(n)), nil)
}

// lowBits is BigInteger.longValue: the low 64 bits.
func lowBits(b *big.Int) int64 {
	u := new(big.Int).And(b, new(big.Int).SetUint64(math.MaxUint64)).Uint64()
	return int64(u)
}

func (n number) longValue() int64 {
	switch n.kind {
	case 'i':
		return n.i
	case 'f':
		return javaF2L(n.f)
	}
	return lowBits(n.bigInteger())
}

func (n number) intValue() int32 {
	if n.kind == 'f' {
		return javaF2I(n.f)
	}
	return int32(n.longValue())
}

func (n number) doubleValue() float64 {
	switch n.kind {
	case 'i':
		return float64(n.i)
	case 'f':
		return n.f
	case 'v':
		f, _ := new(big.Float).SetInt(n.b).Float64()
		return f
	}
	f, _ := n.decimalRat().Float64()
	return f
}

func (n number) floatValue() float32 {
	switch n.kind {
	case 'i':
		return float32(n.i)
	case 'f':
		return float32(n.f)
	case 'v':
		f, _ := new(big.Float).SetInt(n.b).Float32()
		return f
	}
	f, _ := n.decimalRat().Float32()
	return f
}

// decimalRat is a decimal number's exact value.
func (n number) decimalRat() *big.Rat {
	r := new(big.Rat).SetInt(n.b)
	if n.scale > 0 {
		return r.Quo(r, new(big.Rat).SetInt(pow10(n.scale)))
	}
	return r.Mul(r, new(big.Rat).SetInt(pow10(-n.scale)))
}

// convert serializes the number as type t, as CastFcts converts it.
func (n number) convert(t datatype.DataType) ([]byte, error) {
	switch t.Code() {
	case primitive.DataTypeCodeTinyint:
		return []byte{byte(int8(n.intValue()))}, nil
	case primitive.DataTypeCodeSmallint:
		return binary.BigEndian.AppendUint16(nil, uint16(int16(n.intValue()))), nil
	case primitive.DataTypeCodeInt:
		return binary.BigEndian.AppendUint32(nil, uint32(n.intValue())), nil
	case primitive.DataTypeCodeBigint:
		return binary.BigEndian.AppendUint64(nil, uint64(n.longValue())), nil
	case primitive.DataTypeCodeFloat:
		return binary.BigEndian.AppendUint32(nil, math.Float32bits(n.floatValue())), nil
	case primitive.DataTypeCodeDouble:
		return binary.BigEndian.AppendUint64(nil, math.Float64bits(n.doubleValue())), nil
	case primitive.DataTypeCodeVarint:
		return types.VarintBytes(big.NewInt(n.longValue())), nil
	case primitive.DataTypeCodeDecimal:
		// BigDecimal.valueOf(doubleValue()): the decimal of Double.toString.
		d := n.doubleValue()
		if math.IsNaN(d) || math.IsInf(d, 0) {
			return nil, invalidf("Cannot convert %s to a decimal", types.JavaFloatString(d, 64))
		}
		return types.DecimalBytes(types.JavaFloatString(d, 64))
	}
	return nil, invalidf("Cannot cast to %s", typeName(t))
}

// ---- aggregates (AggregateFcts) ----

type aggKind uint8

const (
	aggNone aggKind = iota
	aggCountRows
	aggCount
	aggMin
	aggMax
	aggSum
	aggAvg
)

// aggSpec is one aggregate function of a selection.
type aggSpec struct {
	kind aggKind
	typ  datatype.DataType // the argument's type (counters as bigint)
	arg  selExpr
}

// aggState is an aggregate's state for one group.
type aggState struct {
	n        int64 // rows counted, or values averaged
	i        int64 // integer sum
	overflow bool  // the integer or float sum overflowed into big or bigF
	big      *big.Int
	// Kahan summation of floating point values.
	sum, comp, simple float64
	bigF              *big.Float
	// decimal sum or average: dec scaled by 10^-scale.
	dec   *big.Int
	scale int32
	// min and max
	best, key, scratch []byte
}

func (a *aggSpec) add(st *aggState, c *selCtx, in [][]byte) error {
	if a.kind == aggCountRows {
		st.n++
		return nil
	}
	v, err := a.arg.eval(c, in)
	if err != nil || v == nil {
		return err
	}
	switch a.kind {
	case aggCount:
		st.n++
	case aggMin, aggMax:
		k, err := storage.AppendKey(st.scratch[:0], a.typ, v, false)
		if err != nil {
			k = append(st.scratch[:0], v...)
		}
		if st.best == nil || (a.kind == aggMin && bytes.Compare(k, st.key) < 0) || (a.kind == aggMax && bytes.Compare(k, st.key) > 0) {
			st.best = v
			st.key, st.scratch = k, st.key
		} else {
			st.scratch = k
		}
	case aggSum, aggAvg:
		if len(v) == 0 {
			return nil
		}
		a.accumulate(st, v)
	}
	return nil
}

func (a *aggSpec) accumulate(st *aggState, v []byte) {
	avg := a.kind == aggAvg
	switch a.typ.Code() {
	case primitive.DataTypeCodeTinyint, primitive.DataTypeCodeSmallint, primitive.DataTypeCodeInt, primitive.DataTypeCodeBigint:
		x, ok := types.IntValue(v)
		if !ok {
			return
		}
		if !avg {
			st.i += x // wraps around like Java's sum in the column's type
			return
		}
		// AvgAggregate: a long sum that switches to BigInteger on overflow.
		st.n++
		if st.overflow {
			st.big.Add(st.big, big.NewInt(x))
			return
		}
		prev := st.i
		st.i += x
		if (prev^st.i)&(x^st.i) < 0 {
			st.overflow = true
			st.big = new(big.Int).Add(big.NewInt(prev), big.NewInt(x))
		}
	case primitive.DataTypeCodeFloat, primitive.DataTypeCodeDouble:
		x, ok := types.FloatValue(a.typ, v)
		if !ok {
			return
		}
		if avg {
			st.n++
			if st.overflow {
				st.bigF.Add(st.bigF, new(big.Float).SetFloat64(x))
				return
			}
		}
		prev := st.sum
		st.simple += x
		tmp := x - st.comp
		rounded := st.sum + tmp
		st.comp = (rounded - st.sum) - tmp
		st.sum = rounded
		if avg && math.IsInf(st.sum, 0) && !math.IsInf(x, 0) {
			st.overflow = true
			st.bigF = new(big.Float).SetPrec(256).SetFloat64(prev)
			st.bigF.Add(st.bigF, new(big.Float).SetFloat64(x))
		}
	case primitive.DataTypeCodeVarint:
		if st.big == nil {
			st.big = new(big.Int)
		}
		st.big.Add(st.big, types.DecodeVarint(v))
		st.n++
	case primitive.DataTypeCodeDecimal:
		u, s, ok := types.DecodeDecimal(v)
		if !ok {
			return
		}
		if st.dec == nil {
			st.dec = new(big.Int)
		}
		if !avg {
			st.dec, st.scale = decimalAdd(st.dec, st.scale, u, s)
			return
		}
		// avg = avg + (value - avg) / count, rounded HALF_EVEN at the
		// scale of the difference.
		st.n++
		du, ds := decimalAdd(u, s, new(big.Int).Neg(st.dec), st.scale)
		q := quoHalfEven(du, st.n)
		st.dec, st.scale = decimalAdd(st.dec, st.scale, q, ds)
	}
}

// decimalAdd adds two decimals; the result has the larger scale.
func decimalAdd(a *big.Int, as int32, b *big.Int, bs int32) (*big.Int, int32) {
	switch {
	case as < bs:
		a = new(big.Int).Mul(a, pow10(bs-as))
		as = bs
	case bs < as:
		b = new(big.Int).Mul(b, pow10(as-bs))
	}
	return new(big.Int).Add(a, b), as
}

// quoHalfEven is u / n rounded half to even.
func quoHalfEven(u *big.Int, n int64) *big.Int {
	d := big.NewInt(n)
	q, r := new(big.Int).QuoRem(u, d, new(big.Int))
	r2 := new(big.Int).Abs(r)
	r2.Lsh(r2, 1)
	if c := r2.Cmp(d); c > 0 || (c == 0 && q.Bit(0) == 1) {
		if u.Sign() < 0 {
			q.Sub(q, big.NewInt(1))
		} else {
			q.Add(q, big.NewInt(1))
		}
	}
	return q
}

func (a *aggSpec) result(st *aggState) []byte {
	switch a.kind {
	case aggCountRows, aggCount:
		return binary.BigEndian.AppendUint64(nil, uint64(st.n))
	case aggMin, aggMax:
		return st.best
	}
	avg := a.kind == aggAvg
	switch a.typ.Code() {
	case primitive.DataTypeCodeTinyint, primitive.DataTypeCodeSmallint, primitive.DataTypeCodeInt, primitive.DataTypeCodeBigint:
		x := st.i
		if avg {
			switch {
			case st.n == 0:
				x = 0
			case st.overflow:
				x = lowBits(new(big.Int).Quo(st.big, big.NewInt(st.n)))
			default:
				x /= st.n
			}
		}
		bits, _ := types.IntWidth(a.typ.Code())
		return types.FixedInt(x, bits)
	case primitive.DataTypeCodeFloat, primitive.DataTypeCodeDouble:
		var f float64
		switch {
		case avg && st.n == 0:
		case st.overflow:
			f, _ = new(big.Float).Quo(st.bigF, new(big.Float).SetInt64(st.n)).Float64()
		default:
			f = st.sum + st.comp
			if math.IsNaN(f) && math.IsInf(st.simple, 0) {
				f = st.simple
			}
			if avg {
				f /= float64(st.n)
			}
		}
		if a.typ.Code() == primitive.DataTypeCodeFloat {
			return binary.BigEndian.AppendUint32(nil, math.Float32bits(float32(f)))
		}
		return binary.BigEndian.AppendUint64(nil, math.Float64bits(f))
	case primitive.DataTypeCodeVarint:
		if st.big == nil {
			return types.VarintBytes(new(big.Int))
		}
		if avg {
			return types.VarintBytes(new(big.Int).Quo(st.big, big.NewInt(st.n)))
		}
		return types.VarintBytes(st.big)
	case primitive.DataTypeCodeDecimal:
		if st.dec == nil {
			return types.EncodeDecimal(new(big.Int), 0)
		}
		return types.EncodeDecimal(st.dec, st.scale)
	}
	return nil
}

// ---- GROUP BY ----

// groupByPrefix checks a GROUP BY clause as Cassandra 4.0 does
// (SelectStatement.getAggregationSpecification) and returns the number of
// clustering columns in the group key.
func groupByPrefix(t *tableInfo, groups []statements.SelectorExpr, k *keyRestrictions, distinct bool) (int, error) {
	key := append(append([]int(nil), t.pk...), t.ck...)
	orderErr := invalidf("Group by currently only support groups of columns following their declared order in the PRIMARY KEY")
	pos, prefix := 0, 0
	for _, g := range groups {
		ref, ok := g.(*statements.ColumnRef)
		if !ok {
			return 0, invalidf("Group by is currently only supported on the columns of the PRIMARY KEY")
		}
		ci, col, err := t.column(ref.Name)
		if err != nil {
			return 0, err
		}
		if !col.isKey() {
			return 0, invalidf("Group by is currently only supported on the columns of the PRIMARY KEY, got %s", col.def.Name)
		}
		for {
			if pos >= len(key) {
				return 0, orderErr
			}
			kc := key[pos]
			pos++
			if t.cols[kc].def.Kind == storage.KindClustering {
				prefix++
			}
			if kc == ci {
				break
			}
			if !restrictedByEq(t, k, kc) {
				return 0, orderErr
			}
		}
	}
	if pos < len(key) && t.cols[key[pos]].def.Kind == storage.KindPartitionKey {
		return 0, invalidf("Group by is not supported on only a part of the partition key")
	}
	if prefix > 0 && distinct {
		return 0, invalidf("Grouping on clustering columns is not allowed for SELECT DISTINCT queries")
	}
	return prefix, nil
}

func restrictedByEq(t *tableInfo, k *keyRestrictions, col int) bool {
	eq := func(l *valueList) bool { return l != nil && l.list == nil && len(l.exprs) == 1 }
	for i, c := range t.pk {
		if c == col {
			return eq(k.pk[i])
		}
	}
	for i, c := range t.ck {
		if c == col {
			return i < len(k.ck) && eq(k.ck[i])
		}
	}
	return false
}

// sameGroup reports whether a row of clustering ck belongs to the group
// whose key prefix is g (n clustering values; nil for a static row).
func sameGroup(g, ck [][]byte, n int) bool {
	if n == 0 {
		return true
	}
	if (g == nil) != (ck == nil) {
		return false
	}
	for i := 0; i < n && i < len(ck); i++ {
		if !bytes.Equal(g[i], ck[i]) {
			return false
		}
	}
	return true
}
