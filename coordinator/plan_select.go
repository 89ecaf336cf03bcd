package coordinator

import (
	"bytes"
	"fmt"
	"slices"

	"github.com/datastax/go-cassandra-native-protocol/datatype"
	"github.com/datastax/go-cassandra-native-protocol/message"

	"github.com/cqld/cqld/schema"
	"github.com/cqld/cqld/statements"
	"github.com/cqld/cqld/statements/prepared"
	"github.com/cqld/cqld/statements/types"
	"github.com/cqld/cqld/storage"
)

type projKind uint8

const (
	projValue projKind = iota
	projWritetime
	projTTL
)

type projection struct {
	col  int
	kind projKind
}

// tableSelectPlan is a SELECT on a user table.
type tableSelectPlan struct {
	t    *tableInfo
	keys *keyRestrictions
	// proj are the values read from each selected row. Without sel they
	// are the result row itself (the hot path: no per-row work beyond
	// fetching them).
	proj     []projection
	sel      *selection         // functions, terms, aggregates, GROUP BY; nil when none
	json     *types.JSONColumns // SELECT JSON: turns result rows into one "[json]" text
	distinct bool
	reverse  bool
	// fns notes the user-defined functions the plan calls.
	fns       *fnScope
	meta      []*message.ColumnMetadata
	metaID    []byte
	metaSize  int // bytes meta takes in a ROWS result
	limit     valueExpr
	ppl       valueExpr
	binds     []*message.ColumnMetadata
	pk        []uint16
	ckFilters bool // clustering restrictions exist (then static-only rows are not returned)
	index     indexPlan
	// orderAfter: ORDER BY with IN on the partition key. Cassandra reads
	// every row, sorts them across the partitions by the first orderAfter
	// clustering columns and then applies LIMIT; it cannot page such a
	// query.
	orderAfter int
}

func (p *tableSelectPlan) markers() []*message.ColumnMetadata { return p.binds }

func (p *tableSelectPlan) pkIndices() []uint16 { return p.pk }

func (p *tableSelectPlan) resultColumns() []*message.ColumnMetadata { return p.meta }

// aggregates reports whether rows are folded into groups.
func (p *tableSelectPlan) aggregates() bool { return p.sel != nil && p.sel.aggregate }

var allowFilteringMsg = "Cannot execute this query as it might involve data filtering and thus may have unpredictable performance. If you want to execute this query despite the performance unpredictability, use ALLOW FILTERING"

// analyzeSelect analyses a SELECT of a user or a system table: both are
// read through the same plan, a system table's rows coming from this
// node's replica of the system keyspaces (package systables).
func (c *Coordinator) analyzeSelect(s *statements.Select, n int, session string) (plan, error) {
	ks, err := schema.ResolveKeyspace(s.Keyspace, session)
	if err != nil {
		return nil, err
	}
	t, err := c.readTable(ks, s.Table)
	if err != nil {
		return nil, err
	}
	return c.analyzeTableSelect(s, n, t)
}

func (c *Coordinator) analyzeTableSelect(s *statements.Select, n int, t *tableInfo) (plan, error) {
	b := newBinder(t.def.Keyspace, t.def.Name, n)
	b.fn = c.fnScope(t.def.Keyspace)
	p := &tableSelectPlan{t: t, distinct: s.Distinct, fns: b.fn}
	spec := func(name string, typ datatype.DataType) *message.ColumnMetadata {
		return &message.ColumnMetadata{Keyspace: t.def.Keyspace, Table: t.def.Name, Name: name, Type: typ}
	}
	sc := &selCompiler{t: t, b: b}
	var cols []*message.ColumnMetadata // the selection's columns (before JSON)
	var exprs []selExpr
	simple := true // the result row is the inputs in order
	if len(s.Selectors) == 0 {
		for i := range t.cols {
			if s.Distinct && !(t.cols[i].def.Kind == storage.KindPartitionKey || t.cols[i].isStatic()) {
				continue
			}
			exprs = append(exprs, inputSel(sc.input(i, projValue)))
			cols = append(cols, t.meta[i])
		}
	}
	exprs, cols, simple, err := sc.selectors(s.Selectors, exprs, cols, simple)
	if err != nil {
		return nil, err
	}
	p.proj = sc.proj
	k, err := analyzeWhere(t, s.Where, b)
	if err != nil {
		return nil, err
	}
	ix, err := indexUse(t, k, s)
	if err != nil {
		return nil, err
	}
	if k.gapErr != nil {
		if !s.AllowFiltering && !ix.uses {
			return nil, k.gapErr
		}
		k.filters = append(k.filters, k.gapFilters...)
	}
	p.keys = k
	groupCK := -1
	if len(s.GroupBy) > 0 {
		if groupCK, err = groupByPrefix(t, s.GroupBy, k, s.Distinct); err != nil {
			return nil, err
		}
	}
	if !simple || len(sc.aggs) > 0 || groupCK >= 0 {
		p.sel = &selection{exprs: exprs, aggs: sc.aggs, aggregate: len(sc.aggs) > 0 || groupCK >= 0, groupCK: groupCK}
	}
	p.meta = cols
	if s.Json {
		p.json = types.NewJSONColumns(cols)
		p.meta = []*message.ColumnMetadata{spec("[json]", datatype.Varchar)}
	}
	p.ckFilters = len(k.ck) > 0 || k.lower != nil || k.upper != nil || len(k.gapFilters) > 0
	needsFiltering := len(k.filters) > 0 || (k.pkAny() && !k.pkComplete()) || (!k.pkComplete() && p.ckFilters)
	if ix.uses {
		needsFiltering = ix.restricted > 1
		p.index = ix
	}
	if needsFiltering && !s.AllowFiltering {
		return nil, invalidf("%s", allowFilteringMsg)
	}
	if (k.tokenLower != nil || k.tokenUpper != nil) && k.pkAny() {
		return nil, invalidf("Columns \"%s\" cannot be restricted by both a normal relation and a token relation", t.cols[t.pk[0]].def.Name)
	}
	if k.pkAny() && !k.pkComplete() {
		return nil, invalidf("Partial partition key restrictions are not supported yet")
	}
	if p.distinct {
		if err := p.checkDistinct(s, k); err != nil {
			return nil, err
		}
	}
	for _, f := range k.filters {
		switch f.op {
		case statements.OpContains, statements.OpContainsKey, opMapEntry:
			continue
		case statements.OpEq, statements.OpIn, statements.OpNeq, statements.OpLt, statements.OpLte, statements.OpGt, statements.OpGte:
		default:
			return nil, invalidf("Unsupported filter %s", f.op)
		}
		if col := &t.cols[f.col]; col.multiCell() {
			if col.isCollection() {
				return nil, invalidf("Collection column '%s' (%s) cannot be restricted by a '%s' relation", col.def.Name, statements.TypeString(col.typ, false), f.op)
			}
			return nil, invalidf("Non-frozen UDT column '%s' (%s) cannot be restricted by any relation", col.def.Name, statements.TypeString(col.typ, false))
		}
	}
	if len(s.OrderBy) > 0 {
		if !k.pkComplete() {
			return nil, invalidf("ORDER BY is only supported when the partition key is restricted by an EQ or an IN.")
		}
		if err := p.orderBy(s.OrderBy); err != nil {
			return nil, err
		}
		if k.pkIn() {
			p.orderAfter = len(s.OrderBy)
		}
	}
	if s.Limit != nil {
		if p.limit, err = b.term(s.Limit, datatype.Int, "[limit]"); err != nil {
			return nil, err
		}
	}
	if s.PerPartitionLimit != nil {
		if p.ppl, err = b.term(s.PerPartitionLimit, datatype.Int, "[per_partition_limit]"); err != nil {
			return nil, err
		}
	}
	if err := b.check(); err != nil {
		return nil, err
	}
	p.binds = b.specs
	for _, l := range k.pk {
		if l == nil || len(l.exprs) != 1 {
			p.pk = nil
			break
		}
		m, ok := l.exprs[0].(markerExpr)
		if !ok {
			p.pk = nil
			break
		}
		p.pk = append(p.pk, uint16(m.index))
	}
	p.metaID = metadataID(p.meta)
	p.metaSize = metadataSize(p.meta)
	return p, nil
}

// checkDistinct refuses what Cassandra refuses in a SELECT DISTINCT
// (SelectStatement.validateDistinctSelection): restrictions on other
// than partition key and static columns, a selection of other columns,
// and, unless the partition key is named by = or IN, a selection without
// every partition key column.
func (p *tableSelectPlan) checkDistinct(s *statements.Select, k *keyRestrictions) error {
	t := p.t
	if s.PerPartitionLimit != nil {
		return invalidf("PER PARTITION LIMIT is not allowed with SELECT DISTINCT queries")
	}
	restricted := len(k.ck) > 0 || k.lower != nil || k.upper != nil || len(k.gapFilters) > 0
	for _, f := range k.filters {
		restricted = restricted || !t.cols[f.col].isStatic()
	}
	if restricted {
		return invalidf("SELECT DISTINCT with WHERE clause only supports restriction by partition key and/or static columns.")
	}
	for _, pr := range p.proj {
		if kind := t.cols[pr.col].def.Kind; kind != storage.KindPartitionKey && kind != storage.KindStatic {
			return invalidf("SELECT DISTINCT queries must only request partition key columns and/or static columns (not %s)", t.cols[pr.col].def.Name)
		}
	}
	if k.pkComplete() {
		return nil
	}
	for _, ci := range t.pk {
		if !slices.ContainsFunc(p.proj, func(pr projection) bool { return pr.col == ci }) {
			return invalidf("SELECT DISTINCT queries must request all the partition key columns (missing %s)", t.cols[ci].def.Name)
		}
	}
	return nil
}

// orderBy accepts the clustering order or its exact reverse.
func (p *tableSelectPlan) orderBy(obs []statements.Ordering) error {
	t := p.t
	if len(obs) > len(t.ck) {
		return invalidf("Only clustering key columns can be used in ORDER BY")
	}
	reversed := -1
	for i, o := range obs {
		_, col, err := t.column(o.Column)
		if err != nil {
			return err
		}
		if col.def.Kind != storage.KindClustering {
			return invalidf("Order by is currently only supported on the clustered columns of the PRIMARY KEY, got %s", o.Column)
		}
		if t.cols[t.ck[i]].def.Name != o.Column {
			return invalidf("Order by currently only supports the ordering of columns following their declared order in the PRIMARY KEY")
		}
		r := 0
		if o.Desc != t.st.ClusteringDesc[i] {
			r = 1
		}
		if reversed >= 0 && r != reversed {
			return invalidf("Unsupported order by relation")
		}
		reversed = r
	}
	p.reverse = reversed == 1
	return nil
}

// metadataID is v5's result metadata id: a digest of the column specs.
func metadataID(cols []*message.ColumnMetadata) []byte {
	var b bytes.Buffer
	for _, c := range cols {
		fmt.Fprintf(&b, "%s.%s.%s:%v;", c.Keyspace, c.Table, c.Name, c.Type)
	}
	id := prepared.ID("", b.String())
	return id[:]
}
