package statements

// This file parses the data modification statements: INSERT, UPDATE,
// DELETE, BATCH and TRUNCATE (Cassandra's insertStatement, updateStatement,
// deleteStatement, batchStatement and truncateStatement).

// parseInsert parses
// INSERT INTO table ('(' cident, ... ')' VALUES '(' term, ... ')' | JSON jsonValue [DEFAULT (NULL|UNSET)])
// [IF NOT EXISTS] [USING ...].
func (p *parser) parseInsert() *Insert {
	p.expect(kwInsert)
	p.expect(kwInto)
	st := &Insert{}
	st.Keyspace, st.Table = p.qualifiedName("table")
	switch p.kind() {
	case tokLParen:
		p.next()
		// Size both lists from the column list, which holds only names.
		n := 1
		for i := p.pos; ; i++ {
			k := p.tok(i).kind
			if k == tokRParen || k == tokEOF {
				break
			}
			if k == tokComma {
				n++
			}
		}
		st.Columns = make([]string, 0, n)
		st.Values = make([]Term, 0, n)
		st.Columns = append(st.Columns, p.cident())
		for p.accept(tokComma) {
			st.Columns = append(st.Columns, p.cident())
		}
		p.expect(tokRParen)
		p.expect(kwValues)
		p.expect(tokLParen)
		st.Values = append(st.Values, p.parseTerm())
		for p.accept(tokComma) {
			st.Values = append(st.Values, p.parseTerm())
		}
		p.expect(tokRParen)
	case kwJson:
		p.next()
		switch p.kind() {
		case tokString:
			st.Json = p.parseConstant()
		case tokQMark, tokColon:
			st.Json = p.parseMarker()
		default:
			p.noViable()
		}
		if p.accept(kwDefault) {
			switch p.kind() {
			case kwNull:
			case kwUnset:
				st.DefaultUnset = true
			default:
				p.noViable()
			}
			p.next()
		}
	default:
		p.noViable()
	}
	if p.accept(kwIf) {
		p.expect(kwNot)
		p.expect(kwExists)
		st.IfNotExists = true
	}
	if p.kind() == kwUsing {
		p.parseUsing(&st.Using)
	}
	return st
}

// parseUsing parses USING (TIMESTAMP | TTL) intValue (AND ...)*.
func (p *parser) parseUsing(u *Using) {
	p.expect(kwUsing)
	for {
		switch p.kind() {
		case kwTimestamp:
			p.next()
			if u.Timestamp != nil {
				p.recognitionError("Multiple definition for TIMESTAMP in USING clause")
			}
			u.Timestamp = p.parseIntValue()
		case kwTtl:
			p.next()
			if u.TTL != nil {
				p.recognitionError("Multiple definition for TTL in USING clause")
			}
			u.TTL = p.parseIntValue()
		default:
			p.noViable()
		}
		if !p.accept(kwAnd) {
			return
		}
	}
}

// parseUpdate parses UPDATE table [USING ...] SET op, ... WHERE relations [IF ...].
func (p *parser) parseUpdate() *Update {
	p.expect(kwUpdate)
	st := &Update{}
	st.Keyspace, st.Table = p.qualifiedName("table")
	if p.kind() == kwUsing {
		p.parseUsing(&st.Using)
	}
	p.expect(kwSet)
	for {
		st.Assignments = p.parseAssignment(st.Assignments)
		if !p.accept(tokComma) {
			break
		}
	}
	p.expect(kwWhere)
	st.Where = p.parseWhere()
	st.IfExists, st.Conditions = p.parseIfClause()
	return st
}

// parseAssignment parses Cassandra's columnOperation and appends it,
// rejecting incompatible settings of one column as Cassandra's addRawUpdate does.
func (p *parser) parseAssignment(as []Assignment) []Assignment {
	a := Assignment{Column: p.cident()}
	switch k := p.kind(); k {
	case tokEq:
		p.next()
		p.parseAssignmentValue(&a)
	case tokPlusEq, tokMinusEq:
		p.next()
		a.Op = AssignAdd
		if k == tokMinusEq {
			a.Op = AssignSubtract
		}
		a.Value = p.parseTerm()
	case tokLBracket:
		p.next()
		a.Key = p.parseTerm()
		p.expect(tokRBracket)
		p.expect(tokEq)
		a.Op = AssignSet
		a.Value = p.parseTerm()
	case tokDot:
		p.next()
		a.Field = p.ident(identName)
		p.expect(tokEq)
		a.Op = AssignSet
		a.Value = p.parseTerm()
	default:
		p.noViable()
	}
	for i := range as {
		if as[i].Column == a.Column && !assignmentsCompatible(&as[i], &a) {
			p.recognitionError("Multiple incompatible setting of column " + a.Column)
		}
	}
	return append(as, a)
}

// assignmentsCompatible reports whether b may follow a on the same column
// (Cassandra's Operation.RawUpdate.isCompatibleWith): setting the whole
// column excludes anything else, and a field may be set only once.
func assignmentsCompatible(a, b *Assignment) bool {
	isSetValue := func(x *Assignment) bool { return x.Op == AssignSet && x.Key == nil && x.Field == "" }
	if isSetValue(a) || isSetValue(b) {
		return false
	}
	if a.Field != "" && b.Field != "" {
		return a.Field != b.Field
	}
	return true
}

// parseAssignmentValue parses what follows "c =" (normalColumnOperation):
// term ['+' c] | c ('+' | '-') term | c INTEGER.
func (p *parser) parseAssignmentValue(a *Assignment) {
	if isCident(p.peek()) && !p.functionAhead() {
		name := p.cident()
		switch k := p.kind(); k {
		case tokPlus, tokMinus:
			p.next()
			a.Op = AssignAdd
			if k == tokMinus {
				a.Op = AssignSubtract
			}
			a.Value = p.parseTerm()
			if name != a.Column {
				p.recognitionError("Only expressions of the form X = X " + arithOp(k) + "<value> are supported.")
			}
		case tokInteger:
			// c = c -1 lexes as c, INTEGER(-1).
			lit := p.parseConstant()
			a.Op, a.Value = AssignAdd, lit
			if name != a.Column {
				sign := "+"
				if lit.Text[0] == '-' {
					sign = "-"
				}
				p.recognitionError("Only expressions of the form X = X " + sign + " <value> are supported.")
			}
		default:
			p.noViable()
		}
		return
	}
	// A term, stopping before "+ c" (a prepend) where c is not a function call.
	depth := p.depth
	t := p.parseTermProduct()
	for k := p.kind(); k == tokPlus || k == tokMinus; k = p.kind() {
		if k == tokPlus && isCident(p.peekN(1)) && !p.functionAt(1) {
			break
		}
		p.next()
		p.enter()
		t = &ArithmeticTerm{Op: arithOp(k), Left: t, Right: p.parseTermProduct()}
	}
	p.depth = depth
	a.Op, a.Value = AssignSet, t
	if p.accept(tokPlus) {
		a.Op = AssignPrepend
		if p.cident() != a.Column {
			p.recognitionError("Only expressions of the form X = <value> + X are supported.")
		}
	}
}

// parseIfClause parses an optional IF EXISTS or IF condition (AND condition)*.
func (p *parser) parseIfClause() (ifExists bool, conds []Condition) {
	if !p.accept(kwIf) {
		return false, nil
	}
	// EXISTS is also a valid column name: IF exists = 1 is a condition.
	if p.kind() == kwExists && !startsConditionOp(p.peekN(1).kind) {
		p.next()
		return true, nil
	}
	for {
		conds = add(conds, p.parseCondition())
		if !p.accept(kwAnd) {
			return false, conds
		}
	}
}

// startsConditionOp reports whether k can follow the column of a condition.
func startsConditionOp(k tokenKind) bool {
	switch k {
	case tokEq, tokNeq, tokLt, tokLte, tokGt, tokGte, kwIn, kwContains, tokLBracket, tokDot:
		return true
	}
	return false
}

// parseCondition parses Cassandra's columnCondition:
// c (op term | CONTAINS [KEY] term | IN values) | c '[' term ']' (op term | IN values) | c '.' f (op term | IN values).
func (p *parser) parseCondition() Condition {
	c := Condition{Column: p.cident()}
	plain := true
	switch p.kind() {
	case tokLBracket:
		p.next()
		c.Key = p.parseTerm()
		p.expect(tokRBracket)
		plain = false
	case tokDot:
		p.next()
		c.Field = p.ident(identName)
		plain = false
	}
	switch k := p.kind(); {
	case relationOp(k) != "":
		p.next()
		c.Op = relationOp(k)
		c.Value = p.parseTerm()
	case k == kwIn:
		p.next()
		c.Op = OpIn
		c.Value = p.parseInValues()
	case k == kwContains && plain:
		p.next()
		c.Op = OpContains
		if p.accept(kwKey) {
			c.Op = OpContainsKey
		}
		c.Value = p.parseTerm()
	default:
		p.noViable()
	}
	return c
}

// parseDelete parses DELETE [deleteOp, ...] FROM table [USING TIMESTAMP t] WHERE relations [IF ...].
func (p *parser) parseDelete() *Delete {
	p.expect(kwDelete)
	st := &Delete{}
	if isCident(p.peek()) {
		for {
			d := Deletion{Column: p.cident()}
			switch p.kind() {
			case tokLBracket:
				p.next()
				d.Key = p.parseTerm()
				p.expect(tokRBracket)
			case tokDot:
				p.next()
				d.Field = p.ident(identName)
			}
			st.Columns = append(st.Columns, d)
			if !p.accept(tokComma) {
				break
			}
		}
	}
	p.expect(kwFrom)
	st.Keyspace, st.Table = p.qualifiedName("table")
	if p.accept(kwUsing) {
		p.expect(kwTimestamp)
		st.Using.Timestamp = p.parseIntValue()
	}
	p.expect(kwWhere)
	st.Where = p.parseWhere()
	st.IfExists, st.Conditions = p.parseIfClause()
	return st
}

// parseBatch parses BEGIN [UNLOGGED | COUNTER] BATCH [USING ...]
// (insert | update | delete [';'])* APPLY BATCH.
func (p *parser) parseBatch() *Batch {
	p.expect(kwBegin)
	st := &Batch{}
	switch p.kind() {
	case kwUnlogged:
		p.next()
		st.Type = BatchUnlogged
	case kwCounter:
		p.next()
		st.Type = BatchCounter
	}
	p.expect(kwBatch)
	if p.kind() == kwUsing {
		p.parseUsing(&st.Using)
	}
	for {
		var s Statement
		switch p.kind() {
		case kwInsert:
			s = p.parseInsert()
		case kwUpdate:
			s = p.parseUpdate()
		case kwDelete:
			s = p.parseDelete()
		}
		if s == nil {
			break
		}
		st.Statements = add(st.Statements, s)
		p.accept(tokSemicolon)
	}
	p.expect(kwApply)
	p.expect(kwBatch)
	return st
}

// parseTruncate parses TRUNCATE [TABLE] table.
func (p *parser) parseTruncate() *Truncate {
	p.expect(kwTruncate)
	p.accept(kwColumnFamily)
	st := &Truncate{}
	st.Keyspace, st.Table = p.qualifiedName("table")
	return st
}
