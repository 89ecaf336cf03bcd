// Package speculate is the table option speculative_retry as Cassandra 4.0
// reads it, and the latencies it is computed from.
//
// A Policy is parsed from the option's text as
// SpeculativeRetryPolicy.fromString parses it: ALWAYS, NEVER (or NONE), a
// percentile of the table's recent read latencies (99p, 99.5PERCENTILE),
// a fixed time (50ms), or the MIN or MAX of a percentile and a fixed time
// (MIN(99p,50ms)); any case. A bad value is Cassandra's ConfigurationException
// with its words. String is the form Cassandra stores and shows in
// system_schema (99p, 50ms, MIN(99p,50ms), NEVER, ALWAYS), so that a
// table created with 99PERCENTILE reads back as 99p.
//
// The percentile is read from a Histogram of the table's coordinator read
// latencies that forgets as Cassandra's DecayingEstimatedHistogramReservoir
// does: buckets growing by 1.2 from a microsecond, each sample weighted by
// exp(age/τ) from a landmark, so that a sample a minute older counts half
// (forward decay), the landmark moved every 30 minutes with the weights
// rescaled. A Policy's Threshold is recomputed by the caller periodically
// (Cassandra: every read_request_timeout) and kept when no sample is
// there yet.
//
// Time is given, never read: every method that needs it takes now.
package speculate
