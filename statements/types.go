package statements

import (
	"strings"

	"github.com/datastax/go-cassandra-native-protocol/datatype"
	"github.com/datastax/go-cassandra-native-protocol/primitive"
)

// UnknownTypeError is returned by ParseType for a type name that is not a
// native CQL type, i.e. a user-defined type, which needs a schema to resolve.
type UnknownTypeError struct {
	Keyspace string // "" when unqualified
	Name     string
}

func (e *UnknownTypeError) Error() string {
	if e.Keyspace != "" {
		return "Unknown type " + e.Keyspace + "." + e.Name
	}
	return "Unknown type " + e.Name
}

// UnsupportedTypeError is returned by ParseType for a valid type that cqld
// cannot represent yet (vector<...>).
type UnsupportedTypeError struct{ Type string }

func (e *UnsupportedTypeError) Error() string {
	return "type " + e.Type + " is not supported yet"
}

// ParseType parses a CQL type as written in DDL or stored in
// system_schema.columns.type ("int", "frozen<map<text, text>>",
// "list<frozen<tuple<int, text>>>", "'org.apache.cassandra.db.marshal.X'"
// for custom types). It is case- and whitespace-insensitive; text and
// varchar both give datatype.Varchar; frozen<> is dropped (see
// ParseTypeFrozen). Malformed strings give a *SyntaxError, user-defined type
// names an *UnknownTypeError and vector types an *UnsupportedTypeError.
func ParseType(s string) (datatype.DataType, error) {
	dt, _, err := ParseTypeFrozen(s)
	return dt, err
}

// ParseTypeFrozen is ParseType that also reports whether the outermost type
// is frozen<...>. It is the inverse of TypeString.
func ParseTypeFrozen(s string) (datatype.DataType, bool, error) {
	ct, err := parseCQLType(s)
	if err != nil {
		return nil, false, err
	}
	dt, err := ct.dataType()
	if err != nil {
		return nil, false, err
	}
	return dt, ct.frozen, nil
}

// TypeString renders t the way Cassandra spells types in system_schema:
// varchar is "text", parameters are separated by ", ", and frozen types are
// wrapped in frozen<...>. frozen applies to the outermost type; nested
// collections, tuples and user types are always frozen (Cassandra requires
// it), and tuples are always rendered frozen, as Cassandra does.
// User-defined types are rendered by name (quoted when needed), custom types
// as their quoted class name.
func TypeString(t datatype.DataType, frozen bool) string {
	var b strings.Builder
	writeDataType(&b, t, frozen)
	return b.String()
}

func writeDataType(b *strings.Builder, t datatype.DataType, frozen bool) {
	if frozen {
		switch t.(type) {
		case *datatype.List, *datatype.Set, *datatype.Map, *datatype.UserDefined:
			b.WriteString("frozen<")
			writeDataType(b, t, false)
			b.WriteByte('>')
			return
		}
	}
	switch t := t.(type) {
	case nil:
	case *datatype.List:
		b.WriteString("list<")
		writeDataType(b, t.ElementType, true)
		b.WriteByte('>')
	case *datatype.Set:
		b.WriteString("set<")
		writeDataType(b, t.ElementType, true)
		b.WriteByte('>')
	case *datatype.Map:
		b.WriteString("map<")
		writeDataType(b, t.KeyType, true)
		b.WriteString(", ")
		writeDataType(b, t.ValueType, true)
		b.WriteByte('>')
	case *datatype.Tuple:
		b.WriteString("frozen<tuple<")
		for i, ft := range t.FieldTypes {
			if i > 0 {
				b.WriteString(", ")
			}
			writeDataType(b, ft, true)
		}
		b.WriteString(">>")
	case *datatype.UserDefined:
		b.WriteString(MaybeQuote(t.Name))
	case *datatype.Custom:
		b.WriteString(quoteString(t.ClassName))
	default:
		if name := nativeTypeName(t.Code()); name != "" {
			b.WriteString(name)
		} else {
			b.WriteString(t.AsCql())
		}
	}
}

// nativeTypeName returns the system_schema spelling of a native type code.
func nativeTypeName(c primitive.DataTypeCode) string {
	switch c {
	case primitive.DataTypeCodeAscii:
		return "ascii"
	case primitive.DataTypeCodeBigint:
		return "bigint"
	case primitive.DataTypeCodeBlob:
		return "blob"
	case primitive.DataTypeCodeBoolean:
		return "boolean"
	case primitive.DataTypeCodeCounter:
		return "counter"
	case primitive.DataTypeCodeDate:
		return "date"
	case primitive.DataTypeCodeDecimal:
		return "decimal"
	case primitive.DataTypeCodeDouble:
		return "double"
	case primitive.DataTypeCodeDuration:
		return "duration"
	case primitive.DataTypeCodeFloat:
		return "float"
	case primitive.DataTypeCodeInet:
		return "inet"
	case primitive.DataTypeCodeInt:
		return "int"
	case primitive.DataTypeCodeSmallint:
		return "smallint"
	case primitive.DataTypeCodeText, primitive.DataTypeCodeVarchar:
		return "text"
	case primitive.DataTypeCodeTime:
		return "time"
	case primitive.DataTypeCodeTimestamp:
		return "timestamp"
	case primitive.DataTypeCodeTimeuuid:
		return "timeuuid"
	case primitive.DataTypeCodeTinyint:
		return "tinyint"
	case primitive.DataTypeCodeUuid:
		return "uuid"
	case primitive.DataTypeCodeVarint:
		return "varint"
	}
	return ""
}

// nativeDataType maps a native type keyword to its protocol type.
func nativeDataType(k tokenKind) datatype.DataType {
	switch k {
	case kwAscii:
		return datatype.Ascii
	case kwBigint:
		return datatype.Bigint
	case kwBlob:
		return datatype.Blob
	case kwBoolean:
		return datatype.Boolean
	case kwCounter:
		return datatype.Counter
	case kwDate:
		return datatype.Date
	case kwDecimal:
		return datatype.Decimal
	case kwDouble:
		return datatype.Double
	case kwDuration:
		return datatype.Duration
	case kwFloat:
		return datatype.Float
	case kwInet:
		return datatype.Inet
	case kwInt:
		return datatype.Int
	case kwSmallint:
		return datatype.Smallint
	case kwText, kwVarchar:
		return datatype.Varchar
	case kwTime:
		return datatype.Time
	case kwTimestamp:
		return datatype.Timestamp
	case kwTimeuuid:
		return datatype.Timeuuid
	case kwTinyint:
		return datatype.Tinyint
	case kwUuid:
		return datatype.Uuid
	case kwVarint:
		return datatype.Varint
	}
	return nil
}

// cqlTypeKind is the kind of a parsed (unresolved) type.
type cqlTypeKind uint8

const (
	typeNative cqlTypeKind = iota
	typeList
	typeSet
	typeMap
	typeTuple
	typeVector
	typeUDT
	typeCustom
)

// cqlType is a type as parsed, before user types are resolved against a schema.
type cqlType struct {
	kind     cqlTypeKind
	frozen   bool
	native   tokenKind // typeNative: the type keyword
	name     string    // typeUDT: name; typeCustom: class name
	keyspace string    // typeUDT: keyspace, "" when unqualified
	dim      string    // typeVector: dimension as written
	// unsupported: a custom type cqld cannot represent
	unsupported bool
	args        []cqlType // parameters of collections, tuples and vectors
}

// String renders the type as written, normalised: lower-case keywords,
// ", " separators, names quoted only when needed.
func (t *cqlType) String() string {
	var b strings.Builder
	t.write(&b)
	return b.String()
}

func (t *cqlType) write(b *strings.Builder) {
	if t.frozen {
		b.WriteString("frozen<")
	}
	writeArgs := func(open string) {
		b.WriteString(open)
		for i := range t.args {
			if i > 0 {
				b.WriteString(", ")
			}
			t.args[i].write(b)
		}
		if t.kind == typeVector {
			b.WriteString(", " + t.dim)
		}
		b.WriteByte('>')
	}
	switch t.kind {
	case typeNative:
		b.WriteString(t.native.kwName())
	case typeList:
		writeArgs("list<")
	case typeSet:
		writeArgs("set<")
	case typeMap:
		writeArgs("map<")
	case typeTuple:
		writeArgs("tuple<")
	case typeVector:
		writeArgs("vector<")
	case typeUDT:
		if t.keyspace != "" {
			b.WriteString(MaybeQuote(t.keyspace) + ".")
		}
		b.WriteString(MaybeQuote(t.name))
	case typeCustom:
		b.WriteString(quoteString(t.name))
	}
	if t.frozen {
		b.WriteByte('>')
	}
}

// dataType converts the type to its protocol representation; user types
// give an *UnknownTypeError (see ParseTypeIn).
func (t *cqlType) dataType() (datatype.DataType, error) {
	return t.resolve("", nil)
}

// build makes the protocol type of a non-user type from its resolved
// parameters.
func (t *cqlType) build(args []datatype.DataType) (datatype.DataType, error) {
	switch t.kind {
	case typeNative:
		return nativeDataType(t.native), nil
	case typeList:
		return datatype.NewList(args[0]), nil
	case typeSet:
		return datatype.NewSet(args[0]), nil
	case typeMap:
		return datatype.NewMap(args[0], args[1]), nil
	case typeTuple:
		return datatype.NewTuple(args...), nil
	case typeCustom:
		if t.unsupported {
			break
		}
		return datatype.NewCustom(t.name), nil
	}
	return nil, &UnsupportedTypeError{Type: t.String()}
}

// reservedTypeNames cannot name user types (Cassandra's Parser.reservedTypeNames).
func reservedTypeName(name string) bool {
	switch name {
	case "byte", "complex", "enum", "date", "interval", "macaddr", "bitstring":
		return true
	}
	return false
}

// parseType parses Cassandra's comparatorType: a native type, a collection,
// tuple or vector type, frozen<type>, a user type name or a quoted custom
// class name.
func (p *parser) parseType() cqlType {
	p.enter()
	defer p.leave()
	t := p.peek()
	if t.kind.kwHas(flagNative) {
		p.next()
		return cqlType{kind: typeNative, native: t.kind}
	}
	if p.peekN(1).kind == tokLt {
		switch t.kind {
		case kwFrozen:
			p.pos += 2
			inner := p.parseType()
			p.expect(tokGt)
			if inner.kind == typeNative || inner.kind == typeCustom || inner.kind == typeVector {
				p.recognitionError("frozen<> is only allowed on collections, tuples, and user-defined types (got " + inner.String() + ")")
			}
			inner.frozen = true
			return inner
		case kwMap:
			p.pos += 2
			k := p.parseType()
			p.expect(tokComma)
			v := p.parseType()
			p.expect(tokGt)
			return cqlType{kind: typeMap, args: []cqlType{k, v}}
		case kwList, kwSet:
			p.pos += 2
			ct := cqlType{kind: typeList, args: []cqlType{p.parseType()}}
			if t.kind == kwSet {
				ct.kind = typeSet
			}
			p.expect(tokGt)
			return ct
		case kwTuple:
			p.pos += 2
			ct := cqlType{kind: typeTuple, args: []cqlType{p.parseType()}}
			for p.accept(tokComma) {
				ct.args = append(ct.args, p.parseType())
			}
			p.expect(tokGt)
			return ct
		case kwVector:
			p.pos += 2
			ct := cqlType{kind: typeVector, args: []cqlType{p.parseType()}}
			p.expect(tokComma)
			n := p.expect(tokInteger)
			ct.dim = p.src[n.start:n.end]
			p.expect(tokGt)
			return ct
		}
	}
	if t.kind == tokString {
		p.next()
		return p.customType(t.val)
	}
	ct := cqlType{kind: typeUDT}
	ct.keyspace, ct.name = p.parseUserTypeName()
	return ct
}

// LexicalUUIDType is the one custom type cqld keeps custom: 16-byte
// values (or empty) ordered as java.util.UUID.compareTo orders them.
const LexicalUUIDType = marshalPackage + "LexicalUUIDType"

const marshalPackage = "org.apache.cassandra.db.marshal."

// marshalNative are the marshal classes whose CQL type is a native one
// (AbstractType.asCQL3Type): a column declared with one has that type.
var marshalNative = map[string]tokenKind{
	"AsciiType": kwAscii, "LongType": kwBigint, "BytesType": kwBlob, "BooleanType": kwBoolean,
	"CounterColumnType": kwCounter, "SimpleDateType": kwDate, "DecimalType": kwDecimal, "DoubleType": kwDouble,
	"DurationType": kwDuration, "FloatType": kwFloat, "InetAddressType": kwInet, "Int32Type": kwInt,
	"ShortType": kwSmallint, "UTF8Type": kwText, "TimeType": kwTime, "TimestampType": kwTimestamp,
	"DateType": kwTimestamp, "TimeUUIDType": kwTimeuuid, "ByteType": kwTinyint, "UUIDType": kwUuid,
	"IntegerType": kwVarint,
}

// marshalOther are Cassandra 4.0's other marshal classes: types cqld
// cannot represent, refused by name.
var marshalOther = map[string]bool{
	"CompositeType": true, "DynamicCompositeType": true, "EmptyType": true, "FrozenType": true, "ListType": true,
	"MapType": true, "PartitionerDefinedOrder": true, "ReversedType": true, "SetType": true, "TupleType": true,
	"UserType": true,
}

// customType is a type written as a string, a marshal class as
// Cassandra's TypeParser reads it: a name without a package is in
// org.apache.cassandra.db.marshal; a class of a native type is that type;
// LexicalUUIDType stays custom; another of Cassandra's classes cqld
// cannot represent (an *UnsupportedTypeError when resolved); any other
// class does not exist.
func (p *parser) customType(text string) cqlType {
	class := strings.TrimSpace(text)
	name := class
	if i := strings.IndexByte(class, '('); i >= 0 {
		name = strings.TrimSpace(class[:i])
	}
	if !strings.Contains(name, ".") {
		name, class = marshalPackage+name, marshalPackage+class
	}
	short, marshal := strings.CutPrefix(name, marshalPackage)
	switch {
	case marshal && name == class && marshalNative[short] != 0:
		return cqlType{kind: typeNative, native: marshalNative[short]}
	case marshal && name == class && short == "LexicalUUIDType":
		return cqlType{kind: typeCustom, name: class}
	case marshal && marshalOther[short]:
		return cqlType{kind: typeCustom, name: class, unsupported: true}
	}
	p.recognitionError("Error setting type " + text + ": Unable to find abstract-type class '" + name + "'")
	return cqlType{}
}

// parseUserTypeName parses Cassandra's userTypeName: (noncol_ident '.')? non_type_ident.
func (p *parser) parseUserTypeName() (ks, name string) {
	if p.peekN(1).kind == tokDot && isIdentTok(p.peek(), identName) {
		ks = p.ident(identName)
		p.next()
	}
	nt := p.peek()
	if !isIdentTok(nt, identType) {
		p.noViable()
	}
	if nt.kind == tokIdent && reservedTypeName(nt.val) {
		p.recognitionError("Invalid (reserved) user type name " + nt.val)
	}
	p.next()
	return ks, p.identValue(nt)
}

// parseNativeType parses a native type name (CAST targets).
func (p *parser) parseNativeType() string {
	t := p.peek()
	if !t.kind.kwHas(flagNative) {
		p.noViable()
	}
	p.next()
	return t.kind.kwName()
}

// MaybeQuote returns name as Cassandra writes an identifier in CQL it
// generates (ColumnIdentifier.maybeQuote): unchanged if it is a lower-case
// unquoted identifier that is not one of Cassandra's reserved keywords
// (reserved_keywords.txt), otherwise double-quoted with " doubled. System
// tables and DESCRIBE spell names this way.
func MaybeQuote(name string) string {
	ok := name != "" && name[0] >= 'a' && name[0] <= 'z'
	for i := 1; ok && i < len(name); i++ {
		c := name[i]
		ok = c >= 'a' && c <= 'z' || isDigit(c) || c == '_'
	}
	if ok && !reservedKeywords[name] {
		return name
	}
	return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
}

// reservedKeywords are Cassandra 4.0's reserved_keywords.txt, lower-cased.
var reservedKeywords = func() map[string]bool {
	m := map[string]bool{}
	for _, k := range strings.Fields(`add allow alter and apply asc authorize batch begin by
		columnfamily create delete desc describe drop entries execute from full grant if in
		index infinity insert into is keyspace limit materialized modify nan norecursive not
		null of on or order primary rename revoke schema select set table to token truncate
		unlogged update use using view where with`) {
		m[k] = true
	}
	return m
}()

// quoteString returns s as a CQL string literal.
func quoteString(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}
