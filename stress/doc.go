// Package stress is cqlstress: a load generator for CQL servers in the
// spirit of cassandra-stress, driven through a stock driver (gocql), so what
// it measures is what an application would see.
//
// The lean mode (-mode lean, lean.go) measures the server rather than the
// driver, as redis-benchmark -P 1 does for Redis: each worker owns one
// cqlclient connection in Serial mode, so it has one request in flight and
// reads its answer itself, with no goroutine hand-off. gocql then only
// creates the schema. A watchdog closes a connection whose request waited
// longer than -mode timeout= (the request fails as a client timeout and
// the next one dials again), so no request needs a timer of its own. Every
// step reports the whole process's CPU time per operation (getrusage), in
// both modes, so what the client took from a server on the same machine is
// in the figures.
//
// A run is described by a command line (see Parse): a workload (write,
// read, mixed, counter_write, counter_read, cas, serial_read, or user with
// a YAML profile), a bound (n= operations or duration=), and option groups (-rate,
// -pop, -col, -schema, -mode, -node, -log). Run executes it:
//
//   - Closed loop: N worker goroutines each run one operation after the
//     other. Latency is the time of one operation.
//   - Thread sweep: the closed loop repeated at 1, 2, 4, ... threads, one
//     summary row per step.
//   - Open loop (fixed=R/s): operation i is due at start + i/R. Its latency
//     is measured from that intended start, so a stall of the server is
//     charged to every operation that should have started during it
//     (coordinated omission corrected); the raw service time (from the
//     actual start) is reported beside it.
//
// Every latency goes into an HdrHistogram (nanoseconds, 3 significant
// digits). Workers record into a few mutex-guarded shards; a collector
// drains the shards once per interval, prints an interval line, appends the
// interval histograms to the HDR log and merges them into the totals. The
// result (Result) is plain data: the summary text, the JSON file and the
// charts (chart.go, SVG written by hand, no script) are all rendered from it,
// and `cqlstress chart` renders several saved results in one picture.
//
// Key populations, value sizes and the other distributions are in dist.go;
// the built-in schema and statements are cassandra-stress's
// (keyspace1.standard1 and keyspace1.counter1) so results compare.
package stress
