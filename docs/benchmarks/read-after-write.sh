#!/usr/bin/env bash
# Reads after writes, one cqld binary per argument, each on a fresh node
# (data on the machine's disk): 1 KiB-column rows written for 30 s over
# 150,000 keys (most end in tables), then random keys of that range read
# for 20 s, both at 32 threads. Prints the write rate, the LSM's bytes per
# level, the read rate and latencies, and the node's CPU seconds.
#
#   go build -o /tmp/cqlstress ./cmd/cqlstress
#   flock /tmp/cqld-bench.lock docs/benchmarks/read-after-write.sh /tmp/cqld-a /tmp/cqld-b /tmp/cqld-b /tmp/cqld-a
set -euo pipefail
. "$(dirname "$0")/node.sh"
stress=${CQLSTRESS:-/tmp/cqlstress}
for bin in "$@"; do
	dir=$(mktemp -d /var/tmp/cqld-readab.XXXXXX)
	start_node "$dir" "$bin" -commitlog_sync periodic
	port=$node_port mport=$node_mport pid=$node_pid
	echo "=== $bin $(date -u +%T)"
	"$stress" write duration=30s -node "127.0.0.1:$port" -rate threads=32 -pop 'dist=uniform(1..150000)' -col 'size=fixed(1024)' -log interval=1m | grep -E "^Row rate" || true
	curl -s "127.0.0.1:$mport/metrics" | grep -E '^cqld_lsm_(memtable_bytes|level_bytes)' | tr '\n' ' '; echo
	"$stress" read duration=20s -node "127.0.0.1:$port" -rate threads=32 -pop 'dist=uniform(1..150000)' -col 'size=fixed(1024)' -log interval=1m | grep -E "^(Op rate|Latency (median|95th|99th)|Total errors)" || true
	echo "node cpu seconds: $(($(cpu_ticks $pid) / $(getconf CLK_TCK)))"
	kill -TERM $pid; wait $pid || true
	rm -rf "$dir"
done
