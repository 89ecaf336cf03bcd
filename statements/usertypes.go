package statements

import (
	"github.com/datastax/go-cassandra-native-protocol/datatype"
)

// UserTypeLookup finds the user-defined type name of keyspace ks, or
// returns nil when the keyspace has none of that name. The type returned
// must be fully resolved (its field types included).
type UserTypeLookup func(ks, name string) *datatype.UserDefined

// TypeError is a type that parses but that Cassandra refuses where it is
// used (a non-frozen UDT inside a collection, a user type of another
// keyspace, ...). Its message is Cassandra's.
type TypeError struct{ Msg string }

func (e *TypeError) Error() string { return e.Msg }

// ParseTypeIn is ParseTypeFrozen for a type used in keyspace ks: user type
// names are resolved with lookup (unqualified names in ks; a name
// qualified with another keyspace is refused, as Cassandra does). Unknown
// names give an *UnknownTypeError with the keyspace filled in; types
// Cassandra does not allow in a column (non-frozen collections or UDTs
// inside collections, counters inside collections or tuples) give a
// *TypeError.
func ParseTypeIn(s, ks string, lookup UserTypeLookup) (datatype.DataType, bool, error) {
	ct, err := parseCQLType(s)
	if err != nil {
		return nil, false, err
	}
	if err := ct.checkNesting(); err != nil {
		return nil, false, err
	}
	dt, err := ct.resolve(ks, lookup)
	if err != nil {
		return nil, false, err
	}
	return dt, ct.frozen, nil
}

// TypeShape describes the parts of a type string that schema rules look
// at, without resolving user types.
type TypeShape struct {
	Frozen  bool // the outermost type is frozen<...>
	UDT     bool // the outermost type is a user type
	Counter bool // the type is counter
	// Collection: the outermost type is a list, set or map.
	Collection bool
	// UserTypes are the user type names the type refers to, at any depth
	// (keyspace qualifiers dropped).
	UserTypes []string
}

// ShapeOf parses s and describes it.
func ShapeOf(s string) (TypeShape, error) {
	ct, err := parseCQLType(s)
	if err != nil {
		return TypeShape{}, err
	}
	sh := TypeShape{Frozen: ct.frozen, UDT: ct.kind == typeUDT, Counter: ct.kind == typeNative && ct.native == kwCounter,
		Collection: ct.kind == typeList || ct.kind == typeSet || ct.kind == typeMap}
	ct.walk(func(t *cqlType) {
		if t.kind == typeUDT {
			sh.UserTypes = append(sh.UserTypes, t.name)
		}
	})
	return sh, nil
}

// NormalizeType renders s as Cassandra shows a column or field type in
// system_schema: varchar as text, user types by their bare name, tuples as frozen<tuple<...>>,
// and every collection, tuple or user type nested in a frozen type frozen
// too ("frozen<ks.addr>" gives "frozen<addr>", "tuple<int, addr>" gives
// "frozen<tuple<int, frozen<addr>>>"). Other types come back as the
// parser's normalised text.
func NormalizeType(s string) (string, error) {
	ct, err := parseCQLType(s)
	if err != nil {
		return "", err
	}
	var norm func(t *cqlType, inFrozen bool)
	norm = func(t *cqlType, inFrozen bool) {
		switch t.kind {
		case typeNative:
			if t.native == kwVarchar { // one type, which Cassandra names text
				t.native = kwText
			}
		case typeUDT:
			t.keyspace = ""
		case typeTuple:
			t.frozen = true
		}
		if inFrozen && t.kind != typeNative && t.kind != typeCustom && t.kind != typeVector {
			t.frozen = true
		}
		for i := range t.args {
			norm(&t.args[i], t.frozen)
		}
	}
	norm(&ct, false)
	return ct.String(), nil
}

func parseCQLType(s string) (cqlType, error) {
	var ct cqlType
	p := getParser()
	defer putParser(p)
	err := p.run(s, func() {
		ct = p.parseType()
		if p.kind() != tokEOF {
			p.mismatch(tokEOF)
		}
	})
	return ct, err
}

func (t *cqlType) walk(fn func(*cqlType)) {
	fn(t)
	for i := range t.args {
		t.args[i].walk(fn)
	}
}

// checkNesting applies Cassandra's rules on types nested in collections
// and tuples (CQL3Type.Raw.RawCollection and RawTuple): inside a
// non-frozen collection, collections and user types must be frozen;
// counters never go inside a collection or a tuple.
func (t *cqlType) checkNesting() error {
	switch t.kind {
	case typeList, typeSet, typeMap:
		for i := range t.args {
			a := &t.args[i]
			if a.kind == typeNative && a.native == kwCounter {
				return &TypeError{Msg: "Counters are not allowed inside collections: " + t.String()}
			}
			if !t.frozen && !a.frozen {
				switch a.kind {
				case typeList, typeSet, typeMap:
					return &TypeError{Msg: "Non-frozen collections are not allowed inside collections: " + t.String()}
				case typeUDT:
					return &TypeError{Msg: "Non-frozen UDTs are not allowed inside collections: " + t.String()}
				}
			}
		}
	case typeTuple:
		for i := range t.args {
			if a := &t.args[i]; a.kind == typeNative && a.native == kwCounter {
				return &TypeError{Msg: "Counters are not allowed inside tuples"}
			}
		}
	}
	for i := range t.args {
		if err := t.args[i].checkNesting(); err != nil {
			return err
		}
	}
	return nil
}

// resolve converts the type to its protocol form, resolving user types in
// keyspace ks.
func (t *cqlType) resolve(ks string, lookup UserTypeLookup) (datatype.DataType, error) {
	if t.kind != typeUDT {
		args := make([]datatype.DataType, len(t.args))
		for i := range t.args {
			dt, err := t.args[i].resolve(ks, lookup)
			if err != nil {
				return nil, err
			}
			args[i] = dt
		}
		return t.build(args)
	}
	if lookup == nil {
		return nil, &UnknownTypeError{Keyspace: t.keyspace, Name: t.name}
	}
	if t.keyspace != "" && t.keyspace != ks {
		return nil, &TypeError{Msg: "Statement on keyspace " + ks + " cannot refer to a user type in keyspace " +
			t.keyspace + "; user types can only be used in the keyspace they are defined in"}
	}
	ut := lookup(ks, t.name)
	if ut == nil {
		return nil, &UnknownTypeError{Keyspace: ks, Name: t.name}
	}
	return ut, nil
}
