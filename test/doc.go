// Package test holds cqld's end-to-end tests: each starts a real node on a
// free 127.0.0.1 port, with its data in a temporary directory, and talks to
// it over TCP with real drivers (gocql v1, the apache/cassandra-gocql-driver
// v2 on protocol v5) or with hand-made frames for bad input.
package test
