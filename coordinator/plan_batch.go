package coordinator

import (
	"github.com/datastax/go-cassandra-native-protocol/message"

	"github.com/cqld/cqld/statements"
)

// batchPlan is a BEGIN ... APPLY BATCH statement: its writes go in one
// mutation, applied atomically.
type batchPlan struct {
	children []*writePlan
	binds    []*message.ColumnMetadata
	counter  bool
	logged   bool
}

func (p *batchPlan) markers() []*message.ColumnMetadata { return p.binds }

func (p *batchPlan) pkIndices() []uint16 { return nil }

func (p *batchPlan) resultColumns() []*message.ColumnMetadata { return nil }

func (c *Coordinator) analyzeBatch(s *statements.Batch, n int, session string) (plan, error) {
	p := &batchPlan{counter: s.Type == statements.BatchCounter, logged: s.Type == statements.BatchLogged}
	b := newBinder("", "", n)
	var specs []casSpec
	conditional := false
	for _, child := range s.Statements {
		if s.Using.Timestamp != nil && childTimestamp(child) != nil {
			return nil, invalidf("Timestamp must be set either on BATCH or individual statements")
		}
		var wp *writePlan
		var err error
		var spec casSpec
		switch st := child.(type) {
		case *statements.Insert:
			if st.Using.Timestamp == nil {
				st.Using.Timestamp = s.Using.Timestamp
			}
			wp, err = c.insertPlan(st, b, session)
			spec = casSpec{ifNotExists: st.IfNotExists}
		case *statements.Update:
			if st.Using.Timestamp == nil {
				st.Using.Timestamp = s.Using.Timestamp
			}
			wp, err = c.updatePlan(st, b, session)
			spec = casSpec{ifExists: st.IfExists, conds: st.Conditions}
		case *statements.Delete:
			if st.Using.Timestamp == nil {
				st.Using.Timestamp = s.Using.Timestamp
			}
			wp, err = c.deletePlan(st, b, session)
			spec = casSpec{ifExists: st.IfExists, conds: st.Conditions}
		default:
			return nil, invalidf("Invalid statement in batch: only UPDATE, INSERT and DELETE statements are allowed.")
		}
		if err != nil {
			return nil, err
		}
		if spec.ifExists || spec.ifNotExists || len(spec.conds) > 0 {
			conditional = true
			if wp.t.isCounter() {
				return nil, errConditionalCounter
			}
		}
		switch {
		case wp.counter && s.Type != statements.BatchCounter:
			return nil, invalidf("Cannot include a counter statement in a %s batch", map[bool]string{true: "logged", false: "unlogged"}[s.Type == statements.BatchLogged])
		case !wp.counter && s.Type == statements.BatchCounter:
			return nil, invalidf("Cannot include non-counter statement in a counter batch")
		}
		specs = append(specs, spec)
		p.children = append(p.children, wp)
	}
	if conditional {
		if s.Using.Timestamp != nil {
			// Cassandra's BatchStatement words the batch's own timestamp
			// so; a statement's own is refused as any conditional
			// update's.
			return nil, invalidf("Cannot provide custom timestamp for conditional BATCH")
		}
		cp := &casPlan{batch: true}
		for i, wp := range p.children {
			cw, err := c.casWrite(wp, b, specs[i])
			if err != nil {
				return nil, err
			}
			cp.writes = append(cp.writes, cw)
		}
		if err := b.check(); err != nil {
			return nil, err
		}
		cp.binds = b.specs
		return cp, nil
	}
	if err := b.check(); err != nil {
		return nil, err
	}
	p.binds = b.specs
	return p, nil
}

// childTimestamp is the USING TIMESTAMP of a batch's statement, or nil.
func childTimestamp(s statements.Statement) statements.Term {
	switch st := s.(type) {
	case *statements.Insert:
		return st.Using.Timestamp
	case *statements.Update:
		return st.Using.Timestamp
	case *statements.Delete:
		return st.Using.Timestamp
	}
	return nil
}
