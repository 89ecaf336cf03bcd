package coordinator

import (
	"bytes"
	"sync"

	"github.com/datastax/go-cassandra-native-protocol/datatype"
	"github.com/datastax/go-cassandra-native-protocol/primitive"

	"github.com/cqld/cqld/statements"
	"github.com/cqld/cqld/statements/types"
)

// jsonMarker is the bound JSON of INSERT ... JSON ?, decoded once per
// distinct text (the columns of one execution all ask for it).
type jsonMarker struct {
	index int
	cols  []types.JSONReceiver

	mu   sync.Mutex
	text []byte
	row  *types.JSONRow
	err  error
	ok   bool
}

func (m *jsonMarker) get(x *execution) (*types.JSONRow, error) {
	var text []byte
	if !x.unset[m.index] {
		text = x.values[m.index]
		if text == nil {
			return nil, invalidf("Got null for INSERT JSON values")
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.ok && bytes.Equal(m.text, text) {
		return m.row, m.err
	}
	m.row, m.err = types.ParseJSONRow(string(text), m.cols)
	m.text, m.ok = append(m.text[:0], text...), true
	return m.row, m.err
}

// jsonColumnExpr is one column's value from INSERT JSON: from the bound
// JSON (src), or fixed at analysis (row, for a JSON literal).
type jsonColumnExpr struct {
	src *jsonMarker
	row *types.JSONRow
	col int
	// unset: DEFAULT UNSET leaves a column the JSON does not name as it
	// is; a key column cannot be unset.
	unset, key bool
	name       string
}

func (e *jsonColumnExpr) eval(x *execution) ([]byte, error) {
	row := e.row
	if e.src != nil {
		var err error
		if row, err = e.src.get(x); err != nil {
			return nil, err
		}
	}
	if row.Present[e.col] {
		return row.Vals[e.col], nil
	}
	switch {
	case !e.unset:
		return nil, nil
	case e.key:
		return nil, invalidf("Invalid unset value for column %s", e.name)
	}
	return nil, errUnset
}

// insertJSONPlan is INSERT ... JSON: the write an INSERT naming every
// column of the table would be, each column's value taken from the JSON
// object, or null (DEFAULT NULL) or left unset (DEFAULT UNSET) when the
// object does not name it.
func (c *Coordinator) insertJSONPlan(s *statements.Insert, b *binder, session string) (*writePlan, error) {
	t, err := c.writeTable(s.Keyspace, s.Table, session, false)
	if err != nil {
		return nil, err
	}
	b.keyspace, b.table = t.def.Keyspace, t.def.Name
	for i := range t.cols {
		if t.cols[i].typ.Code() == primitive.DataTypeCodeCounter {
			return nil, invalidf("INSERT statements are not allowed on counter tables, use UPDATE instead")
		}
	}
	p := &writePlan{t: t, kind: kindInsert, insertPK: make([]valueExpr, len(t.pk)), insertCK: make([]valueExpr, len(t.ck))}
	if err := p.using(s.Using, b); err != nil {
		return nil, err
	}
	cols := make([]types.JSONReceiver, len(t.cols))
	for i := range t.cols {
		cols[i] = types.JSONReceiver{Name: t.cols[i].def.Name, Type: t.cols[i].typ}
	}
	var src *jsonMarker
	var row *types.JSONRow
	switch j := s.Json.(type) {
	case *statements.Literal:
		if j.Kind != statements.LiteralString {
			return nil, invalidf("Invalid JSON value: expected a string literal")
		}
		if row, err = types.ParseJSONRow(j.Text, cols); err != nil {
			return nil, err
		}
	case *statements.BindMarker:
		m, err := b.bind(j, datatype.Varchar, "[json]")
		if err != nil {
			return nil, err
		}
		src = &jsonMarker{index: m.index, cols: cols}
	default:
		return nil, invalidf("Invalid JSON value")
	}
	pkPos, ckPos := positions(t.pk), positions(t.ck)
	for i := range t.cols {
		col := &t.cols[i]
		e := &jsonColumnExpr{src: src, row: row, col: i, unset: s.DefaultUnset, key: col.isKey(), name: col.def.Name}
		var v valueExpr = e
		if row != nil && (row.Present[i] || !s.DefaultUnset) {
			v = constExpr(row.Vals[i])
		}
		if p.insertKey(i, v, pkPos, ckPos) {
			continue
		}
		p.ops = append(p.ops, writeOp{col: i, kind: opSet, value: v})
	}
	return p, nil
}
