package coordinator

import (
	"context"

	"github.com/datastax/go-cassandra-native-protocol/message"

	"github.com/cqld/cqld/schema"
	"github.com/cqld/cqld/statements"
	"github.com/cqld/cqld/systables"
)

// plan is an analysed statement, ready to run any number of times. Plans
// are immutable and shared by concurrent executions.
type plan interface {
	// markers describes the bind markers, by index: the PREPARED
	// variables metadata.
	markers() []*message.ColumnMetadata
	// pkIndices are the markers binding each partition key component, or
	// nil when the key is not fully bound by markers.
	pkIndices() []uint16
	// resultColumns describes the rows the plan returns; nil for plans that
	// return none.
	resultColumns() []*message.ColumnMetadata
	run(ctx context.Context, c *Coordinator, x *execution) (message.Message, error)
}

// noMarkers is embedded by plans that take no bind markers and return no
// rows.
type noMarkers struct{}

func (noMarkers) markers() []*message.ColumnMetadata       { return nil }
func (noMarkers) pkIndices() []uint16                      { return nil }
func (noMarkers) resultColumns() []*message.ColumnMetadata { return nil }

// analyze checks a parsed statement against the schema and returns its
// plan. keyspace is the session's (or the request's) keyspace.
func (c *Coordinator) analyze(stmt statements.Statement, nMarkers int, keyspace string) (plan, error) {
	switch s := stmt.(type) {
	case *statements.Use:
		return &usePlan{keyspace: s.Keyspace}, nil
	case *statements.CreateKeyspace, *statements.AlterKeyspace, *statements.DropKeyspace:
		return c.analyzeDDL(stmt, keyspace)
	case *statements.Select:
		return c.analyzeSelect(s, nMarkers, keyspace)
	case *statements.Describe:
		return &describePlan{st: s, session: keyspace}, nil
	}
	if isRoleStatement(stmt) {
		return &rolePlan{stmt: stmt, session: keyspace}, nil
	}
	return c.analyzeUser(stmt, nMarkers, keyspace)
}

// usePlan is USE ks.
type usePlan struct {
	noMarkers
	keyspace string
}

func (c *Coordinator) keyspaceExists(ks string) bool {
	if systables.IsSystemKeyspace(ks) {
		return true
	}
	_, ok := c.catalog.Keyspace(ks)
	return ok
}

// analyzeUser analyses the statements on user tables.
func (c *Coordinator) analyzeUser(stmt statements.Statement, n int, session string) (plan, error) {
	switch s := stmt.(type) {
	case *statements.CreateTable, *statements.DropTable, *statements.AlterTable,
		*statements.CreateType, *statements.AlterType, *statements.DropType,
		*statements.CreateIndex, *statements.DropIndex:
		return c.analyzeDDL(stmt, session)
	case *statements.Truncate:
		ks, err := schema.ResolveKeyspace(s.Keyspace, session)
		if err != nil {
			return nil, err
		}
		return &truncatePlan{keyspace: ks, table: s.Table}, nil
	case *statements.Insert:
		return c.analyzeInsert(s, n, session)
	case *statements.Update:
		return c.analyzeUpdate(s, n, session)
	case *statements.Delete:
		return c.analyzeDelete(s, n, session)
	case *statements.Batch:
		return c.analyzeBatch(s, n, session)
	case *statements.CreateFunction:
		if !c.opts.Functions.Enabled {
			return nil, invalidf("User-defined functions are disabled in cassandra.yaml - set enable_user_defined_functions=true to enable")
		}
		// Every language but java is a script to Cassandra
		// (UDFunction.assertUdfsEnabled); schema names the languages
		// cqld cannot run.
		if s.Language != "java" && !c.opts.Functions.Scripted {
			return nil, invalidf("Scripted user-defined functions are disabled in cassandra.yaml - set enable_scripted_user_defined_functions=true to enable if you are aware of the security risks")
		}
		return c.analyzeDDL(stmt, session)
	case *statements.CreateAggregate, *statements.DropFunction:
		return c.analyzeDDL(stmt, session)
	}
	return nil, invalidf("This statement is not supported yet by cqld")
}
