package schema

import (
	"time"

	"github.com/cqld/cqld/statements"
	"github.com/cqld/cqld/statements/functions"
)

// Change is one schema change as its proposer decided it: the statement
// and everything applying it needs that is not in the schema it applies
// to, so that every node applying the same changes in the same order
// reaches the same schema. Applying reads nothing from the applier's clock,
// randomness or configuration.
//
// The statement travels as its CQL text with the session's keyspace: the
// language is the one form of a statement that is stable across versions
// of cqld, and the parser (fuzzed, strict) is its decoder; applying parses
// it again.
type Change struct {
	// Keyspace is the session's keyspace, for names the statement leaves
	// unqualified; "" when none.
	Keyspace string
	// Statement is the CQL text.
	Statement string
	// Time is when the proposer made the change, in microseconds since the
	// epoch: the time of dropped columns and the "now" of index builds.
	Time int64
	// TableID is the id of the table a CREATE TABLE creates; zero for
	// other statements.
	TableID [16]byte
	// DataCenters are the data centers NetworkTopologyStrategy's
	// 'replication_factor' shorthand expands to.
	DataCenters []string
}

// NewChange is the change stmt (parsed from text) proposes, made at time
// (µs) in a cluster of the given data centers: it picks the ids the
// statement needs.
func NewChange(stmt statements.Statement, text, session string, at int64, dataCenters []string) Change {
	ch := Change{Keyspace: session, Statement: text, Time: at, DataCenters: dataCenters}
	if _, ok := stmt.(*statements.CreateTable); ok {
		copy(ch.TableID[:], functions.NewTimeUUID(time.UnixMicro(at)))
	}
	return ch
}

// now is the change's time.
func (ch *Change) now() time.Time { return time.UnixMicro(ch.Time) }
