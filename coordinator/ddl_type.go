package coordinator

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"

	"github.com/cqld/cqld/statements"
	"github.com/cqld/cqld/storage"
)

// This file is CREATE, ALTER and DROP TYPE, with Cassandra 4.0's rules and
// messages (cql3/statements/schema/{Create,Alter,Drop}TypeStatement.java).
// Each plan applies to the schema current when it runs, under schemaMu.

// typePlan is the part every TYPE statement shares: the keyspace and name.
type typePlan struct {
	noMarkers
	keyspace, name string
}

func (c *Coordinator) analyzeType(stmt statements.Statement, session string) (plan, error) {
	var ksName, name string
	switch s := stmt.(type) {
	case *statements.CreateType:
		ksName, name = s.Keyspace, s.Name
	case *statements.AlterType:
		ksName, name = s.Keyspace, s.Name
	case *statements.DropType:
		ksName, name = s.Keyspace, s.Name
	}
	ks, err := resolveKeyspace(ksName, session)
	if err != nil {
		return nil, err
	}
	tp := typePlan{keyspace: ks, name: name}
	switch s := stmt.(type) {
	case *statements.CreateType:
		return &createTypePlan{typePlan: tp, s: s}, nil
	case *statements.AlterType:
		return &alterTypePlan{typePlan: tp, s: s}, nil
	}
	return &dropTypePlan{typePlan: tp, ifExists: stmt.(*statements.DropType).IfExists}, nil
}

// typeChanged pushes the event for a type change and returns its result.
// REQUIRES: c.schemaMu held.
func (c *Coordinator) typeChanged(t primitive.SchemaChangeType, ks, name string) message.Message {
	c.opts.Publish(&message.SchemaChangeEvent{ChangeType: t, Target: primitive.SchemaChangeTargetType, Keyspace: ks, Object: name})
	return &message.SchemaChangeResult{ChangeType: t, Target: primitive.SchemaChangeTargetType, Keyspace: ks, Object: name}
}

// fieldType checks and normalises the type of a field of a user type.
func fieldType(typ string, k *storage.KeyspaceDef, lookup statements.UserTypeLookup) (string, error) {
	sh, err := statements.ShapeOf(typ)
	if err != nil {
		return "", invalidf("%v", err)
	}
	if sh.Counter {
		return "", invalidf("A user type cannot contain counters")
	}
	if sh.UDT && !sh.Frozen {
		return "", invalidf("A user type cannot contain non-frozen UDTs")
	}
	if _, _, err := resolveType(typ, k, lookup); err != nil {
		return "", err
	}
	norm, err := statements.NormalizeType(typ)
	if err != nil {
		return "", invalidf("%v", err)
	}
	return norm, nil
}

// createTypePlan is CREATE TYPE.
type createTypePlan struct {
	typePlan
	s *statements.CreateType
}

func (p *createTypePlan) run(_ context.Context, c *Coordinator, _ *execution) (message.Message, error) {
	return c.schemaChange(p.keyspace, func(k *storage.KeyspaceDef) (message.Message, error) {
		if k == nil {
			return nil, invalidf("Keyspace '%s' doesn't exist", p.keyspace)
		}
		if k.Types[p.name] != nil {
			if p.s.IfNotExists {
				return &message.VoidResult{}, nil
			}
			return nil, invalidf("A user type with name '%s' already exists", p.name)
		}
		def := &storage.TypeDef{Keyspace: p.keyspace, Name: p.name}
		seen := map[string]bool{}
		for _, f := range p.s.Fields {
			if seen[f.Name] {
				return nil, invalidf("Duplicate field name '%s' in type '%s'", f.Name, p.name)
			}
			seen[f.Name] = true
		}
		lookup := typeLookup(k)
		for _, f := range p.s.Fields {
			ft, err := fieldType(f.Type, k, lookup)
			if err != nil {
				return nil, err
			}
			def.FieldNames = append(def.FieldNames, f.Name)
			def.FieldTypes = append(def.FieldTypes, ft)
		}
		if err := c.catalog.CreateType(def); err != nil {
			return nil, fmt.Errorf("create type %s.%s: %w", p.keyspace, p.name, err)
		}
		return c.typeChanged(primitive.SchemaChangeTypeCreated, p.keyspace, p.name), nil
	})
}

// alterTypePlan is ALTER TYPE.
type alterTypePlan struct {
	typePlan
	s *statements.AlterType
}

func (p *alterTypePlan) run(_ context.Context, c *Coordinator, _ *execution) (message.Message, error) {
	return c.schemaChange(p.keyspace, func(k *storage.KeyspaceDef) (message.Message, error) {
		var old *storage.TypeDef
		if k != nil {
			old = k.Types[p.name]
		}
		if old == nil {
			if p.s.IfExists {
				return &message.VoidResult{}, nil
			}
			return nil, invalidf("Type %s.%s doesn't exist", p.keyspace, p.name)
		}
		def := &storage.TypeDef{Keyspace: old.Keyspace, Name: old.Name,
			FieldNames: append([]string(nil), old.FieldNames...), FieldTypes: append([]string(nil), old.FieldTypes...)}
		typeName := cqlTypeName(p.keyspace, p.name)
		switch p.s.Op {
		case statements.AlterTypeAdd:
			f := p.s.Field
			if contains(old.FieldNames, f.Name) {
				if p.s.IfFieldNotExists {
					return &message.VoidResult{}, nil
				}
				return nil, invalidf("Cannot add field %s to type %s: a field with name %s already exists", f.Name, typeName, f.Name)
			}
			nesting := typesNesting(k, p.name)
			if referencesAny(f.Type, nesting) {
				return nil, invalidf("Cannot add new field %s of type %s to user type %s as it would create a circular reference", f.Name, f.Type, typeName)
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
				return nil, invalidf("Cannot add new field %s of type %s to user type %s as the type is being used in partition key by the following tables: %s",
					f.Name, f.Type, typeName, strings.Join(inKey, ", "))
			}
			ft, err := fieldType(f.Type, k, typeLookup(k))
			if err != nil {
				return nil, err
			}
			def.FieldNames = append(def.FieldNames, f.Name)
			def.FieldTypes = append(def.FieldTypes, ft)
		case statements.AlterTypeRename:
			changed := false
			for _, r := range p.s.Renames {
				i := indexOf(old.FieldNames, r.From)
				if i < 0 {
					if p.s.IfFieldExists {
						continue
					}
					return nil, invalidf("Unkown field %s in user type %s", r.From, typeName)
				}
				def.FieldNames[i] = r.To
				changed = true
			}
			for i, n := range def.FieldNames {
				if indexOf(def.FieldNames[i+1:], n) >= 0 {
					// Cassandra's format has two %s for three arguments.
					return nil, invalidf("Duplicate field name %s in type %s", n, p.keyspace)
				}
			}
			if !changed {
				return &message.VoidResult{}, nil
			}
		case statements.AlterTypeAlterType:
			return nil, invalidf("Altering field types is no longer supported")
		default:
			return nil, invalidf("This ALTER TYPE is not supported")
		}
		// The tables using the type, directly or through types nesting it,
		// change with it.
		nesting := typesNesting(k, p.name)
		var tables []string
		for _, t := range k.SortedTables() {
			for _, col := range t.Columns {
				if referencesAny(col.Type, nesting) {
					tables = append(tables, t.Name)
					break
				}
			}
		}
		if err := c.catalog.ReplaceType(def, tables); err != nil {
			return nil, fmt.Errorf("alter type %s.%s: %w", p.keyspace, p.name, err)
		}
		return c.typeChanged(primitive.SchemaChangeTypeUpdated, p.keyspace, p.name), nil
	})
}

func indexOf(xs []string, x string) int {
	for i, y := range xs {
		if y == x {
			return i
		}
	}
	return -1
}

// dropTypePlan is DROP TYPE.
type dropTypePlan struct {
	typePlan
	ifExists bool
}

func (p *dropTypePlan) run(_ context.Context, c *Coordinator, _ *execution) (message.Message, error) {
	return c.schemaChange(p.keyspace, func(k *storage.KeyspaceDef) (message.Message, error) {
		if k == nil || k.Types[p.name] == nil {
			if p.ifExists {
				return &message.VoidResult{}, nil
			}
			return nil, invalidf("Type '%s.%s' doesn't exist", p.keyspace, p.name)
		}
		var users []string
		for _, td := range k.SortedTypes() {
			for _, ft := range td.FieldTypes {
				if referencesType(ft, p.name) {
					users = append(users, td.Name)
					break
				}
			}
		}
		if len(users) > 0 {
			return nil, invalidf("Cannot drop user type '%s.%s' as it is still used by user types %s", p.keyspace, p.name, strings.Join(users, ", "))
		}
		for _, t := range k.SortedTables() {
			for _, col := range t.Columns {
				if referencesType(col.Type, p.name) {
					users = append(users, t.Name)
					break
				}
			}
		}
		if len(users) > 0 {
			sort.Strings(users)
			return nil, invalidf("Cannot drop user type '%s.%s' as it is still used by tables %s", p.keyspace, p.name, strings.Join(users, ", "))
		}
		if err := c.catalog.DropType(p.keyspace, p.name); err != nil {
			return nil, fmt.Errorf("drop type %s.%s: %w", p.keyspace, p.name, err)
		}
		return c.typeChanged(primitive.SchemaChangeTypeDropped, p.keyspace, p.name), nil
	})
}
