package prepared

import "crypto/md5"

// Statement is a statement prepared by some client, as the cache keeps
// it. It is immutable.
type Statement struct {
	ID [16]byte
	// Keyspace is the keyspace it was prepared in, "" for none.
	Keyspace string
	Query    string
	// Plan is what the statement was compiled into.
	Plan Plan
}

// Plan is a prepared statement's compiled form (the coordinator's), which
// the cache keeps without looking into it.
type Plan interface {
	// Size is the statement's estimated memory in bytes, its text
	// included: what it costs the cache's budget. It never changes.
	Size() int64
}

// ID is Cassandra's prepared statement id: the MD5 of the keyspace and
// the query text.
func ID(keyspace, query string) [16]byte {
	if keyspace == "" {
		return md5.Sum([]byte(query))
	}
	return md5.Sum([]byte(keyspace + query))
}
