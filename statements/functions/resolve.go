package functions

import (
	"math/big"
	"strings"

	"github.com/cqld/cqld/cqlerr"
	"github.com/cqld/cqld/statements"
	"github.com/cqld/cqld/statements/types"
	"github.com/datastax/go-cassandra-native-protocol/datatype"
	"github.com/datastax/go-cassandra-native-protocol/primitive"
)

// Sig is one signature of a native or user-defined function.
type Sig struct {
	// Keyspace is a user-defined function's keyspace, "" for a native
	// function (system).
	Keyspace string
	Name     string // without the keyspace
	Params   []datatype.DataType
	Ret      datatype.DataType
	Impl     Scalar  // scalar functions
	Agg      AggKind // aggregate functions
	// CalledOnNullInput: a user-defined function runs on null arguments
	// (native functions handle their own nulls).
	CalledOnNullInput bool
	// User is a user-defined aggregate (Agg is AggUser).
	User *UserAggregate
	// Def is a user-defined function's or aggregate's definition
	// (*storage.FunctionDef, *storage.AggregateDef): a plan using the
	// function is stale once the schema holds another.
	Def any
}

// QualifiedName is the function's name with its keyspace: system.now,
// ks.f.
func (s *Sig) QualifiedName() string {
	if s.Keyspace != "" {
		return s.Keyspace + "." + s.Name
	}
	return "system." + s.Name
}

func (s *Sig) String() string {
	if s.Keyspace != "" {
		return userSigString(s)
	}
	ps := make([]string, len(s.Params))
	for i, p := range s.Params {
		ps[i] = typeName(p)
	}
	return "system." + s.Name + " : (" + strings.Join(ps, ", ") + ") -> " + typeName(s.Ret)
}

func typeName(t datatype.DataType) string { return statements.TypeString(t, false) }

func SameType(a, b datatype.DataType) bool {
	if a.Code() == b.Code() {
		switch a.(type) {
		case *datatype.PrimitiveType:
			return true
		}
	}
	return typeName(a) == typeName(b)
}

type match uint8

const (
	matchNone match = iota
	matchWeak
	matchExact
)

// Arg is a call's argument as resolution sees it: a term whose type is
// not known yet (a literal, a bind marker, a nested call that cannot be
// resolved alone), or a typed value.
type Arg struct {
	Raw  statements.Term // nil when Type is set
	Type datatype.DataType
	Name string // as the call spelt it, for errors
}

// argMatch is AssignmentTestable.testAssignment of an argument to a
// parameter type.
func argMatch(a Arg, p datatype.DataType) match {
	if a.Raw != nil {
		switch t := a.Raw.(type) {
		case *statements.BindMarker:
			return matchWeak
		case *statements.Literal:
			if t.Kind == statements.LiteralNull {
				return matchWeak
			}
			if _, err := types.LiteralBytes(p, t, ""); err != nil {
				return matchNone
			}
			if pt := preferredType(t); pt != nil && SameType(pt, p) {
				return matchExact
			}
			return matchWeak
		case *statements.FunctionTerm:
			return matchWeak
		}
		return matchNone
	}
	if SameType(a.Type, p) {
		return matchExact
	}
	if ValueCompatible(p, a.Type) {
		return matchWeak
	}
	return matchNone
}

// preferredType is the type a literal is an exact match for
// (Constants.Literal's preferedType).
func preferredType(l *statements.Literal) datatype.DataType {
	switch l.Kind {
	case statements.LiteralString:
		return datatype.Varchar
	case statements.LiteralInteger:
		if digits := strings.TrimLeft(strings.TrimLeft(l.Text, "+-"), "0"); len(digits) > 19 {
			// Past a bigint's 19 digits: a varint, found without
			// converting what may be millions of digits.
			return datatype.Varint
		}
		n, ok := new(big.Int).SetString(l.Text, 10)
		switch {
		case !ok:
			return nil
		case n.IsInt64() && n.Int64() == int64(int32(n.Int64())):
			return datatype.Int
		case n.IsInt64():
			return datatype.Bigint
		}
		return datatype.Varint
	case statements.LiteralFloat:
		return datatype.Double
	case statements.LiteralBoolean:
		return datatype.Boolean
	case statements.LiteralUUID:
		return datatype.Uuid
	case statements.LiteralHex:
		return datatype.Blob
	case statements.LiteralDuration:
		return datatype.Duration
	}
	return nil
}

// valueCompatible is AbstractType.isValueCompatibleWith: whether a value
// of type from can be read as type to.
func ValueCompatible(to, from datatype.DataType) bool {
	tc, fc := to.Code(), from.Code()
	switch tc {
	case primitive.DataTypeCodeBlob:
		return true
	case primitive.DataTypeCodeVarchar, primitive.DataTypeCodeText:
		return fc == primitive.DataTypeCodeAscii || fc == primitive.DataTypeCodeVarchar || fc == primitive.DataTypeCodeText
	case primitive.DataTypeCodeVarint:
		return fc == primitive.DataTypeCodeInt || fc == primitive.DataTypeCodeBigint || fc == primitive.DataTypeCodeTimestamp
	case primitive.DataTypeCodeBigint:
		return fc == primitive.DataTypeCodeTimestamp
	case primitive.DataTypeCodeTimestamp:
		return fc == primitive.DataTypeCodeBigint
	case primitive.DataTypeCodeUuid:
		return fc == primitive.DataTypeCodeTimeuuid
	}
	return false
}

func TypeError(arg string, i int, s *Sig) error {
	return cqlerr.Invalidf("Type error: %s cannot be passed as argument %d of function %s of type %s", arg, i, s.QualifiedName(), typeName(s.Params[i]))
}

// Resolve picks the signature among sigs that a call with args matches,
// as Cassandra's FunctionResolver.get does; display is the function's name
// as the call spelt it, for errors.
func Resolve(display string, sigs []*Sig, args []Arg) (*Sig, error) {
	if len(sigs) == 1 {
		s := sigs[0]
		if len(args) != len(s.Params) {
			return nil, cqlerr.Invalidf("Invalid number of arguments in call to function %s: %d required but %d provided", s.QualifiedName(), len(s.Params), len(args))
		}
		for i, a := range args {
			if argMatch(a, s.Params[i]) == matchNone {
				return nil, TypeError(a.Name, i, s)
			}
		}
		return s, nil
	}
	var compat []*Sig
	for _, s := range sigs {
		if len(s.Params) != len(args) {
			continue
		}
		m := matchExact
		for i, a := range args {
			if am := argMatch(a, s.Params[i]); am < m {
				m = am
			}
		}
		switch m {
		case matchExact:
			return s, nil
		case matchWeak:
			compat = append(compat, s)
		}
	}
	list := func(ss []*Sig) string {
		parts := make([]string, len(ss))
		for i, s := range ss {
			parts[i] = s.String()
		}
		return strings.Join(parts, ", ")
	}
	if len(compat) == 0 {
		return nil, cqlerr.Invalidf("Invalid call to function %s, none of its type signatures match (known type signatures: %s)", display, list(sigs))
	}
	if len(compat) > 1 {
		return nil, cqlerr.Invalidf("Ambiguous call to function %s (can be matched by following signatures: %s): use type casts to disambiguate", display, list(compat))
	}
	return compat[0], nil
}
