package coordinator

import (
	"fmt"
	"time"

	"github.com/datastax/go-cassandra-native-protocol/datatype"

	"github.com/cqld/cqld/schema"
	"github.com/cqld/cqld/statements"
	"github.com/cqld/cqld/statements/functions"
	"github.com/cqld/cqld/storage"
)

// This file resolves function calls for a statement: the native functions
// and the user-defined ones of the statement's keyspace, through the one
// registry of package functions, and evaluates the constant terms schema
// changes carry (an aggregate's INITCOND).

// fnScope resolves the function names of one statement. It notes the
// user-defined functions the plan uses, so a run can tell that one was
// replaced or dropped since (the plan is then stale).
type fnScope struct {
	c        *Coordinator
	schema   *storage.Schema
	keyspace string // the table's: unqualified names are looked up in it
	used     []*functions.Sig
}

// fnScope is a scope for statements on tables of keyspace ks.
func (c *Coordinator) fnScope(ks string) *fnScope {
	return &fnScope{c: c, schema: c.catalog.Current(), keyspace: ks}
}

// lookup returns the signatures a call of qual.name (qual "" when
// unqualified) may resolve to: the native functions, and the keyspace's
// user-defined ones (Cassandra's FunctionResolver.get).
func (s *fnScope) lookup(qual, name string) ([]*functions.Sig, error) {
	var sigs []*functions.Sig
	if qual == "" || qual == "system" {
		sigs = functions.Lookup(name)
	}
	ks := qual
	if ks == "" {
		ks = s.keyspace
	}
	if ks == "" || ks == "system" {
		return sigs, nil
	}
	k := s.schema.Keyspace(ks)
	if k == nil {
		return sigs, nil
	}
	lookup := schema.TypeLookup(k)
	user, err := s.c.users.Lookup(k, name, func(t string) (datatype.DataType, error) {
		dt, _, err := statements.ParseTypeIn(t, ks, lookup)
		return dt, err
	})
	if err != nil {
		return nil, err
	}
	return append(append([]*functions.Sig(nil), sigs...), user...), nil
}

// use notes that the plan calls sig.
func (s *fnScope) use(sig *functions.Sig) {
	if s != nil && sig.Def != nil {
		s.used = append(s.used, sig)
	}
}

// functionsCurrent fails with a staleError when a user-defined function a
// plan calls has been replaced or dropped since it was analysed.
func (c *Coordinator) functionsCurrent(used []*functions.Sig) error {
	if len(used) == 0 {
		return nil
	}
	return c.usedCurrent(used)
}

// usedCurrent is functionsCurrent of functions used.
func (c *Coordinator) usedCurrent(used []*functions.Sig) error {
	s := c.catalog.Current()
	for _, sig := range used {
		k := s.Keyspace(sig.Keyspace)
		current := false
		switch d := sig.Def.(type) {
		case *storage.FunctionDef:
			current = k != nil && k.Function(d.Name, d.ArgTypes) == d
		case *storage.AggregateDef:
			current = k != nil && k.Aggregate(d.Name, d.ArgTypes) == d &&
				k.Function(d.StateFunc, append([]string{d.StateType}, d.ArgTypes...)) == sig.User.State.Def &&
				(sig.User.Final == nil || k.Function(d.FinalFunc, []string{d.StateType}) == sig.User.Final.Def)
		}
		if !current {
			return &staleError{table: "function " + sig.QualifiedName()}
		}
	}
	return nil
}

// userOptions are the settings user-defined functions run with.
func (c *Coordinator) userOptions() functions.UserOptions {
	o := c.opts.Functions
	if o.Now == nil {
		o.Now = c.opts.Now
	}
	o.InitCond = func(t datatype.DataType, literal string) ([]byte, error) {
		term, err := statements.ParseTerm(literal)
		if err != nil {
			return nil, err
		}
		return Constant("", term, t, time.Unix(0, 0))
	}
	return o
}

// Constant is the value of a term without bind markers for a receiver of
// type typ, with now as the statement's time: how schema changes evaluate
// an aggregate's INITCOND (schema.Options.Constant). ks is the keyspace
// the term is in.
func Constant(ks string, term statements.Term, typ datatype.DataType, now time.Time) ([]byte, error) {
	b := newBinder(ks, "", 0)
	e, err := b.term(term, typ, "initcond")
	if err != nil {
		return nil, err
	}
	if err := b.check(); err != nil {
		return nil, err
	}
	x := &execution{clock: func() time.Time { return now }}
	v, err := e.eval(x)
	if err != nil {
		return nil, fmt.Errorf("initcond: %w", err)
	}
	return v, nil
}
