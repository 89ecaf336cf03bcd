package coordinator

import (
	"context"
	"encoding/binary"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/datastax/go-cassandra-native-protocol/datatype"
	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"

	"github.com/cqld/cqld/mutation"
	"github.com/cqld/cqld/schema"
	"github.com/cqld/cqld/statements"
	"github.com/cqld/cqld/statements/functions"
	"github.com/cqld/cqld/statements/types"
	"github.com/cqld/cqld/storage"
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
}

func (p *writePlan) markers() []*message.ColumnMetadata       { return p.binds }
func (p *writePlan) pkIndices() []uint16                      { return p.pk }
func (p *writePlan) resultColumns() []*message.ColumnMetadata { return nil }

func (c *Coordinator) writeTable(ks, table, session string) (*tableInfo, error) {
	ks, err := schema.ResolveKeyspace(ks, session)
	if err != nil {
		return nil, err
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
	t, err := c.writeTable(s.Keyspace, s.Table, session)
	if err != nil {
		return nil, err
	}
	if len(s.Columns) != len(s.Values) {
		return nil, invalidf("Unmatched column names/values")
	}
	b.keyspace, b.table = t.def.Keyspace, t.def.Name
	p := &writePlan{t: t, kind: kindInsert, insertPK: make([]valueExpr, len(t.pk)), insertCK: make([]valueExpr, len(t.ck)), staticOnly: true}
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
		if pos, ok := pkPos[ci]; ok {
			p.insertPK[pos] = v
			continue
		}
		if pos, ok := ckPos[ci]; ok {
			p.insertCK[pos] = v
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
	t, err := c.writeTable(s.Keyspace, s.Table, session)
	if err != nil {
		return nil, err
	}
	b.keyspace, b.table = t.def.Keyspace, t.def.Name
	p := &writePlan{t: t, kind: kindUpdate, staticOnly: true}
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
	t, err := c.writeTable(s.Keyspace, s.Table, session)
	if err != nil {
		return nil, err
	}
	b.keyspace, b.table = t.def.Keyspace, t.def.Name
	p := &writePlan{t: t, kind: kindDelete, staticOnly: len(s.Columns) > 0}
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

// lastMicros makes server-side timestamps strictly increasing, so two
// writes of one client in the same microsecond still order.
var lastMicros atomic.Int64

func serverTimestamp(now time.Time) int64 {
	t := now.UnixMicro()
	for {
		last := lastMicros.Load()
		if t <= last {
			t = last + 1
		}
		if lastMicros.CompareAndSwap(last, t) {
			return t
		}
	}
}

// writeTime resolves a write's timestamp and TTL.
func (p *writePlan) writeTime(x *execution) (ts int64, ttl int32, err error) {
	switch {
	case p.ts != nil:
		v, err := p.ts.eval(x)
		if err != nil && err != errUnset {
			return 0, 0, err
		}
		if len(v) != 8 {
			return 0, 0, invalidf("Invalid null value of timestamp")
		}
		ts = int64(binary.BigEndian.Uint64(v))
		if ts == -1<<63 {
			return 0, 0, invalidf("Invalid timestamp value")
		}
	case x.opts.DefaultTimestamp != nil:
		ts = *x.opts.DefaultTimestamp
	default:
		ts = serverTimestamp(x.now())
	}
	ttl = p.t.def.Options.DefaultTimeToLive
	if p.ttl != nil {
		v, err := p.ttl.eval(x)
		if err != nil && err != errUnset {
			return 0, 0, err
		}
		if err == nil {
			if len(v) != 4 {
				return 0, 0, invalidf("Invalid null value of TTL")
			}
			ttl = int32(binary.BigEndian.Uint32(v))
		}
		if ttl < 0 {
			return 0, 0, invalidf("A TTL must be greater or equal to 0, but was %d", ttl)
		}
		if ttl > maxTTL {
			return 0, 0, invalidf("ttl is too large. requested (%d) maximum (%d)", ttl, maxTTL)
		}
	}
	return ts, ttl, nil
}

// run checks that p's table is still current once, as the mutation applies
// (Engine.ApplyIf): a stale plan builds its mutation for nothing, but no
// write pays for the check twice.
func (p *writePlan) run(_ context.Context, c *Coordinator, x *execution) (message.Message, error) {
	if err := p.admit(c, x); err != nil {
		return nil, err
	}
	m, err := p.mutation(c, x)
	if err != nil {
		return nil, err
	}
	defer m.Release()
	return p.applied(c.data.Apply(x.ctx, x.opts.Consistency, m, p.writeType(), p.current(c)))
}

// start runs a write that must not block (on an event loop) as far as the
// commit log. When the write waits for a sync, pending is true and then
// gets the answer later, from another goroutine; otherwise the answer is
// returned. REQUIRES: not a counter write, nor one that reads first.
func (p *writePlan) start(c *Coordinator, x *execution, then func(message.Message, error)) (pending bool, msg message.Message, err error) {
	if err := p.admit(c, x); err != nil {
		return false, nil, err
	}
	m, err := p.mutation(c, x)
	if err != nil {
		return false, nil, err
	}
	pending, err = c.local.ApplyAsync(m, p.current(c), func(err error) { then(p.applied(err)) })
	m.Release()
	if pending {
		return true, nil, nil
	}
	msg, err = p.applied(err)
	return false, msg, err
}

// admit refuses a write the consistency level does not allow. Whether
// enough replicas are up is the proxy's to answer, before it sends.
func (p *writePlan) admit(c *Coordinator, x *execution) error {
	return checkWriteConsistency(x)
}

// mutation is the write's changes, for the engine to apply.
func (p *writePlan) mutation(c *Coordinator, x *execution) (*mutation.Mutation, error) {
	m := mutation.New()
	if err := p.mutateInto(m, x); err != nil {
		return nil, err
	}
	return m, nil
}

// current is the check the engine runs as it applies the write: the plan's
// table definition must still be the current one.
func (p *writePlan) current(c *Coordinator) func() error {
	return func() error { return c.checkCurrent(p.t) }
}

// applied is the answer to a write the engine applied, or failed to.
func (p *writePlan) applied(err error) (message.Message, error) {
	switch {
	case err == nil:
		return &message.VoidResult{}, nil
	case isStale(err) || isDropped(err):
		return nil, err
	}
	return nil, fmt.Errorf("write to %s.%s: %w", p.t.def.Keyspace, p.t.def.Name, err)
}

// checkAllCurrent is checkCurrent of every write of a batch. Writes check
// once more as they apply (Engine.ApplyIf), so none planned before a schema
// change lands after the change's WaitApplies.
func (c *Coordinator) checkAllCurrent(ws []*writePlan) error {
	for _, w := range ws {
		if err := c.checkCurrent(w.t); err != nil {
			return err
		}
	}
	return nil
}

// checkCurrent refuses to run a plan made against a table definition that
// a schema change has replaced or dropped.
func (c *Coordinator) checkCurrent(t *tableInfo) error {
	cur := c.catalog.Current().Table(t.def.Keyspace, t.def.Name)
	switch {
	case cur == t.def:
		return nil
	case cur == nil:
		return &droppedError{invalidf("unconfigured table %s", t.def.Name)}
	}
	// Altered, or dropped and created again: a prepared statement must be
	// prepared again (EXECUTE turns this into UNPREPARED); a query is
	// analysed afresh by its retry.
	return &staleError{table: t.def.Name}
}

// staleError is a plan made against a table definition that ALTER TABLE
// has since replaced.
type staleError struct{ table string }

func (e *staleError) Error() string {
	return fmt.Sprintf("table %s was altered while the statement ran; retry it", e.table)
}

// mutateInto adds the write's changes to m.
func (p *writePlan) mutateInto(m *mutation.Mutation, x *execution) error {
	t := p.t
	ts, ttl, err := p.writeTime(x)
	if err != nil {
		return err
	}
	now := x.nowInSeconds()
	live := storage.Cell{Timestamp: ts}
	if ttl > 0 {
		live.TTL, live.LocalDeletionTime = ttl, now+ttl
	}
	dead := storage.Cell{Timestamp: ts, Tombstone: true, LocalDeletionTime: now}

	var pks, cks [][][]byte
	if p.kind == kindInsert {
		pk, err := evalExprs(t, p.insertPK, t.pk, x)
		if err != nil {
			return err
		}
		pks = [][][]byte{pk}
		if !p.staticOnly {
			ck, err := evalExprs(t, p.insertCK, t.ck, x)
			if err != nil {
				return err
			}
			cks = [][][]byte{ck}
		}
	} else {
		if pks, err = evalKeys(t, p.keys.pk, t.pk, x); err != nil {
			return err
		}
		if !p.staticOnly && len(p.keys.ck) > 0 {
			if cks, err = evalKeys(t, p.keys.ck, t.ck, x); err != nil {
				return err
			}
		}
	}
	for _, pk := range pks {
		if len(pk) == 1 && len(pk[0]) == 0 {
			return invalidf("Key may not be empty")
		}
	}
	for _, pkVals := range pks {
		pk := t.partitionKey(pkVals)
		if p.kind == kindDelete && len(p.ops) == 0 {
			if err := p.deleteRows(m, pk, x, dead); err != nil {
				return err
			}
			continue
		}
		// Static columns belong to the partition: change them once, however
		// many rows the write names.
		for _, op := range p.ops {
			if t.cols[op.col].isStatic() {
				if err := p.apply(m, pk, nil, op, x, live, dead); err != nil {
					return err
				}
			}
		}
		if p.staticOnly {
			continue
		}
		targets := cks
		if len(t.ck) == 0 {
			targets = [][][]byte{nil}
		}
		for _, ck := range targets {
			if p.kind == kindInsert {
				m.WriteRowMarker(t.st, pk, ck, live)
			}
			for _, op := range p.ops {
				if t.cols[op.col].isStatic() {
					continue
				}
				if err := p.apply(m, pk, ck, op, x, live, dead); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func evalExprs(t *tableInfo, exprs []valueExpr, cols []int, x *execution) ([][]byte, error) {
	out := make([][]byte, len(exprs))
	for i, e := range exprs {
		v, err := e.eval(x)
		if err == errUnset || (err == nil && v == nil) {
			return nil, invalidf("Invalid null value in condition for column %s", t.cols[cols[i]].def.Name)
		}
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

// deleteRows is DELETE of whole rows: a row, a range or a partition.
func (p *writePlan) deleteRows(m *mutation.Mutation, pk []byte, x *execution, dead storage.Cell) error {
	t := p.t
	k := p.keys
	if len(k.ck) == 0 && k.lower == nil && k.upper == nil {
		m.DeletePartition(t.st, pk, dead)
		return nil
	}
	if len(k.ck) == len(t.ck) {
		cks, err := evalKeys(t, k.ck, t.ck, x)
		if err != nil {
			return err
		}
		for _, ck := range cks {
			m.DeleteRow(t.st, pk, ck, dead)
		}
		return nil
	}
	slices, err := k.slices(t, x)
	if err != nil {
		return err
	}
	for _, s := range slices {
		m.DeleteRange(t.st, pk, s, dead)
	}
	return nil
}

// apply writes one column operation to the row (pk, ck); ck is nil for a
// static column.
func (p *writePlan) apply(m *mutation.Mutation, pk []byte, ck [][]byte, op writeOp, x *execution, live, dead storage.Cell) error {
	t := p.t
	col := &t.cols[op.col]
	tg := storage.CellTarget{Clustering: ck, Static: col.isStatic(), Column: col.def.Name}
	if tg.Static {
		tg.Clustering = nil
	}
	switch {
	case op.kind == opSetIndex, op.kind == opDeleteIndex,
		op.kind == opSubtract && col.typ.Code() == primitive.DataTypeCodeList:
		return p.applyListRead(m, pk, tg, op, col, x, live, dead)
	}
	var v, key []byte
	var err error
	if op.value != nil {
		if v, err = op.value.eval(x); err == errUnset {
			return nil // an unset value leaves the column as it is
		} else if err != nil {
			return err
		}
	}
	if op.key != nil {
		if key, err = op.key.eval(x); err == errUnset {
			return invalidf("Invalid unset map key")
		} else if err != nil {
			return err
		}
		if key == nil {
			return invalidf("Invalid null map key")
		}
	}
	if op.kind == opCounter {
		if v == nil || len(v) != 8 {
			return invalidf("Invalid null value for counter increment")
		}
		delta := int64(binary.BigEndian.Uint64(v))
		if op.negate {
			delta = -delta
		}
		m.AddCounter(t.st, pk, tg, delta, live.Timestamp)
		return nil
	}
	if !col.multiCell() {
		switch op.kind {
		case opSet:
			if v == nil {
				m.WriteCell(t.st, pk, tg, dead)
				return nil
			}
			c := live
			c.Value = v
			m.WriteCell(t.st, pk, tg, c)
			return nil
		case opDelete:
			m.WriteCell(t.st, pk, tg, dead)
			return nil
		}
		return invalidf("Invalid operation on column %s", col.def.Name)
	}
	switch op.kind {
	case opSet, opDelete:
		// Replacing a whole collection deletes what was there just before
		// this write's elements.
		del := dead
		if op.kind == opSet {
			del.Timestamp--
		}
		m.DeleteCollection(t.st, pk, tg, del)
		if op.kind == opDelete || v == nil {
			return nil
		}
		return p.writeElements(m, pk, tg, col, v, x, live, false)
	case opFieldSet, opFieldDel:
		return p.writeField(m, pk, tg, op, v, live, dead)
	case opAdd:
		if v == nil {
			return nil
		}
		return p.writeElements(m, pk, tg, col, v, x, live, false)
	case opPrepend:
		if v == nil {
			return nil
		}
		return p.writeElements(m, pk, tg, col, v, x, live, true)
	case opSubtract:
		if v == nil {
			return nil
		}
		kt := col.typ.(interface{}).(datatype.DataType)
		switch ct := col.typ.(type) {
		case *datatype.Set:
			kt = ct.ElementType
		case *datatype.Map:
			kt = ct.KeyType
		}
		return types.WalkCollection(v, func(e []byte) error {
			tg.PathType, tg.Path = kt, e
			m.WriteCell(t.st, pk, tg, dead)
			return nil
		}, nil)
	case opSetKey:
		mt := col.typ.(*datatype.Map)
		tg.PathType, tg.Path = mt.KeyType, key
		if v == nil {
			m.WriteCell(t.st, pk, tg, dead)
			return nil
		}
		c := live
		c.Value = v
		m.WriteCell(t.st, pk, tg, c)
		return nil
	case opDeleteKey:
		switch ct := col.typ.(type) {
		case *datatype.Map:
			tg.PathType = ct.KeyType
		case *datatype.Set:
			tg.PathType = ct.ElementType
		}
		tg.Path = key
		m.WriteCell(t.st, pk, tg, dead)
		return nil
	}
	return invalidf("Invalid operation on column %s", col.def.Name)
}

// List element positions are version 1 UUIDs whose times order the
// elements. Like Cassandra's, they are strictly increasing for appends and
// strictly decreasing (below a reference time) for prepends, node-wide, so
// two statements of one batch, or of one clock tick, keep their order.
var lastAppendTicks, lastPrependTicks atomic.Int64

// listTimes returns n element times in 100ns units since 1582, increasing
// in element order: after every earlier append, or before every earlier
// prepend.
func listTimes(now time.Time, n int, prepend bool) []int64 {
	out := make([]int64, n)
	if !prepend {
		t := now.UnixNano()/100 + functions.GregorianOffset
		for {
			last := lastAppendTicks.Load()
			first := t
			if first <= last {
				first = last + 1
			}
			if lastAppendTicks.CompareAndSwap(last, first+int64(n)-1) {
				for i := range out {
					out[i] = first + int64(i)
				}
				return out
			}
		}
	}
	ref := int64(prependEpochMillis*10000 + functions.GregorianOffset)
	t := ref - (now.UnixNano()/100 + functions.GregorianOffset - ref)
	for {
		last := lastPrependTicks.Load()
		top := t // the highest time this prepend may use
		if last != 0 && top >= last {
			top = last - 1
		}
		lowest := top - int64(n) + 1
		if lastPrependTicks.CompareAndSwap(last, lowest) {
			for i := range out {
				out[i] = lowest + int64(i)
			}
			return out
		}
	}
}

// timeUUIDAt makes a version 1 UUID with the given time and a random clock
// sequence and node.
func timeUUIDAt(ticks int64) []byte {
	u := functions.NewTimeUUID(time.Unix(0, 0))
	ts := uint64(ticks)
	binary.BigEndian.PutUint32(u[0:], uint32(ts))
	binary.BigEndian.PutUint16(u[4:], uint16(ts>>32))
	binary.BigEndian.PutUint16(u[6:], uint16(ts>>48)&0x0fff|0x1000)
	return u
}

// prependEpoch is Cassandra's reference time for list prepends
// (2010-01-01): prepended elements get times before it, so they sort before
// every appended one.
const prependEpochMillis = 1262304000000

// writeElements writes the elements of a serialized collection v as cells.
func (p *writePlan) writeElements(m *mutation.Mutation, pk []byte, tg storage.CellTarget, col *colInfo, v []byte, x *execution, live storage.Cell, prepend bool) error {
	t := p.t
	switch ct := col.typ.(type) {
	case *datatype.UserDefined:
		return p.writeFields(m, pk, tg, ct, v, live)
	case *datatype.Set:
		return types.WalkCollection(v, func(e []byte) error {
			tg.PathType, tg.Path = ct.ElementType, e
			c := live
			c.Value = []byte{}
			m.WriteCell(t.st, pk, tg, c)
			return nil
		}, nil)
	case *datatype.Map:
		var key []byte
		return types.WalkCollection(v, func(k []byte) error { key = k; return nil }, func(val []byte) error {
			tg.PathType, tg.Path = ct.KeyType, key
			c := live
			c.Value = val
			m.WriteCell(t.st, pk, tg, c)
			return nil
		})
	case *datatype.List:
		var elems [][]byte
		if err := types.WalkCollection(v, func(e []byte) error { elems = append(elems, e); return nil }, nil); err != nil {
			return err
		}
		ticks := listTimes(x.now(), len(elems), prepend)
		for i, e := range elems {
			tg.PathType, tg.Path = datatype.Timeuuid, timeUUIDAt(ticks[i])
			c := live
			c.Value = e
			m.WriteCell(t.st, pk, tg, c)
		}
		return nil
	}
	return invalidf("Invalid collection operation on %s", col.def.Name)
}
