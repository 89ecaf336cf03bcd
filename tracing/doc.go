// Package tracing is request tracing, Cassandra's: a request a client
// asks to trace (the frame's tracing flag), or one drawn at the node's
// trace_probability, gets a session, and the layers it passes through
// record events in it (parsing, planning, the replicas contacted, the
// commit log append and sync, the memtable and sstable reads, the
// answer). Sessions and events are rows of system_traces.sessions and
// system_traces.events, with Cassandra 4.0's layouts, written with the
// TTL trace_type_query_ttl sets: real tables of a replicated keyspace
// (SimpleStrategy, replication factor 2, as Cassandra's), so any node can
// answer a driver reading a trace back (gocql's Tracer, the Python
// driver's get_query_trace()).
//
// A session travels in the request's context (WithSession, Trace). Across
// nodes it travels in the internode message (messaging carries its id):
// the replica continues it (Tracer.Continue) and records its own events
// under the same session id, with itself as their source, as Cassandra's
// replicas do.
//
// Recording never waits on a write. Each node's Tracer turns sessions and
// events into mutations and hands them to one writer goroutine through a
// bounded queue; when the queue is full the record is dropped and
// counted (Dropped), so tracing cannot slow or stall the requests it
// watches. The writer writes at consistency ANY, as Cassandra does.
package tracing
