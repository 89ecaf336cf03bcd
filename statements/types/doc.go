// Package types is CQL's values: how each type's values are written on the
// wire and checked (validate.go), literals in CQL text turned into values
// (values.go, literals.go), values rendered as CQL literals and as JSON
// (json.go), and JSON turned into values for INSERT JSON and fromJson()
// (fromjson.go).
//
// Values are the native protocol's serialized form throughout, the form
// they have in a request, on disk and in a result, so nothing is decoded
// that is not looked at. Every function that reads a value takes untrusted
// bytes: it checks lengths before it reads and returns an error, never
// panics. Errors a client must see are *cqlerr.Error values with
// Cassandra's words (INVALID), naming the column they concern.
//
// The JSON decoder follows Jackson as Cassandra configures it: numbers
// become the Java class Cassandra would see (Integer, Long, BigInteger,
// Double) before they are converted, and documents are bounded in depth
// and number length so that no input makes it recurse or compute without
// limit.
package types
