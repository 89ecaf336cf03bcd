package coordinator

import (
	"bytes"
	"encoding/binary"

	"github.com/datastax/go-cassandra-native-protocol/datatype"

	"github.com/cqld/cqld/mutation"
	"github.com/cqld/cqld/statements/types"
	"github.com/cqld/cqld/storage"
)

// List operations that name elements by position or by value read the
// row's current list first, as Cassandra's do (Lists.SetterByIndex,
// DiscarderByIndex, Discarder): `l[i] = v`, `DELETE l[i]` and `l = l - [v]`.
// The read is not isolated from concurrent writes to the same list, in
// Cassandra neither; the element cells written are ordinary timestamped
// cells, so the usual last-write-wins applies to them.

// listCells returns the live cells of list column col in row (pk, ck), in
// list order.
func (p *writePlan) listCells(pk []byte, ck [][]byte, col *colInfo, x *execution) ([]storage.ColumnCell, error) {
	o := storage.ReadOptions{Now: x.nowInSeconds()}
	static := col.isStatic()
	if !static && len(ck) > 0 {
		o.Slice = storage.Slice{Start: &storage.Bound{Prefix: ck, Inclusive: true}, End: &storage.Bound{Prefix: ck, Inclusive: true}}
	}
	var out []storage.ColumnCell
	read := func(fn func(*storage.Row) bool) error {
		if x.casData != nil {
			return p.t.st.Resolve(x.casData, o, fn)
		}
		return p.lists.data.ReadPartition(x.ctx, readLevel(x.opts.Consistency), p.t.st, pk, o, fn)
	}
	err := read(func(r *storage.Row) bool {
		if r.Static != static {
			return !static // the static row comes first: past it, stop
		}
		for _, c := range r.Cells {
			if c.Column == col.def.Name && c.Path != nil {
				out = append(out, c)
			}
		}
		return false
	})
	return out, err
}

// applyListRead runs a list operation that reads the current list.
func (p *writePlan) applyListRead(m *mutation.Mutation, pk []byte, tg storage.CellTarget, op writeOp, col *colInfo, x *execution, live, dead storage.Cell) error {
	var idx, v []byte
	var err error
	if op.key != nil {
		idx, err = op.key.eval(x)
		switch {
		case err == errUnset && op.kind == opDeleteIndex:
			return nil
		case err == errUnset:
			return invalidf("Invalid unset value for list index")
		case err != nil:
			return err
		case idx == nil:
			return invalidf("Invalid null value for list index")
		case len(idx) != 4:
			return invalidf("Expected 4 bytes for a list index (%d)", len(idx))
		}
	}
	if op.value != nil {
		if v, err = op.value.eval(x); err == errUnset {
			return nil
		} else if err != nil {
			return err
		}
		if v == nil && op.kind == opSubtract {
			return nil
		}
	}
	cells, err := p.listCells(pk, tg.Clustering, col, x)
	if err != nil {
		return err
	}
	tg.PathType = datatype.Timeuuid
	if op.kind == opSubtract {
		var drop [][]byte
		if err := types.WalkCollection(v, func(e []byte) error { drop = append(drop, e); return nil }, nil); err != nil {
			return err
		}
		for _, c := range cells {
			if !containsBytes(drop, c.Cell.Value) {
				continue
			}
			if tg.Path, _, err = storage.DecodeKey(c.Path, datatype.Timeuuid, false); err != nil {
				return err
			}
			m.WriteCell(p.t.st, pk, tg, dead)
		}
		return nil
	}
	i := int(int32(binary.BigEndian.Uint32(idx)))
	if len(cells) == 0 {
		if op.kind == opDeleteIndex {
			return invalidf("Attempted to delete an element from a list which is null")
		}
		return invalidf("Attempted to set an element on a list which is null")
	}
	if i < 0 || i >= len(cells) {
		return invalidf("List index %d out of bound, list has size %d", i, len(cells))
	}
	if tg.Path, _, err = storage.DecodeKey(cells[i].Path, datatype.Timeuuid, false); err != nil {
		return err
	}
	if op.kind == opDeleteIndex || v == nil {
		m.WriteCell(p.t.st, pk, tg, dead)
		return nil
	}
	c := live
	c.Value = v
	m.WriteCell(p.t.st, pk, tg, c)
	return nil
}

func containsBytes(set [][]byte, b []byte) bool {
	for _, s := range set {
		if bytes.Equal(s, b) {
			return true
		}
	}
	return false
}
