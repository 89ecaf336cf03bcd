package schema

import (
	"fmt"

	"github.com/datastax/go-cassandra-native-protocol/message"

	"github.com/cqld/cqld/cqlerr"
	"github.com/cqld/cqld/statements"
	"github.com/cqld/cqld/storage"
)

// Check makes the checks Cassandra makes when a schema change is
// prepared, against the schema as it is now: the statement's names and
// options, and for CREATE TABLE the whole definition. session is the
// session's keyspace; dataCenters are as for Change. The rest is checked
// when the change applies, against the schema current then.
func (sc *Schema) Check(stmt statements.Statement, session string, dataCenters []string) error {
	switch st := stmt.(type) {
	case *statements.CreateKeyspace:
		_, err := analyzeCreateKeyspace(st, dataCenters)
		return err
	case *statements.AlterKeyspace:
		return sc.checkAlterKeyspace(st)
	case *statements.CreateTable:
		_, err := sc.analyzeCreateTable(sc.catalog.Current(), st, session, [16]byte{})
		return err
	case *statements.CreateIndex:
		if _, err := KeyspaceOf(stmt, session); err != nil {
			return err
		}
		return checkIndexKeyspace(st)
	}
	_, err := KeyspaceOf(stmt, session)
	return err
}

// Apply applies ch to the catalog, and to the data where the change
// removes a table or builds an index. It returns the SCHEMA_CHANGE result
// answering the change, or a VoidResult when the change was an IF [NOT]
// EXISTS that changed nothing; the caller publishes Event(result) to its
// clients. A change its checks refuse changes nothing and answers the
// error its client sees, with Cassandra's class and words; one whose
// catalog write fails (an I/O error) answers that error, this node's
// catalog as far as the write got. Changes apply one at a time; Apply is
// safe for concurrent use.
func (sc *Schema) Apply(ch Change) (message.Message, error) {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	e, err := sc.decide(&ch)
	if err != nil {
		return nil, err
	}
	if e.do != nil {
		if err := e.do(); err != nil {
			return nil, err
		}
	}
	return e.result, nil
}

// Validate answers the error Apply(ch) would answer if applied now, and
// changes nothing: a proposer refuses with it the changes that would fail
// before they are ordered. A change that validates can still fail when it
// applies, after changes ordered before it.
func (sc *Schema) Validate(ch Change) error {
	_, err := sc.decide(&ch)
	return err
}

// Outcome is the result Apply(ch) would answer if applied now, or its
// error, and changes nothing: what a change drops can be acted on before
// it is applied (package cluster forgets the grants on a dropped table).
func (sc *Schema) Outcome(ch Change) (message.Message, error) {
	e, err := sc.decide(&ch)
	if err != nil {
		return nil, err
	}
	return e.result, nil
}

// edit is a change decided against the current schema: the result that
// answers it and what applying it does (nil: nothing).
type edit struct {
	result message.Message
	do     func() error
}

func change(result message.Message, do func() error) *edit { return &edit{result: result, do: do} }

// unchanged is the edit of an IF [NOT] EXISTS that finds nothing to do.
func unchanged() *edit { return &edit{result: &message.VoidResult{}} }

// decide checks ch against the current schema and decides what applying
// it does.
func (sc *Schema) decide(ch *Change) (*edit, error) {
	if len(ch.Statement) > MaxStatement {
		return nil, cqlerr.Invalidf("Schema change statement of %d bytes is longer than the %d bytes allowed", len(ch.Statement), MaxStatement)
	}
	stmt, _, err := statements.Parse(ch.Statement)
	if err != nil {
		return nil, err
	}
	cur := sc.catalog.Current()
	switch st := stmt.(type) {
	case *statements.CreateKeyspace:
		def, err := analyzeCreateKeyspace(st, ch.DataCenters)
		if err != nil {
			return nil, err
		}
		return sc.createKeyspace(cur, def, st.IfNotExists)
	case *statements.DropKeyspace:
		return sc.dropKeyspace(cur, st)
	case *statements.AlterKeyspace:
		return sc.alterKeyspace(cur, st, ch.DataCenters)
	case *statements.CreateTable:
		if ch.TableID == ([16]byte{}) {
			return nil, fmt.Errorf("schema: CREATE TABLE %s without a table id", st.Table)
		}
		def, err := sc.analyzeCreateTable(cur, st, ch.Keyspace, ch.TableID)
		if err != nil {
			return nil, err
		}
		return sc.createTable(cur, def, st.IfNotExists)
	}
	ks, err := KeyspaceOf(stmt, ch.Keyspace)
	if err != nil {
		return nil, err
	}
	if ci, ok := stmt.(*statements.CreateIndex); ok {
		if err := checkIndexKeyspace(ci); err != nil {
			return nil, err
		}
	}
	if err := sc.userModifiable(ks); err != nil {
		return nil, err
	}
	return sc.decideIn(ks, cur.Keyspace(ks), stmt, ch)
}

// decideIn decides the change stmt to keyspace ks, whose definition is k
// (nil when it does not exist).
func (sc *Schema) decideIn(ks string, k *storage.KeyspaceDef, stmt statements.Statement, ch *Change) (*edit, error) {
	switch st := stmt.(type) {
	case *statements.AlterTable:
		return sc.alterTable(ks, k, st, ch)
	case *statements.DropTable:
		return sc.dropTable(ks, k, st)
	case *statements.CreateType:
		return sc.createType(ks, k, st)
	case *statements.AlterType:
		return sc.alterType(ks, k, st)
	case *statements.DropType:
		return sc.dropType(ks, k, st)
	case *statements.CreateIndex:
		return sc.createIndex(ks, k, st, ch)
	case *statements.DropIndex:
		return sc.dropIndex(ks, k, st)
	case *statements.CreateFunction:
		return sc.createFunction(ks, k, st)
	case *statements.CreateAggregate:
		return sc.createAggregate(ks, k, st, ch)
	case *statements.DropFunction:
		return sc.dropFunction(ks, k, st)
	}
	return nil, fmt.Errorf("schema: not a schema change: %T", stmt)
}
