//go:build linux

// Command peers measures cqld beside Redis on this machine, in one run,
// and prints the table of docs/benchmarks/peers.md:
//
//	flock /tmp/cqld-bench.lock flock /tmp/cqld-heavy.lock bench/peers.sh
//
// It builds cqld and cqlstress from the repository into a temporary
// folder, then measures Redis, then the cqld nodes (all up from then on,
// taking turns at each client count, the first turn rotating by -rotate
// and by the count, so no mode is always measured first or right after
// another):
//
//   - Redis (redis-server from the system, installed with apt-get when
//     missing) with appendonly yes and appendfsync always, driven by
//     redis-benchmark -P 1, and by this program's own lean client (peers
//     resp-client: a goroutine and a connection per client, one SET in
//     flight on each, as cqlstress's lean mode is for cqld): SET of a
//     100-byte value under one of 100,000 random keys;
//   - the Go floor (peers go-floor, with -floor, the default): a durable
//     server in Go that does no database work, driven by the same lean
//     client as Redis. It logs every SET it reads to one file, syncs back
//     to back, each fdatasync covering every SET that arrived meanwhile,
//     and answers "+OK" once the sync covering a SET returns; built once
//     on one gnet event loop with a flusher goroutine, as cqld's
//     frontend and commit log are, and once on Go's netpoller with a
//     goroutine per connection. It is what Go, these system calls and
//     this client leave on this machine: whatever cqld does per write
//     comes on top of it;
//   - cqld with commitlog_sync periodic, batch and adaptive, each a fresh
//     node on a fresh data folder and ports of its own, driven by cqlstress's update (one
//     100-byte column of one of 100,000 rows, prepared) in its lean mode
//     (one request in flight per connection, as redis-benchmark -P 1) and
//     through gocql (4 connections, write coalescing off);
//
// at 1, 16 and 64 clients, each cell a closed loop of -step seconds. Every
// server listens on 127.0.0.1 on a free port below the ephemeral range,
// keeps its data in the temporary folder, and is stopped by its PID when
// its cells are done, when the run fails and on SIGINT or SIGTERM (the
// children also get SIGKILL if this process dies); the folder is removed
// at the end.
//
// Each cell records the client's and the server's CPU per operation
// (getrusage of the client process, /proc of the server's) and what the
// rest of the machine used meanwhile (/proc/stat less this run's
// processes), so a cell skewed by other work says so. The output ends with
// the raw cells, the throughput table with p50 latencies, and the ratios
// of cqld to Redis and of adaptive mode to the others, all from this one
// run. Beside adaptive's ratios stands the ratio of the two cells' mean
// fdatasync: on this kind of machine the disk's fsync drifts between
// cells, and a cell whose fsync ran slower loses by it
// (docs/benchmarks/fsync-vs-ratio.py fits the two across rounds).
package main
