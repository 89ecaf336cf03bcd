package coordinator

import (
	"sync/atomic"

	"github.com/datastax/go-cassandra-native-protocol/datatype"
	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"

	"github.com/cqld/cqld/schema"
	"github.com/cqld/cqld/statements"
	"github.com/cqld/cqld/systables"
)

type opKind uint8

const (
	opSet         opKind = iota + 1 // c = v
	opAdd                           // c = c + v (collections)
	opSubtract                      // c = c - v (collections)
	opPrepend                       // c = v + c (lists)
	opSetKey                        // c[k] = v (maps)
	opDelete                        // DELETE c
	opDeleteKey                     // DELETE c[k] (maps, sets)
	opCounter                       // c = c + n, c = c - n (counters)
	opSetIndex                      // c[i] = v (lists)
	opDeleteIndex                   // DELETE c[i] (lists)
	opFieldSet                      // c.f = v (non-frozen user types)
	opFieldDel                      // DELETE c.f (non-frozen user types)
)

// writeOp changes one column of each row a write reaches.
type writeOp struct {
	col    int
	kind   opKind
	value  valueExpr
	key    valueExpr
	negate bool // counter decrement
	field  int  // opFieldSet, opFieldDel: the field's position
}

type writeKind uint8

const (
	kindInsert writeKind = iota + 1
	kindUpdate
	kindDelete
)

// writePlan is an INSERT, UPDATE or DELETE without conditions.
type writePlan struct {
	t    *tableInfo
	kind writeKind
	// fns notes the user-defined functions the write calls.
	fns  *fnScope
	keys *keyRestrictions // UPDATE and DELETE
	// INSERT: one value per key column.
	insertPK, insertCK []valueExpr
	ops                []writeOp
	ts, ttl            valueExpr
	binds              []*message.ColumnMetadata
	pk                 []uint16
	// staticOnly: every op is on a static column, so no clustering is
	// needed.
	staticOnly bool
	// counter: the write increments counters, which reads their current
	// values (under the coordinator's counter lock).
	counter bool
	// lists is the coordinator whose data the write reads the current
	// list through (operations by index or value); nil when it never
	// reads.
	lists *Coordinator
	// check is current's answer, made on the plan's first write.
	check atomic.Pointer[planCheck]
}

func (p *writePlan) markers() []*message.ColumnMetadata { return p.binds }

func (p *writePlan) pkIndices() []uint16 { return p.pk }

func (p *writePlan) resultColumns() []*message.ColumnMetadata { return nil }

// writeTable is the table an INSERT, UPDATE or (del) DELETE writes, or
// their refusal: a virtual table's as Cassandra answers it, any other
// system table's as not user-modifiable.
func (c *Coordinator) writeTable(ks, table, session string, del bool) (*tableInfo, error) {
	ks, err := schema.ResolveKeyspace(ks, session)
	if err != nil {
		return nil, err
	}
	if systables.IsVirtualKeyspace(ks) {
		switch {
		case systables.Lookup(ks, table) == nil:
			return nil, invalidf("unconfigured table %s", table)
		case del:
			return nil, invalidf("Virtual tables don't support DELETE statements")
		}
		return nil, invalidf("Modification is not supported by table %s.%s", ks, table)
	}
	if err := userModifiable(ks); err != nil {
		return nil, err
	}
	return c.userTable(ks, table)
}

// using compiles USING TIMESTAMP and TTL.
func (p *writePlan) using(u statements.Using, b *binder) error {
	var err error
	if p.counter && u.Timestamp != nil {
		return invalidf("Cannot provide custom timestamp for counter updates")
	}
	if p.counter && u.TTL != nil {
		return invalidf("Cannot provide custom TTL for counter updates")
	}
	if u.Timestamp != nil {
		if p.ts, err = b.term(u.Timestamp, datatype.Bigint, "[timestamp]"); err != nil {
			return err
		}
	}
	if u.TTL != nil {
		if p.kind == kindDelete {
			return invalidf("TTL attribute is not allowed for deletes")
		}
		if p.ttl, err = b.term(u.TTL, datatype.Int, "[ttl]"); err != nil {
			return err
		}
	}
	return nil
}

func (c *Coordinator) analyzeInsert(s *statements.Insert, n int, session string) (plan, error) {
	b := newBinder("", "", n)
	p, err := c.insertPlan(s, b, session)
	return c.finishWrite(p, err, b, casSpec{ifNotExists: s.IfNotExists})
}

func (c *Coordinator) insertPlan(s *statements.Insert, b *binder, session string) (*writePlan, error) {
	if s.Json != nil {
		return c.insertJSONPlan(s, b, session)
	}
	t, err := c.writeTable(s.Keyspace, s.Table, session, false)
	if err != nil {
		return nil, err
	}
	if len(s.Columns) != len(s.Values) {
		return nil, invalidf("Unmatched column names/values")
	}
	b.keyspace, b.table = t.def.Keyspace, t.def.Name
	b.fn = c.fnScope(t.def.Keyspace)
	p := &writePlan{t: t, fns: b.fn, kind: kindInsert, insertPK: make([]valueExpr, len(t.pk)), insertCK: make([]valueExpr, len(t.ck)), staticOnly: true}
	pkPos, ckPos := positions(t.pk), positions(t.ck)
	seen := map[string]bool{}
	hasRegular := false
	for i, name := range s.Columns {
		ci, col, err := t.column(name)
		if err != nil {
			return nil, err
		}
		if seen[name] {
			return nil, invalidf("Multiple definitions found for column %s", name)
		}
		seen[name] = true
		v, err := b.term(s.Values[i], col.typ, name)
		if err != nil {
			return nil, err
		}
		if p.insertKey(ci, v, pkPos, ckPos) {
			continue
		}
		if !col.isStatic() {
			hasRegular = true
		}
		if col.typ.Code() == primitive.DataTypeCodeCounter {
			return nil, invalidf("INSERT statements are not allowed on counter tables, use UPDATE instead")
		}
		p.ops = append(p.ops, writeOp{col: ci, kind: opSet, value: v})
	}
	if missing := missingNames(t, t.pk, func(i int) bool { return p.insertPK[i] != nil }); missing != "" {
		return nil, invalidf("Some partition key parts are missing: %s", missing)
	}
	ckGiven := 0
	for _, v := range p.insertCK {
		if v != nil {
			ckGiven++
		}
	}
	p.staticOnly = ckGiven == 0 && !hasRegular && t.hasStatic() && len(p.ops) > 0
	if !p.staticOnly {
		if missing := missingNames(t, t.ck, func(i int) bool { return p.insertCK[i] != nil }); missing != "" {
			return nil, invalidf("Some clustering keys are missing: %s", missing)
		}
	}
	if err := p.using(s.Using, b); err != nil {
		return nil, err
	}
	for _, v := range p.insertPK {
		m, ok := v.(markerExpr)
		if !ok {
			p.pk = nil
			break
		}
		p.pk = append(p.pk, uint16(m.index))
	}
	return p, nil
}

// finishWrite completes the analysis of a write: conditional when spec
// says so, every bind marker bound.
func (c *Coordinator) finishWrite(p *writePlan, err error, b *binder, spec casSpec) (plan, error) {
	if err != nil {
		return nil, err
	}
	if spec.ifExists || spec.ifNotExists || len(spec.conds) > 0 {
		return c.casWrap(p, b, spec)
	}
	if err := b.check(); err != nil {
		return nil, err
	}
	p.binds = b.specs
	return p, nil
}

// insertKey takes v as the value of column col when it is a key column
// (pkPos and ckPos give the key columns' positions), and reports whether
// it was one.
func (p *writePlan) insertKey(col int, v valueExpr, pkPos, ckPos map[int]int) bool {
	if pos, ok := pkPos[col]; ok {
		p.insertPK[pos] = v
		return true
	}
	if pos, ok := ckPos[col]; ok {
		p.insertCK[pos] = v
		return true
	}
	return false
}

func positions(cols []int) map[int]int {
	m := make(map[int]int, len(cols))
	for i, c := range cols {
		m[c] = i
	}
	return m
}

func missingNames(t *tableInfo, cols []int, given func(int) bool) string {
	out := ""
	for i, c := range cols {
		if !given(i) {
			if out != "" {
				out += ", "
			}
			out += t.cols[c].def.Name
		}
	}
	return out
}

func (c *Coordinator) analyzeUpdate(s *statements.Update, n int, session string) (plan, error) {
	b := newBinder("", "", n)
	p, err := c.updatePlan(s, b, session)
	return c.finishWrite(p, err, b, casSpec{ifExists: s.IfExists, conds: s.Conditions})
}

func (c *Coordinator) updatePlan(s *statements.Update, b *binder, session string) (*writePlan, error) {
	t, err := c.writeTable(s.Keyspace, s.Table, session, false)
	if err != nil {
		return nil, err
	}
	b.keyspace, b.table = t.def.Keyspace, t.def.Name
	b.fn = c.fnScope(t.def.Keyspace)
	p := &writePlan{t: t, fns: b.fn, kind: kindUpdate, staticOnly: true}
	for _, a := range s.Assignments {
		ci, col, err := t.column(a.Column)
		if err != nil {
			return nil, err
		}
		if col.isKey() {
			return nil, invalidf("PRIMARY KEY part %s found in SET part", a.Column)
		}
		if !col.isStatic() {
			p.staticOnly = false
		}
		if a.Field != "" {
			op, err := fieldOp(col, ci, a.Field, "("+a.Column+"."+a.Field+" = "+termText(a.Value)+")", b, a.Value)
			if err != nil {
				return nil, err
			}
			p.ops = append(p.ops, op)
			continue
		}
		op := writeOp{col: ci}
		if col.typ.Code() == primitive.DataTypeCodeCounter {
			if a.Op != statements.AssignAdd && a.Op != statements.AssignSubtract {
				return nil, invalidf("Cannot set the value of counter column %s (counters can only be incremented/decremented, not set)", a.Column)
			}
			op.kind = opCounter
			if op.value, err = b.term(a.Value, datatype.Bigint, a.Column); err != nil {
				return nil, err
			}
			if a.Op == statements.AssignSubtract {
				op.negate = true
			}
			p.counter = true
			p.ops = append(p.ops, op)
			continue
		}
		switch a.Op {
		case statements.AssignSet:
			if l, ok := col.typ.(*datatype.List); ok && a.Key != nil && col.multiCell() {
				op.kind = opSetIndex
				p.lists = c
				if op.key, err = b.term(a.Key, datatype.Int, "idx("+a.Column+")"); err != nil {
					return nil, err
				}
				op.value, err = b.term(a.Value, l.ElementType, "value("+a.Column+")")
				break
			}
			if a.Key != nil {
				m, ok := col.typ.(*datatype.Map)
				if !ok || !col.multiCell() {
					return nil, invalidf("Invalid operation (%s[...] = ...) for non map column %s", a.Column, a.Column)
				}
				op.kind = opSetKey
				if op.key, err = b.term(a.Key, m.KeyType, "key("+a.Column+")"); err != nil {
					return nil, err
				}
				if op.value, err = b.term(a.Value, m.ValueType, "value("+a.Column+")"); err != nil {
					return nil, err
				}
				break
			}
			op.kind = opSet
			op.value, err = b.term(a.Value, col.typ, a.Column)
		case statements.AssignAdd, statements.AssignSubtract, statements.AssignPrepend:
			if !col.multiCell() || !col.isCollection() {
				return nil, invalidf("Invalid operation (%s = %s + ?) for non collection column %s", a.Column, a.Column, a.Column)
			}
			op.kind = map[statements.AssignmentOp]opKind{statements.AssignAdd: opAdd, statements.AssignSubtract: opSubtract, statements.AssignPrepend: opPrepend}[a.Op]
			if op.kind == opSubtract && col.typ.Code() == primitive.DataTypeCodeList {
				p.lists = c
			}
			if op.kind == opPrepend && col.typ.Code() != primitive.DataTypeCodeList {
				return nil, invalidf("Invalid operation (%s = ? + %s) for non list column %s", a.Column, a.Column, a.Column)
			}
			vt := col.typ
			if op.kind == opSubtract && col.typ.Code() == primitive.DataTypeCodeMap {
				vt = datatype.NewSet(col.typ.(*datatype.Map).KeyType)
			}
			op.value, err = b.term(a.Value, vt, a.Column)
		default:
			return nil, invalidf("Unsupported assignment on %s", a.Column)
		}
		if err != nil {
			return nil, err
		}
		p.ops = append(p.ops, op)
	}
	if err := p.analyzeKeys(s.Where, b, false); err != nil {
		return nil, err
	}
	if err := p.using(s.Using, b); err != nil {
		return nil, err
	}
	return p, nil
}

func (c *Coordinator) analyzeDelete(s *statements.Delete, n int, session string) (plan, error) {
	b := newBinder("", "", n)
	p, err := c.deletePlan(s, b, session)
	return c.finishWrite(p, err, b, casSpec{ifExists: s.IfExists, conds: s.Conditions})
}

func (c *Coordinator) deletePlan(s *statements.Delete, b *binder, session string) (*writePlan, error) {
	t, err := c.writeTable(s.Keyspace, s.Table, session, true)
	if err != nil {
		return nil, err
	}
	b.keyspace, b.table = t.def.Keyspace, t.def.Name
	b.fn = c.fnScope(t.def.Keyspace)
	p := &writePlan{t: t, fns: b.fn, kind: kindDelete, staticOnly: len(s.Columns) > 0}
	for _, d := range s.Columns {
		ci, col, err := t.column(d.Column)
		if err != nil {
			return nil, err
		}
		if col.isKey() {
			return nil, invalidf("Invalid identifier %s for deletion (should not be a PRIMARY KEY part)", d.Column)
		}
		if !col.isStatic() {
			p.staticOnly = false
		}
		op := writeOp{col: ci, kind: opDelete}
		if d.Field != "" {
			if op, err = fieldOp(col, ci, d.Field, "", b, nil); err != nil {
				return nil, err
			}
		}
		if d.Key != nil {
			var kt datatype.DataType
			spec := "key(" + d.Column + ")"
			op.kind = opDeleteKey
			switch ct := col.typ.(type) {
			case *datatype.Map:
				kt = ct.KeyType
			case *datatype.Set:
				kt, spec = ct.ElementType, "value("+d.Column+")"
			case *datatype.List:
				kt, spec, op.kind = datatype.Int, "idx("+d.Column+")", opDeleteIndex
				p.lists = c
			}
			if kt == nil || !col.multiCell() {
				return nil, invalidf("Invalid element deletion on %s", d.Column)
			}
			if op.key, err = b.term(d.Key, kt, spec); err != nil {
				return nil, err
			}
		}
		p.ops = append(p.ops, op)
	}
	if err := p.analyzeKeys(s.Where, b, true); err != nil {
		return nil, err
	}
	if err := p.using(s.Using, b); err != nil {
		return nil, err
	}
	return p, nil
}

// where analyses an UPDATE or DELETE's WHERE clause: the whole partition
// key, and the whole clustering unless the write only touches statics (or
// is a DELETE of whole rows, which may name a prefix or a slice).
func (p *writePlan) analyzeKeys(where []statements.Relation, b *binder, isDelete bool) error {
	t := p.t
	k, err := analyzeWhere(t, where, b)
	if err != nil {
		return err
	}
	if k.gapErr != nil {
		return k.gapErr
	}
	if len(k.filters) > 0 {
		return invalidf("Non PRIMARY KEY columns found in where clause: %s", t.cols[k.filters[0].col].def.Name)
	}
	if missing := missingNames(t, t.pk, func(i int) bool { return k.pk[i] != nil }); missing != "" {
		return invalidf("Some partition key parts are missing: %s", missing)
	}
	rowDelete := isDelete && len(p.ops) == 0
	if !rowDelete {
		if k.lower != nil || k.upper != nil {
			if isDelete {
				return invalidf("Range deletions are not supported for specific columns")
			}
			return invalidf("Slice restrictions are not supported on the clustering columns in UPDATE statements")
		}
		if p.staticOnly {
			if len(k.ck) > 0 {
				return invalidf("Invalid restrictions on clustering columns since the %s statement modifies only static columns", map[bool]string{true: "DELETE", false: "UPDATE"}[isDelete])
			}
		} else if len(k.ck) < len(t.ck) {
			return invalidf("Some clustering keys are missing: %s", t.cols[t.ck[len(k.ck)]].def.Name)
		}
	}
	p.keys = k
	for _, l := range k.pk {
		if len(l.exprs) != 1 {
			p.pk = nil
			return nil
		}
		m, ok := l.exprs[0].(markerExpr)
		if !ok {
			p.pk = nil
			return nil
		}
		p.pk = append(p.pk, uint16(m.index))
	}
	return nil
}

// maxTTL is Cassandra's limit on TTLs (20 years).
const maxTTL = 630720000

// fieldOp compiles c.f = v (value non-nil; written is the assignment as
// Cassandra prints it in errors) or DELETE c.f (value nil)
// (Operation.SetField and Operation.FieldDeletion).
func fieldOp(col *colInfo, ci int, field, written string, b *binder, value statements.Term) (writeOp, error) {
	name := col.def.Name
	ut, isUDT := col.typ.(*datatype.UserDefined)
	switch {
	case !isUDT && value != nil:
		return writeOp{}, invalidf("Invalid operation %s for non-UDT column %s", written, name)
	case !isUDT:
		return writeOp{}, invalidf("Invalid field deletion operation for non-UDT column %s", name)
	case col.frozen && value != nil:
		return writeOp{}, invalidf("Invalid operation %s for frozen UDT column %s", written, name)
	case col.frozen:
		return writeOp{}, invalidf("Frozen UDT column %s does not support field deletions", name)
	}
	i := indexOf(ut.FieldNames, field)
	if i < 0 {
		return writeOp{}, invalidf("UDT column %s does not have a field named %s", name, field)
	}
	op := writeOp{col: ci, kind: opFieldDel, field: i}
	if value != nil {
		op.kind = opFieldSet
		v, err := b.term(value, ut.FieldTypes[i], name+"."+field)
		if err != nil {
			return writeOp{}, err
		}
		op.value = v
	}
	return op, nil
}
