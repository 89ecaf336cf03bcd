#!/usr/bin/env bash
# A CPU profile of a node under docs/benchmarks/ingest.sh's workload (1 KiB
# columns, uniform keys over 2M, 32 threads, periodic commit log): the
# node's /debug/pprof/profile from 20 s into the run to 10 s before its
# end, written to OUT (default /tmp/cpu-ingest.pb.gz). Prints the node's
# CPU seconds, its LSM figures and cqlstress's rates.
#
#   go build -o /tmp/cqlstress ./cmd/cqlstress
#   flock /tmp/cqld-bench.lock docs/benchmarks/ingest-profile.sh /tmp/cqld 90
#   go tool pprof -top /tmp/cpu-ingest.pb.gz
set -euo pipefail
. "$(dirname "$0")/node.sh"
bin=$1; secs=$2
out=${OUT:-/tmp/cpu-ingest.pb.gz}
stress=${CQLSTRESS:-/tmp/cqlstress}
dir=$(mktemp -d /var/tmp/cqld-ingprof.XXXXXX)
start_node "$dir" "$bin" -commitlog_sync periodic
port=$node_port mport=$node_mport pid=$node_pid
"$stress" write duration="${secs}s" -node "127.0.0.1:$port" -rate threads=32 -pop 'dist=uniform(1..2000000)' \
	-col 'size=fixed(1024)' -log interval=30s >"$dir/stress.txt" 2>&1 &
sp=$!
sleep 20
curl -s -o "$out" "http://127.0.0.1:$mport/debug/pprof/profile?seconds=$((secs - 30))"
wait $sp || echo "cqlstress exited with status $?"
echo "node cpu seconds: $(($(cpu_ticks $pid) / $(getconf CLK_TCK)))"
curl -s "127.0.0.1:$mport/metrics" | grep -E '^cqld_lsm_(write_stall|compaction_debt|l0_sublevels|flush_bytes|compaction_written)' || true
kill -TERM $pid; wait $pid || true
grep -E "Op rate|Row rate|Latency 99.9|Latency max|Total errors" "$dir/stress.txt" || true
rm -rf "$dir"
