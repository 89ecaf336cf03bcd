package statements

// This file parses the schema statements other than CREATE/DROP KEYSPACE:
// CREATE/ALTER/DROP TABLE, ALTER KEYSPACE, CREATE/ALTER/DROP TYPE and
// CREATE/DROP FUNCTION and AGGREGATE.

// parseIfNotExists parses an optional IF NOT EXISTS.
func (p *parser) parseIfNotExists() bool {
	if !p.accept(kwIf) {
		return false
	}
	p.expect(kwNot)
	p.expect(kwExists)
	return true
}

// parseIfExists parses an optional IF EXISTS.
func (p *parser) parseIfExists() bool {
	if !p.accept(kwIf) {
		return false
	}
	p.expect(kwExists)
	return true
}

// parseTypeString parses a type (comparatorType) and renders it normalised.
func (p *parser) parseTypeString() string {
	t := p.parseType()
	return t.String()
}

// ---- tables ----

// parseCreateTable parses the rest of
// CREATE TABLE [IF NOT EXISTS] table '(' tableColumns (',' tableColumns?)* ')' [WITH tableProperty (AND tableProperty)*].
func (p *parser) parseCreateTable() *CreateTable {
	st := &CreateTable{IfNotExists: p.parseIfNotExists()}
	st.Keyspace, st.Table = p.qualifiedName("table")
	p.expect(tokLParen)
	p.parseTableColumns(st)
	for p.accept(tokComma) {
		// Cassandra allows empty definitions: (a int, b int,) and (a int,, b int).
		if p.kind() == kwPrimary || isIdentTok(p.peek(), identName) {
			p.parseTableColumns(st)
		}
	}
	p.expect(tokRParen)
	if p.accept(kwWith) {
		for {
			p.parseTableProperty(st)
			if !p.accept(kwAnd) {
				break
			}
		}
	}
	return st
}

// parseTableColumns parses a column definition, ident type [STATIC] [PRIMARY KEY],
// or a PRIMARY KEY '(' partitionKey (',' ident)* ')' clause.
func (p *parser) parseTableColumns(st *CreateTable) {
	if p.accept(kwPrimary) {
		p.expect(kwKey)
		p.expect(tokLParen)
		var pk []string
		if p.accept(tokLParen) {
			pk = append(pk, p.ident(identName))
			for p.accept(tokComma) {
				pk = append(pk, p.ident(identName))
			}
			p.expect(tokRParen)
		} else {
			pk = append(pk, p.ident(identName))
		}
		var ck []string
		for p.accept(tokComma) {
			ck = append(ck, p.ident(identName))
		}
		p.expect(tokRParen)
		st.setPrimaryKey(pk, ck)
		return
	}
	c := p.parseColumnDef()
	st.Columns = append(st.Columns, c)
	if p.accept(kwPrimary) {
		p.expect(kwKey)
		st.setPrimaryKey([]string{c.Name}, nil)
	}
}

func (st *CreateTable) setPrimaryKey(pk, ck []string) {
	st.PrimaryKeys++
	if st.PrimaryKeys == 1 {
		st.PartitionKey, st.Clustering = pk, ck
	}
}

// parseColumnDef parses ident type [STATIC].
func (p *parser) parseColumnDef() ColumnDef {
	c := ColumnDef{Name: p.ident(identName), Type: p.parseTypeString()}
	c.Static = p.accept(kwStatic)
	return c
}

// parseTableProperty parses property | COMPACT STORAGE | CLUSTERING ORDER BY '(' ident (ASC|DESC), ... ')'.
func (p *parser) parseTableProperty(st *CreateTable) {
	// compact and clustering are also valid property names.
	switch next := p.peekN(1).kind; {
	case p.kind() == kwCompact && next == kwStorage:
		p.pos += 2
		st.CompactStorage = true
	case p.kind() == kwClustering && next == kwOrder:
		p.pos += 2
		p.expect(kwBy)
		p.expect(tokLParen)
		for {
			o := ClusteringOrder{Column: p.ident(identName)}
			switch p.kind() {
			case kwAsc:
			case kwDesc:
				o.Desc = true
			default:
				p.noViable()
			}
			p.next()
			st.ClusteringOrder = append(st.ClusteringOrder, o)
			if !p.accept(tokComma) {
				break
			}
		}
		p.expect(tokRParen)
	default:
		st.Properties = p.addProperty(st.Properties, p.parseProperty())
	}
}

// addProperty adds prop to props (allocated on first use), rejecting duplicates.
func (p *parser) addProperty(props Properties, prop property) Properties {
	if props == nil {
		props = Properties{}
	} else if _, dup := props[prop.name]; dup {
		p.recognitionError("Multiple definition for property '" + prop.name + "'")
	}
	v := PropertyValue{Value: prop.value, Kind: prop.kind}
	if prop.isMap {
		v = PropertyValue{Map: prop.m}
	}
	props[prop.name] = v
	return props
}

// parseGenericProperties parses property (AND property)* into Properties.
func (p *parser) parseGenericProperties() Properties {
	var props Properties
	for {
		props = p.addProperty(props, p.parseProperty())
		if !p.accept(kwAnd) {
			return props
		}
	}
}

// parseAlterTable parses the rest of ALTER TABLE [IF EXISTS] table followed by
// ALTER c TYPE t | ADD [IF NOT EXISTS] (def | '(' def, ... ')') |
// DROP [IF EXISTS] (c | '(' c, ... ')') [USING TIMESTAMP n] | DROP COMPACT STORAGE |
// RENAME [IF EXISTS] a TO b (AND a TO b)* | WITH properties.
func (p *parser) parseAlterTable() *AlterTable {
	st := &AlterTable{IfExists: p.parseIfExists()}
	st.Keyspace, st.Table = p.qualifiedName("table")
	switch p.kind() {
	case kwAlter:
		p.next()
		st.Op = AlterTableAlterType
		name := p.cident()
		p.expect(kwType)
		st.Columns = []ColumnDef{{Name: name, Type: p.parseTypeString()}}
	case kwAdd:
		p.next()
		st.Op = AlterTableAdd
		st.IfColumnNotExists = p.parseIfNotExists()
		if p.accept(tokLParen) {
			for {
				st.Columns = append(st.Columns, p.parseColumnDef())
				if !p.accept(tokComma) {
					break
				}
			}
			p.expect(tokRParen)
		} else {
			st.Columns = []ColumnDef{p.parseColumnDef()}
		}
	case kwDrop:
		p.next()
		if p.kind() == kwCompact && p.peekN(1).kind == kwStorage {
			p.pos += 2
			st.Op = AlterTableDropCompactStorage
			break
		}
		st.Op = AlterTableDrop
		st.IfColumnExists = p.parseIfExists()
		if p.accept(tokLParen) {
			for {
				st.Drop = append(st.Drop, p.ident(identName))
				if !p.accept(tokComma) {
					break
				}
			}
			p.expect(tokRParen)
		} else {
			st.Drop = []string{p.ident(identName)}
		}
		if p.accept(kwUsing) {
			p.expect(kwTimestamp)
			if p.kind() != tokInteger {
				p.mismatch(tokInteger)
			}
			st.DropTimestamp = p.parseConstant()
		}
	case kwRename:
		p.next()
		st.Op = AlterTableRename
		st.IfColumnExists = p.parseIfExists()
		st.Renames = p.parseRenames(true)
	case kwWith:
		p.next()
		st.Op = AlterTableWith
		st.Properties = p.parseGenericProperties()
	default:
		p.noViable()
	}
	return st
}

// parseRenames parses a TO b (AND a TO b)*; the old names are cidents when
// cidentFrom is set (ALTER TABLE), fields otherwise.
func (p *parser) parseRenames(cidentFrom bool) []Rename {
	var rs []Rename
	for {
		var r Rename
		if cidentFrom {
			r.From = p.cident()
		} else {
			r.From = p.ident(identName)
		}
		p.expect(kwTo)
		r.To = p.ident(identName)
		rs = append(rs, r)
		if !p.accept(kwAnd) {
			return rs
		}
	}
}

// parseDropTable parses the rest of DROP TABLE [IF EXISTS] table.
func (p *parser) parseDropTable() *DropTable {
	st := &DropTable{IfExists: p.parseIfExists()}
	st.Keyspace, st.Table = p.qualifiedName("table")
	return st
}

// ---- keyspaces ----

// parseAlterKeyspace parses the rest of ALTER KEYSPACE [IF EXISTS] ks WITH properties.
func (p *parser) parseAlterKeyspace() *AlterKeyspace {
	st := &AlterKeyspace{IfExists: p.parseIfExists()}
	st.Keyspace = p.keyspaceName()
	p.expect(kwWith)
	st.Replication, st.DurableWrites = p.parseKeyspaceProperties()
	return st
}

// ---- user types ----

// parseFieldDef parses fident type.
func (p *parser) parseFieldDef() FieldDef {
	return FieldDef{Name: p.ident(identName), Type: p.parseTypeString()}
}

// parseCreateType parses the rest of
// CREATE TYPE [IF NOT EXISTS] name '(' field type (',' (field type)?)* ')'.
func (p *parser) parseCreateType() *CreateType {
	st := &CreateType{IfNotExists: p.parseIfNotExists()}
	st.Keyspace, st.Name = p.parseUserTypeName()
	p.expect(tokLParen)
	st.Fields = append(st.Fields, p.parseFieldDef())
	for p.accept(tokComma) {
		if isIdentTok(p.peek(), identName) {
			st.Fields = append(st.Fields, p.parseFieldDef())
		}
	}
	p.expect(tokRParen)
	return st
}

// parseAlterType parses the rest of ALTER TYPE [IF EXISTS] name followed by
// ALTER f TYPE t | ADD [IF NOT EXISTS] f t | RENAME [IF EXISTS] f TO g (AND f TO g)*.
func (p *parser) parseAlterType() *AlterType {
	st := &AlterType{IfExists: p.parseIfExists()}
	st.Keyspace, st.Name = p.parseUserTypeName()
	switch p.kind() {
	case kwAlter:
		p.next()
		st.Op = AlterTypeAlterType
		st.Field.Name = p.ident(identName)
		p.expect(kwType)
		st.Field.Type = p.parseTypeString()
	case kwAdd:
		p.next()
		st.Op = AlterTypeAdd
		st.IfFieldNotExists = p.parseIfNotExists()
		st.Field = p.parseFieldDef()
	case kwRename:
		p.next()
		st.Op = AlterTypeRename
		st.IfFieldExists = p.parseIfExists()
		st.Renames = p.parseRenames(false)
	default:
		p.noViable()
	}
	return st
}

// parseDropType parses the rest of DROP TYPE [IF EXISTS] name.
func (p *parser) parseDropType() *DropType {
	st := &DropType{IfExists: p.parseIfExists()}
	st.Keyspace, st.Name = p.parseUserTypeName()
	return st
}

// ---- functions ----

// parseCreateFunction parses, after CREATE [OR REPLACE],
// FUNCTION [IF NOT EXISTS] name '(' (arg type, ...)? ')' (RETURNS NULL | CALLED) ON NULL INPUT
// RETURNS type LANGUAGE IDENT AS STRING_LITERAL.
func (p *parser) parseCreateFunction(orReplace bool) *CreateFunction {
	p.expect(kwFunction)
	st := &CreateFunction{OrReplace: orReplace, IfNotExists: p.parseIfNotExists()}
	st.Keyspace, st.Name = p.parseFunctionName()
	p.expect(tokLParen)
	if isIdentTok(p.peek(), identName) {
		for {
			st.Args = append(st.Args, FunctionArg{Name: p.ident(identName), Type: p.parseTypeString()})
			if !p.accept(tokComma) {
				break
			}
		}
	}
	p.expect(tokRParen)
	switch p.kind() {
	case kwReturns:
		p.next()
		p.expect(kwNull)
	case kwCalled:
		p.next()
		st.CalledOnNullInput = true
	default:
		p.noViable()
	}
	p.expect(kwOn)
	p.expect(kwNull)
	p.expect(kwInput)
	p.expect(kwReturns)
	st.ReturnType = p.parseTypeString()
	p.expect(kwLanguage)
	st.Language = p.expect(tokIdent).val
	p.expect(kwAs)
	st.Body = p.expect(tokString).val
	return st
}

// parseCreateAggregate parses, after CREATE [OR REPLACE],
// AGGREGATE [IF NOT EXISTS] name '(' (type, ...)? ')' SFUNC name STYPE type
// [FINALFUNC name] [INITCOND term].
func (p *parser) parseCreateAggregate(orReplace bool) *CreateAggregate {
	p.expect(kwAggregate)
	st := &CreateAggregate{OrReplace: orReplace, IfNotExists: p.parseIfNotExists()}
	st.Keyspace, st.Name = p.parseFunctionName()
	st.ArgTypes = p.parseFunctionTypes()
	p.expect(kwSfunc)
	st.StateFunc = p.ident(identFunction)
	p.expect(kwStype)
	st.StateType = p.parseTypeString()
	if p.accept(kwFinalfunc) {
		st.FinalFunc = p.ident(identFunction)
	}
	if p.accept(kwInitcond) {
		st.InitCond = p.parseTerm()
	}
	return st
}

// parseFunctionTypes parses '(' (type (',' type)*)? ')'.
func (p *parser) parseFunctionTypes() []string {
	p.expect(tokLParen)
	var out []string
	if p.kind() != tokRParen {
		for {
			out = append(out, p.parseTypeString())
			if !p.accept(tokComma) {
				break
			}
		}
	}
	p.expect(tokRParen)
	return out
}

// parseDropFunction parses DROP (FUNCTION | AGGREGATE) [IF EXISTS] name
// ['(' (type, ...)? ')'].
func (p *parser) parseDropFunction() *DropFunction {
	st := &DropFunction{Aggregate: p.kind() == kwAggregate}
	p.next()
	st.IfExists = p.parseIfExists()
	st.Keyspace, st.Name = p.parseFunctionName()
	if p.kind() == tokLParen {
		st.HasArgs = true
		st.ArgTypes = p.parseFunctionTypes()
	}
	return st
}
