package statements

// parseDescribe parses Cassandra 4.0's describeStatement:
//
//	( DESCRIBE | DESC )
//	( CLUSTER | FULL? SCHEMA | KEYSPACES | ONLY? KEYSPACE ks?
//	| TABLES | TABLE cf | INDEX cf | MATERIALIZED VIEW cf
//	| TYPES | TYPE ut | FUNCTIONS | FUNCTION fn | AGGREGATES | AGGREGATE fn
//	| (ks '.')? name )
//	( WITH INTERNALS )?
//
// CLUSTER, KEYSPACES, TABLES, TYPES, FUNCTIONS and AGGREGATES are chosen
// by their first token alone (the grammar's syntactic predicates), so
// "DESCRIBE tables.x" is an error, not the element x of keyspace tables;
// the other keywords that are also names (ONLY, TYPE, FUNCTION,
// AGGREGATE) name an element when what follows them cannot complete
// their form.
func (p *parser) parseDescribe() *Describe {
	p.next() // DESCRIBE or DESC
	st := &Describe{}
	switch p.kind() {
	case kwCluster:
		p.next()
		st.Kind = DescribeCluster
	case kwFull:
		p.next()
		p.expect(kwSchema)
		st.Kind = DescribeFullSchema
	case kwSchema:
		p.next()
		st.Kind = DescribeSchema
	case kwKeyspaces:
		p.next()
		st.Kind = DescribeKeyspaces
	case kwTables:
		p.next()
		st.Kind = DescribeTables
	case kwTypes:
		p.next()
		st.Kind = DescribeTypes
	case kwFunctions:
		p.next()
		st.Kind = DescribeFunctions
	case kwAggregates:
		p.next()
		st.Kind = DescribeAggregates
	case kwKeyspace:
		p.next()
		st.Kind = DescribeKeyspace
		if isIdentTok(p.peek(), identName) || p.kind() == tokQMark {
			st.Keyspace = p.keyspaceName()
		}
	case kwColumnFamily:
		p.next()
		st.Kind = DescribeTable
		st.Keyspace, st.Name = p.qualifiedName("table")
	case kwIndex:
		p.next()
		st.Kind = DescribeIndex
		st.Keyspace, st.Name = p.qualifiedName("table")
	case kwMaterialized:
		p.next()
		p.expect(kwView)
		st.Kind = DescribeView
		st.Keyspace, st.Name = p.qualifiedName("table")
	default:
		if !p.parseDescribeKeywordForm(st) {
			st.Kind = DescribeGeneric
			st.Keyspace, st.Name = p.qualifiedName("table")
		}
	}
	if p.accept(kwWith) {
		p.expect(kwInternals)
		st.Internals = true
	}
	return st
}

// parseDescribeKeywordForm parses ONLY KEYSPACE, TYPE ut, FUNCTION fn and
// AGGREGATE fn when the current token starts one of them and what follows
// fits, and reports whether it did.
func (p *parser) parseDescribeKeywordForm(st *Describe) bool {
	switch p.kind() {
	case kwOnly:
		if p.peekN(1).kind != kwKeyspace {
			return false
		}
		p.pos += 2
		st.Kind, st.Only = DescribeKeyspace, true
		if isIdentTok(p.peek(), identName) || p.kind() == tokQMark {
			st.Keyspace = p.keyspaceName()
		}
		return true
	case kwType:
		if !p.describeNameAt(1, identType) {
			return false
		}
		p.next()
		st.Kind = DescribeType
		st.Keyspace, st.Name = p.parseUserTypeName()
		return true
	case kwFunction, kwAggregate:
		if !p.describeNameAt(1, identFunction) {
			return false
		}
		st.Kind = DescribeFunction
		if p.next().kind == kwAggregate {
			st.Kind = DescribeAggregate
		}
		st.Keyspace, st.Name = p.parseFunctionName()
		return true
	}
	return false
}

// describeNameAt reports whether a name, qualified or not, starts n
// tokens ahead, its last part one mode accepts.
func (p *parser) describeNameAt(n int, mode identKind) bool {
	if isIdentTok(p.peekN(n), identName) && p.peekN(n+1).kind == tokDot {
		return isIdentTok(p.peekN(n+2), mode)
	}
	return isIdentTok(p.peekN(n), mode)
}
