package schema

import (
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/datastax/go-cassandra-native-protocol/datatype"
	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"

	"github.com/cqld/cqld/cqlerr"
	"github.com/cqld/cqld/statements"
	"github.com/cqld/cqld/storage"
)

// Data is the engine side of schema changes: what happens to the rows
// when a table or an index comes or goes. Its methods are called with the
// schema lock held, one change at a time.
type Data interface {
	// Truncate removes every row of t and of its indexes.
	Truncate(t *storage.Table) error
	// BuildIndex indexes the rows of t for its index named index, as of
	// now (seconds since the epoch, for TTLs).
	BuildIndex(t *storage.Table, index string, now int32) error
	// WaitApplies returns once every write applying when it was called
	// has applied: writes after it see the new schema.
	WaitApplies()
}

var _ Data = (*storage.Engine)(nil)

// Options configures a Schema.
type Options struct {
	Catalog *storage.Catalog
	Data    Data
	// SystemKeyspace reports the keyspaces the node owns (system,
	// system_schema, ...), which no change may modify.
	SystemKeyspace func(ks string) bool
	Logger         *slog.Logger
	// Now is the clock of index builds a snapshot brings (TTLs expire by
	// it); nil means time.Now.
	Now func() time.Time
	// Constant evaluates a term with no bind markers as a value of type
	// typ in keyspace ks at time now (an aggregate's INITCOND), as the
	// coordinator evaluates values; nil takes literals alone. It must be
	// deterministic: every node applies the change with it.
	Constant func(ks string, term statements.Term, typ datatype.DataType, now time.Time) ([]byte, error)
}

// Schema applies schema changes to a node's catalog and data. It is safe
// for concurrent use: changes are applied one at a time.
type Schema struct {
	catalog *storage.Catalog
	data    Data
	system  func(string) bool
	log     *slog.Logger
	now     func() time.Time
	// constantFn is Options.Constant.
	constantFn func(ks string, term statements.Term, typ datatype.DataType, now time.Time) ([]byte, error)

	mu sync.Mutex // serialises changes
}

// New returns the Schema over opts.Catalog.
func New(opts Options) *Schema {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.SystemKeyspace == nil {
		opts.SystemKeyspace = func(string) bool { return false }
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Schema{catalog: opts.Catalog, data: opts.Data, system: opts.SystemKeyspace, log: opts.Logger, now: opts.Now, constantFn: opts.Constant}
}

// userModifiable refuses a schema change in a system keyspace with
// Cassandra's words.
func (sc *Schema) userModifiable(ks string) error {
	if sc.system(ks) {
		return cqlerr.Unauthorizedf("%s keyspace is not user-modifiable.", ks)
	}
	return nil
}

// ResolveKeyspace is the keyspace a statement names, or the session's
// when it names none.
func ResolveKeyspace(ks, session string) (string, error) {
	if ks != "" {
		return ks, nil
	}
	if session == "" {
		return "", cqlerr.Invalidf("No keyspace has been specified. USE a keyspace, or explicitly specify keyspace.tablename")
	}
	return session, nil
}

// KeyspaceOf is the keyspace a schema statement changes, its own or the
// session's (an index's: its table's, else its name's); the error of a
// statement that names none in a session without one.
func KeyspaceOf(stmt statements.Statement, session string) (string, error) {
	var ks string
	switch s := stmt.(type) {
	case *statements.CreateKeyspace:
		return s.Keyspace, nil
	case *statements.DropKeyspace:
		return s.Keyspace, nil
	case *statements.AlterKeyspace:
		return s.Keyspace, nil
	case *statements.CreateTable:
		ks = s.Keyspace
	case *statements.AlterTable:
		ks = s.Keyspace
	case *statements.DropTable:
		ks = s.Keyspace
	case *statements.CreateType:
		ks = s.Keyspace
	case *statements.AlterType:
		ks = s.Keyspace
	case *statements.DropType:
		ks = s.Keyspace
	case *statements.CreateIndex:
		if ks = s.TableKeyspace; ks == "" {
			ks = s.Keyspace
		}
	case *statements.DropIndex:
		ks = s.Keyspace
	case *statements.CreateFunction:
		ks = s.Keyspace
	case *statements.CreateAggregate:
		ks = s.Keyspace
	case *statements.DropFunction:
		ks = s.Keyspace
	default:
		return "", fmt.Errorf("schema: not a schema change: %T", stmt)
	}
	return ResolveKeyspace(ks, session)
}

// changed is the result answering a change of target in ks (object names
// the table or type; "" for a keyspace).
func changed(t primitive.SchemaChangeType, target primitive.SchemaChangeTarget, ks, object string) message.Message {
	return &message.SchemaChangeResult{ChangeType: t, Target: target, Keyspace: ks, Object: object}
}

// Event is the SCHEMA_CHANGE event announcing the change that result
// answers, or nil when the change changed nothing (a VoidResult).
func Event(result message.Message) *message.SchemaChangeEvent {
	r, ok := result.(*message.SchemaChangeResult)
	if !ok {
		return nil
	}
	return &message.SchemaChangeEvent{ChangeType: r.ChangeType, Target: r.Target, Keyspace: r.Keyspace, Object: r.Object, Arguments: r.Arguments}
}
