// Package cqlerr is the error a client sees: an error carrying the CQL
// error code (INVALID, CONFIG_ERROR, ALREADY_EXISTS, ...) that the
// native protocol answers with, and Cassandra's words in its message.
//
// Every layer that refuses a request for a reason the client must be told
// (a bad value, an unknown table, a keyspace that exists) returns an
// *Error; the coordinator turns it, and every other error, into an ERROR
// message in exactly one place. An error that is not an *Error is a
// SERVER_ERROR there.
package cqlerr
