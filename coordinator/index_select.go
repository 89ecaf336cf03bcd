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
}

// indexUse decides whether a SELECT is an index query and checks what
// Cassandra refuses in one. cqld answers an index query by reading the
// table in token order and keeping the rows whose current values match,
// the path ALLOW FILTERING takes, so the answer is exact for any history
// of writes, deletes and expiries.
func indexUse(t *tableInfo, k *keyRestrictions, s *statements.Select) (indexPlan, error) {
	var ix indexPlan
	if len(t.def.Indexes) == 0 {
		return ix, nil
	}
	for _, f := range k.filters {
		if f.op == statements.OpEq && t.def.IndexOn(t.cols[f.col].def.Name) != nil {
			ix.uses = true
		}
	}
	for i, l := range k.ck {
		if l.eq && t.def.IndexOn(t.cols[t.ck[i]].def.Name) != nil {
			ix.uses = true
		}
	}
	for i, l := range k.pk {
		if l != nil && l.eq && !k.pkComplete() && t.def.IndexOn(t.cols[t.pk[i]].def.Name) != nil {
			ix.uses = true
		}
	}
	for _, f := range k.gapFilters {
		if f.op == statements.OpIn && f.vals.eq && t.def.IndexOn(t.cols[f.col].def.Name) != nil {
			ix.uses = true
		}
	}
	if !ix.uses {
		return ix, nil
	}
	pkAll := k.pkComplete()
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
	ix.restricted = len(k.filters)
	if !pkAll {
		for _, l := range k.pk {
			if l != nil {
				ix.restricted++
			}
		}
		if k.tokenLower != nil || k.tokenUpper != nil {
			ix.restricted += len(t.pk)
		}
	}
	if !pkAll || k.gapErr != nil {
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
	if !pkAll {
		// The partition key is incomplete: its restrictions are checked
		// on each row like the other filters.
		for i, l := range k.pk {
			if l != nil {
				k.filters = append(k.filters, colFilter{col: t.pk[i], op: statements.OpEq, vals: *l})
				k.pk[i] = nil
			}
		}
	}
	return ix, nil
}
