package coordinator

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"

	"github.com/datastax/go-cassandra-native-protocol/datatype"
	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"

	"github.com/cqld/cqld/statements"
	"github.com/cqld/cqld/statements/functions"
	"github.com/cqld/cqld/statements/types"
	"github.com/cqld/cqld/storage"
	"github.com/cqld/cqld/systables"
)

// valueSrc is where a restriction's value comes from: a literal serialized
// at analysis, a bind marker, or a term computed per execution (a
// function call).
type valueSrc struct {
	lit    []byte
	marker int  // -1 for a literal or a term
	list   bool // the marker binds a whole IN list
	expr   valueExpr
}

// filter is a restriction col = v or col IN (v...).
type filter struct {
	col  int
	vals []valueSrc
}

// selectPlan is a SELECT over a system table.
type selectPlan struct {
	t        *vtable
	proj     []int      // columns of t: the result row, or sel's inputs
	sel      *selection // functions, casts, terms, aggregates; nil when none
	json     *types.JSONColumns
	distinct bool
	meta     []*message.ColumnMetadata
	metaID   []byte
	filters  []filter
	limit    valueSrc // marker -1 and lit nil: no limit
	bind     []*message.ColumnMetadata
	pk       []uint16
}

func (p *selectPlan) markers() []*message.ColumnMetadata       { return p.bind }
func (p *selectPlan) pkIndices() []uint16                      { return p.pk }
func (p *selectPlan) resultColumns() []*message.ColumnMetadata { return p.meta }

var allowFilteringMsg = "Cannot execute this query as it might involve data filtering and thus may have unpredictable performance. If you want to execute this query despite the performance unpredictability, use ALLOW FILTERING"

func (c *Coordinator) analyzeSelect(s *statements.Select, nMarkers int, sessionKS string) (plan, error) {
	ks := s.Keyspace
	if ks == "" {
		ks = sessionKS
	}
	if ks == "" {
		return nil, invalidf("No keyspace has been specified. USE a keyspace, or explicitly specify keyspace.tablename")
	}
	if !c.keyspaceExists(ks) {
		return nil, invalidf("Keyspace %s does not exist", ks)
	}
	t := c.vt[ks][s.Table]
	if t == nil {
		if systables.IsSystemKeyspace(ks) {
			return nil, invalidf("unconfigured table %s", s.Table)
		}
		ti, err := c.userTable(ks, s.Table)
		if err != nil {
			return nil, err
		}
		return c.analyzeTableSelect(s, nMarkers, ti)
	}
	if len(s.GroupBy) > 0 {
		return nil, invalidf("GROUP BY is not supported on system tables yet")
	}
	if len(s.OrderBy) > 0 {
		return nil, invalidf("ORDER BY is only supported when the partition key is restricted by an EQ or an IN.")
	}
	if s.PerPartitionLimit != nil {
		return nil, invalidf("PER PARTITION LIMIT is not supported on system tables yet")
	}
	p := &selectPlan{t: t, distinct: s.Distinct, limit: valueSrc{marker: -1}, bind: make([]*message.ColumnMetadata, nMarkers)}
	if err := p.analyzeSelection(s); err != nil {
		return nil, err
	}
	if err := p.analyzeWhere(s); err != nil {
		return nil, err
	}
	if s.Limit != nil {
		src, err := p.term(s.Limit, datatype.Int, "[limit]", false)
		if err != nil {
			return nil, err
		}
		p.limit = src
	}
	for i, b := range p.bind {
		if b == nil {
			return nil, invalidf("bind marker %d is used where cqld cannot bind it yet", i)
		}
	}
	p.metaID = metadataID(p.meta)
	return p, nil
}

func (p *selectPlan) column(name string) (int, error) {
	i, ok := p.t.index[name]
	if !ok {
		return 0, invalidf("Undefined column name %s in table %s.%s", name, p.t.def.Keyspace, p.t.def.Name)
	}
	return i, nil
}

// analyzeSelection compiles the SELECT clause with the user read path's
// selection compiler (selectors.go) over the system table's columns, so
// functions, casts, terms, aggregates and JSON work as on user tables.
func (p *selectPlan) analyzeSelection(s *statements.Select) error {
	d := p.t.def
	spec := func(name string, t datatype.DataType) *message.ColumnMetadata {
		return &message.ColumnMetadata{Keyspace: d.Keyspace, Table: d.Name, Name: name, Type: t}
	}
	if len(s.Selectors) == 0 {
		for i := range d.Columns {
			p.proj = append(p.proj, i)
			p.meta = append(p.meta, p.t.meta[i])
		}
	}
	b := newBinder(d.Keyspace, d.Name, len(p.bind))
	sc := &selCompiler{t: p.t.info, b: b}
	exprs, cols, simple, err := sc.selectors(s.Selectors, nil, p.meta, true)
	if err != nil {
		return err
	}
	p.meta = cols
	for _, pr := range sc.proj {
		if pr.kind != projValue {
			return invalidf("writetime() and ttl() are not supported on system tables yet: their rows are made on each read")
		}
		p.proj = append(p.proj, pr.col)
	}
	if !simple || len(sc.aggs) > 0 {
		p.sel = &selection{exprs: exprs, aggs: sc.aggs, aggregate: len(sc.aggs) > 0, groupCK: -1}
	}
	for i, m := range b.specs {
		if m != nil {
			p.bind[i] = m
		}
	}
	if p.distinct {
		for _, i := range p.proj {
			if d.Columns[i].Kind != storage.KindPartitionKey && d.Columns[i].Kind != storage.KindStatic {
				return invalidf("SELECT DISTINCT queries must only request partition key columns and/or static columns (not %s)", d.Columns[i].Name)
			}
		}
	}
	if s.Json {
		p.json = types.NewJSONColumns(p.meta)
		p.meta = []*message.ColumnMetadata{spec("[json]", datatype.Varchar)}
	}
	return nil
}

func (p *selectPlan) analyzeWhere(s *statements.Select) error {
	d := p.t.def
	restricted := map[string]int{}
	pkMarker := map[int]int{} // pk column -> marker bound by =
	for i := range s.Where {
		r := &s.Where[i]
		if r.Token || len(r.Columns) != 1 {
			return invalidf("Multi-column and token() relations are not supported on system tables yet")
		}
		col, err := p.column(r.Columns[0])
		if err != nil {
			return err
		}
		name := d.Columns[col].Name
		typ := p.t.types[col]
		f := filter{col: col}
		switch r.Op {
		case statements.OpEq:
			src, err := p.term(r.Value, typ, name, false)
			if err != nil {
				return err
			}
			f.vals = append(f.vals, src)
			if src.marker >= 0 && d.Columns[col].Kind == storage.KindPartitionKey {
				pkMarker[col] = src.marker
			}
		case statements.OpIn:
			switch v := r.Value.(type) {
			case *statements.ListLiteral:
				for _, e := range v.Elems {
					src, err := p.term(e, typ, name, false)
					if err != nil {
						return err
					}
					f.vals = append(f.vals, src)
				}
			default:
				src, err := p.term(v, datatype.NewList(typ), "in("+name+")", true)
				if err != nil {
					return err
				}
				f.vals = append(f.vals, src)
			}
		default:
			return invalidf("Only EQ and IN relations are supported on system tables (got %s on %s)", r.Op, name)
		}
		restricted[d.Columns[col].Kind]++
		p.filters = append(p.filters, f)
	}
	pkRestricted := restricted[storage.KindPartitionKey] >= len(p.t.pk)
	if !s.AllowFiltering && (restricted[storage.KindRegular]+restricted[storage.KindStatic] > 0 || (restricted[storage.KindClustering] > 0 && !pkRestricted)) {
		return invalidf("%s", allowFilteringMsg)
	}
	if len(pkMarker) == len(p.t.pk) {
		for _, col := range p.t.pk {
			p.pk = append(p.pk, uint16(pkMarker[col]))
		}
	}
	return nil
}

// term resolves a restriction's right-hand side of type t.
func (p *selectPlan) term(t statements.Term, typ datatype.DataType, name string, list bool) (valueSrc, error) {
	switch v := t.(type) {
	case *statements.BindMarker:
		if v.Index < 0 || v.Index >= len(p.bind) {
			return valueSrc{}, invalidf("bind marker index %d out of range", v.Index)
		}
		specName := name
		if v.Name != "" {
			specName = v.Name
		}
		d := p.t.def
		p.bind[v.Index] = &message.ColumnMetadata{Keyspace: d.Keyspace, Table: d.Name, Name: specName, Index: int32(v.Index), Type: typ}
		return valueSrc{marker: v.Index, list: list}, nil
	case *statements.Literal:
		if list {
			return valueSrc{}, invalidf("Invalid value for IN on %s", name)
		}
		b, err := types.LiteralBytes(typ, v, name)
		if err != nil {
			return valueSrc{}, err
		}
		return valueSrc{lit: b, marker: -1}, nil
	case *statements.FunctionTerm, *statements.TypeHintTerm:
		if list {
			return valueSrc{}, invalidf("Invalid value for IN on %s", name)
		}
		// Compiled as on user tables, by the one function registry.
		d := p.t.def
		b := newBinder(d.Keyspace, d.Name, len(p.bind))
		ex, err := b.term(t, typ, name)
		if err != nil {
			return valueSrc{}, err
		}
		for i, m := range b.specs {
			if m != nil {
				p.bind[i] = m
			}
		}
		if k, ok := ex.(constExpr); ok {
			return valueSrc{lit: k, marker: -1}, nil
		}
		return valueSrc{marker: -1, expr: ex}, nil
	}
	return valueSrc{}, invalidf("This value is not supported for %s on system tables yet", name)
}

// values returns the serialized values a source stands for in x.
func (s valueSrc) values(x *execution) ([][]byte, error) {
	if s.expr != nil {
		v, err := s.expr.eval(x)
		if err == errUnset {
			return nil, invalidf("Invalid unset value for restriction")
		}
		return [][]byte{v}, err
	}
	if s.marker < 0 {
		return [][]byte{s.lit}, nil
	}
	if x.unset[s.marker] {
		return nil, invalidf("Invalid unset value for restriction")
	}
	v := x.values[s.marker]
	if !s.list {
		return [][]byte{v}, nil
	}
	return splitList(v)
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

func (p *selectPlan) run(_ context.Context, c *Coordinator, x *execution) (message.Message, error) {
	if err := checkReadConsistency(x); err != nil {
		return nil, err
	}
	limit := -1
	if p.limit.marker >= 0 || p.limit.lit != nil {
		vs, err := p.limit.values(x)
		if err != nil {
			return nil, err
		}
		if len(vs[0]) != 4 {
			return nil, invalidf("Invalid limit value")
		}
		limit = int(int32(binary.BigEndian.Uint32(vs[0])))
		if limit <= 0 {
			return nil, invalidf("LIMIT must be strictly positive")
		}
	}
	allowed := make([][][]byte, len(p.filters))
	for i, f := range p.filters {
		for _, src := range f.vals {
			vs, err := src.values(x)
			if err != nil {
				return nil, err
			}
			allowed[i] = append(allowed[i], vs...)
		}
	}
	var out [][][]byte
	seen := map[string]bool{}
	sctx := &selCtx{x: x}
	var first [][]byte // an aggregation's first row
	var states []functions.AggState
	if p.sel != nil {
		states = make([]functions.AggState, len(p.sel.aggs))
		if p.sel.aggregate && !p.keyed() {
			x.warn(warnAggregateNoKey)
		}
	}
	for _, r := range p.t.rows(c) {
		ok, err := p.matches(r, allowed, x.version)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		cells := make([][]byte, len(p.proj))
		for j, col := range p.proj {
			b, err := types.EncodeValue(p.t.types[col], r[p.t.def.Columns[col].Name], x.version)
			if err != nil {
				return nil, err
			}
			cells[j] = b
		}
		if p.distinct {
			k := string(bytes.Join(cells, []byte{0}))
			if seen[k] {
				continue
			}
			seen[k] = true
		}
		switch {
		case p.sel == nil:
		case p.sel.aggregate:
			if first == nil {
				first = cells
			}
			if err := p.sel.add(sctx, cells, states); err != nil {
				return nil, err
			}
			continue
		default:
			if cells, err = p.sel.row(sctx, cells); err != nil {
				return nil, err
			}
		}
		out = append(out, cells)
	}
	if p.sel != nil && p.sel.aggregate {
		// One result row, even over no rows.
		cells, err := p.sel.output(sctx, first, states)
		if err != nil {
			return nil, err
		}
		out = [][][]byte{cells}
	}
	if p.json != nil {
		for i, cells := range out {
			out[i] = [][]byte{p.json.Row(cells)}
		}
	}
	if limit >= 0 && len(out) > limit {
		out = out[:limit]
	}
	md := &message.RowsMetadata{ColumnCount: int32(len(p.meta)), Columns: p.meta}
	// Paging over a materialised result: the state is the next row's offset.
	if x.opts.PagingState != nil {
		off, err := parsePagingState(x.opts.PagingState)
		if err != nil {
			return nil, err
		}
		if off > len(out) {
			off = len(out)
		}
		out = out[off:]
		if ps := x.opts.PageSize; ps > 0 && len(out) > int(ps) {
			out = out[:ps]
			md.PagingState = pagingState(off + int(ps))
		}
	} else if ps := x.opts.PageSize; ps > 0 && len(out) > int(ps) {
		out = out[:ps]
		md.PagingState = pagingState(int(ps))
	}
	applyMetadataRules(md, p.metaID, x)
	rows := make(message.RowSet, len(out))
	for i, cells := range out {
		rows[i] = cells
	}
	return &message.RowsResult{Metadata: md, Data: rows}, nil
}

// keyed reports whether WHERE restricts the partition key.
func (p *selectPlan) keyed() bool {
	for _, f := range p.filters {
		if p.t.def.Columns[f.col].Kind == storage.KindPartitionKey {
			return true
		}
	}
	return false
}

func (p *selectPlan) matches(r systables.Row, allowed [][][]byte, v primitive.ProtocolVersion) (bool, error) {
	for i, f := range p.filters {
		b, err := types.EncodeValue(p.t.types[f.col], r[p.t.def.Columns[f.col].Name], v)
		if err != nil {
			return false, err
		}
		hit := false
		for _, a := range allowed[i] {
			if a != nil && bytes.Equal(a, b) {
				hit = true
				break
			}
		}
		if !hit {
			return false, nil
		}
	}
	return true, nil
}

// applyMetadataRules follows Cassandra's ExecuteMessage: v4 drops the
// metadata when the client asked to skip it; v5 sends the new metadata id
// and full metadata when the client's id is stale, else honours skip.
func applyMetadataRules(md *message.RowsMetadata, id []byte, x *execution) {
	if x.prepared == nil {
		return
	}
	if x.version >= primitive.ProtocolVersion5 && !bytes.Equal(x.reqMetaID, id) {
		md.NewResultMetadataId = id
		return
	}
	if x.opts.SkipMetadata {
		md.Columns = nil
	}
}

// metadataID is v5's result metadata id: a digest of the column specs.
func metadataID(cols []*message.ColumnMetadata) []byte {
	var b bytes.Buffer
	for _, c := range cols {
		fmt.Fprintf(&b, "%s.%s.%s:%v;", c.Keyspace, c.Table, c.Name, c.Type)
	}
	id := statementID("", b.String())
	return id[:]
}
