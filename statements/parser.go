package statements

import (
	"math"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// SyntaxError is a lexing or parsing error, reported like Cassandra's ANTLR
// parser does: Error() gives e.g.
//
//	line 1:9 mismatched input 'FROMM' expecting K_FROM
//	line 1:0 no viable alternative at input 'SELEC'
//	line 1:20 mismatched character '<EOF>' expecting '''
//	line 0:-1 mismatched input '<EOF>' expecting ')'
//
// Line is 1-based and Col 0-based (in UTF-16 code units). As in Cassandra,
// an error on the end of input reported by the parser has Line 0 and Col -1.
// Errors found by checks made while parsing (duplicate properties, bind
// markers used as names, ...) carry no position: Line and Col are both 0 and
// Error() returns Msg alone.
type SyntaxError struct {
	Line, Col int
	Token     string // the offending token or character as displayed, without quotes ("<EOF>" at the end)
	Msg       string // the message without the "line L:C " prefix
}

func (e *SyntaxError) Error() string {
	if e.Line == 0 && e.Col == 0 {
		return e.Msg
	}
	return "line " + strconv.Itoa(e.Line) + ":" + strconv.Itoa(e.Col) + " " + e.Msg
}

// UnsupportedError reports a syntactically recognised statement kind that
// cqld does not implement yet. Statement names it: "DROP FUNCTION",
// "DESCRIBE", "GRANT ON FUNCTIONS", ... Only the leading keywords are
// checked and the rest of the statement is not parsed. It is not a syntax
// error: the server should answer it as an invalid request.
type UnsupportedError struct {
	Statement string
	// Message, when set, is the whole answer: Cassandra's own, for what it
	// refuses in its default configuration.
	Message string
}

// errViewsDisabled is Cassandra 4.0's answer to CREATE MATERIALIZED VIEW
// with views disabled.
const errViewsDisabled = "Materialized views are disabled. Enable in cassandra.yaml to use."

func (e *UnsupportedError) Error() string {
	if e.Message != "" {
		return e.Message
	}
	return e.Statement + " statements are not supported yet"
}

// Parse parses one CQL statement (a trailing ';' and trailing comments are
// allowed). It returns the AST and the number of bind markers. Errors are
// *SyntaxError for every lexing or parsing failure (including an empty
// query) and *UnsupportedError for statement kinds not implemented yet.
func Parse(query string) (Statement, int, error) {
	var st Statement
	p := getParser()
	defer putParser(p)
	if err := p.run(query, func() { st = p.parseQuery() }); err != nil {
		return nil, 0, err
	}
	return st, p.nbind, nil
}

// ParseTerm parses one term alone (a literal, a collection, a function
// call): an aggregate's INITCOND as system_schema.aggregates keeps it.
// Bind markers are refused.
func ParseTerm(text string) (Term, error) {
	var t Term
	p := getParser()
	defer putParser(p)
	if err := p.run(text, func() {
		t = p.parseTerm()
		p.accept(tokSemicolon)
		p.expect(tokEOF)
	}); err != nil {
		return nil, err
	}
	if p.nbind > 0 {
		return nil, &SyntaxError{Msg: "bind markers are not allowed in a constant term"}
	}
	return t, nil
}

// MaxBindMarkers is the most bind markers a statement can have values for:
// a request carries its values' count as an unsigned short.
const MaxBindMarkers = 65535

// maxDepth bounds the nesting of expressions, types and relations, and
// the length of operator and field/element chains (which nest in the
// tree), so that hostile input can exhaust neither the parser's stack nor
// that of whatever walks the tree.
const maxDepth = 200

// parser is a recursive-descent parser over tokens lexed on demand: input
// past the point where parsing fails is never held as tokens, so a query
// of 10 MB of '(' costs 200 tokens, not ten million. Parse functions
// return AST values directly; errors unwind with a bailout panic that run
// recovers. Parsers are pooled so that the token slice is reused: parsing
// allocates the AST and the strings it holds, not tokens.
type parser struct {
	src   string
	lex   lexer
	toks  tokenBuf // lexed so far; toks.at(pos) is the current token
	lexed bool     // toks ends with the tokEOF token
	pos   int      // index in toks of the current token
	nbind int      // bind markers seen so far
	depth int      // nesting depth, see enter
	spec  int      // > 0 while speculating: errors are not built
}

// bailout is the panic value used to abort parsing; err is nil while speculating.
type bailout struct{ err error }

// lexFailure is the panic value for a lexing error. Speculation does not
// catch it: a lexing error is the query's error wherever it occurs.
type lexFailure struct{ err *SyntaxError }

var parserPool = sync.Pool{New: func() any { return new(parser) }}

func getParser() *parser { return parserPool.Get().(*parser) }

func putParser(p *parser) {
	p.toks.reset()
	p.src, p.lex = "", lexer{}
	parserPool.Put(p)
}

// run parses src with f, converting a bailout into its error. As when the
// whole query was lexed before parsing (and as in Cassandra), a lexing
// error anywhere in src comes before a parsing error: after a parsing
// error the rest of src is lexed, without keeping the tokens.
func (p *parser) run(src string, f func()) (err error) {
	if len(src) > math.MaxInt32 {
		return &SyntaxError{Msg: "Query of " + strconv.Itoa(len(src)) + " bytes is too long"}
	}
	p.src, p.lexed = src, false
	p.toks.reset()
	p.lex.init(src)
	p.pos, p.nbind, p.depth, p.spec = 0, 0, 0, 0
	defer func() {
		switch r := recover().(type) {
		case nil:
		case lexFailure:
			err = r.err
		case bailout:
			if r.err == nil {
				panic(r)
			}
			err = r.err
			if lerr := p.lexRest(); lerr != nil {
				err = lerr
			}
		default:
			panic(r)
		}
	}()
	f()
	return nil
}

// lexRest lexes what is left of the query and returns its first lexing
// error, if any.
func (p *parser) lexRest() *SyntaxError {
	if p.lexed {
		return nil
	}
	var t token
	for {
		if err := p.lex.next(&t); err != nil {
			return err
		}
		if t.kind == tokEOF {
			return nil
		}
	}
}

// speculate runs f and reports whether it parsed without error. The parser
// state is restored either way. It implements ANTLR's syntactic predicates
// (e.g. whether SELECT JSON starts a JSON select or selects a column named json).
func (p *parser) speculate(f func()) (ok bool) {
	pos, nbind, depth := p.pos, p.nbind, p.depth
	p.spec++
	defer func() {
		p.spec--
		p.pos, p.nbind, p.depth = pos, nbind, depth
		if r := recover(); r != nil {
			if _, isBailout := r.(bailout); !isBailout {
				panic(r)
			}
			ok = false
		}
	}()
	f()
	return true
}

// ---- token helpers ----

// tok returns the token at index i, lexing up to it (the EOF token past
// the end). The token is never modified: a pointer to it stays valid
// when later tokens are lexed.
func (p *parser) tok(i int) *token {
	if i < p.toks.n {
		return p.toks.at(i)
	}
	return p.lexTo(i)
}

// lexTo lexes tokens until token i exists or the input ends, and returns
// token i (the EOF token past the end).
func (p *parser) lexTo(i int) *token {
	for p.toks.len() <= i && !p.lexed {
		t := p.toks.add()
		if err := p.lex.next(t); err != nil {
			p.toks.drop()
			panic(lexFailure{err})
		}
		p.lexed = t.kind == tokEOF
	}
	return p.toks.at(min(i, p.toks.len()-1))
}

func (p *parser) peek() *token { return p.tok(p.pos) }

// peekN returns the token n positions ahead (the EOF token past the end).
func (p *parser) peekN(n int) *token { return p.tok(p.pos + n) }

func (p *parser) kind() tokenKind { return p.tok(p.pos).kind }

// next consumes and returns the current token (EOF is never consumed).
func (p *parser) next() *token {
	t := p.peek()
	if t.kind != tokEOF {
		p.pos++
	}
	return t
}

// accept consumes the current token if it is of kind k.
func (p *parser) accept(k tokenKind) bool {
	if p.peek().kind == k {
		p.pos++
		return true
	}
	return false
}

// expect consumes a token of kind k or fails with "mismatched input".
func (p *parser) expect(k tokenKind) *token {
	t := p.peek()
	if t.kind != k {
		p.mismatch(k)
	}
	p.pos++
	return t
}

func (p *parser) enter() {
	p.depth++
	if p.depth > maxDepth {
		p.failAt(p.peek(), "expression nesting too deep")
	}
}

func (p *parser) leave() { p.depth-- }

// Operator chains (1+1+...) and modifier chains (a.f[1].g...) are loops in
// the grammar but nest in the tree: each link enters one level, and the
// chain's parse function restores the depth it started at when it returns.

// ---- errors ----

// display renders a token as ANTLR's getTokenErrorDisplay does (without the quotes).
func (p *parser) display(t *token) string {
	var s string
	switch t.kind {
	case tokEOF:
		return "<EOF>"
	case tokString, tokQuotedName:
		s = t.val
	default:
		s = p.src[t.start:t.end]
	}
	s = Abbreviate(s)
	if strings.ContainsAny(s, "\n\r\t") {
		s = strings.NewReplacer("\n", `\n`, "\r", `\r`, "\t", `\t`).Replace(s)
	}
	return s
}

// MaxQuoted bounds how much of a token, term or value an error message
// quotes: Cassandra quotes it whole, but an error message is a [string]
// of at most 65535 bytes.
const MaxQuoted = 1024

// Abbreviate is s, or its first MaxQuoted bytes (whole UTF-8 sequences)
// and how many bytes were left out: what an error message quotes of s.
func Abbreviate(s string) string {
	if len(s) <= MaxQuoted {
		return s
	}
	n := MaxQuoted
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "...[" + strconv.Itoa(len(s)-n) + " bytes more]"
}

// failAt aborts with a syntax error positioned at t.
func (p *parser) failAt(t *token, msg string) {
	if p.spec > 0 {
		panic(bailout{})
	}
	line, col := position(p.src, int(t.start))
	e := &SyntaxError{Line: line, Col: col, Token: p.display(t), Msg: msg}
	if t.kind == tokEOF { // Cassandra's EOF token has no position
		e.Line, e.Col = 0, -1
	}
	panic(bailout{e})
}

// noViable fails with "no viable alternative at input 'x'" at the current token.
func (p *parser) noViable() {
	t := p.peek()
	p.failAt(t, "no viable alternative at input '"+p.display(t)+"'")
}

// mismatch fails with "mismatched input 'x' expecting K" at the current token.
func (p *parser) mismatch(k tokenKind) {
	t := p.peek()
	p.failAt(t, "mismatched input '"+p.display(t)+"' expecting "+k.String())
}

// recognitionError fails with a position-less message, like Cassandra's addRecognitionError.
func (p *parser) recognitionError(msg string) {
	if p.spec > 0 {
		panic(bailout{})
	}
	panic(bailout{&SyntaxError{Msg: Abbreviate(msg)}})
}

func (p *parser) unsupported(what string) { p.refuse(&UnsupportedError{Statement: what}) }

func (p *parser) refuse(e *UnsupportedError) {
	if p.spec > 0 {
		panic(bailout{})
	}
	panic(bailout{e})
}

// ---- names ----

// identKind selects which keywords a name position accepts besides IDENT and QUOTED_NAME.
type identKind uint8

const (
	identName     identKind = iota // ident / noncol_ident / ksName / cfName: unreserved keywords
	identFunction                  // allowedFunctionName: function keywords, TOKEN, COUNT
	identType                      // non_type_ident: basic unreserved keywords and KEY
)

func isIdentTok(t *token, mode identKind) bool {
	switch t.kind {
	case tokIdent, tokQuotedName:
		return true
	}
	switch mode {
	case identName:
		return t.kind.kwHas(flagUnreserved)
	case identFunction:
		return t.kind.kwHas(flagFunction)
	default:
		return t.kind.kwHas(flagBasic) || t.kind == kwKey
	}
}

// identValue returns the name a name token denotes: lower-cased when unquoted.
func (p *parser) identValue(t *token) string {
	switch t.kind {
	case tokIdent, tokQuotedName:
		return t.val
	}
	name := t.kind.kwName()
	if raw := p.src[t.start:t.end]; len(raw) != len(name) { // an alias (table for columnfamily)
		return lowerASCII(raw)
	}
	return name
}

// ident consumes a name accepted by mode.
func (p *parser) ident(mode identKind) string {
	t := p.peek()
	if !isIdentTok(t, mode) {
		p.noViable()
	}
	p.pos++
	return p.identValue(t)
}

// isCident reports whether t can be a column name in a WHERE or ORDER BY clause.
func isCident(t *token) bool {
	return t.kind == tokEmptyQuotedName || isIdentTok(t, identName)
}

// cident consumes a column name; "" (the empty quoted name) is allowed.
func (p *parser) cident() string {
	if p.accept(tokEmptyQuotedName) {
		return ""
	}
	return p.ident(identName)
}

func (p *parser) keyspaceName() string {
	if p.kind() == tokQMark {
		p.recognitionError("Bind variables cannot be used for keyspace names")
	}
	return p.ident(identName)
}

// qualifiedName parses (ksName '.')? name, as for tables; what is "table" or
// "index" for the bind marker error.
func (p *parser) qualifiedName(what string) (ks, name string) {
	if p.peekN(1).kind == tokDot && (p.kind() == tokQMark || isIdentTok(p.peek(), identName)) {
		ks = p.keyspaceName()
		p.next()
	}
	if p.kind() == tokQMark {
		p.recognitionError("Bind variables cannot be used for " + what + " names")
	}
	return ks, p.ident(identName)
}

// ---- statements ----

func (p *parser) parseQuery() Statement {
	st := p.parseStatement()
	for p.accept(tokSemicolon) {
	}
	if p.kind() != tokEOF {
		p.mismatch(tokEOF)
	}
	return st
}

func (p *parser) parseStatement() Statement {
	switch p.kind() {
	case kwSelect:
		return p.parseSelect()
	case kwUse:
		return p.parseUse()
	case kwCreate:
		return p.parseCreate()
	case kwDrop:
		return p.parseDrop()
	case kwAlter:
		return p.parseAlter()
	case kwInsert:
		return p.parseInsert()
	case kwUpdate:
		return p.parseUpdate()
	case kwDelete:
		return p.parseDelete()
	case kwBegin:
		return p.parseBatch()
	case kwTruncate:
		return p.parseTruncate()
	case kwGrant, kwRevoke:
		return p.parseGrantOrRevoke()
	case kwList:
		return p.parseList()
	case kwDescribe, kwDesc:
		return p.parseDescribe()
	case kwAdd:
		p.next()
		if p.kind() != kwIdentity {
			p.mismatch(kwIdentity)
		}
		p.unsupported("ADD IDENTITY")
	}
	p.noViable()
	return nil
}

// parseUse parses USE ks.
func (p *parser) parseUse() *Use {
	p.expect(kwUse)
	return &Use{Keyspace: p.keyspaceName()}
}

// acceptKeyspaceKeyword accepts KEYSPACE or its synonym SCHEMA.
func (p *parser) acceptKeyspaceKeyword() bool {
	return p.accept(kwKeyspace) || p.accept(kwSchema)
}

func (p *parser) parseCreate() Statement {
	p.expect(kwCreate)
	if p.acceptKeyspaceKeyword() {
		return p.parseCreateKeyspace()
	}
	switch p.kind() {
	case kwColumnFamily:
		p.next()
		return p.parseCreateTable()
	case kwIndex, kwCustom:
		return p.parseCreateIndex()
	case kwType:
		p.next()
		return p.parseCreateType()
	case kwFunction:
		return p.parseCreateFunction(false)
	case kwAggregate:
		return p.parseCreateAggregate(false)
	case kwOr:
		p.next()
		p.expect(kwReplace)
		switch p.kind() {
		case kwFunction:
			return p.parseCreateFunction(true)
		case kwAggregate:
			return p.parseCreateAggregate(true)
		}
	case kwUser:
		p.next()
		return p.parseCreateUser()
	case kwRole:
		p.next()
		return p.parseCreateRole()
	case kwTrigger:
		p.unsupported("CREATE TRIGGER")
	case kwMaterialized:
		// Cassandra 4.0's answer with views disabled, its default
		// (enable_materialized_views: false), which cqld cannot change.
		p.refuse(&UnsupportedError{Statement: "CREATE MATERIALIZED VIEW", Message: errViewsDisabled})
	}
	p.noViable()
	return nil
}

func (p *parser) parseDrop() Statement {
	p.expect(kwDrop)
	if p.acceptKeyspaceKeyword() {
		return p.parseDropKeyspace()
	}
	switch p.kind() {
	case kwColumnFamily:
		p.next()
		return p.parseDropTable()
	case kwIndex:
		return p.parseDropIndex()
	case kwType:
		p.next()
		return p.parseDropType()
	case kwFunction, kwAggregate:
		return p.parseDropFunction()
	case kwUser:
		p.next()
		return p.parseDropRole(true)
	case kwRole:
		p.next()
		return p.parseDropRole(false)
	case kwTrigger:
		p.unsupported("DROP TRIGGER")
	case kwMaterialized:
		p.next()
		p.expect(kwView)
		st := &DropTable{View: true, IfExists: p.parseIfExists()}
		st.Keyspace, st.Table = p.qualifiedName("table")
		return st
	case kwIdentity:
		p.unsupported("DROP IDENTITY")
	}
	p.noViable()
	return nil
}

func (p *parser) parseAlter() Statement {
	p.expect(kwAlter)
	if p.acceptKeyspaceKeyword() {
		return p.parseAlterKeyspace()
	}
	switch p.kind() {
	case kwColumnFamily:
		p.next()
		return p.parseAlterTable()
	case kwType:
		p.next()
		return p.parseAlterType()
	case kwUser:
		p.next()
		return p.parseAlterUser()
	case kwRole:
		p.next()
		return p.parseAlterRole()
	case kwMaterialized:
		p.next()
		p.expect(kwView)
		st := &AlterTable{View: true, Op: AlterTableWith}
		st.Keyspace, st.Table = p.qualifiedName("table")
		p.expect(kwWith)
		st.Properties = p.parseGenericProperties()
		return st
	}
	p.noViable()
	return nil
}

// parseCreateKeyspace parses the rest of
// CREATE KEYSPACE [IF NOT EXISTS] ks WITH property (AND property)*.
func (p *parser) parseCreateKeyspace() *CreateKeyspace {
	st := &CreateKeyspace{}
	if p.accept(kwIf) {
		p.expect(kwNot)
		p.expect(kwExists)
		st.IfNotExists = true
	}
	st.Keyspace = p.keyspaceName()
	p.expect(kwWith)
	st.Replication, st.DurableWrites = p.parseKeyspaceProperties()
	return st
}

// parseKeyspaceProperties parses the properties of CREATE and ALTER
// KEYSPACE: replication (a map) and durable_writes (a boolean).
func (p *parser) parseKeyspaceProperties() (replication map[string]string, durableWrites *bool) {
	for _, prop := range p.parseProperties() {
		switch prop.name {
		case "replication":
			if !prop.isMap {
				p.recognitionError("Invalid value for property 'replication'. It should be a map.")
			}
			replication = prop.m
		case "durable_writes":
			if prop.isMap {
				p.recognitionError("Invalid value for property 'durable_writes'. It should be a string")
			}
			b := p.parseBoolProperty(prop)
			durableWrites = &b
		default:
			p.recognitionError("Unknown property '" + prop.name + "'")
		}
	}
	return replication, durableWrites
}

// parseDropKeyspace parses the rest of DROP KEYSPACE [IF EXISTS] ks.
func (p *parser) parseDropKeyspace() *DropKeyspace {
	st := &DropKeyspace{}
	if p.accept(kwIf) {
		p.expect(kwExists)
		st.IfExists = true
	}
	st.Keyspace = p.keyspaceName()
	return st
}

// ---- properties (WITH a = b AND c = {...}) ----

// property is one name = value of a WITH clause: a simple value or a map.
type property struct {
	name  string
	value string            // simple value as written (strings unquoted)
	kind  LiteralKind       // kind of a simple constant value; 0 for a keyword or a map
	m     map[string]string // map value
	isMap bool
}

func (p *parser) parseProperties() []property {
	var props []property
	for {
		prop := p.parseProperty()
		for i := range props {
			if props[i].name == prop.name {
				p.recognitionError("Multiple definition for property '" + prop.name + "'")
			}
		}
		props = append(props, prop)
		if !p.accept(kwAnd) {
			return props
		}
	}
}

// parseProperty parses noncol_ident '=' (constant | unreserved_keyword | fullMapLiteral).
func (p *parser) parseProperty() property {
	prop := property{name: p.ident(identName)}
	p.expect(tokEq)
	t := p.peek()
	switch {
	case t.kind == tokLBrace:
		prop.isMap = true
		prop.m = p.parsePropertyMap()
	case isConstant(t.kind):
		lit := p.parseConstant()
		prop.value, prop.kind = lit.Text, lit.Kind
	case t.kind.kwHas(flagUnreserved):
		p.next()
		prop.value = p.src[t.start:t.end]
	default:
		p.noViable()
	}
	return prop
}

// parsePropertyMap parses '{' (term ':' term (',' term ':' term)*)? '}' whose
// keys and values must be constants.
func (p *parser) parsePropertyMap() map[string]string {
	p.expect(tokLBrace)
	m := map[string]string{}
	if p.accept(tokRBrace) {
		return m
	}
	for {
		k := p.parseTerm()
		p.expect(tokColon)
		v := p.parseTerm()
		kl, ok := k.(*Literal)
		if !ok || kl.Kind == LiteralNull {
			msg := "Invalid property name: " + formatTerm(k)
			if _, isMarker := k.(*BindMarker); isMarker {
				msg += " (bind variables are not supported in DDL queries)"
			}
			p.recognitionError(msg)
		}
		vl, ok := v.(*Literal)
		if !ok || vl.Kind == LiteralNull {
			msg := "Invalid property value: " + formatTerm(v) + " for property: " + formatTerm(k)
			if _, isMarker := v.(*BindMarker); isMarker {
				msg += " (bind variables are not supported in DDL queries)"
			}
			p.recognitionError(msg)
		}
		if _, dup := m[kl.Text]; dup {
			p.recognitionError("Multiple definition for property " + kl.Text)
		}
		m[kl.Text] = vl.Text
		if !p.accept(tokComma) {
			break
		}
	}
	p.expect(tokRBrace)
	return m
}

// parseBoolProperty interprets a simple property value as Cassandra's
// PropertyDefinitions.getBoolean does.
func (p *parser) parseBoolProperty(prop property) bool {
	switch strings.ToLower(prop.value) {
	case "1", "true", "yes":
		return true
	case "0", "false", "no":
		return false
	}
	p.recognitionError("Invalid boolean value " + prop.value + " for '" + prop.name + "'. " +
		"Positive values can be '1', 'true' or 'yes' (case insensitive) and negative values can be '0', 'false' or 'no' (case insensitive).")
	return false
}

// ---- SELECT ----

func (p *parser) parseSelect() *Select {
	p.expect(kwSelect)
	st := &Select{}
	// json and distinct are valid column names: they are modifiers only if a
	// select clause follows them (ANTLR's syntactic predicates).
	if p.kind() == kwJson && p.speculate(func() { p.next(); p.parseSelectClause(&Select{}) }) {
		p.next()
		st.Json = true
	}
	p.parseSelectClause(st)
	p.expect(kwFrom)
	st.Keyspace, st.Table = p.qualifiedName("table")
	if p.accept(kwWhere) {
		st.Where = p.parseWhere()
	}
	if p.accept(kwGroup) {
		p.expect(kwBy)
		for {
			st.GroupBy = append(st.GroupBy, p.parseSelectorExpr())
			if !p.accept(tokComma) {
				break
			}
		}
	}
	if p.accept(kwOrder) {
		p.expect(kwBy)
		for {
			st.OrderBy = append(st.OrderBy, p.parseOrdering())
			if !p.accept(tokComma) {
				break
			}
		}
	}
	if p.accept(kwPer) {
		p.expect(kwPartition)
		p.expect(kwLimit)
		st.PerPartitionLimit = p.parseIntValue()
	}
	if p.accept(kwLimit) {
		st.Limit = p.parseIntValue()
	}
	if p.accept(kwAllow) {
		p.expect(kwFiltering)
		st.AllowFiltering = true
	}
	return st
}

// parseSelectClause parses [DISTINCT] selectors into st.
func (p *parser) parseSelectClause(st *Select) {
	if p.kind() == kwDistinct && p.speculate(func() { p.next(); p.parseSelectors() }) {
		p.next()
		st.Distinct = true
	}
	st.Selectors = p.parseSelectors()
}

// parseSelectors parses '*' (returning nil) or selector (',' selector)*.
func (p *parser) parseSelectors() []Selector {
	if p.accept(tokStar) {
		return nil
	}
	var sels []Selector
	for {
		sel := Selector{Expr: p.parseSelectorExpr()}
		if p.accept(kwAs) {
			sel.Alias = p.ident(identName)
		}
		sels = add(sels, sel)
		if !p.accept(tokComma) {
			return sels
		}
	}
}

func (p *parser) parseOrdering() Ordering {
	o := Ordering{Column: p.cident()}
	if p.accept(kwAnn) {
		p.expect(kwOf)
		o.Ann = p.parseTerm()
	}
	if p.accept(kwDesc) {
		o.Desc = true
	} else {
		p.accept(kwAsc)
	}
	return o
}

// parseIntValue parses INTEGER | marker (LIMIT values).
func (p *parser) parseIntValue() Term {
	switch p.kind() {
	case tokInteger:
		return p.parseConstant()
	case tokQMark, tokColon:
		return p.parseMarker()
	}
	p.noViable()
	return nil
}

// ---- selectors ----

func arithOp(k tokenKind) string {
	switch k {
	case tokPlus:
		return "+"
	case tokMinus:
		return "-"
	case tokStar:
		return "*"
	case tokSlash:
		return "/"
	case tokPercent:
		return "%"
	}
	return ""
}

// parseSelectorExpr parses an unaliased selector: sums of products of groups.
func (p *parser) parseSelectorExpr() SelectorExpr {
	depth := p.depth
	e := p.parseSelectorProduct()
	for k := p.kind(); k == tokPlus || k == tokMinus; k = p.kind() {
		p.next()
		p.enter()
		e = &ArithmeticSelector{Op: arithOp(k), Left: e, Right: p.parseSelectorProduct()}
	}
	p.depth = depth
	return e
}

func (p *parser) parseSelectorProduct() SelectorExpr {
	depth := p.depth
	e := p.parseSelectorGroup()
	for k := p.kind(); k == tokStar || k == tokSlash || k == tokPercent; k = p.kind() {
		p.next()
		p.enter()
		e = &ArithmeticSelector{Op: arithOp(k), Left: e, Right: p.parseSelectorGroup()}
	}
	p.depth = depth
	return e
}

// parseSelectorGroup parses '-' group | primary modifiers*.
func (p *parser) parseSelectorGroup() SelectorExpr {
	p.enter()
	defer p.leave()
	if p.accept(tokMinus) {
		return &NegatedSelector{Expr: p.parseSelectorGroup()}
	}
	return p.parseSelectorModifiers(p.parseSelectorPrimary())
}

// parseSelectorModifiers parses ('.' field | '[' element-or-slice ']')*.
func (p *parser) parseSelectorModifiers(e SelectorExpr) SelectorExpr {
	depth := p.depth
	for {
		switch p.kind() {
		case tokDot:
			p.next()
			p.enter()
			e = &FieldSelector{Expr: e, Field: p.ident(identName)}
		case tokLBracket:
			p.next()
			p.enter()
			if p.accept(tokRange) {
				e = &SliceSelector{Expr: e, To: p.parseTerm()}
			} else {
				from := p.parseTerm()
				if p.accept(tokRange) {
					s := &SliceSelector{Expr: e, From: from}
					if p.kind() != tokRBracket {
						s.To = p.parseTerm()
					}
					e = s
				} else {
					e = &ElementSelector{Expr: e, Key: from}
				}
			}
			p.expect(tokRBracket)
		default:
			p.depth = depth
			return e
		}
	}
}

// parseSelectorPrimary parses a selector without field/element modifiers.
func (p *parser) parseSelectorPrimary() SelectorExpr {
	switch p.kind() {
	case tokLParen:
		if p.typeHintAhead(p.startsSelectorPrimary) {
			p.next()
			typ := p.parseType()
			p.expect(tokRParen)
			p.enter()
			defer p.leave()
			return &TypeHintSelector{Type: typ.String(), Expr: p.parseSelectorPrimary()}
		}
		p.next()
		first := p.parseSelectorExpr()
		if p.accept(tokRParen) {
			return first
		}
		elems := []SelectorExpr{first}
		for p.accept(tokComma) {
			elems = add(elems, p.parseSelectorExpr())
		}
		p.expect(tokRParen)
		return &TupleSelector{Elems: elems}
	case tokLBracket:
		p.next()
		l := &ListSelector{}
		if !p.accept(tokRBracket) {
			for {
				l.Elems = add(l.Elems, p.parseSelectorExpr())
				if !p.accept(tokComma) {
					break
				}
			}
			p.expect(tokRBracket)
		}
		return l
	case tokLBrace:
		p.next()
		if p.accept(tokRBrace) {
			return &SetSelector{}
		}
		first := p.parseSelectorExpr()
		if p.accept(tokColon) {
			m := &MapSelector{Keys: []SelectorExpr{first}, Values: []SelectorExpr{p.parseSelectorExpr()}}
			for p.accept(tokComma) {
				m.Keys = add(m.Keys, p.parseSelectorExpr())
				p.expect(tokColon)
				m.Values = add(m.Values, p.parseSelectorExpr())
			}
			p.expect(tokRBrace)
			return m
		}
		s := &SetSelector{Elems: []SelectorExpr{first}}
		for p.accept(tokComma) {
			s.Elems = add(s.Elems, p.parseSelectorExpr())
		}
		p.expect(tokRBrace)
		return s
	}
	return p.parseSimpleSelector()
}

// parseSimpleSelector parses a column, a literal or bind marker, or a function call.
func (p *parser) parseSimpleSelector() SelectorExpr {
	t := p.peek()
	paren := p.peekN(1).kind == tokLParen
	switch {
	case t.kind == kwCount && paren && p.peekN(2).kind == tokStar:
		p.pos += 3
		p.expect(tokRParen)
		return &FunctionCall{Name: "count", Args: []SelectorExpr{Star{}}}
	case (t.kind == kwWritetime || t.kind == kwMaxwritetime || t.kind == kwTtl) && paren:
		p.pos += 2
		arg := p.parseSelectorModifiers(&ColumnRef{Name: p.ident(identName)})
		p.expect(tokRParen)
		return &FunctionCall{Name: t.kind.kwName(), Args: []SelectorExpr{arg}}
	case t.kind == kwCast && paren:
		p.pos += 2
		c := &Cast{Expr: p.parseSelectorExpr()}
		p.expect(kwAs)
		c.Type = p.parseNativeType()
		p.expect(tokRParen)
		return c
	case isConstant(t.kind) || t.kind == kwNull || t.kind == tokQMark || t.kind == tokColon:
		return &TermSelector{Term: p.parseValue()}
	case p.functionAhead():
		ks, name := p.parseFunctionName()
		f := &FunctionCall{Keyspace: ks, Name: name}
		p.expect(tokLParen)
		if !p.accept(tokRParen) {
			for {
				f.Args = add(f.Args, p.parseSelectorExpr())
				if !p.accept(tokComma) {
					break
				}
			}
			p.expect(tokRParen)
		}
		return f
	case isIdentTok(t, identName):
		p.next()
		return &ColumnRef{Name: p.identValue(t)}
	}
	p.noViable()
	return nil
}

// startsSelectorPrimary reports whether the token at index i can start a
// selector without modifiers (used to recognise (type) hints).
func (p *parser) startsSelectorPrimary(i int) bool {
	t := p.tok(i)
	switch t.kind {
	case tokLParen, tokLBracket, tokLBrace, tokQMark, tokColon, kwNull:
		return true
	case kwAs:
		// (c) AS alias: an alias, not a hint applied to a column named "as".
		return !isIdentTok(p.tok(i+1), identName)
	}
	return isConstant(t.kind) || isIdentTok(t, identName) || isIdentTok(t, identFunction)
}

// ---- functions ----

// functionAhead reports whether a function call starts at the current token:
// name '(' or ks '.' name '('.
func (p *parser) functionAhead() bool { return p.functionAt(0) }

// functionAt reports whether a function call starts n tokens ahead.
func (p *parser) functionAt(n int) bool {
	if isIdentTok(p.peekN(n), identFunction) && p.peekN(n+1).kind == tokLParen {
		return true
	}
	return isIdentTok(p.peekN(n), identName) && p.peekN(n+1).kind == tokDot &&
		isIdentTok(p.peekN(n+2), identFunction) && p.peekN(n+3).kind == tokLParen
}

// parseFunctionName parses (keyspaceName '.')? allowedFunctionName.
func (p *parser) parseFunctionName() (ks, name string) {
	if p.peekN(1).kind == tokDot {
		ks = p.keyspaceName()
		p.next()
	}
	return ks, p.ident(identFunction)
}

// ---- WHERE ----

func (p *parser) parseWhere() []Relation {
	var rels []Relation
	for {
		rels = p.parseRelation(rels)
		if !p.accept(kwAnd) {
			return rels
		}
	}
}

func relationOp(k tokenKind) Operator {
	switch k {
	case tokEq:
		return OpEq
	case tokNeq:
		return OpNeq
	case tokLt:
		return OpLt
	case tokLte:
		return OpLte
	case tokGt:
		return OpGt
	case tokGte:
		return OpGte
	}
	return ""
}

// parseRelationType parses one of = != < <= > >=.
func (p *parser) parseRelationType() Operator {
	op := relationOp(p.kind())
	if op == "" {
		p.noViable()
	}
	p.next()
	return op
}

// parseRelation parses one relation and appends it (parenthesised relations
// are flattened).
func (p *parser) parseRelation(rels []Relation) []Relation {
	p.enter()
	defer p.leave()
	t := p.peek()
	switch {
	case t.kind == kwToken:
		p.next()
		r := Relation{Columns: p.parseTupleOfIdentifiers(), Token: true}
		if p.accept(kwBetween) {
			r.Op = OpBetween
			r.Value = p.parseTerm()
			p.expect(kwAnd)
			r.UpperBound = p.parseTerm()
		} else {
			r.Op = p.parseRelationType()
			r.Value = p.parseTerm()
		}
		return add(rels, r)
	case t.kind == tokLParen:
		if isCident(p.peekN(1)) && (p.peekN(2).kind == tokComma || p.peekN(2).kind == tokRParen) {
			return add(rels, p.parseMultiColumnRelation())
		}
		p.next()
		rels = p.parseRelation(rels)
		p.expect(tokRParen)
		return rels
	case t.kind == tokExprOpen:
		p.next()
		r := Relation{Op: OpCustomIndex}
		var name string
		r.IndexKeyspace, name = p.qualifiedName("index")
		r.Columns = []string{name}
		p.expect(tokComma)
		r.Value = p.parseTerm()
		p.expect(tokRParen)
		return add(rels, r)
	case !isCident(t):
		p.noViable()
	}
	r := Relation{Columns: []string{p.cident()}}
	switch k := p.kind(); k {
	case tokLBracket:
		p.next()
		r.MapKey = p.parseTerm()
		p.expect(tokRBracket)
		r.Op = p.parseRelationType()
		r.Value = p.parseTerm()
	case tokEq, tokNeq, tokLt, tokLte, tokGt, tokGte:
		p.next()
		r.Op = relationOp(k)
		r.Value = p.parseTerm()
	case kwBetween:
		p.next()
		r.Op = OpBetween
		r.Value = p.parseTerm()
		p.expect(kwAnd)
		r.UpperBound = p.parseTerm()
	case kwLike:
		p.next()
		r.Op = OpLike
		r.Value = p.parseTerm()
	case kwIs:
		p.next()
		p.expect(kwNot)
		p.expect(kwNull)
		r.Op = OpIsNot
		r.Value = &Literal{Kind: LiteralNull, Text: "null"}
	case kwIn:
		p.next()
		r.Op = OpIn
		r.Value = p.parseInValues()
	case kwContains:
		p.next()
		r.Op = OpContains
		if p.accept(kwKey) {
			r.Op = OpContainsKey
		}
		r.Value = p.parseTerm()
	case kwNot:
		p.next()
		switch {
		case p.accept(kwIn):
			r.Op = OpNotIn
			r.Value = p.parseInValues()
		case p.accept(kwContains):
			r.Op = OpNotContains
			if p.accept(kwKey) {
				r.Op = OpNotContainsKey
			}
			r.Value = p.parseTerm()
		default:
			p.noViable()
		}
	default:
		p.noViable()
	}
	return add(rels, r)
}

// parseTupleOfIdentifiers parses '(' cident (',' cident)* ')'.
func (p *parser) parseTupleOfIdentifiers() []string {
	p.expect(tokLParen)
	cols := []string{p.cident()}
	for p.accept(tokComma) {
		cols = append(cols, p.cident())
	}
	p.expect(tokRParen)
	return cols
}

// parseInValues parses the values of a single-column IN: '(' terms? ')' or a marker.
func (p *parser) parseInValues() Term {
	switch p.kind() {
	case tokQMark, tokColon:
		return p.parseMarker()
	case tokLParen:
		p.next()
		l := &ListLiteral{}
		if !p.accept(tokRParen) {
			for {
				l.Elems = add(l.Elems, p.parseTerm())
				if !p.accept(tokComma) {
					break
				}
			}
			p.expect(tokRParen)
		}
		return l
	}
	p.noViable()
	return nil
}

// parseMultiColumnRelation parses (a, b, ...) followed by IN, BETWEEN or a comparison.
func (p *parser) parseMultiColumnRelation() Relation {
	r := Relation{Columns: p.parseTupleOfIdentifiers()}
	switch k := p.kind(); {
	case k == kwIn || k == kwNot && p.peekN(1).kind == kwIn:
		r.Op = OpIn
		if k == kwNot {
			p.next()
			r.Op = OpNotIn
		}
		p.next()
		r.Value = p.parseMultiColumnInValues()
	case k == kwBetween:
		p.next()
		r.Op = OpBetween
		r.Value = p.parseMultiColumnValue()
		p.expect(kwAnd)
		r.UpperBound = p.parseMultiColumnValue()
	default:
		r.Op = p.parseRelationType()
		r.Value = p.parseMultiColumnValue()
	}
	return r
}

// parseMultiColumnValue parses a tuple literal or a marker.
func (p *parser) parseMultiColumnValue() Term {
	switch p.kind() {
	case tokLParen:
		return p.parseTupleLiteral()
	case tokQMark, tokColon:
		return p.parseMarker()
	}
	p.noViable()
	return nil
}

// parseMultiColumnInValues parses a marker, or '(' ')' or a parenthesised
// list of tuple literals or markers.
func (p *parser) parseMultiColumnInValues() Term {
	switch p.kind() {
	case tokQMark, tokColon:
		return p.parseMarker()
	case tokLParen:
	default:
		p.noViable()
	}
	p.next()
	l := &ListLiteral{}
	if p.accept(tokRParen) {
		return l
	}
	for {
		switch p.kind() {
		case tokLParen:
			l.Elems = add[Term](l.Elems, p.parseTupleLiteral())
		case tokQMark, tokColon:
			l.Elems = add[Term](l.Elems, p.parseMarker())
		default:
			p.noViable()
		}
		if !p.accept(tokComma) {
			break
		}
	}
	p.expect(tokRParen)
	return l
}

// ---- terms ----

// isConstant reports whether k is a constant literal token.
func isConstant(k tokenKind) bool {
	switch k {
	case tokString, tokInteger, tokFloat, tokBoolean, tokDuration, tokUUID, tokHex:
		return true
	}
	return false
}

// parseConstant consumes a constant token as a *Literal.
func (p *parser) parseConstant() *Literal {
	t := p.peek()
	if !isConstant(t.kind) {
		p.noViable()
	}
	p.pos++
	raw := p.src[t.start:t.end]
	switch t.kind {
	case tokString:
		return &Literal{Kind: LiteralString, Text: t.val}
	case tokInteger:
		return &Literal{Kind: LiteralInteger, Text: raw}
	case tokFloat:
		if t.val != "" {
			return &Literal{Kind: LiteralFloat, Text: t.val}
		}
		return &Literal{Kind: LiteralFloat, Text: raw}
	case tokBoolean:
		return &Literal{Kind: LiteralBoolean, Text: t.val}
	case tokDuration:
		return &Literal{Kind: LiteralDuration, Text: raw}
	case tokUUID:
		return &Literal{Kind: LiteralUUID, Text: raw}
	default: // tokHex
		return &Literal{Kind: LiteralHex, Text: raw}
	}
}

// parseMarker parses ? or :name, numbering it.
func (p *parser) parseMarker() *BindMarker {
	m := &BindMarker{Index: p.nbind}
	switch p.kind() {
	case tokQMark:
		p.next()
	case tokColon:
		p.next()
		m.Name = p.ident(identName)
	default:
		p.noViable()
	}
	p.nbind++
	return m
}

// parseValue parses a constant, NULL or a marker (a selection literal).
func (p *parser) parseValue() Term {
	switch p.kind() {
	case kwNull:
		p.next()
		return &Literal{Kind: LiteralNull, Text: "null"}
	case tokQMark, tokColon:
		return p.parseMarker()
	}
	return p.parseConstant()
}

// parseTerm parses a term: sums of products of (possibly negated) simple terms.
func (p *parser) parseTerm() Term {
	depth := p.depth
	t := p.parseTermProduct()
	for k := p.kind(); k == tokPlus || k == tokMinus; k = p.kind() {
		p.next()
		p.enter()
		t = &ArithmeticTerm{Op: arithOp(k), Left: t, Right: p.parseTermProduct()}
	}
	p.depth = depth
	return t
}

func (p *parser) parseTermProduct() Term {
	depth := p.depth
	t := p.parseTermGroup()
	for k := p.kind(); k == tokStar || k == tokSlash || k == tokPercent; k = p.kind() {
		p.next()
		p.enter()
		t = &ArithmeticTerm{Op: arithOp(k), Left: t, Right: p.parseTermGroup()}
	}
	p.depth = depth
	return t
}

func (p *parser) parseTermGroup() Term {
	if p.accept(tokMinus) {
		return &NegatedTerm{Term: p.parseSimpleTerm()}
	}
	return p.parseSimpleTerm()
}

// parseSimpleTerm parses a value, a function call, a type hint or a cast.
func (p *parser) parseSimpleTerm() Term {
	p.enter()
	defer p.leave()
	t := p.peek()
	switch t.kind {
	case kwNull, tokQMark, tokColon:
		return p.parseValue()
	case tokLBracket:
		p.next()
		l := &ListLiteral{}
		if !p.accept(tokRBracket) {
			for {
				l.Elems = add(l.Elems, p.parseTerm())
				if !p.accept(tokComma) {
					break
				}
			}
			p.expect(tokRBracket)
		}
		return l
	case tokLBrace:
		return p.parseBraceLiteral()
	case tokLParen:
		if p.typeHintAhead(p.startsSimpleTerm) {
			p.next()
			typ := p.parseType()
			p.expect(tokRParen)
			return &TypeHintTerm{Type: typ.String(), Term: p.parseSimpleTerm()}
		}
		return p.parseTupleLiteral()
	case kwCast:
		if p.peekN(1).kind == tokLParen {
			p.pos += 2
			c := &CastTerm{Term: p.parseSimpleTerm()}
			p.expect(kwAs)
			c.Type = p.parseNativeType()
			p.expect(tokRParen)
			return c
		}
	}
	if isConstant(t.kind) {
		return p.parseConstant()
	}
	if p.functionAhead() {
		ks, name := p.parseFunctionName()
		f := &FunctionTerm{Keyspace: ks, Name: name}
		p.expect(tokLParen)
		if !p.accept(tokRParen) {
			for {
				f.Args = add(f.Args, p.parseTerm())
				if !p.accept(tokComma) {
					break
				}
			}
			p.expect(tokRParen)
		}
		return f
	}
	p.noViable()
	return nil
}

// startsSimpleTerm reports whether the token at index i can start a simple term.
func (p *parser) startsSimpleTerm(i int) bool {
	t := p.tok(i)
	switch t.kind {
	case tokLParen, tokLBracket, tokLBrace, tokQMark, tokColon, kwNull, kwCast:
		return true
	}
	return isConstant(t.kind) || isIdentTok(t, identFunction) || isIdentTok(t, identName)
}

// parseTupleLiteral parses '(' term (',' term)* ')'.
func (p *parser) parseTupleLiteral() *TupleLiteral {
	p.expect(tokLParen)
	tl := &TupleLiteral{Elems: []Term{p.parseTerm()}}
	for p.accept(tokComma) {
		tl.Elems = add(tl.Elems, p.parseTerm())
	}
	p.expect(tokRParen)
	return tl
}

// parseBraceLiteral parses a set, map or user-type literal.
func (p *parser) parseBraceLiteral() Term {
	p.expect(tokLBrace)
	if p.accept(tokRBrace) {
		return &SetLiteral{}
	}
	if isIdentTok(p.peek(), identName) && p.peekN(1).kind == tokColon {
		u := &UserTypeLiteral{}
		for {
			u.Fields = add(u.Fields, p.ident(identName))
			p.expect(tokColon)
			u.Values = add(u.Values, p.parseTerm())
			if !p.accept(tokComma) {
				break
			}
		}
		p.expect(tokRBrace)
		return u
	}
	first := p.parseTerm()
	if p.accept(tokColon) {
		m := &MapLiteral{Keys: []Term{first}, Values: []Term{p.parseTerm()}}
		for p.accept(tokComma) {
			m.Keys = add(m.Keys, p.parseTerm())
			p.expect(tokColon)
			m.Values = add(m.Values, p.parseTerm())
		}
		p.expect(tokRBrace)
		return m
	}
	s := &SetLiteral{Elems: []Term{first}}
	for p.accept(tokComma) {
		s.Elems = add(s.Elems, p.parseTerm())
	}
	p.expect(tokRBrace)
	return s
}

// typeHintAhead reports whether the '(' at the current token starts a type
// hint: '(' type ')' followed by a token accepted by startsOperand.
func (p *parser) typeHintAhead(startsOperand func(i int) bool) bool {
	if t := p.peekN(1); t.kind != tokString && t.kind != kwSet && !isIdentTok(t, identName) {
		return false // cannot start a type
	}
	after := -1
	if !p.speculate(func() {
		p.next()
		p.parseType()
		p.expect(tokRParen)
		after = p.pos
	}) {
		return false
	}
	return startsOperand(after)
}

// formatTerm renders a term in CQL, for error messages.
func formatTerm(t Term) string {
	var b strings.Builder
	writeTerm(&b, t)
	return b.String()
}

func writeTerms(b *strings.Builder, open string, ts []Term, close string) {
	b.WriteString(open)
	for i, t := range ts {
		if i > 0 {
			b.WriteString(", ")
		}
		writeTerm(b, t)
	}
	b.WriteString(close)
}

func writeTerm(b *strings.Builder, t Term) {
	switch t := t.(type) {
	case *Literal:
		if t.Kind == LiteralString {
			b.WriteString(quoteString(t.Text))
		} else {
			b.WriteString(t.Text)
		}
	case *BindMarker:
		if t.Name != "" {
			b.WriteString(":" + t.Name)
		} else {
			b.WriteString("?")
		}
	case *ListLiteral:
		writeTerms(b, "[", t.Elems, "]")
	case *TupleLiteral:
		writeTerms(b, "(", t.Elems, ")")
	case *SetLiteral:
		writeTerms(b, "{", t.Elems, "}")
	case *MapLiteral:
		b.WriteString("{")
		for i := range t.Keys {
			if i > 0 {
				b.WriteString(", ")
			}
			writeTerm(b, t.Keys[i])
			b.WriteString(": ")
			writeTerm(b, t.Values[i])
		}
		b.WriteString("}")
	case *UserTypeLiteral:
		b.WriteString("{")
		for i := range t.Fields {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(MaybeQuote(t.Fields[i]) + ": ")
			writeTerm(b, t.Values[i])
		}
		b.WriteString("}")
	case *FunctionTerm:
		if t.Keyspace != "" {
			b.WriteString(MaybeQuote(t.Keyspace) + ".")
		}
		b.WriteString(MaybeQuote(t.Name))
		writeTerms(b, "(", t.Args, ")")
	case *TypeHintTerm:
		b.WriteString("(" + t.Type + ")")
		writeTerm(b, t.Term)
	case *CastTerm:
		b.WriteString("CAST(")
		writeTerm(b, t.Term)
		b.WriteString(" AS " + t.Type + ")")
	case *ArithmeticTerm:
		writeTerm(b, t.Left)
		b.WriteString(" " + t.Op + " ")
		writeTerm(b, t.Right)
	case *NegatedTerm:
		b.WriteString("-")
		writeTerm(b, t.Term)
	}
}
