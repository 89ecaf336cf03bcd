package coordinator

import (
	"github.com/datastax/go-cassandra-native-protocol/datatype"

	"github.com/cqld/cqld/statements"
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
func (p *writePlan) writeFields(m *storage.Mutation, pk []byte, tg storage.CellTarget, ut *datatype.UserDefined, v []byte, live storage.Cell) error {
	for i, f := range splitFields(v, len(ut.FieldTypes)) {
		if f == nil {
			continue
		}
		tg.PathType, tg.Path = datatype.Smallint, udtFieldPath(i)
		c := live
		c.Value = f
		if err := m.WriteCell(p.t.st, pk, tg, c); err != nil {
			return err
		}
	}
	return nil
}

// writeField is c.f = v and DELETE c.f; v is the evaluated value.
func (p *writePlan) writeField(m *storage.Mutation, pk []byte, tg storage.CellTarget, op writeOp, v []byte, live, dead storage.Cell) error {
	tg.PathType, tg.Path = datatype.Smallint, udtFieldPath(op.field)
	if op.kind == opFieldDel || v == nil {
		return m.WriteCell(p.t.st, pk, tg, dead)
	}
	c := live
	c.Value = v
	return m.WriteCell(p.t.st, pk, tg, c)
}

// assembleUDT serializes a non-frozen user type from its field cells; the
// value is null when no field is set.
func assembleUDT(ut *datatype.UserDefined, cells []storage.ColumnCell) []byte {
	fields := make([][]byte, len(ut.FieldTypes))
	for _, cc := range cells {
		p, _, err := storage.DecodeKey(cc.Path, datatype.Smallint, false)
		if err != nil || len(p) != 2 {
			continue
		}
		if i := int(p[0])<<8 | int(p[1]); i < len(fields) {
			fields[i] = cc.Cell.Value
		}
	}
	var out []byte
	for _, f := range fields {
		out = appendBytes(out, f)
	}
	return out
}
