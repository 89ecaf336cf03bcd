package statements

// This file defines the syntax tree produced by Parse. Nodes are syntax only:
// names are resolved (unquoted identifiers lower-cased, quoted ones kept as
// written) but nothing is checked against a schema.
//
// Every node is produced as a pointer (*Select, *ColumnRef, *Literal, ...)
// except Star, which is an empty struct used by value.

// Statement is a parsed CQL statement: *Use, *CreateKeyspace, *DropKeyspace
// or *Select.
type Statement interface{ statement() }

// Use is USE <keyspace>.
type Use struct{ Keyspace string }

// CreateKeyspace is CREATE KEYSPACE [IF NOT EXISTS] ks WITH replication = {...} [AND durable_writes = bool].
type CreateKeyspace struct {
	Keyspace    string
	IfNotExists bool
	// Replication holds the replication map, values as written without
	// quotes: 'replication_factor': 1 gives "1"; the 'class' value is kept as
	// given (no expansion of short class names). Nil when not given.
	Replication map[string]string
	// DurableWrites is nil when not given.
	DurableWrites *bool
}

// DropKeyspace is DROP KEYSPACE [IF EXISTS] ks.
type DropKeyspace struct {
	Keyspace string
	IfExists bool
}

// Select is a SELECT statement.
type Select struct {
	Keyspace          string // "" when unqualified
	Table             string
	Json              bool
	Distinct          bool
	Selectors         []Selector     // empty means *
	Where             []Relation     // ANDed
	GroupBy           []SelectorExpr // GROUP BY selectors
	OrderBy           []Ordering
	PerPartitionLimit Term // nil when absent; *Literal (integer) or *BindMarker
	Limit             Term // nil when absent; *Literal (integer) or *BindMarker
	AllowFiltering    bool
}

func (*Use) statement()            {}
func (*CreateKeyspace) statement() {}
func (*DropKeyspace) statement()   {}
func (*Select) statement()         {}

// Selector is one element of a SELECT clause.
type Selector struct {
	Expr  SelectorExpr
	Alias string // "" when none
}

// SelectorExpr is an expression in a SELECT clause (or GROUP BY).
type SelectorExpr interface{ selectorExpr() }

// ColumnRef names a column.
type ColumnRef struct{ Name string }

// FunctionCall is a function call in a selection. count(*) is
// FunctionCall{Name: "count", Args: []SelectorExpr{Star{}}}; writetime(c),
// maxwritetime(c), ttl(c) and token(a, b) are function calls too. Unquoted
// names are lower-cased (toTimestamp -> "totimestamp").
type FunctionCall struct {
	Keyspace string // "" when unqualified
	Name     string
	Args     []SelectorExpr
}

// Star is the * in count(*).
type Star struct{}

// Cast is CAST(expr AS type); Type is a native type name.
type Cast struct {
	Expr SelectorExpr
	Type string
}

// TermSelector is a literal or bind marker in a selection.
type TermSelector struct{ Term Term }

// FieldSelector is expr.field (a user-defined type field).
type FieldSelector struct {
	Expr  SelectorExpr
	Field string
}

// ElementSelector is expr[key] (a collection element).
type ElementSelector struct {
	Expr SelectorExpr
	Key  Term
}

// SliceSelector is expr[from..to]; From or To is nil when open.
type SliceSelector struct {
	Expr     SelectorExpr
	From, To Term
}

// ArithmeticSelector is Left Op Right with Op one of + - * / %.
type ArithmeticSelector struct {
	Op          string
	Left, Right SelectorExpr
}

// NegatedSelector is -expr.
type NegatedSelector struct{ Expr SelectorExpr }

// TypeHintSelector is (type) expr.
type TypeHintSelector struct {
	Type string
	Expr SelectorExpr
}

// TupleSelector is (a, b, ...) with at least two elements; a single
// parenthesised selector is returned as its content.
type TupleSelector struct{ Elems []SelectorExpr }

// ListSelector is [a, b, ...].
type ListSelector struct{ Elems []SelectorExpr }

// SetSelector is {a, b, ...} (and the empty {}).
type SetSelector struct{ Elems []SelectorExpr }

// MapSelector is {k: v, ...}; it may also denote a user-type value
// {field: v} since the two are indistinguishable before analysis.
type MapSelector struct{ Keys, Values []SelectorExpr }

func (*ColumnRef) selectorExpr()          {}
func (*FunctionCall) selectorExpr()       {}
func (Star) selectorExpr()                {}
func (*Cast) selectorExpr()               {}
func (*TermSelector) selectorExpr()       {}
func (*FieldSelector) selectorExpr()      {}
func (*ElementSelector) selectorExpr()    {}
func (*SliceSelector) selectorExpr()      {}
func (*ArithmeticSelector) selectorExpr() {}
func (*NegatedSelector) selectorExpr()    {}
func (*TypeHintSelector) selectorExpr()   {}
func (*TupleSelector) selectorExpr()      {}
func (*ListSelector) selectorExpr()       {}
func (*SetSelector) selectorExpr()        {}
func (*MapSelector) selectorExpr()        {}

// Relation is one restriction of a WHERE clause.
type Relation struct {
	// Columns is one column normally, several for (a, b) > (?, ?) and for
	// token(a, b) > ? (with Token set). For OpCustomIndex it is the index
	// name, with IndexKeyspace its keyspace.
	Columns []string
	Token   bool
	Op      Operator
	// Value is the right-hand side. For IN it is a *ListLiteral of the
	// values (of *TupleLiteral or *BindMarker for multi-column IN) or a
	// single *BindMarker; for IS NOT it is the null literal; for BETWEEN it is
	// the lower bound.
	Value Term
	// UpperBound is the upper bound of BETWEEN, nil otherwise.
	UpperBound Term
	// MapKey is set for m[key] = value relations.
	MapKey Term
	// IndexKeyspace is the keyspace of a custom index expression, if qualified.
	IndexKeyspace string
}

// Operator is a relation operator as Cassandra spells it.
type Operator string

// Relation operators.
const (
	OpEq             Operator = "="
	OpNeq            Operator = "!="
	OpLt             Operator = "<"
	OpLte            Operator = "<="
	OpGt             Operator = ">"
	OpGte            Operator = ">="
	OpIn             Operator = "IN"
	OpNotIn          Operator = "NOT IN"
	OpContains       Operator = "CONTAINS"
	OpContainsKey    Operator = "CONTAINS KEY"
	OpNotContains    Operator = "NOT CONTAINS"
	OpNotContainsKey Operator = "NOT CONTAINS KEY"
	OpLike           Operator = "LIKE"
	OpIsNot          Operator = "IS NOT"
	OpBetween        Operator = "BETWEEN"
	// OpCustomIndex is expr(index, value), a custom index expression.
	OpCustomIndex Operator = "EXPR"
)

// Ordering is one ORDER BY element.
type Ordering struct {
	Column string
	Desc   bool
	// Ann is the vector of ORDER BY c ANN OF vector, nil otherwise.
	Ann Term
}

// Term is a value: *Literal, *BindMarker, *ListLiteral, *TupleLiteral,
// *SetLiteral, *MapLiteral, *UserTypeLiteral, *FunctionTerm, *TypeHintTerm,
// *CastTerm, *ArithmeticTerm or *NegatedTerm.
type Term interface{ term() }

// LiteralKind is the kind of a Literal.
type LiteralKind uint8

// Literal kinds.
const (
	LiteralString LiteralKind = iota + 1
	LiteralInteger
	LiteralFloat
	LiteralBoolean
	LiteralUUID
	LiteralHex
	LiteralDuration
	LiteralNull
)

var literalKindNames = [...]string{"", "string", "integer", "float", "boolean", "uuid", "hex", "duration", "null"}

func (k LiteralKind) String() string {
	if int(k) < len(literalKindNames) && k > 0 {
		return literalKindNames[k]
	}
	return "invalid"
}

// Literal is a constant. Text is the literal's text without quotes (escapes
// resolved); numbers, UUIDs, hex blobs (0x...) and durations are as written,
// booleans are "true" or "false", NaN/Infinity are "NaN", "Infinity" or
// "-Infinity", null is "null".
type Literal struct {
	Kind LiteralKind
	Text string
}

// BindMarker is ? (Name "") or :name. Index is its position among all the
// bind markers of the statement in order of appearance (0-based).
type BindMarker struct {
	Index int
	Name  string
}

// ListLiteral is [a, b, ...]; also the value list of IN (...).
type ListLiteral struct{ Elems []Term }

// TupleLiteral is (a, b, ...).
type TupleLiteral struct{ Elems []Term }

// SetLiteral is {a, b, ...}; the empty {} is a SetLiteral too (it may
// denote an empty map; analysis decides from the receiver's type).
type SetLiteral struct{ Elems []Term }

// MapLiteral is {k: v, ...}.
type MapLiteral struct{ Keys, Values []Term }

// UserTypeLiteral is {field: value, ...}.
type UserTypeLiteral struct {
	Fields []string
	Values []Term
}

// FunctionTerm is a function call used as a value: now(), uuid(), toTimestamp(now()).
type FunctionTerm struct {
	Keyspace, Name string
	Args           []Term
}

// TypeHintTerm is (type) term, e.g. (int)?.
type TypeHintTerm struct {
	Type string
	Term Term
}

// CastTerm is CAST(term AS type) used as a value.
type CastTerm struct {
	Term Term
	Type string
}

// ArithmeticTerm is Left Op Right with Op one of + - * / %.
type ArithmeticTerm struct {
	Op          string
	Left, Right Term
}

// NegatedTerm is -term (for terms other than numeric literals, which lex
// with their sign).
type NegatedTerm struct{ Term Term }

func (*Literal) term()         {}
func (*BindMarker) term()      {}
func (*ListLiteral) term()     {}
func (*TupleLiteral) term()    {}
func (*SetLiteral) term()      {}
func (*MapLiteral) term()      {}
func (*UserTypeLiteral) term() {}
func (*FunctionTerm) term()    {}
func (*TypeHintTerm) term()    {}
func (*CastTerm) term()        {}
func (*ArithmeticTerm) term()  {}
func (*NegatedTerm) term()     {}
