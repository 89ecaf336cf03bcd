package coordinator

import (
	"github.com/cqld/cqld/statements"
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
}

// choose picks the index to read for an = restriction on column col: the
// first one found.
func (ix *indexPlan) choose(t *tableInfo, col int, vals valueList) {
	if d := t.def.IndexOn(t.cols[col].def.Name); d != nil && ix.name == "" {
		ix.name, ix.value = d.Name, vals
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
