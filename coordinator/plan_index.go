package coordinator

import (
	"github.com/datastax/go-cassandra-native-protocol/datatype"

	"github.com/cqld/cqld/statements"
	"github.com/cqld/cqld/storage"
)

// indexPlan is how a SELECT uses the secondary indexes of its table.
type indexPlan struct {
	uses bool // an = restriction on an indexed column chooses the rows
	// restricted counts the restricted columns the index query has to
	// check, as Cassandra's StatementRestrictions.needFiltering counts
	// them: more than one needs ALLOW FILTERING.
	restricted int
	// name is the index a scan reads, with the value it looks up; ""
	// when the query reads partitions by key instead.
	name  string
	value valueList
	// elements is how the looked-up value is made from value's for an
	// index of a collection's elements (storage.Table.ElementIndexValue);
	// nil for an index of whole values.
	elements func(t *tableInfo, vs [][]byte) ([]byte, error)
}

// choose picks the index to read for an = restriction on column col: the
// first one found.
func (ix *indexPlan) choose(t *tableInfo, col int, vals valueList) {
	if ix.name != "" {
		return
	}
	for _, d := range t.def.Indexes {
		if d.Column == t.cols[col].def.Name && d.Elements == "" {
			ix.name, ix.value = d.Name, vals
			return
		}
	}
}

// chooseElements picks the index of a collection's elements that serves
// restriction f (CONTAINS: values, CONTAINS KEY: keys, m[key] = value:
// entries), as Cassandra picks the index that supports the expression.
func (ix *indexPlan) chooseElements(t *tableInfo, f colFilter) {
	want := map[statements.Operator]string{statements.OpContains: "values", statements.OpContainsKey: "keys", opMapEntry: "entries"}[f.op]
	if ix.name != "" || want == "" {
		return
	}
	col := &t.cols[f.col]
	var d *storage.IndexDef
	for i := range t.def.Indexes {
		if e := &t.def.Indexes[i]; e.Column == col.def.Name && e.Elements == want {
			d = e
		}
	}
	if d == nil {
		return
	}
	var keyType, elemType datatype.DataType
	switch ct := col.typ.(type) {
	case *datatype.Map:
		keyType = ct.KeyType
	case *datatype.Set:
		elemType = ct.ElementType
	}
	op, name := f.op, d.Name
	ix.name, ix.value = name, f.vals
	ix.elements = func(t *tableInfo, vs [][]byte) ([]byte, error) {
		switch op {
		case statements.OpContainsKey:
			return t.st.ElementIndexValue(name, keyType, vs[0], nil, nil)
		case opMapEntry:
			return t.st.ElementIndexValue(name, keyType, vs[0], vs[1], nil)
		}
		return t.st.ElementIndexValue(name, nil, nil, vs[0], elemType)
	}
}

// indexUse decides whether a SELECT is an index query and checks what
// Cassandra refuses in one. An index query reads the index's entries for
// the value in token order, then the rows they point at
// (storage.Engine.ScanIndex); the restriction stays among the filters, so
// every row is checked against its current value and stale entries are
// never answered. With the whole partition key given, the partitions are
// read by key and filtered instead.
func indexUse(t *tableInfo, k *keyRestrictions, s *statements.Select) (indexPlan, error) {
	var ix indexPlan
	if len(t.def.Indexes) == 0 {
		return ix, nil
	}
	pkAll := k.pkComplete()
	for _, f := range k.filters {
		if f.op == statements.OpEq {
			ix.choose(t, f.col, f.vals)
		}
	}
	for _, f := range k.filters {
		ix.chooseElements(t, f)
	}
	for i, l := range k.ck {
		if l.eq {
			ix.choose(t, t.ck[i], *l)
		}
	}
	for _, f := range k.gapFilters {
		if f.op == statements.OpIn && f.vals.eq {
			ix.choose(t, f.col, f.vals)
		}
	}
	if !pkAll {
		for i, l := range k.pk {
			if l != nil && l.eq {
				ix.choose(t, t.pk[i], *l)
			}
		}
	}
	if ix.uses = ix.name != ""; !ix.uses {
		return ix, nil
	}
	for _, l := range k.pk {
		if l != nil && !l.eq {
			return ix, invalidf("Select on indexed columns and with IN clause for the PRIMARY KEY are not supported")
		}
	}
	for _, l := range k.ck {
		if !l.eq {
			return ix, invalidf("Select on indexed columns and with IN clause for the PRIMARY KEY are not supported")
		}
	}
	if len(s.OrderBy) > 0 {
		return ix, invalidf("ORDER BY with 2ndary indexes is not supported.")
	}
	// As Cassandra counts: the partition key restrictions when they are
	// partial, the clustering ones when the partition key is missing (and
	// not bounded by token()) or when they have a gap.
	ix.restricted = len(k.filters)
	onToken := k.tokenLower != nil || k.tokenUpper != nil
	if !pkAll {
		for _, l := range k.pk {
			if l != nil {
				ix.restricted++
			}
		}
	}
	if (!pkAll && (!onToken || k.pkAny())) || k.gapErr != nil {
		ix.restricted += len(k.ck)
		if k.lower != nil || k.upper != nil {
			ix.restricted++
		}
		seen := map[int]bool{}
		for _, f := range k.gapFilters {
			if !seen[f.col] {
				seen[f.col] = true
				ix.restricted++
			}
		}
	}
	if pkAll {
		ix.name = ""
		return ix, nil
	}
	// The partition key is incomplete: its restrictions are checked on
	// each row like the other filters.
	for i, l := range k.pk {
		if l != nil {
			k.filters = append(k.filters, colFilter{col: t.pk[i], op: statements.OpEq, vals: *l})
			k.pk[i] = nil
		}
	}
	return ix, nil
}
