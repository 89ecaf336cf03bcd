// Package functions is CQL's native functions: one registry of scalar and
// aggregate functions (native.go, Cassandra's TimeFcts, UuidFcts,
// BytesConversionFcts and AggregateFcts), the casts (cast.go, CastFcts),
// and the resolution of a call to one signature among a name's overloads
// (resolve.go, Cassandra's FunctionResolver with its exact and weak
// matches), used alike by the selection, WHERE and values of a statement.
//
// A function works on serialized values: a Scalar gets its arguments'
// bytes (nil for a null) and returns its result's. What it needs from the
// statement running it, the statement's clock, comes through a Context,
// so every now() of one statement agrees and tests can fix time.
//
// User-defined functions and aggregates (user.go) are resolved with the
// native ones: Users compiles a keyspace's definitions (once each, as
// definitions are immutable) into Sigs whose Impl runs the JavaScript body
// (package jsudf) under the node's time budget, and whose User folds an
// aggregate's state function. A call's Context also takes the warnings a
// slow call gives the statement.
//
// The functions that depend on the table or the column they are applied
// to (token, writetime, ttl, toJson) are compiled by the coordinator and
// are not in the registry.
package functions
