package functions

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/datastax/go-cassandra-native-protocol/datatype"
	"github.com/datastax/go-cassandra-native-protocol/primitive"

	"github.com/cqld/cqld/cqlerr"
	"github.com/cqld/cqld/statements/functions/jsudf"
	"github.com/cqld/cqld/storage"
)

// User-defined functions and aggregates join the native ones in the same
// resolution: a call names a native function or one of the keyspace's
// (Cassandra's FunctionResolver: an unqualified name may be either, the
// keyspace being the table's), each a Sig whose Impl runs the function's
// JavaScript body (package jsudf). A Sig is compiled once per definition:
// definitions are immutable, a CREATE OR REPLACE makes a new one.

// UserOptions are a node's settings for user-defined functions
// (cassandra.yaml's user_defined_functions_*).
type UserOptions struct {
	Enabled, Scripted bool
	// Warn and Fail are the warn and fail timeouts of one call.
	Warn, Fail time.Duration
	// Now measures a call against Warn; nil means time.Now.
	Now func() time.Time
	// AfterFunc arms the fail timeout; nil means time.AfterFunc.
	AfterFunc func(d time.Duration, f func()) (stop func() bool)
	// InitCond parses an aggregate's INITCOND as system_schema.aggregates
	// keeps it (a CQL literal) into a value of type t: the coordinator
	// owns the evaluation of terms.
	InitCond func(t datatype.DataType, literal string) ([]byte, error)
}

// Users compiles the user-defined functions and aggregates of a node. It
// is safe for concurrent use.
type Users struct {
	opts  UserOptions
	cache sync.Map // *storage.FunctionDef or aggKey -> *Sig
	// cached counts cache's entries: definitions replaced by schema
	// changes would otherwise stay forever.
	cached atomic.Int64
}

// maxCached bounds the compiled definitions kept; past it the cache starts
// afresh (plans keep the Sigs they use).
const maxCached = 4096

// store caches s under key and returns the entry cached.
func (u *Users) store(key any, s *Sig) *Sig {
	if u.cached.Add(1) > maxCached {
		u.cache.Clear()
		u.cached.Store(1)
	}
	actual, _ := u.cache.LoadOrStore(key, s)
	return actual.(*Sig)
}

// aggKey is a compiled aggregate's cache key: its definition and those of
// its state and final functions, which CREATE OR REPLACE FUNCTION may
// change under it.
type aggKey struct {
	agg          *storage.AggregateDef
	state, final *storage.FunctionDef
}

// NewUsers returns the registry of user-defined functions run with opts.
func NewUsers(opts UserOptions) *Users {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Users{opts: opts}
}

// UserAggregate is a user-defined aggregate compiled: its state function
// folds each row's arguments into the state, starting from Init; its final
// function, if any, makes the result of the state.
type UserAggregate struct {
	State, Final *Sig
	Init         []byte
}

// TypeParser parses a type spelled as system_schema spells it, within a
// keyspace whose user types it knows.
type TypeParser func(string) (datatype.DataType, error)

// Lookup returns the user-defined functions and aggregates of k called
// name, compiled. parse knows k's user types.
func (u *Users) Lookup(k *storage.KeyspaceDef, name string, parse TypeParser) ([]*Sig, error) {
	var out []*Sig
	for _, f := range k.FunctionsNamed(name) {
		s, err := u.function(f, parse)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	for _, a := range k.AggregatesNamed(name) {
		key := aggKey{agg: a, state: k.Function(a.StateFunc, append([]string{a.StateType}, a.ArgTypes...))}
		if a.FinalFunc != "" {
			key.final = k.Function(a.FinalFunc, []string{a.StateType})
		}
		if s, ok := u.cache.Load(key); ok {
			out = append(out, s.(*Sig))
			continue
		}
		s, err := u.aggregate(key, parse)
		if err != nil {
			return nil, err
		}
		out = append(out, u.store(key, s))
	}
	return out, nil
}

// function compiles f.
func (u *Users) function(f *storage.FunctionDef, parse TypeParser) (*Sig, error) {
	if s, ok := u.cache.Load(f); ok {
		return s.(*Sig), nil
	}
	params := make([]datatype.DataType, len(f.ArgTypes))
	for i, t := range f.ArgTypes {
		dt, err := parse(t)
		if err != nil {
			return nil, fmt.Errorf("functions: %s.%s: %w", f.Keyspace, f.Signature(), err)
		}
		params[i] = dt
	}
	ret, err := parse(f.ReturnType)
	if err != nil {
		return nil, fmt.Errorf("functions: %s.%s: %w", f.Keyspace, f.Signature(), err)
	}
	s := &Sig{Keyspace: f.Keyspace, Name: f.Name, Params: params, Ret: ret, CalledOnNullInput: f.CalledOnNullInput, Def: f}
	prog, cerr := jsudf.Compile(f.Keyspace+"."+f.Name, f.Body)
	s.Impl = u.scalar(s, f, prog, cerr)
	return u.store(f, s), nil
}

// scalar is the implementation of the user-defined function s: its body
// run under the node's settings and time budget.
func (u *Users) scalar(s *Sig, f *storage.FunctionDef, prog *jsudf.Program, compileErr error) Scalar {
	return func(c Context, args [][]byte) ([]byte, error) {
		if !u.opts.Enabled {
			return nil, cqlerr.Invalidf("User-defined functions are disabled in cassandra.yaml - set enable_user_defined_functions=true to enable")
		}
		if !u.opts.Scripted {
			return nil, cqlerr.Invalidf("Scripted user-defined functions are disabled in cassandra.yaml - set enable_scripted_user_defined_functions=true to enable if you are aware of the security risks")
		}
		if compileErr != nil {
			return nil, cqlerr.Invalidf("Function '%s' exists but hasn't been loaded successfully for the following reason: %v. Please see the server log for details", s, compileErr)
		}
		if !s.CalledOnNullInput && hasNull(s.Params, args) {
			return nil, nil
		}
		args = nullEmpty(s.Params, args)
		start := u.opts.Now()
		out, err := prog.Call(f.ArgNames, s.Params, args, s.Ret, jsudf.Limits{Fail: u.opts.Fail, AfterFunc: u.opts.AfterFunc})
		if errors.Is(err, jsudf.ErrTimeout) {
			return nil, s.failure(fmt.Sprintf("java.util.concurrent.TimeoutException: User defined function %s ran longer than %dms", s, u.opts.Fail.Milliseconds()), err)
		}
		if errors.Is(err, jsudf.ErrMemory) {
			return nil, s.failure(fmt.Sprintf("User defined function %s was stopped: the node's heap grew by more than %d MiB while it ran", s, jsudf.DefaultMaxHeapGrowth>>20), err)
		}
		if err != nil {
			return nil, s.failure(err.Error(), err)
		}
		if u.opts.Warn > 0 && u.opts.Now().Sub(start) > u.opts.Warn {
			c.Warn(fmt.Sprintf("User defined function %s ran longer than %dms", s, u.opts.Warn.Milliseconds()))
		}
		return out, nil
	}
}

// failure is the FUNCTION_FAILURE of a call of s.
func (s *Sig) failure(detail string, err error) error {
	args := make([]string, len(s.Params))
	for i, p := range s.Params {
		args[i] = typeName(p)
	}
	return &cqlerr.FunctionFailure{Keyspace: s.Keyspace, Function: s.Name, Args: args, Detail: detail, Err: err}
}

// hasNull reports whether a call's arguments hold a null, or an empty
// value of a type whose empty value means nothing (UDHelper.isNullOrEmpty).
func hasNull(params []datatype.DataType, args [][]byte) bool {
	for i, a := range args {
		if a == nil || (len(a) == 0 && !EmptyIsValue(params[i])) {
			return true
		}
	}
	return false
}

// nullEmpty makes the meaningless empty values of args nulls, as
// Cassandra hands a function (UDFunction.makeEmptyParametersNull).
func nullEmpty(params []datatype.DataType, args [][]byte) [][]byte {
	for i, a := range args {
		if a != nil && len(a) == 0 && !EmptyIsValue(params[i]) {
			out := append([][]byte(nil), args...)
			for j := i; j < len(out); j++ {
				if out[j] != nil && len(out[j]) == 0 && !EmptyIsValue(params[j]) {
					out[j] = nil
				}
			}
			return out
		}
	}
	return args
}

// EmptyIsValue reports whether an empty value of type t is a value, not
// a null, as a function's argument or an aggregate's INITCOND: text,
// ascii and blob (UDHelper.isNullOrEmpty).
func EmptyIsValue(t datatype.DataType) bool {
	switch t.Code() {
	case primitive.DataTypeCodeAscii, primitive.DataTypeCodeVarchar, primitive.DataTypeCodeText, primitive.DataTypeCodeBlob:
		return true
	}
	return false
}

// aggregate compiles the aggregate of key.
func (u *Users) aggregate(key aggKey, parse TypeParser) (*Sig, error) {
	a := key.agg
	if key.state == nil || (a.FinalFunc != "" && key.final == nil) {
		return nil, fmt.Errorf("functions: aggregate %s.%s: its state or final function is missing", a.Keyspace, a.Signature())
	}
	state, err := u.function(key.state, parse)
	if err != nil {
		return nil, err
	}
	ua := &UserAggregate{State: state}
	if key.final != nil {
		if ua.Final, err = u.function(key.final, parse); err != nil {
			return nil, err
		}
	}
	if a.InitCond != nil {
		stype := state.Params[0]
		if u.opts.InitCond == nil {
			return nil, errors.New("functions: no INITCOND parser")
		}
		if ua.Init, err = u.opts.InitCond(stype, *a.InitCond); err != nil {
			return nil, fmt.Errorf("functions: aggregate %s.%s: INITCOND %s: %w", a.Keyspace, a.Signature(), *a.InitCond, err)
		}
	}
	params := make([]datatype.DataType, len(a.ArgTypes))
	for i, t := range a.ArgTypes {
		if params[i], err = parse(t); err != nil {
			return nil, err
		}
	}
	ret, err := parse(a.ReturnType)
	if err != nil {
		return nil, err
	}
	return &Sig{Keyspace: a.Keyspace, Name: a.Name, Params: params, Ret: ret, Agg: AggUser, User: ua, Def: a}, nil
}

// literal) into a value of type t; set by the coordinator, which owns the
// evaluation of terms.
var InitCond func(t datatype.DataType, literal string) ([]byte, error)

func parseInitCond(t datatype.DataType, literal string) ([]byte, error) {
	if InitCond == nil {
		return nil, errors.New("functions: no INITCOND parser")
	}
	return InitCond(t, literal)
}

// Add folds one row's arguments into the aggregate's state.
func (ua *UserAggregate) Add(c Context, st *AggState, args [][]byte) error {
	if st.err != nil {
		return nil
	}
	if !st.started {
		st.user, st.started = ua.Init, true
	}
	if !ua.State.CalledOnNullInput && (st.user == nil || hasNull(ua.State.Params[1:], args)) {
		return nil
	}
	in := make([][]byte, 0, len(args)+1)
	v, err := ua.State.Impl(c, append(append(in, st.user), args...))
	if err != nil {
		st.err = err
		return err
	}
	st.user = v
	return nil
}

// Result is the aggregate's result for the rows added to st.
func (ua *UserAggregate) Result(c Context, st *AggState) ([]byte, error) {
	if st.err != nil {
		return nil, st.err
	}
	state := st.user
	if !st.started {
		state = ua.Init
	}
	if ua.Final == nil {
		return state, nil
	}
	return ua.Final.Impl(c, [][]byte{state})
}

// String names a user-defined function as Cassandra does in its
// messages: ks.name : (types) -> type.
func userSigString(s *Sig) string {
	ps := make([]string, len(s.Params))
	for i, p := range s.Params {
		ps[i] = typeName(p)
	}
	return s.Keyspace + "." + s.Name + " : (" + strings.Join(ps, ", ") + ") -> " + typeName(s.Ret)
}
