// Package test holds cqld's end-to-end tests: each starts a real node on a
// free 127.0.0.1 port, with its data in a temporary directory, and talks to
// it over TCP with real drivers (gocql v1, the apache/cassandra-gocql-driver
// v2 on protocol v5, the DataStax Python and Node.js drivers as
// subprocesses) or with hand-made frames for bad input. Some run cqld as a
// process, to kill it.
//
// The CQL corpus (testdata/cql, cql_corpus_test.go) runs twice: over gocql,
// and in process through the node's Coordinator.Handle, both rendered by one
// renderer from raw values and their types. Tests of TTLs run the node on a
// fake clock (server.Options.Now) that they advance instead of sleeping.
package test
