// Package test holds cqld's end-to-end tests: each starts a real node,
// in-process (server.Start, startNode) or as a cqld subprocess (startProc),
// on free ports of 127.0.0.1 with its data in a temporary directory, and
// talks to it over TCP as a client would. Cluster tests (cluster_test.go,
// startCluster) start three cqld processes on 127.0.0.1, 127.0.0.2 and
// 127.0.0.3, node1 their seed, and cut, kill, pause and restart them
// (TestClusterFaults, TestClusterPartition).
//
//   - Drivers: gocql v1 (most tests), the apache/cassandra-gocql-driver v2
//     on protocol v5 with and without LZ4 (gocqlv2_test.go), the DataStax
//     Python driver (python_test.go, drivers/python/smoke.py) and the
//     Node.js driver (nodejs_test.go, drivers/nodejs/smoke.js). The last
//     two are skipped when their driver is not installed, and fail under
//     CI=true, where .ci/run installs them.
//   - The CQL corpus (cql_corpus_test.go): the scripts in testdata/cql/,
//     each statement with the answer Cassandra 4.0 gives, run over gocql,
//     in process through Coordinator.Handle, and on a three-node cluster
//     (TestCQLCorpusOnCluster); known_differences.cql records what cqld
//     still answers differently and is not run. -rewrite regenerates the
//     expectations from cqld's answers.
//   - TTL tests run the node on a fake clock (server.Options.Now) that
//     they advance instead of sleeping.
//   - A model-based randomized test (model_test.go): random writes,
//     deletes, TTLs and reads on random schemas, compared byte for byte
//     with an in-memory model of Cassandra's reconciliation, shrunk to the
//     shortest failing sequence.
//   - Wire-level tests with hand-made frames (the client in wire_test.go):
//     bad input (badinput_test.go), prepared metadata at the byte level
//     (prepared_test.go), the batch PREPARE extension
//     (prepare_batch_test.go).
//   - Durability: SIGKILL of a cqld process at random moments under every
//     durable sync mode (killcycle_test.go), restarts, a corrupt commit log
//     (replaycorrupt_test.go), a graceful stop with requests in flight
//     (process_test.go), and no answer to a durable write written to its
//     socket before the fsync covering it returned, in each waiting mode
//     (durable_order_test.go: kernel receive stamps against a slow disk's
//     sync log).
//   - Benchmarks (bench_*_test.go, with slowfs_test.go's simulated slow
//     disk); their figures and commands are in docs/benchmarks/.
//
// The slow tests (kill cycles, subprocess restarts, the long model runs)
// are skipped under -short. Every server a test starts listens on
// 127.0.0.1 only and is stopped, by its PID for subprocesses, when the test
// ends. Its ports come from freePort, which locks each port it gives in a
// file of $TMPDIR/cqld-test-ports for the life of the test process, so
// test processes of several checkouts running at once never pick the same
// one. The cqld binary of the subprocess tests is built once per test
// process and removed by TestMain.
package test
