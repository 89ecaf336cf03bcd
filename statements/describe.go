package statements

// DescribeKind is what a DESCRIBE statement describes.
type DescribeKind uint8

const (
	DescribeCluster    DescribeKind = iota + 1 // DESCRIBE CLUSTER
	DescribeSchema                             // DESCRIBE SCHEMA
	DescribeFullSchema                         // DESCRIBE FULL SCHEMA
	DescribeKeyspaces                          // DESCRIBE KEYSPACES
	DescribeKeyspace                           // DESCRIBE [ONLY] KEYSPACE [ks]
	DescribeTables                             // DESCRIBE TABLES
	DescribeTable                              // DESCRIBE TABLE [ks.]t
	DescribeIndex                              // DESCRIBE INDEX [ks.]i
	DescribeView                               // DESCRIBE MATERIALIZED VIEW [ks.]v
	DescribeTypes                              // DESCRIBE TYPES
	DescribeType                               // DESCRIBE TYPE [ks.]u
	DescribeFunctions                          // DESCRIBE FUNCTIONS
	DescribeFunction                           // DESCRIBE FUNCTION [ks.]f
	DescribeAggregates                         // DESCRIBE AGGREGATES
	DescribeAggregate                          // DESCRIBE AGGREGATE [ks.]a
	DescribeGeneric                            // DESCRIBE [ks.]name: a keyspace, table, index or view
)

// Describe is Cassandra 4.0's server-side DESCRIBE (or DESC) statement.
type Describe struct {
	Kind DescribeKind
	// Keyspace is the keyspace named, "" when the statement names none
	// (the session's is meant).
	Keyspace string
	// Name is the element named; "" for the listings, CLUSTER and the
	// schemas, and for KEYSPACE (whose keyspace is Keyspace).
	Name string
	// Only is DESCRIBE ONLY KEYSPACE: the keyspace without its elements.
	Only bool
	// Internals is WITH INTERNALS: table ids and dropped columns.
	Internals bool
}

func (*Describe) statement() {}
