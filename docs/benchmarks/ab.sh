#!/usr/bin/env bash
# Alternates cqld variants on one cqlstress update cell, each cell a fresh
# node on a fresh data folder under /var/tmp, the variants' order rotated
# by one every round, and prints per cell cqlstress's op rate, its median
# latency and the node's CPU per operation (from /proc/PID/stat).
#
#   go build -o /tmp/cqlstress ./cmd/cqlstress
#   flock /tmp/cqld-bench.lock docs/benchmarks/ab.sh ROUNDS SECONDS "CQLSTRESS ARGS" \
#     "name|/path/to/cqld|node flags" "name2|/path/to/cqld2|node flags" ...
#
# For example, issue 18's gocql cell at 64 threads:
#
#   docs/benchmarks/ab.sh 3 8 "-rate threads=64 -pop dist=uniform(1..100000) -col size=fixed(100) -mode connections=4 coalesce=0s" \
#     "adaptive|/tmp/cqld|-commitlog_sync adaptive" "periodic|/tmp/cqld|-commitlog_sync periodic"
set -euo pipefail
. "$(dirname "$0")/node.sh"
rounds=$1; secs=$2; sargs=$3; shift 3
vars=("$@")
stress=${CQLSTRESS:-/tmp/cqlstress}
tck=$(getconf CLK_TCK)
pid=
dir=
cleanup() {
	if [ -n "$pid" ]; then kill -TERM "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
	if [ -n "$dir" ]; then rm -rf "$dir"; fi
}
trap cleanup EXIT
n=${#vars[@]}
for r in $(seq 0 $((rounds - 1))); do
	for i in $(seq 0 $((n - 1))); do
		IFS='|' read -r name bin nargs <<<"${vars[$(((i + r) % n))]}"
		dir=$(mktemp -d /var/tmp/cqld-ab.XXXXXX)
		# shellcheck disable=SC2086 # nargs and sargs are words
		start_node "$dir" "$bin" $nargs
		port=$node_port pid=$node_pid
		# shellcheck disable=SC2086
		"$stress" update n=20000 -node "127.0.0.1:$port" $sargs >/dev/null 2>&1
		t0=$(cpu_ticks "$pid")
		# shellcheck disable=SC2086
		out=$("$stress" update duration="${secs}s" -node "127.0.0.1:$port" $sargs 2>&1) || true
		t1=$(cpu_ticks "$pid")
		ops=$(awk '/^Op rate/ { gsub(",", "", $4); print $4 }' <<<"$out")
		p50=$(awk '/^Latency median/ { print $4 }' <<<"$out")
		ccpu=$(awk '/^Client CPU/ { print $4 }' <<<"$out")
		ticks=$((t1 - t0))
		echo "round $r $name ops=${ops:-none} p50=${p50:-none}ms client_us_op=${ccpu:-none} node_us_op=$(awk -v c="$ticks" -v o="${ops:-0}" -v s="$secs" -v t="$tck" 'BEGIN { if (o > 0) printf "%.1f", c * 1e6 / t / (o * s); else print "none" }')"
		kill -TERM "$pid"; wait "$pid" 2>/dev/null || true; pid=
		rm -rf "$dir"; dir=
	done
done
