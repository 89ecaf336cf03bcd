package schema

import (
	"errors"

	"github.com/datastax/go-cassandra-native-protocol/datatype"

	"github.com/cqld/cqld/cqlerr"
	"github.com/cqld/cqld/statements"
	"github.com/cqld/cqld/storage"
)

// TypeLookup resolves the user types of keyspace k (nil: none) for
// statements.ParseTypeIn. Field types are resolved on demand and memoised
// for the life of the lookup. A lookup is not safe for concurrent use.
func TypeLookup(k *storage.KeyspaceDef) statements.UserTypeLookup {
	memo := map[string]*datatype.UserDefined{}
	var lookup statements.UserTypeLookup
	lookup = func(ks, name string) *datatype.UserDefined {
		if k == nil || ks != k.Name {
			return nil
		}
		if ut, ok := memo[name]; ok {
			return ut
		}
		def := k.Types[name]
		if def == nil {
			return nil
		}
		memo[name] = nil // a cycle resolves as unknown; DDL never makes one
		ut := &datatype.UserDefined{Keyspace: ks, Name: name, FieldNames: def.FieldNames}
		for _, ft := range def.FieldTypes {
			dt, _, err := statements.ParseTypeIn(ft, ks, lookup)
			if err != nil {
				return nil
			}
			ut.FieldTypes = append(ut.FieldTypes, dt)
		}
		memo[name] = ut
		return ut
	}
	return lookup
}

// resolveType parses a column or field type used in keyspace k, with
// Cassandra's errors for unknown and misplaced types. k must not be nil.
func resolveType(typ string, k *storage.KeyspaceDef, lookup statements.UserTypeLookup) (datatype.DataType, bool, error) {
	dt, frozen, err := statements.ParseTypeIn(typ, k.Name, lookup)
	if err != nil {
		return nil, false, typeErr(err)
	}
	return dt, frozen, nil
}

// typeErr converts a type parsing error into the error a client sees.
func typeErr(err error) error {
	var ut *statements.UnknownTypeError
	var te *statements.TypeError
	switch {
	case errors.As(err, &ut):
		return cqlerr.Invalidf("%s", ut.Error())
	case errors.As(err, &te):
		return cqlerr.Invalidf("%s", te.Msg)
	}
	return cqlerr.Invalidf("%v", err)
}

// cqlTypeName is a user type as Cassandra names it in messages
// (UserType.getCqlTypeName): ks.name, each quoted if needed.
func cqlTypeName(ks, name string) string {
	return statements.TypeString(&datatype.UserDefined{Name: ks}, false) + "." +
		statements.TypeString(&datatype.UserDefined{Name: name}, false)
}

// referencesType reports whether type string s names the user type name,
// at any depth (directly; types nesting it are found by the caller).
func referencesType(s, name string) bool {
	sh, err := statements.ShapeOf(s)
	if err != nil {
		return false
	}
	for _, n := range sh.UserTypes {
		if n == name {
			return true
		}
	}
	return false
}

// typesNesting returns name and every type of k that nests it, directly or
// through other types.
func typesNesting(k *storage.KeyspaceDef, name string) map[string]bool {
	out := map[string]bool{name: true}
	for changed := true; changed; {
		changed = false
		for _, td := range k.Types {
			if out[td.Name] {
				continue
			}
			for _, ft := range td.FieldTypes {
				if referencesAny(ft, out) {
					out[td.Name] = true
					changed = true
					break
				}
			}
		}
	}
	return out
}

func referencesAny(s string, names map[string]bool) bool {
	sh, err := statements.ShapeOf(s)
	if err != nil {
		return false
	}
	for _, n := range sh.UserTypes {
		if names[n] {
			return true
		}
	}
	return false
}
