package coordinator

import "github.com/cqld/cqld/statements"

// describePlan is a DESCRIBE: it reads the schema when it runs (package
// describe), in the session's keyspace of the request that made it. Its
// result columns depend on what it finds (DESCRIBE name may be a keyspace
// or a table), so, as Cassandra's, its prepared metadata has none and
// every page carries its columns.
type describePlan struct {
	noMarkers
	st      *statements.Describe
	session string
}
