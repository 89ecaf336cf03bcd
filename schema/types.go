package schema

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/datastax/go-cassandra-native-protocol/primitive"

	"github.com/cqld/cqld/cqlerr"
	"github.com/cqld/cqld/statements"
	"github.com/cqld/cqld/storage"
)

// This file is CREATE, ALTER and DROP TYPE, with Cassandra 4.0's rules and
// messages (cql3/statements/schema/{Create,Alter,Drop}TypeStatement.java).

// fieldType checks and normalises the type of a field of a user type.
func fieldType(typ string, k *storage.KeyspaceDef, lookup statements.UserTypeLookup) (string, error) {
	sh, err := statements.ShapeOf(typ)
	if err != nil {
		return "", cqlerr.Invalidf("%v", err)
	}
	if sh.Counter {
		return "", cqlerr.Invalidf("A user type cannot contain counters")
	}
	if sh.UDT && !sh.Frozen {
		return "", cqlerr.Invalidf("A user type cannot contain non-frozen UDTs")
	}
	if _, _, err := resolveType(typ, k, lookup); err != nil {
		return "", err
	}
	norm, err := statements.NormalizeType(typ)
	if err != nil {
		return "", cqlerr.Invalidf("%v", err)
	}
	return norm, nil
}

func (sc *Schema) createType(ks string, k *storage.KeyspaceDef, s *statements.CreateType) (*edit, error) {
	if k == nil {
		return nil, cqlerr.Invalidf("Keyspace '%s' doesn't exist", ks)
	}
	if k.Types[s.Name] != nil {
		if s.IfNotExists {
			return unchanged(), nil
		}
		return nil, cqlerr.Invalidf("A user type with name '%s' already exists", s.Name)
	}
	def := &storage.TypeDef{Keyspace: ks, Name: s.Name}
	seen := map[string]bool{}
	for _, f := range s.Fields {
		if seen[f.Name] {
			return nil, cqlerr.Invalidf("Duplicate field name '%s' in type '%s'", f.Name, s.Name)
		}
		seen[f.Name] = true
	}
	lookup := TypeLookup(k)
	for _, f := range s.Fields {
		ft, err := fieldType(f.Type, k, lookup)
		if err != nil {
			return nil, err
		}
		def.FieldNames = append(def.FieldNames, f.Name)
		def.FieldTypes = append(def.FieldTypes, ft)
	}
	return change(changed(primitive.SchemaChangeTypeCreated, primitive.SchemaChangeTargetType, ks, s.Name), func() error {
		if err := sc.catalog.CreateType(def); err != nil {
			return fmt.Errorf("create type %s.%s: %w", ks, s.Name, err)
		}
		return nil
	}), nil
}

func (sc *Schema) alterType(ks string, k *storage.KeyspaceDef, s *statements.AlterType) (*edit, error) {
	var old *storage.TypeDef
	if k != nil {
		old = k.Types[s.Name]
	}
	if old == nil {
		if s.IfExists {
			return unchanged(), nil
		}
		return nil, cqlerr.Invalidf("Type %s.%s doesn't exist", ks, s.Name)
	}
	def := &storage.TypeDef{Keyspace: old.Keyspace, Name: old.Name,
		FieldNames: append([]string(nil), old.FieldNames...), FieldTypes: append([]string(nil), old.FieldTypes...)}
	typeName := cqlTypeName(ks, s.Name)
	switch s.Op {
	case statements.AlterTypeAdd:
		f := s.Field
		if slices.Contains(old.FieldNames, f.Name) {
			if s.IfFieldNotExists {
				return unchanged(), nil
			}
			return nil, cqlerr.Invalidf("Cannot add field %s to type %s: a field with name %s already exists", f.Name, typeName, f.Name)
		}
		nesting := typesNesting(k, s.Name)
		if referencesAny(f.Type, nesting) {
			return nil, cqlerr.Invalidf("Cannot add new field %s of type %s to user type %s as it would create a circular reference", f.Name, f.Type, typeName)
		}
		var inKey []string
		for _, t := range k.SortedTables() {
			for _, col := range t.Key(storage.KindPartitionKey) {
				if referencesAny(col.Type, nesting) {
					inKey = append(inKey, t.Keyspace+"."+t.Name)
					break
				}
			}
		}
		if len(inKey) > 0 {
			return nil, cqlerr.Invalidf("Cannot add new field %s of type %s to user type %s as the type is being used in partition key by the following tables: %s",
				f.Name, f.Type, typeName, strings.Join(inKey, ", "))
		}
		ft, err := fieldType(f.Type, k, TypeLookup(k))
		if err != nil {
			return nil, err
		}
		def.FieldNames = append(def.FieldNames, f.Name)
		def.FieldTypes = append(def.FieldTypes, ft)
	case statements.AlterTypeRename:
		altered := false
		for _, r := range s.Renames {
			i := slices.Index(old.FieldNames, r.From)
			if i < 0 {
				if s.IfFieldExists {
					continue
				}
				return nil, cqlerr.Invalidf("Unkown field %s in user type %s", r.From, typeName)
			}
			def.FieldNames[i] = r.To
			altered = true
		}
		for i, n := range def.FieldNames {
			if slices.Index(def.FieldNames[i+1:], n) >= 0 {
				// Cassandra's format has two %s for three arguments.
				return nil, cqlerr.Invalidf("Duplicate field name %s in type %s", n, ks)
			}
		}
		if !altered {
			return unchanged(), nil
		}
	case statements.AlterTypeAlterType:
		return nil, cqlerr.Invalidf("Altering field types is no longer supported")
	default:
		return nil, cqlerr.Invalidf("This ALTER TYPE is not supported")
	}
	// The tables using the type, directly or through types nesting it,
	// change with it.
	nesting := typesNesting(k, s.Name)
	var tables []string
	for _, t := range k.SortedTables() {
		for _, col := range t.Columns {
			if referencesAny(col.Type, nesting) {
				tables = append(tables, t.Name)
				break
			}
		}
	}
	return change(changed(primitive.SchemaChangeTypeUpdated, primitive.SchemaChangeTargetType, ks, s.Name), func() error {
		if err := sc.catalog.ReplaceType(def, tables); err != nil {
			return fmt.Errorf("alter type %s.%s: %w", ks, s.Name, err)
		}
		return nil
	}), nil
}

func (sc *Schema) dropType(ks string, k *storage.KeyspaceDef, s *statements.DropType) (*edit, error) {
	if k == nil || k.Types[s.Name] == nil {
		if s.IfExists {
			return unchanged(), nil
		}
		return nil, cqlerr.Invalidf("Type '%s.%s' doesn't exist", ks, s.Name)
	}
	var users []string
	for _, td := range k.SortedTypes() {
		for _, ft := range td.FieldTypes {
			if referencesType(ft, s.Name) {
				users = append(users, td.Name)
				break
			}
		}
	}
	if len(users) > 0 {
		return nil, cqlerr.Invalidf("Cannot drop user type '%s.%s' as it is still used by user types %s", ks, s.Name, strings.Join(users, ", "))
	}
	if fns := functionsUsingType(k, s.Name); len(fns) > 0 {
		return nil, cqlerr.Invalidf("Cannot drop user type '%s.%s' as it is still used by functions %s", ks, s.Name, strings.Join(fns, ", "))
	}
	for _, t := range k.SortedTables() {
		for _, col := range t.Columns {
			if referencesType(col.Type, s.Name) {
				users = append(users, t.Name)
				break
			}
		}
	}
	if len(users) > 0 {
		sort.Strings(users)
		return nil, cqlerr.Invalidf("Cannot drop user type '%s.%s' as it is still used by tables %s", ks, s.Name, strings.Join(users, ", "))
	}
	return change(changed(primitive.SchemaChangeTypeDropped, primitive.SchemaChangeTargetType, ks, s.Name), func() error {
		if err := sc.catalog.DropType(ks, s.Name); err != nil {
			return fmt.Errorf("drop type %s.%s: %w", ks, s.Name, err)
		}
		return nil
	}), nil
}
