#!/usr/bin/env bash
# Sustained ingest of large rows against one cqld binary per argument, run
# one after the other on fresh data directories (on the machine's disk,
# not tmpfs): cqlstress's default schema (five columns) with 1 KiB columns,
# uniform keys over 2M, 32 threads, periodic commit log. For each binary it
# prints cqlstress's Results block, the node's CPU seconds, the commit log
# segments left at the end and the LSM's metrics. COL sets the column size
# (default 1024), LOG cqlstress's report interval (default 10s; its lines
# are printed too), and SEGMENTS_EVERY, when set (30s, say), prints the
# commit log's segment count and the LSM's memtables, L0 sublevels,
# compaction debt and write stalls that often. STRESS_MODE, when set
# ("-mode lean", say), is passed to cqlstress.
#
#   go build -o /tmp/cqlstress ./cmd/cqlstress
#   flock /tmp/cqld-bench.lock flock /tmp/cqld-heavy.lock \
#     docs/benchmarks/ingest.sh 40s /tmp/cqld-base /tmp/cqld-new ...
set -euo pipefail
. "$(dirname "$0")/node.sh"
dur=$1; shift
stress=${CQLSTRESS:-/tmp/cqlstress}
col=${COL:-1024}
interval=${LOG:-10s}
for bin in "$@"; do
	dir=$(mktemp -d /var/tmp/cqld-ingest.XXXXXX)
	start_node "$dir" "$bin" -commitlog_sync periodic
	port=$node_port mport=$node_mport pid=$node_pid
	echo "=== $bin ($(basename "$bin")), columns of $col bytes, $(date -u +%FT%TZ), load $(cut -d' ' -f1-3 /proc/loadavg)"
	counter=
	if [ -n "${SEGMENTS_EVERY:-}" ]; then
		(while sleep "$SEGMENTS_EVERY"; do
			lsm=$(curl -s "127.0.0.1:$mport/metrics" | awk '/^cqld_lsm_(memtables|l0_sublevels|compaction_debt_bytes|write_stalls_total|write_stall_seconds_total) / { sub("cqld_lsm_", "", $1); printf " %s=%s", $1, $2 }')
			echo "segments $(date -u +%T) $(ls "$dir/commitlog" | grep -c '\.log$')$lsm"
		done) &
		counter=$!
	fi
	# A run with errors still gets its node's figures and its node stopped.
	# shellcheck disable=SC2086 # STRESS_MODE is words for cqlstress
	"$stress" write duration="$dur" ${STRESS_MODE:-} -node "127.0.0.1:$port" -rate threads=32 \
		-pop 'dist=uniform(1..2000000)' -col "size=fixed($col)" -log interval="$interval" ||
		echo "cqlstress exited with status $?"
	if [ -n "$counter" ]; then kill "$counter"; wait "$counter" 2>/dev/null || true; fi
	echo "node cpu seconds: $(awk -v t="$(getconf CLK_TCK)" -v c="$(cpu_ticks $pid)" 'BEGIN { printf "%.2f", c / t }')"
	echo "commit log segments: $(ls "$dir/commitlog" | grep -c '\.log$')"
	curl -s "127.0.0.1:$mport/metrics" | grep -E '^cqld_lsm_(write_stall|compaction_debt|l0_sublevels|level_files\{level="0"|flush_bytes|compaction_written|read_amp)' || true
	kill -TERM $pid; wait $pid || true
	rm -rf "$dir"
done
