package coordinator

import (
	"bytes"
	"encoding/binary"
	"strings"
	"time"

	"github.com/datastax/go-cassandra-native-protocol/datatype"
	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"

	"github.com/cqld/cqld/statements"
	"github.com/cqld/cqld/statements/functions"
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

// scalarFn is a scalar function; a *selCtx is its functions.Context.
type scalarFn = functions.Scalar

// Now is the statement's clock, for the functions that read it.
func (c *selCtx) Now() time.Time { return c.x.now() }

// Warn implements functions.Context.
func (c *selCtx) Warn(msg string) { c.x.warn(msg) }

// result is the aggregate's result for a group.
func (a *aggSpec) result(c *selCtx, st *functions.AggState) ([]byte, error) {
	if a.user != nil {
		return a.user.Result(c, st)
	}
	return a.Result(st)
}

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
func (s *selection) add(c *selCtx, in [][]byte, st []functions.AggState) error {
	for i, a := range s.aggs {
		if err := a.add(&st[i], c, in); err != nil {
			return err
		}
	}
	return nil
}

// output is the result row of a group whose first row is first.
func (s *selection) output(c *selCtx, first [][]byte, st []functions.AggState) ([][]byte, error) {
	c.agg = make([][]byte, len(s.aggs))
	for i, a := range s.aggs {
		v, err := a.result(c, &st[i])
		if err != nil {
			return nil, err
		}
		c.agg[i] = v
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

// selectors compiles a SELECT clause's selectors, appending their
// evaluators to exprs and their result columns (aliases applied) to cols;
// simple is kept true while the result row is the inputs in order.
func (c *selCompiler) selectors(sels []statements.Selector, exprs []selExpr, cols []*message.ColumnMetadata, simple bool) ([]selExpr, []*message.ColumnMetadata, bool, error) {
	for _, sel := range sels {
		it, err := c.top(sel.Expr)
		if err != nil {
			return nil, nil, false, err
		}
		name := sel.Alias
		if name == "" {
			name = it.name
		}
		if in, ok := it.e.(inputSel); !ok || int(in) != len(exprs) {
			simple = false
		}
		exprs = append(exprs, it.e)
		cols = append(cols, &message.ColumnMetadata{Keyspace: c.t.def.Keyspace, Table: c.t.def.Name, Name: name, Type: it.typ})
	}
	return exprs, cols, simple, nil
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
	fn := func(_ functions.Context, a [][]byte) ([]byte, error) {
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
	}
	switch f.Name {
	case "writetime", "ttl":
		return c.writetimeOrTTL(f)
	case "count":
		// count(*) and count(<literal>) count rows (countRows, named "count").
		if len(f.Args) == 1 && countsRows(f.Args[0]) {
			idx := c.addAgg(&aggSpec{Aggregate: functions.Aggregate{Kind: functions.AggCountRows}})
			return selItem{e: aggSel(idx), typ: datatype.Bigint, name: "count", agg: true}, nil
		}
	case "tojson":
		return c.toJSON(f)
	case "fromjson":
		if isNativeName(f.Keyspace) {
			// It takes its receiver's type, and a selection has none
			// (FunctionResolver.collectCandidates).
			return selItem{}, invalidf("fromJson() cannot be used in the selection clause of a SELECT statement")
		}
	}
	var sigs []*functions.Sig
	if f.Name == "token" && (f.Keyspace == "" || f.Keyspace == "system") {
		sigs = []*functions.Sig{c.tokenSig()}
	} else {
		var err error
		if sigs, err = c.b.lookup(f.Keyspace, f.Name); err != nil {
			return selItem{}, err
		}
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
	sig, err := functions.Resolve(display, sigs, resolveArgs(args))
	if err != nil {
		return selItem{}, err
	}
	exprs := make([]selExpr, len(args))
	names := make([]string, len(args))
	anyAgg := false
	for i, a := range args {
		if a.raw != nil {
			ex, err := c.term(a.raw, sig.Params[i])
			if err != nil {
				return selItem{}, functions.TypeError(a.name, i, sig)
			}
			exprs[i] = ex
		} else {
			exprs[i] = a.e
		}
		names[i] = a.name
		anyAgg = anyAgg || a.agg
	}
	name := sig.QualifiedName() + "(" + strings.Join(names, ", ") + ")"
	c.b.fn.use(sig)
	if sig.Agg != functions.AggNone {
		if anyAgg {
			return selItem{}, invalidf("aggregate functions cannot be used as arguments of aggregate functions")
		}
		if sig.Agg == functions.AggUser {
			a := &aggSpec{Aggregate: functions.Aggregate{Kind: sig.Agg}, user: sig.User, args: exprs}
			return selItem{e: aggSel(c.addAgg(a)), typ: sig.Ret, name: name, agg: true}, nil
		}
		a := &aggSpec{Aggregate: functions.Aggregate{Kind: sig.Agg, Type: sig.Params[0]}, arg: exprs[0]}
		if a.Type.Code() == primitive.DataTypeCodeCounter {
			a.Type = datatype.Bigint
		}
		return selItem{e: aggSel(c.addAgg(a)), typ: sig.Ret, name: name, agg: true}, nil
	}
	return selItem{e: &fnSel{args: exprs, fn: sig.Impl}, typ: sig.Ret, name: name, agg: anyAgg}, nil
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
	fn := func(_ functions.Context, args [][]byte) ([]byte, error) {
		if args[0] == nil {
			return []byte("null"), nil
		}
		return types.AppendJSONValue(nil, typ, args[0]), nil
	}
	return selItem{e: &fnSel{args: []selExpr{a.e}, fn: fn}, typ: datatype.Varchar, name: "system.tojson(" + a.name + ")", agg: a.agg}, nil
}

// tokenSig is token() for this table: the Murmur3 token of the partition
// key made of its arguments (TokenFct).
func (c *selCompiler) tokenSig() *functions.Sig {
	t := c.t
	s := &functions.Sig{Name: "token", Ret: datatype.Bigint}
	for _, ci := range t.pk {
		s.Params = append(s.Params, t.cols[ci].typ)
	}
	s.Impl = func(_ functions.Context, args [][]byte) ([]byte, error) {
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
	if functions.SameType(in.typ, to) {
		return in, nil // a cast to its own type is ignored, name included
	}
	fn := functions.Cast(in.typ, to)
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

// resolveArgs are a call's compiled arguments as signature resolution
// sees them.
func resolveArgs(items []selItem) []functions.Arg {
	args := make([]functions.Arg, len(items))
	for i, it := range items {
		args[i] = functions.Arg{Raw: it.raw, Type: it.typ, Name: it.name}
	}
	return args
}

// aggSpec is one aggregate function of a selection: the function, and
// the selector whose values it folds.
type aggSpec struct {
	functions.Aggregate
	arg selExpr // nil for count(*)
	// user is a user-defined aggregate, folding args.
	user *functions.UserAggregate
	args []selExpr
}

func (a *aggSpec) add(st *functions.AggState, c *selCtx, in [][]byte) error {
	if a.user != nil {
		vs := make([][]byte, len(a.args))
		for i, e := range a.args {
			v, err := e.eval(c, in)
			if err != nil {
				return err
			}
			vs[i] = v
		}
		return a.user.Add(c, st, vs)
	}
	var v []byte
	if a.Kind != functions.AggCountRows {
		var err error
		if v, err = a.arg.eval(c, in); err != nil {
			return err
		}
	}
	a.Add(st, v)
	return nil
}

// typeName is t as CQL spells it in messages.
func typeName(t datatype.DataType) string { return statements.TypeString(t, false) }

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
