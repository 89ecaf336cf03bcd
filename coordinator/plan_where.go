package coordinator

import (
	"bytes"
	"encoding/binary"
	"sort"
	"strings"

	"github.com/datastax/go-cassandra-native-protocol/datatype"
	"github.com/datastax/go-cassandra-native-protocol/primitive"

	"github.com/cqld/cqld/statements"
	"github.com/cqld/cqld/statements/types"
	"github.com/cqld/cqld/storage"
)

// valueList is the right-hand side of = (one value) or IN (several, or one
// bind marker for the whole list).
type valueList struct {
	exprs []valueExpr
	list  *markerExpr // IN ?: a list<T> bound as one value
	// width > 1: a multi-column (c1, ..., cn) = or IN on this and the next
	// width-1 clustering columns, each value a serialized tuple; those
	// columns' entries are covered placeholders.
	width   int
	covered bool
	eq      bool // from =, not IN
}

func (l valueList) eval(x *execution) ([][]byte, error) {
	if l.list != nil {
		if x.unset[l.list.index] {
			return nil, invalidf("Invalid unset value for IN restriction")
		}
		return splitList(x.values[l.list.index])
	}
	out := make([][]byte, 0, len(l.exprs))
	for _, e := range l.exprs {
		v, err := e.eval(x)
		if err == errUnset {
			return nil, invalidf("Invalid unset value for restriction")
		}
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// sliceBound is one side of a clustering slice on a single column.
type sliceBound struct {
	value     valueExpr
	more      []valueExpr // the next columns' values of a multi-column bound
	inclusive bool
}

// eval returns the bound's values, one per column it covers.
func (sb *sliceBound) eval(x *execution) ([][]byte, error) {
	out := make([][]byte, 0, 1+len(sb.more))
	for _, e := range append([]valueExpr{sb.value}, sb.more...) {
		v, err := e.eval(x)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// colFilter is a restriction on a regular or static column (or any column
// not usable as a key restriction), applied to each row with ALLOW
// FILTERING.
type colFilter struct {
	col  int
	op   statements.Operator
	vals valueList
}

// keyRestrictions is a WHERE clause split the way the data is laid out.
type keyRestrictions struct {
	pk      []*valueList // per partition key column; nil when unrestricted
	ck      []*valueList // equality/IN prefix of the clustering columns
	lower   *sliceBound  // slice on clustering column len(ck), in value order
	upper   *sliceBound
	filters []colFilter
	// pkMarkers are the markers binding each partition key column by =.
	pkMarkers []int
	// tokenLower and tokenUpper restrict token(partition key).
	tokenLower, tokenUpper *sliceBound
	// gapErr refuses clustering restrictions that follow an unrestricted
	// clustering column; gapFilters are those restrictions as row filters,
	// which a SELECT with ALLOW FILTERING uses instead.
	gapErr     error
	gapFilters []colFilter
}

// tokenRestriction records token(k1, ..., kn) op value. The columns must be
// the partition key, in order.
func (k *keyRestrictions) tokenRestriction(t *tableInfo, r *statements.Relation, b *binder) error {
	names := make([]string, len(t.pk))
	for i, c := range t.pk {
		names[i] = t.cols[c].def.Name
	}
	if len(r.Columns) != len(names) {
		return invalidf("The token() function must be applied to all partition key components or none of them")
	}
	for i, c := range r.Columns {
		if c != names[i] {
			return invalidf("The token function arguments must be in the partition key order: %s", strings.Join(names, ", "))
		}
	}
	var v valueExpr
	if f, ok := r.Value.(*statements.FunctionTerm); ok && strings.EqualFold(f.Name, "token") && f.Keyspace == "" {
		// token(literal, ...): the token of a partition key given by value.
		if len(f.Args) != len(t.pk) {
			return invalidf("Invalid number of arguments in call to function token: %d required but %d provided", len(t.pk), len(f.Args))
		}
		te := &tokenExpr{t: t}
		for i, a := range f.Args {
			col := &t.cols[t.pk[i]]
			ex, err := b.term(a, col.typ, col.def.Name)
			if err != nil {
				return err
			}
			te.args = append(te.args, ex)
		}
		v = te
	} else {
		var err error
		if v, err = b.term(r.Value, datatype.Bigint, "partition key token"); err != nil {
			return err
		}
	}
	set := func(dst **sliceBound, incl bool) error {
		if *dst != nil {
			return invalidf("More than one restriction was found for the %s bound on token", map[bool]string{true: "start", false: "end"}[dst == &k.tokenLower])
		}
		*dst = &sliceBound{value: v, inclusive: incl}
		return nil
	}
	switch r.Op {
	case statements.OpGt, statements.OpGte:
		return set(&k.tokenLower, r.Op == statements.OpGte)
	case statements.OpLt, statements.OpLte:
		return set(&k.tokenUpper, r.Op == statements.OpLte)
	case statements.OpEq:
		if err := set(&k.tokenLower, true); err != nil {
			return err
		}
		return set(&k.tokenUpper, true)
	}
	return invalidf("%s is not supported on token restrictions", r.Op)
}

// tokenRange evaluates the token restrictions into inclusive bounds; ok is
// false when no token can match.
func (k *keyRestrictions) tokenRange(x *execution) (lo, hi *int64, ok bool, err error) {
	eval := func(sb *sliceBound) (int64, error) {
		v, err := sb.value.eval(x)
		if err != nil {
			return 0, err
		}
		if len(v) != 8 {
			return 0, invalidf("Invalid null value for partition key token")
		}
		return int64(binary.BigEndian.Uint64(v)), nil
	}
	if k.tokenLower != nil {
		n, err := eval(k.tokenLower)
		if err != nil {
			return nil, nil, false, err
		}
		if !k.tokenLower.inclusive {
			if n == 1<<63-1 {
				return nil, nil, false, nil
			}
			n++
		}
		lo = &n
	}
	if k.tokenUpper != nil {
		n, err := eval(k.tokenUpper)
		if err != nil {
			return nil, nil, false, err
		}
		if !k.tokenUpper.inclusive {
			if n == -1<<63 {
				return nil, nil, false, nil
			}
			n--
		}
		hi = &n
	}
	if lo != nil && hi != nil && *lo > *hi {
		return lo, hi, false, nil
	}
	return lo, hi, true, nil
}

func (k *keyRestrictions) pkComplete() bool {
	for _, v := range k.pk {
		if v == nil {
			return false
		}
	}
	return true
}

// onePartition reports whether the restrictions name exactly one
// partition: every partition key column by =.
func (k *keyRestrictions) onePartition() bool {
	for _, v := range k.pk {
		if v == nil || !v.eq {
			return false
		}
	}
	return k.tokenLower == nil && k.tokenUpper == nil
}

// oneRow reports whether the restrictions name at most one row of the
// partition: every clustering column by =, nothing filtered.
func (k *keyRestrictions) oneRow(t *tableInfo) bool {
	if len(k.ck) != len(t.ck) || k.lower != nil || k.upper != nil || len(k.filters) > 0 || k.gapErr != nil || len(k.gapFilters) > 0 {
		return false
	}
	for _, v := range k.ck {
		if v == nil || !v.eq {
			return false
		}
	}
	return true
}

// pkIn reports whether a partition key column is restricted by IN, which
// Cassandra reads as = when it lists one value.
func (k *keyRestrictions) pkIn() bool {
	for _, v := range k.pk {
		if v != nil && (v.list != nil || len(v.exprs) > 1) {
			return true
		}
	}
	return false
}

func (k *keyRestrictions) pkAny() bool {
	for _, v := range k.pk {
		if v != nil {
			return true
		}
	}
	return false
}

// analyzeWhere splits where into key restrictions and filters.
func analyzeWhere(t *tableInfo, where []statements.Relation, b *binder) (*keyRestrictions, error) {
	k := &keyRestrictions{pk: make([]*valueList, len(t.pk))}
	ckEq := make([]*valueList, len(t.ck))
	ckPos := map[int]int{}
	for i, c := range t.ck {
		ckPos[c] = i
	}
	pkPos := map[int]int{}
	for i, c := range t.pk {
		pkPos[c] = i
	}
	var sliceCol = -1
	for i := range where {
		r := &where[i]
		if r.Token {
			if err := k.tokenRestriction(t, r, b); err != nil {
				return nil, err
			}
			continue
		}
		if len(r.Columns) != 1 {
			if err := k.multiColumn(t, r, b, ckPos, &sliceCol, ckEq); err != nil {
				return nil, err
			}
			continue
		}
		ci, col, err := t.column(r.Columns[0])
		if err != nil {
			return nil, err
		}
		name := col.def.Name
		if r.MapKey != nil || r.Op == statements.OpContains || r.Op == statements.OpContainsKey {
			f, err := collectionFilter(ci, col, r, b)
			if err != nil {
				return nil, err
			}
			k.filters = append(k.filters, f)
			continue
		}
		switch r.Op {
		case statements.OpEq, statements.OpIn:
			vl, err := compileValueList(r, col.typ, name, b)
			if err != nil {
				return nil, err
			}
			if p, ok := pkPos[ci]; ok {
				if k.pk[p] != nil {
					return nil, invalidf("%s cannot be restricted by more than one relation if it includes an Equal", name)
				}
				k.pk[p] = vl
				continue
			}
			if p, ok := ckPos[ci]; ok {
				if ckEq[p] != nil {
					return nil, invalidf("%s cannot be restricted by more than one relation if it includes an Equal", name)
				}
				ckEq[p] = vl
				continue
			}
			k.filters = append(k.filters, colFilter{col: ci, op: r.Op, vals: *vl})
		case statements.OpLt, statements.OpLte, statements.OpGt, statements.OpGte, statements.OpNeq:
			v, err := b.term(r.Value, col.typ, name)
			if err != nil {
				return nil, err
			}
			if p, ok := ckPos[ci]; ok && r.Op != statements.OpNeq {
				if sliceCol >= 0 && sliceCol != p {
					return nil, invalidf("Clustering column \"%s\" cannot be restricted (preceding column \"%s\" is restricted by a non-EQ relation)", name, t.cols[t.ck[sliceCol]].def.Name)
				}
				sliceCol = p
				bound := &sliceBound{value: v, inclusive: r.Op == statements.OpLte || r.Op == statements.OpGte}
				if r.Op == statements.OpGt || r.Op == statements.OpGte {
					if k.lower != nil {
						return nil, invalidf("More than one restriction was found for the start bound on %s", name)
					}
					k.lower = bound
				} else {
					if k.upper != nil {
						return nil, invalidf("More than one restriction was found for the end bound on %s", name)
					}
					k.upper = bound
				}
				continue
			}
			if _, ok := pkPos[ci]; ok {
				return nil, invalidf("Only EQ and IN relation are supported on the partition key (unless you use the token() function)")
			}
			k.filters = append(k.filters, colFilter{col: ci, op: r.Op, vals: valueList{exprs: []valueExpr{v}}})
		default:
			return nil, invalidf("%s restrictions are not supported yet", r.Op)
		}
	}
	// The clustering prefix: equalities up to the first gap; a slice must
	// follow them directly.
	n := 0
	for n < len(ckEq) && ckEq[n] != nil {
		n++
	}
	// Restrictions past the gap cannot bound a slice; with ALLOW FILTERING
	// a SELECT applies them to each row, anything else refuses them.
	for i := n; i < len(ckEq); i++ {
		if ckEq[i] != nil {
			if ckEq[i].width > 1 {
				return nil, invalidf("PRIMARY KEY column \"%s\" cannot be restricted as preceding column \"%s\" is not restricted", t.cols[t.ck[i]].def.Name, t.cols[t.ck[n]].def.Name)
			}
			if k.gapErr == nil {
				k.gapErr = invalidf("PRIMARY KEY column \"%s\" cannot be restricted as preceding column \"%s\" is not restricted", t.cols[t.ck[i]].def.Name, t.cols[t.ck[n]].def.Name)
			}
			k.gapFilters = append(k.gapFilters, colFilter{col: t.ck[i], op: statements.OpIn, vals: *ckEq[i]})
		}
	}
	if sliceCol >= 0 && sliceCol != n {
		if sliceCol < n {
			return nil, invalidf("Clustering column \"%s\" cannot be restricted by both an equality and an inequality relation", t.cols[t.ck[sliceCol]].def.Name)
		}
		if k.gapErr == nil {
			k.gapErr = invalidf("PRIMARY KEY column \"%s\" cannot be restricted as preceding column \"%s\" is not restricted", t.cols[t.ck[sliceCol]].def.Name, t.cols[t.ck[n]].def.Name)
		}
		if (k.lower != nil && k.lower.more != nil) || (k.upper != nil && k.upper.more != nil) {
			return nil, k.gapErr
		}
		for _, b := range []struct {
			sb    *sliceBound
			lower bool
		}{{k.lower, true}, {k.upper, false}} {
			if b.sb == nil {
				continue
			}
			op := map[[2]bool]statements.Operator{{true, true}: statements.OpGte, {true, false}: statements.OpGt, {false, true}: statements.OpLte, {false, false}: statements.OpLt}[[2]bool{b.lower, b.sb.inclusive}]
			k.gapFilters = append(k.gapFilters, colFilter{col: t.ck[sliceCol], op: op, vals: valueList{exprs: []valueExpr{b.sb.value}}})
		}
		k.lower, k.upper = nil, nil
	}
	k.ck = ckEq[:n]
	return k, nil
}

func compileValueList(r *statements.Relation, typ datatype.DataType, name string, b *binder) (*valueList, error) {
	if r.Op == statements.OpEq {
		v, err := b.term(r.Value, typ, name)
		if err != nil {
			return nil, err
		}
		return &valueList{exprs: []valueExpr{v}, eq: true}, nil
	}
	switch v := r.Value.(type) {
	case *statements.ListLiteral:
		vl := &valueList{}
		for _, e := range v.Elems {
			ex, err := b.term(e, typ, name)
			if err != nil {
				return nil, err
			}
			vl.exprs = append(vl.exprs, ex)
		}
		return vl, nil
	case *statements.BindMarker:
		m, err := b.bind(v, datatype.NewList(typ), "in("+name+")")
		if err != nil {
			return nil, err
		}
		return &valueList{list: &m}, nil
	}
	return nil, invalidf("Invalid IN restriction on %s", name)
}

// cartesian returns every combination of one fragment (the values of one
// or more consecutive columns) per group.
func cartesian(groups [][][][]byte) [][][]byte {
	out := [][][]byte{nil}
	for _, g := range groups {
		var next [][][]byte
		for _, prefix := range out {
			for _, frag := range g {
				combo := append(append([][]byte(nil), prefix...), frag...)
				next = append(next, combo)
			}
		}
		out = next
	}
	return out
}

// evalKeys evaluates restricted key columns into their value combinations;
// null and empty partition key values are refused as Cassandra does.
func evalKeys(t *tableInfo, lists []*valueList, cols []int, x *execution) ([][][]byte, error) {
	if singleValues(lists) {
		// One value per column, the common case: one combination, in
		// one allocation for short keys.
		blk := &struct {
			outer [1][][]byte
			inner [4][]byte
		}{}
		combo := blk.inner[:0]
		if len(lists) > len(blk.inner) {
			combo = make([][]byte, 0, len(lists))
		}
		combo = combo[:len(lists)]
		for i, l := range lists {
			v, err := l.exprs[0].eval(x)
			switch {
			case err == errUnset:
				return nil, invalidf("Invalid unset value for restriction")
			case err != nil:
				return nil, err
			case v == nil:
				return nil, invalidf("Invalid null value in condition for column %s", t.cols[cols[i]].def.Name)
			}
			combo[i] = v
		}
		blk.outer[0] = combo
		return blk.outer[:], nil
	}
	groups := make([][][][]byte, 0, len(lists))
	for i, l := range lists {
		if l.covered {
			continue
		}
		vs, err := l.eval(x)
		if err != nil {
			return nil, err
		}
		var frags [][][]byte
		for _, v := range dedupe(vs) {
			frag := [][]byte{v}
			if l.width > 1 {
				if frag, err = splitTuple(v, l.width); err != nil {
					return nil, err
				}
			}
			for j, e := range frag {
				if e == nil {
					return nil, invalidf("Invalid null value in condition for column %s", t.cols[cols[i+j]].def.Name)
				}
			}
			frags = append(frags, frag)
		}
		groups = append(groups, frags)
	}
	return cartesian(groups), nil
}

// singleValues reports whether lists restrict each column to one value
// (and there is at least one).
func singleValues(lists []*valueList) bool {
	for _, l := range lists {
		if l.covered || l.width > 1 || l.list != nil || len(l.exprs) != 1 {
			return false
		}
	}
	return len(lists) > 0
}

// splitTuple splits a serialized tuple of n elements (a null element is
// nil).
func splitTuple(v []byte, n int) ([][]byte, error) {
	if v == nil {
		return nil, invalidf("Invalid null value for multi-column restriction")
	}
	out := make([][]byte, n)
	for i := range out {
		if len(v) < 4 {
			return nil, invalidf("Invalid tuple value for multi-column restriction")
		}
		l := int32(binary.BigEndian.Uint32(v))
		v = v[4:]
		if l < 0 {
			continue
		}
		if int(l) > len(v) {
			return nil, invalidf("Invalid tuple value for multi-column restriction")
		}
		out[i], v = v[:l], v[l:]
	}
	if len(v) != 0 {
		return nil, invalidf("Invalid tuple value for multi-column restriction")
	}
	return out, nil
}

func dedupe(vs [][]byte) [][]byte {
	out := vs[:0:0]
	seen := map[string]bool{}
	for _, v := range vs {
		if !seen[string(v)] {
			seen[string(v)] = true
			out = append(out, v)
		}
	}
	return out
}

// slices turns the clustering restrictions into storage slices, one per
// combination of IN values, in clustering order.
func (k *keyRestrictions) slices(t *tableInfo, x *execution) ([]storage.Slice, error) {
	prefixes, err := evalKeys(t, k.ck, t.ck, x)
	if err != nil {
		return nil, err
	}
	if len(prefixes) == 0 {
		return nil, nil
	}
	// Rows come back in clustering order whatever the order of IN values.
	if len(prefixes) > 1 {
		enc := make([][]byte, len(prefixes))
		for i, p := range prefixes {
			enc[i], _ = t.encodeClustering(p)
		}
		sort.Sort(byEncoding{prefixes, enc})
	}
	var lo, hi [][]byte
	var loIncl, hiIncl bool
	if k.lower != nil {
		if lo, err = k.lower.eval(x); err != nil {
			return nil, err
		}
		loIncl = k.lower.inclusive
	}
	if k.upper != nil {
		if hi, err = k.upper.eval(x); err != nil {
			return nil, err
		}
		hiIncl = k.upper.inclusive
	}
	desc := len(k.ck) < len(t.ck) && t.st.ClusteringDesc[len(k.ck)]
	out := make([]storage.Slice, 0, len(prefixes))
	for _, p := range prefixes {
		s := storage.Slice{}
		if len(p) > 0 || k.lower != nil || k.upper != nil {
			s.Start = &storage.Bound{Prefix: p, Inclusive: true}
			s.End = &storage.Bound{Prefix: p, Inclusive: true}
		}
		// A slice in value order becomes bounds in clustering order: on a
		// DESC column the lower value bound is the end.
		lower, upper := k.lower != nil, k.upper != nil
		if desc {
			lower, upper = upper, lower
			lo, hi, loIncl, hiIncl = hi, lo, hiIncl, loIncl
		}
		if lower {
			s.Start = &storage.Bound{Prefix: append(append([][]byte(nil), p...), lo...), Inclusive: loIncl}
		}
		if upper {
			s.End = &storage.Bound{Prefix: append(append([][]byte(nil), p...), hi...), Inclusive: hiIncl}
		}
		if desc { // restore for the next prefix
			lo, hi, loIncl, hiIncl = hi, lo, hiIncl, loIncl
		}
		out = append(out, s)
	}
	return out, nil
}

// multiColumn records (c1, ..., cn) op value on consecutive clustering
// columns: = fixes each column, a slice bounds the tuple in clustering
// order (all the columns must share one direction).
func (k *keyRestrictions) multiColumn(t *tableInfo, r *statements.Relation, b *binder, ckPos map[int]int, sliceCol *int, ckEq []*valueList) error {
	n := len(r.Columns)
	first := -1
	types := make([]datatype.DataType, n)
	names := make([]string, n)
	for i, name := range r.Columns {
		ci, col, err := t.column(name)
		if err != nil {
			return err
		}
		pos, ok := ckPos[ci]
		if !ok {
			return invalidf("Multi-column relations can only be applied to clustering columns but was applied to: %s", name)
		}
		if i == 0 {
			first = pos
		} else if pos != first+i {
			return invalidf("Clustering columns must appear in the PRIMARY KEY order in multi-column relations: (%s)", strings.Join(r.Columns, ", "))
		}
		if t.st.ClusteringDesc[pos] != t.st.ClusteringDesc[first] {
			return invalidf("Multi-column slices over columns of mixed clustering order are not supported yet")
		}
		types[i], names[i] = col.typ, name
	}
	label := "(" + strings.Join(names, ",") + ")"
	if r.Op == statements.OpIn {
		return k.multiColumnIn(r, b, first, names, types, label, ckEq)
	}
	var exprs []valueExpr
	switch v := r.Value.(type) {
	case *statements.TupleLiteral:
		if len(v.Elems) != n {
			return invalidf("Expected %d elements in value tuple, but got %d: %s", n, len(v.Elems), label)
		}
		for i, e := range v.Elems {
			ex, err := b.term(e, types[i], names[i])
			if err != nil {
				return err
			}
			exprs = append(exprs, ex)
		}
	case *statements.BindMarker:
		m, err := b.bind(v, datatype.NewTuple(types...), label)
		if err != nil {
			return err
		}
		for i := range types {
			exprs = append(exprs, tupleElemExpr{m: m, i: i})
		}
	default:
		return invalidf("Invalid value for multi-column relation %s", label)
	}
	switch r.Op {
	case statements.OpEq:
		for i, e := range exprs {
			if ckEq[first+i] != nil {
				return invalidf("%s cannot be restricted by more than one relation if it includes an Equal", names[i])
			}
			ckEq[first+i] = &valueList{exprs: []valueExpr{e}}
		}
		return nil
	case statements.OpGt, statements.OpGte, statements.OpLt, statements.OpLte:
		if *sliceCol >= 0 && *sliceCol != first {
			return invalidf("Column \"%s\" cannot be restricted by two inequalities not starting with the same column", names[0])
		}
		*sliceCol = first
		sb := &sliceBound{value: exprs[0], more: exprs[1:], inclusive: r.Op == statements.OpGte || r.Op == statements.OpLte}
		if r.Op == statements.OpGt || r.Op == statements.OpGte {
			if k.lower != nil {
				return invalidf("More than one restriction was found for the start bound on %s", names[0])
			}
			k.lower = sb
		} else {
			if k.upper != nil {
				return invalidf("More than one restriction was found for the end bound on %s", names[0])
			}
			k.upper = sb
		}
		return nil
	}
	return invalidf("%s is not supported on multi-column relations yet", r.Op)
}

// tupleElemExpr is one element of a bound tuple value.
type tupleElemExpr struct {
	m markerExpr
	i int
}

func (e tupleElemExpr) eval(x *execution) ([]byte, error) {
	v, err := e.m.eval(x)
	if err != nil || v == nil {
		return nil, err
	}
	rest := v
	for j := 0; ; j++ {
		b, r, ok := types.ReadBytes(rest)
		if !ok {
			return nil, nil // a missing trailing element is null
		}
		if j == e.i {
			return b, nil
		}
		rest = r
	}
}

// tokenExpr is token(v1, ..., vn) of a partition key given by its values.
type tokenExpr struct {
	t    *tableInfo
	args []valueExpr
}

func (e *tokenExpr) eval(x *execution) ([]byte, error) {
	vals := make([][]byte, len(e.args))
	for i, a := range e.args {
		v, err := a.eval(x)
		if err != nil {
			return nil, err
		}
		if v == nil {
			return nil, invalidf("Invalid null value for partition key part %s", e.t.cols[e.t.pk[i]].def.Name)
		}
		vals[i] = v
	}
	return binary.BigEndian.AppendUint64(nil, uint64(storage.Token(e.t.partitionKey(vals)))), nil
}

// byEncoding sorts clustering prefixes by their encodings, computed once.
type byEncoding struct {
	prefixes [][][]byte
	enc      [][]byte
}

func (b byEncoding) Len() int           { return len(b.prefixes) }
func (b byEncoding) Less(i, j int) bool { return bytes.Compare(b.enc[i], b.enc[j]) < 0 }
func (b byEncoding) Swap(i, j int) {
	b.prefixes[i], b.prefixes[j] = b.prefixes[j], b.prefixes[i]
	b.enc[i], b.enc[j] = b.enc[j], b.enc[i]
}

// multiColumnIn records (c1, ..., cn) IN ((v1, ..., vn), ...), IN (?, ...)
// of tuples, or IN ? (one list of tuples) on the clustering columns from
// first on.
func (k *keyRestrictions) multiColumnIn(r *statements.Relation, b *binder, first int, names []string, types []datatype.DataType, label string, ckEq []*valueList) error {
	for i, name := range names {
		if prev := ckEq[first+i]; prev != nil {
			// Cassandra names the kind of the restriction met first.
			if prev.list == nil && prev.width == 0 && !prev.covered && len(prev.exprs) == 1 {
				return invalidf("%s cannot be restricted by more than one relation if it includes an Equal", name)
			}
			return invalidf("%s cannot be restricted by more than one relation if it includes a IN", name)
		}
	}
	tt := datatype.NewTuple(types...)
	l := &valueList{width: len(names)}
	switch v := r.Value.(type) {
	case *statements.ListLiteral:
		for _, e := range v.Elems {
			if tl, ok := e.(*statements.TupleLiteral); ok && len(tl.Elems) != len(names) {
				return invalidf("Expected %d elements in value tuple, but got %d: %s", len(names), len(tl.Elems), label)
			}
			ex, err := b.term(e, tt, label)
			if err != nil {
				return err
			}
			l.exprs = append(l.exprs, ex)
		}
	case *statements.BindMarker:
		m, err := b.bind(v, datatype.NewList(tt), "in("+strings.Join(names, ",")+")")
		if err != nil {
			return err
		}
		l.list = &m
	default:
		return invalidf("Invalid value for multi-column relation %s", label)
	}
	ckEq[first] = l
	for i := 1; i < len(names); i++ {
		ckEq[first+i] = &valueList{covered: true}
	}
	return nil
}

// splitList decodes a serialized list<T> (v3+ layout) into its elements.
func splitList(b []byte) ([][]byte, error) {
	if b == nil {
		return nil, invalidf("Invalid null value for IN restriction")
	}
	bad := invalidf("Invalid list value for IN restriction")
	if len(b) < 4 {
		return nil, bad
	}
	n := int(int32(binary.BigEndian.Uint32(b)))
	b = b[4:]
	if n < 0 || n > len(b)/4 {
		return nil, bad
	}
	out := make([][]byte, 0, n)
	for i := 0; i < n; i++ {
		if len(b) < 4 {
			return nil, bad
		}
		l := int(int32(binary.BigEndian.Uint32(b)))
		b = b[4:]
		if l < 0 {
			out = append(out, nil)
			continue
		}
		if l > len(b) {
			return nil, bad
		}
		out = append(out, b[:l])
		b = b[l:]
	}
	return out, nil
}

// opMapEntry is the restriction m[key] = value: its values are the key
// and the value.
const opMapEntry statements.Operator = "[key] ="

// collectionFilter compiles CONTAINS, CONTAINS KEY and m[key] = value on
// column col, with Cassandra 4.0's checks (SingleColumnRelation).
func collectionFilter(ci int, col *colInfo, r *statements.Relation, b *binder) (colFilter, error) {
	name := col.def.Name
	if r.MapKey != nil {
		mt, isMap := col.typ.(*datatype.Map)
		switch {
		case col.typ.Code() == primitive.DataTypeCodeList:
			return colFilter{}, invalidf("Indexes on list entries (%s[index] = value) are not currently supported.", name)
		case !isMap:
			return colFilter{}, invalidf("Column %s cannot be used as a map", name)
		case col.frozen:
			return colFilter{}, invalidf("Map-entry equality predicates on frozen map column %s are not supported", name)
		case r.Op != statements.OpEq:
			return colFilter{}, invalidf("Only EQ relations are supported on map entries")
		}
		key, err := b.term(r.MapKey, mt.KeyType, "key("+name+")")
		if err != nil {
			return colFilter{}, err
		}
		val, err := b.term(r.Value, mt.ValueType, "value("+name+")")
		if err != nil {
			return colFilter{}, err
		}
		return colFilter{col: ci, op: opMapEntry, vals: valueList{exprs: []valueExpr{key, val}}}, nil
	}
	var elem datatype.DataType
	switch ct := col.typ.(type) {
	case *datatype.List:
		elem = ct.ElementType
	case *datatype.Set:
		elem = ct.ElementType
	case *datatype.Map:
		elem = ct.ValueType
		if r.Op == statements.OpContainsKey {
			elem = ct.KeyType
		}
	default:
		return colFilter{}, invalidf("Cannot use %s on non-collection column %s", r.Op, name)
	}
	if r.Op == statements.OpContainsKey && col.typ.Code() != primitive.DataTypeCodeMap {
		return colFilter{}, invalidf("Cannot use CONTAINS KEY on non-map column %s", name)
	}
	label := "value(" + name + ")"
	if r.Op == statements.OpContainsKey {
		label = "key(" + name + ")"
	}
	v, err := b.term(r.Value, elem, label)
	if err != nil {
		return colFilter{}, err
	}
	return colFilter{col: ci, op: r.Op, vals: valueList{exprs: []valueExpr{v}}}, nil
}

// matchCollection applies CONTAINS, CONTAINS KEY or m[key] = value to a
// collection value v.
func matchCollection(typ datatype.DataType, op statements.Operator, v []byte, args [][]byte) bool {
	if v == nil || len(args) == 0 || args[0] == nil || (op == opMapEntry && (len(args) < 2 || args[1] == nil)) {
		return false
	}
	found := false
	var key []byte
	isMap := typ.Code() == primitive.DataTypeCodeMap
	visitKey := func(e []byte) error {
		key = e
		if !isMap || op == statements.OpContainsKey {
			found = found || bytes.Equal(e, args[0])
		}
		return nil
	}
	var visitValue func([]byte) error
	if isMap {
		visitValue = func(e []byte) error {
			switch op {
			case statements.OpContains:
				found = found || bytes.Equal(e, args[0])
			case opMapEntry:
				found = found || (bytes.Equal(key, args[0]) && bytes.Equal(e, args[1]))
			}
			return nil
		}
	}
	if types.WalkCollection(v, visitKey, visitValue) != nil {
		return false
	}
	return found
}

// matchFilter applies a non-key restriction to a value (ALLOW FILTERING).
func matchFilter(typ datatype.DataType, op statements.Operator, v []byte, allowed [][]byte) bool {
	switch op {
	case statements.OpContains, statements.OpContainsKey, opMapEntry:
		return matchCollection(typ, op, v, allowed)
	case statements.OpEq, statements.OpIn:
		for _, a := range allowed {
			if v != nil && a != nil && bytes.Equal(v, a) {
				return true
			}
		}
		return false
	}
	if v == nil || len(allowed) == 0 || allowed[0] == nil {
		return false
	}
	ev, err1 := storage.AppendKey(nil, typ, v, false)
	ea, err2 := storage.AppendKey(nil, typ, allowed[0], false)
	if err1 != nil || err2 != nil {
		return false
	}
	c := bytes.Compare(ev, ea)
	switch op {
	case statements.OpNeq:
		return c != 0
	case statements.OpLt:
		return c < 0
	case statements.OpLte:
		return c <= 0
	case statements.OpGt:
		return c > 0
	case statements.OpGte:
		return c >= 0
	}
	return false
}
