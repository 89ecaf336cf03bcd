package schema

import (
	"fmt"
	"slices"
	"strings"

	"github.com/datastax/go-cassandra-native-protocol/datatype"
	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"

	"github.com/cqld/cqld/cqlerr"
	"github.com/cqld/cqld/statements"
	"github.com/cqld/cqld/statements/functions"
	"github.com/cqld/cqld/statements/functions/jsudf"
	"github.com/cqld/cqld/statements/types"
	"github.com/cqld/cqld/storage"
)

// This file is CREATE and DROP FUNCTION and AGGREGATE, with Cassandra
// 4.0's rules and messages (cql3/statements/schema/{Create,Drop}
// {Function,Aggregate}Statement.java). Whether user-defined functions are
// enabled is the proposer's configuration, checked by the coordinator
// before the change is ordered: applying reads no configuration.

// Languages: cqld runs JavaScript bodies; Java needs a JVM.
const (
	LanguageJavaScript = "javascript"
	languageJava       = "java"
)

// errJava is the answer to a function in LANGUAGE java.
const errJava = "cqld cannot run Java user-defined functions (it has no Java virtual machine); write the function in LANGUAGE javascript, which cqld runs"

// checkLanguage refuses the languages cqld cannot run.
func checkLanguage(lang, fn string) error {
	switch lang {
	case LanguageJavaScript:
		return nil
	case languageJava:
		return cqlerr.Invalidf("%s", errJava)
	}
	return cqlerr.Invalidf("Invalid language '%s' for function '%s'", lang, fn)
}

// functionTypes checks and normalises the argument or state types of a
// function or aggregate: none may be frozen (but a tuple, implicitly
// frozen, when allowTuple), each must resolve in k.
func functionTypes(raw []string, k *storage.KeyspaceDef, what string, allowTuple bool) ([]string, []datatype.DataType, error) {
	out := make([]string, len(raw))
	dts := make([]datatype.DataType, len(raw))
	lookup := TypeLookup(k)
	for i, r := range raw {
		if strings.HasPrefix(r, "frozen<") && !(allowTuple && strings.HasPrefix(r, "frozen<tuple<")) {
			return nil, nil, cqlerr.Invalidf("%s '%s' cannot be frozen; remove frozen<> modifier from '%s'", what, r, r)
		}
		dt, _, err := resolveType(r, k, lookup)
		if err != nil {
			return nil, nil, err
		}
		if out[i], err = statements.NormalizeType(r); err != nil {
			return nil, nil, cqlerr.Invalidf("%v", err)
		}
		dts[i] = dt
	}
	return out, dts, nil
}

// functionName is a function as Cassandra names it in messages: ks.name.
func functionName(ks, name string) string { return ks + "." + name }

func (sc *Schema) createFunction(ks string, k *storage.KeyspaceDef, st *statements.CreateFunction) (*edit, error) {
	if st.IfNotExists && st.OrReplace {
		return nil, cqlerr.Invalidf("Cannot use both 'OR REPLACE' and 'IF NOT EXISTS' directives")
	}
	if err := checkLanguage(st.Language, functionName(ks, st.Name)); err != nil {
		return nil, err
	}
	names := make([]string, len(st.Args))
	raw := make([]string, len(st.Args))
	for i, a := range st.Args {
		names[i], raw[i] = a.Name, a.Type
	}
	for i, n := range names {
		if slices.Contains(names[:i], n) {
			return nil, cqlerr.Invalidf("Duplicate argument names for given function %s with argument names [%s]", st.Name, strings.Join(names, ", "))
		}
	}
	for _, r := range raw {
		if strings.HasPrefix(r, "frozen<") {
			return nil, cqlerr.Invalidf("Argument '%s' cannot be frozen; remove frozen<> modifier from '%s'", r, r)
		}
	}
	if strings.HasPrefix(st.ReturnType, "frozen<") {
		return nil, cqlerr.Invalidf("Return type '%s' cannot be frozen; remove frozen<> modifier from '%s'", st.ReturnType, st.ReturnType)
	}
	if k == nil {
		return nil, cqlerr.Invalidf("Keyspace '%s' doesn't exist", ks)
	}
	argTypes, _, err := functionTypes(raw, k, "Argument", false)
	if err != nil {
		return nil, err
	}
	ret, _, err := functionTypes([]string{st.ReturnType}, k, "Return type", false)
	if err != nil {
		return nil, err
	}
	if _, err := jsudf.Compile(functionName(ks, st.Name), st.Body); err != nil {
		return nil, cqlerr.Invalidf("Failed to compile function '%s' for language %s: %v", functionName(ks, st.Name), st.Language, err)
	}
	def := &storage.FunctionDef{Keyspace: ks, Name: st.Name, ArgNames: names, ArgTypes: argTypes, ReturnType: ret[0],
		Language: st.Language, Body: st.Body, CalledOnNullInput: st.CalledOnNullInput}
	how := primitive.SchemaChangeTypeCreated
	if k.Aggregate(st.Name, argTypes) != nil {
		return nil, cqlerr.Invalidf("Function '%s' cannot replace an aggregate", st.Name)
	}
	if old := k.Function(st.Name, argTypes); old != nil {
		switch {
		case st.IfNotExists:
			return unchanged(), nil
		case !st.OrReplace:
			return nil, cqlerr.Invalidf("Function '%s' already exists", st.Name)
		case old.CalledOnNullInput != st.CalledOnNullInput:
			directive := "RETURNS NULL ON NULL INPUT"
			if st.CalledOnNullInput {
				directive = "CALLED ON NULL INPUT"
			}
			return nil, cqlerr.Invalidf("Function '%s' must have %s directive", st.Name, directive)
		case old.ReturnType != def.ReturnType:
			return nil, cqlerr.Invalidf("Cannot replace function '%s', the new return type %s is not compatible with the return type %s of existing function",
				st.Name, def.ReturnType, old.ReturnType)
		}
		how = primitive.SchemaChangeTypeUpdated
	}
	return change(functionChanged(how, primitive.SchemaChangeTargetFunction, ks, st.Name, argTypes), func() error {
		if err := sc.catalog.PutFunction(def); err != nil {
			return fmt.Errorf("create function %s.%s: %w", ks, def.Signature(), err)
		}
		return nil
	}), nil
}

// functionChanged is the result answering a change of a function or
// aggregate, whose event names its argument types.
func functionChanged(how primitive.SchemaChangeType, target primitive.SchemaChangeTarget, ks, name string, args []string) message.Message {
	return &message.SchemaChangeResult{ChangeType: how, Target: target, Keyspace: ks, Object: name, Arguments: append([]string{}, args...)}
}

func (sc *Schema) dropFunction(ks string, k *storage.KeyspaceDef, st *statements.DropFunction) (*edit, error) {
	what, target := "Function", primitive.SchemaChangeTargetFunction
	if st.Aggregate {
		what, target = "Aggregate", primitive.SchemaChangeTargetAggregate
	}
	name := functionName(ks, st.Name)
	if st.HasArgs {
		name += "(" + strings.Join(st.ArgTypes, ", ") + ")"
	}
	missing := func() (*edit, error) {
		if st.IfExists {
			return unchanged(), nil
		}
		return nil, cqlerr.Invalidf("%s '%s' doesn't exist", what, name)
	}
	if k == nil {
		return missing()
	}
	var sigs [][]string
	if st.Aggregate {
		for _, a := range k.AggregatesNamed(st.Name) {
			sigs = append(sigs, a.ArgTypes)
		}
	} else {
		for _, f := range k.FunctionsNamed(st.Name) {
			sigs = append(sigs, f.ArgTypes)
		}
	}
	if len(sigs) > 1 && !st.HasArgs {
		verb := "FUNCTION"
		if st.Aggregate {
			verb = "AGGREGATE"
		}
		return nil, cqlerr.Invalidf("'DROP %s %s' matches multiple function definitions; specify the argument types by issuing a statement like 'DROP %s %s (type, type, ...)'. You can use cqlsh 'DESCRIBE %s %s' command to find all overloads",
			verb, st.Name, verb, st.Name, verb, st.Name)
	}
	var args []string
	if st.HasArgs {
		norm, _, err := functionTypes(st.ArgTypes, k, "Argument", st.Aggregate)
		if err != nil {
			return nil, err
		}
		for _, s := range sigs {
			if slices.Equal(s, norm) {
				args = s
			}
		}
		if args == nil {
			return missing()
		}
	} else if len(sigs) == 1 {
		args = sigs[0]
	} else {
		return missing()
	}
	if !st.Aggregate {
		var users []string
		for _, a := range k.Aggregates {
			sf := append([]string{a.StateType}, a.ArgTypes...)
			if (a.StateFunc == st.Name && slices.Equal(sf, args)) || (a.FinalFunc == st.Name && slices.Equal([]string{a.StateType}, args)) {
				users = append(users, functionName(ks, a.Name))
			}
		}
		if len(users) > 0 {
			return nil, cqlerr.Invalidf("Function '%s' is still referenced by aggregates %s", name, strings.Join(users, ", "))
		}
	}
	return change(functionChanged(primitive.SchemaChangeTypeDropped, target, ks, st.Name, args), func() error {
		drop := sc.catalog.DropFunction
		if st.Aggregate {
			drop = sc.catalog.DropAggregate
		}
		if err := drop(ks, st.Name, args); err != nil {
			return fmt.Errorf("drop %s %s.%s: %w", strings.ToLower(what), ks, storage.Signature(st.Name, args), err)
		}
		return nil
	}), nil
}

func (sc *Schema) createAggregate(ks string, k *storage.KeyspaceDef, st *statements.CreateAggregate, ch *Change) (*edit, error) {
	if st.IfNotExists && st.OrReplace {
		return nil, cqlerr.Invalidf("Cannot use both 'OR REPLACE' and 'IF NOT EXISTS' directives")
	}
	for _, r := range st.ArgTypes {
		if strings.HasPrefix(r, "frozen<") && !strings.HasPrefix(r, "frozen<tuple<") {
			return nil, cqlerr.Invalidf("Argument '%s' cannot be frozen; remove frozen<> modifier from '%s'", r, r)
		}
	}
	if strings.HasPrefix(st.StateType, "frozen<") && !strings.HasPrefix(st.StateType, "frozen<tuple<") {
		return nil, cqlerr.Invalidf("State type '%s' cannot be frozen; remove frozen<> modifier from '%s'", st.StateType, st.StateType)
	}
	if k == nil {
		return nil, cqlerr.Invalidf("Keyspace '%s' doesn't exist", ks)
	}
	argTypes, _, err := functionTypes(st.ArgTypes, k, "Argument", true)
	if err != nil {
		return nil, err
	}
	stypes, sdts, err := functionTypes([]string{st.StateType}, k, "State type", true)
	if err != nil {
		return nil, err
	}
	stateType, stateDT := stypes[0], sdts[0]
	stateArgs := append([]string{stateType}, argTypes...)
	stateString := functionName(ks, st.StateFunc) + "(" + strings.Join(append([]string{st.StateType}, st.ArgTypes...), ", ") + ")"
	sf := k.Function(st.StateFunc, stateArgs)
	if sf == nil {
		if k.Aggregate(st.StateFunc, stateArgs) != nil {
			return nil, cqlerr.Invalidf("State function %s isn't a scalar function", stateString)
		}
		return nil, cqlerr.Invalidf("State function %s doesn't exist", stateString)
	}
	if sf.ReturnType != stateType {
		return nil, cqlerr.Invalidf("State function %s return type must be the same as the first argument type - check STYPE, argument and return types", stateString)
	}
	ret := sf.ReturnType
	if st.FinalFunc != "" {
		finalString := functionName(ks, st.FinalFunc) + "(" + st.StateType + ")"
		ff := k.Function(st.FinalFunc, []string{stateType})
		if ff == nil {
			if k.Aggregate(st.FinalFunc, []string{stateType}) != nil {
				return nil, cqlerr.Invalidf("Final function %s isn't a scalar function", finalString)
			}
			return nil, cqlerr.Invalidf("Final function %s doesn't exist", finalString)
		}
		ret = ff.ReturnType
	}
	var initcond *string
	if st.InitCond != nil {
		v, err := sc.constant(ks, st.InitCond, stateDT, ch)
		if err != nil {
			return nil, err
		}
		if v != nil {
			if err := types.ValidateValue(stateDT, v, "initcond"); err != nil {
				return nil, cqlerr.Invalidf("Invalid value for INITCOND of type %s", stateType)
			}
			if len(v) == 0 && !functions.EmptyIsValue(stateDT) {
				return nil, cqlerr.Invalidf("INITCOND must not be empty for all types except TEXT, ASCII, BLOB")
			}
			lit := types.CQLLiteral(stateDT, v)
			initcond = &lit
		}
	}
	if !sf.CalledOnNullInput && initcond == nil {
		return nil, cqlerr.Invalidf("Cannot create aggregate '%s' without INITCOND because state function %s does not accept 'null' arguments", st.Name, functionName(ks, st.StateFunc))
	}
	def := &storage.AggregateDef{Keyspace: ks, Name: st.Name, ArgTypes: argTypes, StateFunc: st.StateFunc, StateType: stateType,
		FinalFunc: st.FinalFunc, InitCond: initcond, ReturnType: ret}
	how := primitive.SchemaChangeTypeCreated
	if k.Function(st.Name, argTypes) != nil {
		return nil, cqlerr.Invalidf("Aggregate '%s' cannot replace a function", st.Name)
	}
	if old := k.Aggregate(st.Name, argTypes); old != nil {
		switch {
		case st.IfNotExists:
			return unchanged(), nil
		case !st.OrReplace:
			return nil, cqlerr.Invalidf("Aggregate '%s' already exists", st.Name)
		case old.ReturnType != ret:
			return nil, cqlerr.Invalidf("Cannot replace aggregate '%s', the new return type %s isn't compatible with the return type %s of existing function", st.Name, ret, old.ReturnType)
		}
		how = primitive.SchemaChangeTypeUpdated
	}
	return change(functionChanged(how, primitive.SchemaChangeTargetAggregate, ks, st.Name, argTypes), func() error {
		if err := sc.catalog.PutAggregate(def); err != nil {
			return fmt.Errorf("create aggregate %s.%s: %w", ks, def.Signature(), err)
		}
		return nil
	}), nil
}

// functionsUsingType are the functions and aggregates of k whose argument,
// state or return types use the user type name.
func functionsUsingType(k *storage.KeyspaceDef, name string) (fns []string) {
	uses := func(ts ...string) bool {
		for _, t := range ts {
			if referencesType(t, name) {
				return true
			}
		}
		return false
	}
	for _, f := range k.Functions {
		if uses(append([]string{f.ReturnType}, f.ArgTypes...)...) {
			fns = append(fns, functionName(k.Name, f.Name))
		}
	}
	for _, a := range k.Aggregates {
		if uses(append([]string{a.ReturnType, a.StateType}, a.ArgTypes...)...) {
			fns = append(fns, functionName(k.Name, a.Name))
		}
	}
	return fns
}

// constant is the value of term for a receiver of type typ in keyspace ks
// (an INITCOND), evaluated by Options.Constant at the change's time.
func (sc *Schema) constant(ks string, term statements.Term, typ datatype.DataType, ch *Change) ([]byte, error) {
	if sc.constantFn != nil {
		return sc.constantFn(ks, term, typ, ch.now())
	}
	switch t := term.(type) {
	case *statements.Literal:
		if t.Kind == statements.LiteralNull {
			return nil, nil
		}
		return types.LiteralBytes(typ, t, "initcond")
	}
	return nil, cqlerr.Invalidf("Invalid value for INITCOND of type %s", statements.TypeString(typ, false))
}
