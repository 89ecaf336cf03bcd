package coordinator

import (
	"github.com/datastax/go-cassandra-native-protocol/datatype"

	"github.com/cqld/cqld/mutation"
	"github.com/cqld/cqld/statements"
	"github.com/cqld/cqld/statements/types"
	"github.com/cqld/cqld/storage"
)

// A non-frozen user type column (Cassandra 3.6+) is stored like a
// collection: one cell per non-null field, its path the field's position
// (udtFieldPath), so that c.f = v and DELETE c.f change one field and
// concurrent writes of different fields both win.

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

// writeField is c.f = v and DELETE c.f; v is the evaluated value.
func (p *writePlan) writeField(m *mutation.Mutation, pk []byte, tg storage.CellTarget, op writeOp, v []byte, live, dead storage.Cell) error {
	tg.PathType, tg.Path = datatype.Smallint, udtFieldPath(op.field)
	if op.kind == opFieldDel || v == nil {
		m.WriteCell(p.t.st, pk, tg, dead)
		return nil
	}
	c := live
	c.Value = v
	m.WriteCell(p.t.st, pk, tg, c)
	return nil
}

// assembleUDT serializes a non-frozen user type from its field cells,
// which a read returns in path order, that is in field order. It allocates
// the value only.
func assembleUDT(ut *datatype.UserDefined, cells []storage.ColumnCell) []byte {
	n := len(ut.FieldTypes)
	size := 4 * n
	for _, cc := range cells {
		size += len(cc.Cell.Value)
	}
	out := make([]byte, 0, size)
	next := 0 // the next field to write
	for _, cc := range cells {
		i, ok := udtFieldIndex(cc.Path)
		if !ok || i < next || i >= n {
			continue
		}
		for ; next < i; next++ {
			out = types.AppendBytes(out, nil)
		}
		out = types.AppendBytes(out, cc.Cell.Value)
		next++
	}
	for ; next < n; next++ {
		out = types.AppendBytes(out, nil)
	}
	return out
}

// udtFieldIndex decodes the stored path of a user type field cell: the
// smallint key encoding of udtFieldPath (storage.AppendKey: the sign bit
// flipped, then big-endian), read without allocating.
func udtFieldIndex(path []byte) (int, bool) {
	if len(path) != 2 {
		return 0, false
	}
	return int(int16(uint16(path[0]^0x80)<<8 | uint16(path[1]))), true
}
