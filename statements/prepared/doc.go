// Package prepared is the prepared statement cache: statements by
// Cassandra's id (ID, the MD5 of keyspace and text), least recently used
// first out within prepared_statements_cache_size estimated bytes, and
// mirrored to system.prepared_statements (Store), a table in the engine
// as in Cassandra, so that ids survive restarts (Load prepares every
// stored statement again).
//
// What a statement compiles into is the coordinator's business: the
// cache keeps it as a Plan, which only tells its size. A request that
// prepares several statements gathers their store writes (Writes) and
// persists them in one mutation.
package prepared
