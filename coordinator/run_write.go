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
	"github.com/cqld/cqld/statements/functions"
	"github.com/cqld/cqld/statements/types"
	"github.com/cqld/cqld/storage"
)

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
// commit log. When the write waits for a sync, pending is true and
// applied gets the engine's outcome later, from another goroutine, to
// make its answer with p.applied; otherwise the answer is returned.
// REQUIRES: not a counter write, nor one that reads first.
func (p *writePlan) start(c *Coordinator, x *execution, applied func(error)) (pending bool, msg message.Message, err error) {
	if err := p.admit(c, x); err != nil {
		return false, nil, err
	}
	m, err := p.mutation(c, x)
	if err != nil {
		return false, nil, err
	}
	pending, err = c.data.ApplyLocal(x.opts.Consistency, m, p.current(c), applied)
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
	if p.fns != nil {
		if err := c.functionsCurrent(p.fns.used); err != nil {
			return err
		}
	}
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
// table definition must still be the current one. It is made once per
// plan and coordinator, not per write.
func (p *writePlan) current(c *Coordinator) func() error {
	if k := p.check.Load(); k != nil && k.c == c {
		return k.fn
	}
	k := &planCheck{c: c, fn: func() error { return c.checkCurrent(p.t) }}
	p.check.Store(k)
	return k.fn
}

// planCheck is a writePlan's current, for coordinator c.
type planCheck struct {
	c  *Coordinator
	fn func() error
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
			m.WriteCell(p.t.st, pk, tg, valueCell(v, &live, &dead))
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
		m.WriteCell(p.t.st, pk, tg, valueCell(v, &live, &dead))
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

// writeFields writes the non-null fields of a whole user type value v
// as cells (the column's earlier cells are deleted by the caller).
func (p *writePlan) writeFields(m *mutation.Mutation, pk []byte, tg storage.CellTarget, ut *datatype.UserDefined, v []byte, live storage.Cell) error {
	rest := v
	for i := 0; i < len(ut.FieldTypes) && len(rest) > 0; i++ {
		f, r, ok := types.ReadBytes(rest)
		if !ok {
			break // REQUIRES: validated, so never
		}
		rest = r
		if f == nil {
			continue
		}
		tg.PathType, tg.Path = datatype.Smallint, udtFieldPath(i)
		c := live
		c.Value = f
		m.WriteCell(p.t.st, pk, tg, c)
	}
	return nil
}

// valueCell is the cell that writes v: live holding v, or dead (deleting
// the cell) when v is null.
func valueCell(v []byte, live, dead *storage.Cell) storage.Cell {
	if v == nil {
		return *dead
	}
	c := *live
	c.Value = v
	return c
}

// writeField is c.f = v and DELETE c.f; v is the evaluated value.
func (p *writePlan) writeField(m *mutation.Mutation, pk []byte, tg storage.CellTarget, op writeOp, v []byte, live, dead storage.Cell) error {
	tg.PathType, tg.Path = datatype.Smallint, udtFieldPath(op.field)
	if op.kind == opFieldDel {
		v = nil
	}
	m.WriteCell(p.t.st, pk, tg, valueCell(v, &live, &dead))
	return nil
}
