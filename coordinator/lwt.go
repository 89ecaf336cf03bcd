package coordinator

import (
	"bytes"
	"context"
	"fmt"

	"github.com/datastax/go-cassandra-native-protocol/datatype"
	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"

	"github.com/cqld/cqld/mutation"
	"github.com/cqld/cqld/proxy"
	"github.com/cqld/cqld/statements"
	"github.com/cqld/cqld/statements/types"
	"github.com/cqld/cqld/storage"
)

// Lightweight transactions: a conditional write's conditions are compiled
// here and evaluated by Decide, which the proxy runs inside Paxos among
// the partition's replicas (proxy/paxos.go) on the partition as a quorum
// of them holds it, and which returns the update to commit when they
// hold. Each partition's conditional writes are linearizable.

// casSpec is what a statement says about its conditions.
type casSpec struct {
	ifNotExists, ifExists bool
	conds                 []statements.Condition
}

// casCond is one IF condition, compiled.
type casCond struct {
	col int
	key valueExpr // m[k] conditions; nil otherwise
	// field is f+1 for u.f conditions on a user type, 0 otherwise.
	field int
	op    statements.Operator
	vals  valueList
}

// casWrite is one conditional write of a batch (or the only one).
type casWrite struct {
	w                     *writePlan
	ifNotExists, ifExists bool
	conds                 []casCond
}

// casPlan is a conditional INSERT, UPDATE, DELETE or BATCH on one
// partition.
type casPlan struct {
	writes []casWrite
	binds  []*message.ColumnMetadata
	pk     []uint16
	batch  bool
}

func (p *casPlan) markers() []*message.ColumnMetadata { return p.binds }
func (p *casPlan) pkIndices() []uint16                { return p.pk }

// resultColumns is empty: the columns of a conditional write's answer
// depend on whether it applied, so it always carries its own metadata.
func (p *casPlan) resultColumns() []*message.ColumnMetadata { return nil }

var errConditionalCounter = invalidf("Conditional updates are not supported on counter tables")

func (c *Coordinator) casWrite(w *writePlan, b *binder, spec casSpec) (casWrite, error) {
	t := w.t
	cw := casWrite{w: w, ifNotExists: spec.ifNotExists, ifExists: spec.ifExists}
	if t.isCounter() {
		return cw, errConditionalCounter
	}
	if w.ts != nil {
		return cw, invalidf("Cannot provide custom timestamp for conditional updates")
	}
	if w.kind != kindInsert {
		for _, l := range w.keys.pk {
			if len(l.exprs) != 1 {
				return cw, invalidf("IN on the partition key is not supported with conditional updates")
			}
		}
		for _, l := range w.keys.ck {
			if len(l.exprs) != 1 {
				return cw, invalidf("IN on the clustering key columns is not supported with conditional updates")
			}
		}
		if w.kind == kindDelete && len(w.ops) == 0 && len(w.keys.ck) < len(t.ck) {
			return cw, invalidf("DELETE statements must restrict all PRIMARY KEY columns with equality relations in order to use IF conditions")
		}
	}
	for _, cd := range spec.conds {
		ci, col, err := t.column(cd.Column)
		if err != nil {
			return cw, err
		}
		if col.isKey() {
			return cw, invalidf("PRIMARY KEY column '%s' cannot have IF conditions", cd.Column)
		}
		cc := casCond{col: ci, op: cd.Op}
		typ := col.typ
		name := cd.Column
		if cd.Field != "" {
			ut, ok := col.typ.(*datatype.UserDefined)
			if !ok {
				return cw, invalidf("Invalid field selection: %s of type %s is not a user type", cd.Column, typeName(col.typ))
			}
			i := indexOf(ut.FieldNames, cd.Field)
			if i < 0 {
				return cw, invalidf("Unknown field %s for column %s", cd.Field, cd.Column)
			}
			cc.field, typ, name = i+1, ut.FieldTypes[i], cd.Column+"."+cd.Field
		}
		if cd.Key != nil {
			m, ok := col.typ.(*datatype.Map)
			if !ok {
				return cw, invalidf("Element conditions are only supported on maps yet (%s)", cd.Column)
			}
			if cc.key, err = b.term(cd.Key, m.KeyType, "key("+name+")"); err != nil {
				return cw, err
			}
			typ, name = m.ValueType, "value("+name+")"
		}
		switch cd.Op {
		case statements.OpEq, statements.OpNeq, statements.OpLt, statements.OpLte, statements.OpGt, statements.OpGte:
			v, err := b.term(cd.Value, typ, name)
			if err != nil {
				return cw, err
			}
			cc.vals = valueList{exprs: []valueExpr{v}}
		case statements.OpIn:
			vl, err := compileValueList(&statements.Relation{Op: statements.OpIn, Value: cd.Value}, typ, name, b)
			if err != nil {
				return cw, err
			}
			cc.vals = *vl
		default:
			return cw, invalidf("Unsupported condition %s on %s", cd.Op, cd.Column)
		}
		cw.conds = append(cw.conds, cc)
	}
	return cw, nil
}

// casWrap turns a write into a conditional one.
func (c *Coordinator) casWrap(w *writePlan, b *binder, spec casSpec) (plan, error) {
	cw, err := c.casWrite(w, b, spec)
	if err != nil {
		return nil, err
	}
	if err := b.check(); err != nil {
		return nil, err
	}
	w.binds = b.specs
	return &casPlan{writes: []casWrite{cw}, binds: b.specs, pk: w.pk}, nil
}

func (p *casPlan) run(_ context.Context, c *Coordinator, x *execution) (message.Message, error) {
	xs := make([]*execution, len(p.writes))
	for i := range xs {
		xs[i] = x
	}
	return p.runWith(c, xs)
}

// runWith runs the conditional writes, each with its own bound values (a
// BATCH message gives each statement its own).
func (p *casPlan) runWith(c *Coordinator, xs []*execution) (message.Message, error) {
	if err := checkCasConsistency(xs[0]); err != nil {
		return nil, err
	}
	serial := primitive.ConsistencyLevelSerial
	if sc := xs[0].opts.SerialConsistency; sc != nil {
		serial = *sc
	}
	targets := make([]writeTarget, len(p.writes))
	var pk []byte
	for i, cw := range p.writes {
		if err := c.checkCurrent(cw.w.t); err != nil {
			return nil, err
		}
		tg, err := cw.w.target(xs[i])
		if err != nil {
			return nil, err
		}
		targets[i] = tg
		if i == 0 {
			pk = tg.pk
		} else if !bytes.Equal(pk, tg.pk) || cw.w.t != p.writes[0].w.t {
			return nil, invalidf("Batch with conditions cannot span multiple partitions")
		}
	}
	t0 := p.writes[0].w.t
	if ks := c.catalog.Current().Keyspace(t0.def.Keyspace); ks != nil {
		for _, cl := range []primitive.ConsistencyLevel{serial, xs[0].opts.Consistency} {
			if err := c.data.Available(ks, storage.Token(pk), cl); err != nil {
				return nil, err
			}
		}
	}
	var (
		applied bool
		current []*storage.Row // per write: the row it conditions on, or nil
		static  *storage.Row
		m       *mutation.Mutation
	)
	defer func() {
		if m != nil {
			m.Release()
		}
	}()
	// decide runs once per Paxos attempt, on the partition as a quorum of
	// replicas holds it; the last run's answer is the statement's.
	decide := func(data *storage.Partition) (*mutation.Update, error) {
		applied, current, static = true, current[:0], nil
		if m != nil {
			m.Release()
			m = nil
		}
		for i, cw := range p.writes {
			row, st, err := currentRow(cw.w.t, data, targets[i].ck, xs[i])
			if err != nil {
				return nil, err
			}
			static = st
			current = append(current, row)
			ok, err := cw.holds(row, st, xs[i])
			if err != nil {
				return nil, err
			}
			applied = applied && ok
		}
		if !applied {
			return nil, nil
		}
		m = mutation.New()
		for i, cw := range p.writes {
			xs[i].casData = data
			if err := cw.w.mutateInto(m, xs[i]); err != nil {
				return nil, err
			}
		}
		switch {
		case m.Empty():
			return nil, nil
		case len(m.Updates) > 1:
			return nil, invalidf("Batch with conditions cannot span multiple partitions")
		}
		return m.Updates[0], nil
	}
	check := func() error {
		for _, cw := range p.writes {
			if err := c.checkCurrent(cw.w.t); err != nil {
				return err
			}
		}
		return nil
	}
	read, err := readSlice(t0, targets)
	if err != nil {
		return nil, err
	}
	cas := &proxy.CAS{Table: t0.st, Key: pk, Read: read, Serial: serial, Commit: xs[0].opts.Consistency, Decide: decide, Check: check}
	if err := c.data.Conditional(xs[0].ctx, cas); err != nil {
		if isStale(err) || isDropped(err) {
			return nil, err
		}
		return nil, fmt.Errorf("conditional write: %w", err)
	}
	return p.result(t0, applied, current, static, pk)
}

// readSlice is the part of the partition the conditional writes read: the
// rows from the first target to the last in clustering order (the static
// row always comes along), none for static-only writes.
func readSlice(t *tableInfo, targets []writeTarget) (storage.Slice, error) {
	if len(t.ck) == 0 {
		return storage.Slice{}, nil
	}
	var lo, hi [][]byte
	var loKey, hiKey []byte
	for _, tg := range targets {
		if tg.ck == nil {
			continue
		}
		var key []byte
		for i, v := range tg.ck {
			var err error
			if key, err = storage.AppendKey(key, t.st.ClusteringTypes[i], v, t.st.ClusteringDesc[i]); err != nil {
				return storage.Slice{}, err
			}
		}
		if lo == nil || bytes.Compare(key, loKey) < 0 {
			lo, loKey = tg.ck, key
		}
		if hi == nil || bytes.Compare(key, hiKey) > 0 {
			hi, hiKey = tg.ck, key
		}
	}
	if lo == nil {
		return storage.Slice{End: &storage.Bound{}}, nil // statics only
	}
	return storage.Slice{Start: &storage.Bound{Prefix: lo, Inclusive: true}, End: &storage.Bound{Prefix: hi, Inclusive: true}}, nil
}

// writeTarget is the single row a conditional write touches.
type writeTarget struct {
	pk []byte
	ck [][]byte // nil for a static-only write
}

func (w *writePlan) target(x *execution) (writeTarget, error) {
	t := w.t
	var pkVals [][]byte
	var ck [][]byte
	var err error
	if w.kind == kindInsert {
		if pkVals, err = evalExprs(t, w.insertPK, t.pk, x); err != nil {
			return writeTarget{}, err
		}
		if !w.staticOnly {
			if ck, err = evalExprs(t, w.insertCK, t.ck, x); err != nil {
				return writeTarget{}, err
			}
		}
	} else {
		pks, err := evalKeys(t, w.keys.pk, t.pk, x)
		if err != nil {
			return writeTarget{}, err
		}
		pkVals = pks[0]
		if len(w.keys.ck) > 0 {
			cks, err := evalKeys(t, w.keys.ck, t.ck, x)
			if err != nil {
				return writeTarget{}, err
			}
			ck = cks[0]
		}
	}
	return writeTarget{pk: t.partitionKey(pkVals), ck: ck}, nil
}

// currentRow finds the row ck and the static row in data, the partition
// as a quorum of its replicas holds it.
func currentRow(t *tableInfo, data *storage.Partition, ck [][]byte, x *execution) (row, static *storage.Row, err error) {
	o := storage.ReadOptions{Now: x.nowInSeconds()}
	if len(t.ck) > 0 {
		if ck == nil {
			o.Slice = storage.Slice{End: &storage.Bound{}} // statics only
		} else {
			o.Slice = storage.Slice{Start: &storage.Bound{Prefix: ck, Inclusive: true}, End: &storage.Bound{Prefix: ck, Inclusive: true}}
		}
	}
	err = t.st.Resolve(data, o, func(r *storage.Row) bool {
		if r.Static {
			static = r
		} else if ck != nil || len(t.ck) == 0 {
			row = r
		}
		return true
	})
	return row, static, err
}

// holds evaluates the write's conditions against the current row.
func (cw *casWrite) holds(row, static *storage.Row, x *execution) (bool, error) {
	t := cw.w.t
	exists := row != nil || (cw.w.staticOnly && static != nil)
	switch {
	case cw.ifNotExists:
		return !exists, nil
	case cw.ifExists:
		return exists, nil
	}
	for _, cd := range cw.conds {
		col := &t.cols[cd.col]
		src := row
		if col.isStatic() {
			src = static
		}
		v := cellValue(t, col, src)
		if cd.key != nil {
			k, err := cd.key.eval(x)
			if err != nil {
				return false, err
			}
			v = mapElement(col, src, k)
		}
		allowed, err := cd.vals.eval(x)
		if err != nil {
			return false, err
		}
		typ := col.typ
		if cd.key != nil {
			typ = col.typ.(*datatype.Map).ValueType
		}
		if cd.field > 0 {
			ut := col.typ.(*datatype.UserDefined)
			typ = ut.FieldTypes[cd.field-1]
			if v != nil {
				v = types.SplitFields(v, len(ut.FieldTypes))[cd.field-1]
			}
		}
		if !condHolds(typ, cd.op, v, allowed) {
			return false, nil
		}
	}
	return true, nil
}

// cellValue is a column's current serialized value in row (nil if none).
func cellValue(t *tableInfo, col *colInfo, row *storage.Row) []byte {
	if row == nil {
		return nil
	}
	var cells []storage.ColumnCell
	for _, cc := range row.Cells {
		if cc.Column == col.def.Name {
			if !col.multiCell() {
				return cc.Cell.Value
			}
			cells = append(cells, cc)
		}
	}
	if len(cells) == 0 {
		return nil
	}
	return t.assembleCollection(col, cells)
}

func mapElement(col *colInfo, row *storage.Row, key []byte) []byte {
	if row == nil {
		return nil
	}
	kt := col.typ.(*datatype.Map).KeyType
	want, err := storage.AppendKey(nil, kt, key, false)
	if err != nil {
		return nil
	}
	for _, cc := range row.Cells {
		if cc.Column == col.def.Name && bytes.Equal(cc.Path, want) {
			return cc.Cell.Value
		}
	}
	return nil
}

// condHolds compares a current value with a condition's values as
// Cassandra does: null equals only null, ordering uses the type's order.
func condHolds(typ datatype.DataType, op statements.Operator, v []byte, allowed [][]byte) bool {
	switch op {
	case statements.OpEq:
		return eqNull(v, allowed[0])
	case statements.OpNeq:
		return !eqNull(v, allowed[0])
	case statements.OpIn:
		for _, a := range allowed {
			if eqNull(v, a) {
				return true
			}
		}
		return false
	}
	if v == nil || allowed[0] == nil {
		return false
	}
	return matchFilter(typ, op, v, allowed)
}

func eqNull(a, b []byte) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return bytes.Equal(a, b)
}

// result builds the [applied] answer: just [applied] when the write applied
// or its row does not exist, else [applied] = false with the row's current
// values (every column for IF [NOT] EXISTS, the conditioned columns
// otherwise; batches add the primary key).
func (p *casPlan) result(t *tableInfo, applied bool, current []*storage.Row, static *storage.Row, pk []byte) (message.Message, error) {
	appliedCol := &message.ColumnMetadata{Keyspace: t.def.Keyspace, Table: t.def.Name, Name: "[applied]", Type: datatype.Boolean}
	cols := []*message.ColumnMetadata{appliedCol}
	flag := []byte{0}
	if applied {
		flag[0] = 1
	}
	rows := message.RowSet{{flag}}
	anyRow := static != nil
	for _, r := range current {
		if r != nil {
			anyRow = true
		}
	}
	if !applied && anyRow {
		var proj []int
		seen := map[int]bool{}
		add := func(i int) {
			if !seen[i] {
				seen[i] = true
				proj = append(proj, i)
			}
		}
		for _, cw := range p.writes {
			if cw.ifExists || cw.ifNotExists {
				for i := range t.cols {
					add(i)
				}
				continue
			}
			if p.batch {
				for _, i := range t.pk {
					add(i)
				}
				for _, i := range t.ck {
					add(i)
				}
			}
			for _, cd := range cw.conds {
				add(cd.col)
			}
		}
		for _, i := range proj {
			cols = append(cols, t.meta[i])
		}
		pkVals, err := t.splitPartitionKey(pk)
		if err != nil {
			return nil, err
		}
		rows = rows[:0]
		for _, r := range current {
			if r == nil && static == nil {
				continue
			}
			out := [][]byte{flag}
			for _, i := range proj {
				col := &t.cols[i]
				switch col.def.Kind {
				case storage.KindPartitionKey:
					for j, c := range t.pk {
						if c == i {
							out = append(out, pkVals[j])
						}
					}
				case storage.KindClustering:
					var v []byte
					if r != nil {
						for j, c := range t.ck {
							if c == i {
								v = r.Clustering[j]
							}
						}
					}
					out = append(out, v)
				case storage.KindStatic:
					out = append(out, cellValue(t, col, static))
				default:
					out = append(out, cellValue(t, col, r))
				}
			}
			rows = append(rows, out)
			if !p.batch {
				break
			}
		}
		if len(rows) == 0 {
			rows = message.RowSet{{flag}}
			cols = cols[:1]
		}
	}
	return &message.RowsResult{Metadata: &message.RowsMetadata{ColumnCount: int32(len(cols)), Columns: cols}, Data: rows}, nil
}
