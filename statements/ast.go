package statements

// This file defines the syntax tree produced by Parse. Nodes are syntax only:
// names are resolved (unquoted identifiers lower-cased, quoted ones kept as
// written) but nothing is checked against a schema.
//
// Every node is produced as a pointer (*Select, *ColumnRef, *Literal, ...)
// except Star, which is an empty struct used by value.

// Statement is a parsed CQL statement: *Use, *Select, *Insert, *Update,
// *Delete, *Batch, *Truncate, *CreateKeyspace, *AlterKeyspace,
// *DropKeyspace, *CreateTable, *AlterTable, *DropTable, *CreateType,
// *AlterType, *DropType, *CreateFunction, *CreateAggregate or
// *DropFunction.
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

// ---- data modification ----

// Using is the USING clause of INSERT, UPDATE, DELETE and BATCH. Each value
// is nil when absent, otherwise a *Literal (integer) or a *BindMarker.
// DELETE only allows TIMESTAMP.
type Using struct {
	TTL       Term
	Timestamp Term
}

// Insert is INSERT INTO [ks.]table (columns) VALUES (values) or
// INSERT INTO [ks.]table JSON value [DEFAULT NULL|UNSET], either followed by
// [IF NOT EXISTS] [USING ...].
type Insert struct {
	Keyspace string // "" when unqualified
	Table    string
	// Columns and Values are the column names and values of a normal
	// insert, as written (their counts are not checked); nil for JSON.
	Columns []string
	Values  []Term
	// Json is the value of INSERT ... JSON: a string *Literal or a
	// *BindMarker; nil for a normal insert.
	Json Term
	// DefaultUnset is set by JSON ... DEFAULT UNSET (DEFAULT NULL, the
	// default, leaves it false).
	DefaultUnset bool
	IfNotExists  bool
	Using        Using
}

// Update is UPDATE [ks.]table [USING ...] SET assignments WHERE relations
// [IF EXISTS | IF conditions].
type Update struct {
	Keyspace    string // "" when unqualified
	Table       string
	Using       Using
	Assignments []Assignment // in order; never empty
	Where       []Relation   // ANDed; never empty
	IfExists    bool
	Conditions  []Condition // IF c = v AND ...; nil when none
}

// Delete is DELETE [selection] FROM [ks.]table [USING TIMESTAMP t]
// WHERE relations [IF EXISTS | IF conditions].
type Delete struct {
	Keyspace string // "" when unqualified
	Table    string
	// Columns is what DELETE a, b[k], c.f removes; nil for whole rows.
	Columns    []Deletion
	Using      Using      // Timestamp only
	Where      []Relation // ANDed; never empty
	IfExists   bool
	Conditions []Condition // nil when none
}

// BatchType is the kind of a batch.
type BatchType uint8

// Batch types.
const (
	BatchLogged   BatchType = iota // BEGIN BATCH
	BatchUnlogged                  // BEGIN UNLOGGED BATCH
	BatchCounter                   // BEGIN COUNTER BATCH
)

func (t BatchType) String() string {
	switch t {
	case BatchLogged:
		return "LOGGED"
	case BatchUnlogged:
		return "UNLOGGED"
	case BatchCounter:
		return "COUNTER"
	}
	return "invalid"
}

// Batch is BEGIN [UNLOGGED|COUNTER] BATCH [USING ...] statements APPLY BATCH.
// Bind markers are numbered across all the statements.
type Batch struct {
	Type       BatchType
	Using      Using       // applies to every statement
	Statements []Statement // *Insert, *Update or *Delete; may be empty
}

// AssignmentOp is the kind of an UPDATE assignment.
type AssignmentOp uint8

// Assignment kinds.
const (
	// AssignSet is c = v, or c[k] = v and c.f = v (with Key or Field set).
	AssignSet AssignmentOp = iota + 1
	// AssignAdd is c = c + v, c += v, and c = c -1 (an integer literal
	// following the column, with its sign, as Cassandra reads it).
	AssignAdd
	// AssignSubtract is c = c - v and c -= v.
	AssignSubtract
	// AssignPrepend is c = v + c (list prepend).
	AssignPrepend
)

// Assignment is one SET element of an UPDATE.
type Assignment struct {
	Column string
	Op     AssignmentOp
	// Key is k in c[k] = v (a map key or list index); nil otherwise.
	Key Term
	// Field is f in c.f = v (a user type field); "" otherwise.
	Field string
	Value Term
}

// Condition is one condition of an IF clause (lightweight transaction).
type Condition struct {
	Column string
	// Key is k in c[k] op v; nil otherwise.
	Key Term
	// Field is f in c.f op v; "" otherwise.
	Field string
	// Op is one of = != < <= > >= IN, or CONTAINS / CONTAINS KEY (on a
	// plain column only).
	Op Operator
	// Value is the right-hand side; for IN a *ListLiteral of the values or
	// a single *BindMarker, as in Relation.
	Value Term
}

// Deletion is one element of a DELETE selection: c, c[k] or c.f.
type Deletion struct {
	Column string
	Key    Term   // k in c[k] (map key, set element or list index); nil otherwise
	Field  string // f in c.f; "" otherwise
}

// Truncate is TRUNCATE [TABLE] [ks.]table.
type Truncate struct {
	Keyspace string // "" when unqualified
	Table    string
}

// ---- schema ----

// Properties are the name = value options of a WITH clause (table
// options), by name: unquoted names are lower-cased. Property names and
// values are not validated.
type Properties map[string]PropertyValue

// PropertyValue is the value of one property: a simple value or a map.
type PropertyValue struct {
	// Value is a simple value as Cassandra reads it: constants as written,
	// strings without quotes ('10' and 10 both give "10"), an unreserved
	// keyword as written. "" for a map.
	Value string
	// Kind is the literal kind of a simple constant value; 0 for a map or
	// a bare keyword. Cassandra reads all kinds alike.
	Kind LiteralKind
	// Map is a map value ({'class': 'X', 'min_threshold': 4}), keys and
	// values as for Value; nil for a simple value.
	Map map[string]string
}

// ColumnDef is a column definition of CREATE TABLE or ALTER TABLE.
type ColumnDef struct {
	Name string
	// Type is the type as written, normalised: lower-case keywords, ", "
	// separators, frozen<> kept, user type names quoted only when needed
	// ("map<text, frozen<list<int>>>", "frozen<ks.addr>"). ParseTypeFrozen
	// reads it back.
	Type   string
	Static bool
}

// ClusteringOrder is one column of WITH CLUSTERING ORDER BY (c DESC, ...).
type ClusteringOrder struct {
	Column string
	Desc   bool
}

// CreateTable is CREATE TABLE [IF NOT EXISTS] [ks.]table (definitions)
// [WITH options]. It is syntax only: duplicate columns, unknown key columns
// and the like are left to analysis.
type CreateTable struct {
	Keyspace    string // "" when unqualified
	Table       string
	IfNotExists bool
	// Columns are the column definitions in declaration order.
	Columns []ColumnDef
	// PartitionKey and Clustering are the primary key columns, from
	// "c type PRIMARY KEY" (a single partition key column, no clustering)
	// or from PRIMARY KEY (a, c, d) / PRIMARY KEY ((a, b), c, d).
	PartitionKey []string
	Clustering   []string
	// PrimaryKeys counts the primary key specifications (inline or
	// clauses); PartitionKey and Clustering come from the first. Cassandra
	// requires exactly one, and answers an invalid request "No PRIMARY KEY
	// specifed for table 't' (exactly one required)" for none and "Multiple
	// PRIMARY KEY specified for table 't' (exactly one required)" for more.
	PrimaryKeys int
	// ClusteringOrder is WITH CLUSTERING ORDER BY (...) as written
	// (duplicates kept); nil when absent.
	ClusteringOrder []ClusteringOrder
	// CompactStorage is set by WITH COMPACT STORAGE (which Cassandra 4.0
	// no longer supports).
	CompactStorage bool
	// Properties are the other WITH options; nil when none.
	Properties Properties
}

// AlterTableOp is the kind of an ALTER TABLE.
type AlterTableOp uint8

// ALTER TABLE kinds.
const (
	// AlterTableAdd is ADD [IF NOT EXISTS] c type [static] or ADD (c type, ...): Columns.
	AlterTableAdd AlterTableOp = iota + 1
	// AlterTableDrop is DROP [IF EXISTS] c or DROP (c, ...) [USING TIMESTAMP t]: Drop, DropTimestamp.
	AlterTableDrop
	// AlterTableRename is RENAME [IF EXISTS] a TO b [AND c TO d ...]: Renames.
	AlterTableRename
	// AlterTableWith is WITH options: Properties.
	AlterTableWith
	// AlterTableAlterType is ALTER c TYPE t: Columns[0] (Cassandra 4.0
	// rejects it when executing).
	AlterTableAlterType
	// AlterTableDropCompactStorage is DROP COMPACT STORAGE.
	AlterTableDropCompactStorage
)

// Rename is one a TO b of ALTER TABLE / ALTER TYPE ... RENAME.
type Rename struct{ From, To string }

// AlterTable is ALTER TABLE [IF EXISTS] [ks.]table followed by one alteration.
type AlterTable struct {
	Keyspace string // "" when unqualified
	Table    string
	IfExists bool // ALTER TABLE IF EXISTS
	Op       AlterTableOp
	// IfColumnNotExists is ADD IF NOT EXISTS; IfColumnExists is DROP IF
	// EXISTS or RENAME IF EXISTS.
	IfColumnNotExists bool
	IfColumnExists    bool
	Columns           []ColumnDef // ADD, ALTER TYPE
	Drop              []string    // DROP
	// DropTimestamp is the integer *Literal of DROP ... USING TIMESTAMP; nil when absent.
	DropTimestamp *Literal
	Renames       []Rename   // RENAME
	Properties    Properties // WITH
	// View is ALTER MATERIALIZED VIEW [ks.]v WITH properties (Op
	// AlterTableWith): cqld has no views, so none is found.
	View bool
}

// DropTable is DROP TABLE [IF EXISTS] [ks.]table, or with View DROP
// MATERIALIZED VIEW [IF EXISTS] [ks.]view (cqld has no views, so none is
// found).
type DropTable struct {
	Keyspace string // "" when unqualified
	Table    string
	IfExists bool
	View     bool
}

// CreateIndex is CREATE INDEX [IF NOT EXISTS] [[ks.]name] ON [ks.]table (targets).
type CreateIndex struct {
	Keyspace      string // of the index name; "" when unqualified
	Name          string // "" when not given
	TableKeyspace string // "" when unqualified
	Table         string
	Targets       []IndexTarget
	IfNotExists   bool
}

// IndexTarget is col, values(col), keys(col), entries(col) or full(col).
type IndexTarget struct {
	Kind   string // "" for a plain column, else "values", "keys", "entries" or "full"
	Column string
}

// DropIndex is DROP INDEX [IF EXISTS] [ks.]name.
type DropIndex struct {
	Keyspace string // "" when unqualified
	Name     string
	IfExists bool
}

// AlterKeyspace is ALTER KEYSPACE [IF EXISTS] ks WITH replication = {...}
// [AND durable_writes = bool]; the options are read as in CreateKeyspace.
type AlterKeyspace struct {
	Keyspace string
	IfExists bool
	// Replication is nil when not given (the replication is kept).
	Replication map[string]string
	// DurableWrites is nil when not given.
	DurableWrites *bool
}

// FieldDef is a field of a user-defined type: a name and a type, the type
// normalised as in ColumnDef.
type FieldDef struct {
	Name string
	Type string
}

// CreateType is CREATE TYPE [IF NOT EXISTS] [ks.]name (field type, ...).
type CreateType struct {
	Keyspace    string // "" when unqualified
	Name        string
	IfNotExists bool
	Fields      []FieldDef // in declaration order, duplicates kept
}

// AlterTypeOp is the kind of an ALTER TYPE.
type AlterTypeOp uint8

// ALTER TYPE kinds.
const (
	// AlterTypeAdd is ADD [IF NOT EXISTS] f type: Field.
	AlterTypeAdd AlterTypeOp = iota + 1
	// AlterTypeRename is RENAME [IF EXISTS] f TO g [AND ...]: Renames.
	AlterTypeRename
	// AlterTypeAlterType is ALTER f TYPE t: Field (Cassandra 4.0 rejects
	// it when executing).
	AlterTypeAlterType
)

// AlterType is ALTER TYPE [IF EXISTS] [ks.]name followed by one alteration.
type AlterType struct {
	Keyspace         string // "" when unqualified
	Name             string
	IfExists         bool
	Op               AlterTypeOp
	IfFieldNotExists bool     // ADD IF NOT EXISTS
	IfFieldExists    bool     // RENAME IF EXISTS
	Field            FieldDef // ADD, ALTER TYPE
	Renames          []Rename // RENAME
}

// DropType is DROP TYPE [IF EXISTS] [ks.]name.
type DropType struct {
	Keyspace string // "" when unqualified
	Name     string
	IfExists bool
}

// FunctionArg is an argument of CREATE FUNCTION: a name and a type
// (normalised as in ColumnDef).
type FunctionArg struct {
	Name string
	Type string
}

// CreateFunction is CREATE [OR REPLACE] FUNCTION [IF NOT EXISTS]
// [ks.]name (args) (CALLED | RETURNS NULL) ON NULL INPUT RETURNS type
// LANGUAGE lang AS 'body'.
type CreateFunction struct {
	OrReplace         bool
	IfNotExists       bool
	Keyspace          string // "" when unqualified
	Name              string // lower-cased unless quoted
	Args              []FunctionArg
	CalledOnNullInput bool   // CALLED ON NULL INPUT (false: RETURNS NULL ON NULL INPUT)
	ReturnType        string // normalised as in ColumnDef
	Language          string // lower-cased ("java")
	Body              string // the code, without quotes
}

// CreateAggregate is CREATE [OR REPLACE] AGGREGATE [IF NOT EXISTS]
// [ks.]name (types) SFUNC f STYPE type [FINALFUNC f] [INITCOND term].
type CreateAggregate struct {
	OrReplace   bool
	IfNotExists bool
	Keyspace    string // "" when unqualified
	Name        string
	ArgTypes    []string // normalised as in ColumnDef
	StateFunc   string
	StateType   string
	FinalFunc   string // "" when none
	InitCond    Term   // nil when none
}

// DropFunction is DROP FUNCTION or DROP AGGREGATE [IF EXISTS] [ks.]name
// [(types)].
type DropFunction struct {
	Aggregate bool // DROP AGGREGATE
	IfExists  bool
	Keyspace  string // "" when unqualified
	Name      string
	// ArgTypes are the signature's types when HasArgs: DROP FUNCTION f()
	// names the function without arguments, DROP FUNCTION f every one.
	ArgTypes []string
	HasArgs  bool
}

func (*Insert) statement()          {}
func (*Update) statement()          {}
func (*Delete) statement()          {}
func (*Batch) statement()           {}
func (*Truncate) statement()        {}
func (*CreateTable) statement()     {}
func (*AlterTable) statement()      {}
func (*DropTable) statement()       {}
func (*CreateIndex) statement()     {}
func (*DropIndex) statement()       {}
func (*AlterKeyspace) statement()   {}
func (*CreateType) statement()      {}
func (*AlterType) statement()       {}
func (*DropType) statement()        {}
func (*CreateFunction) statement()  {}
func (*CreateAggregate) statement() {}
func (*DropFunction) statement()    {}
