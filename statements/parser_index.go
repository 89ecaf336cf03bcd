package statements

// ---- secondary indexes ----

// parseCreateIndex parses the rest of
// CREATE INDEX [IF NOT EXISTS] [[ks.]name] ON [ks.]table '(' target (',' target)* ')'.
// CREATE CUSTOM INDEX, USING and WITH are custom-index syntax cqld does not
// implement.
func (p *parser) parseCreateIndex() *CreateIndex {
	if p.accept(kwCustom) {
		p.unsupported("CREATE CUSTOM INDEX")
	}
	p.expect(kwIndex)
	st := &CreateIndex{IfNotExists: p.parseIfNotExists()}
	if p.kind() != kwOn {
		st.Keyspace, st.Name = p.qualifiedName("index")
	}
	p.expect(kwOn)
	st.TableKeyspace, st.Table = p.qualifiedName("table")
	p.expect(tokLParen)
	if p.kind() != tokRParen {
		st.Targets = append(st.Targets, p.parseIndexTarget())
		for p.accept(tokComma) {
			st.Targets = append(st.Targets, p.parseIndexTarget())
		}
	}
	p.expect(tokRParen)
	if p.kind() == kwUsing || p.kind() == kwWith {
		p.unsupported("CREATE CUSTOM INDEX")
	}
	return st
}

// parseIndexTarget parses cident | (VALUES|KEYS|ENTRIES|FULL) '(' cident ')'.
func (p *parser) parseIndexTarget() IndexTarget {
	var kind string
	switch p.kind() {
	case kwValues, kwKeys, kwEntries, kwFull:
		if p.peekN(1).kind == tokLParen {
			kind = p.next().kind.kwName()
			p.next()
			t := IndexTarget{Kind: kind, Column: p.cident()}
			p.expect(tokRParen)
			return t
		}
	}
	return IndexTarget{Column: p.cident()}
}

// parseDropIndex parses the rest of DROP INDEX [IF EXISTS] [ks.]name.
func (p *parser) parseDropIndex() *DropIndex {
	p.expect(kwIndex)
	st := &DropIndex{IfExists: p.parseIfExists()}
	st.Keyspace, st.Name = p.qualifiedName("index")
	return st
}
