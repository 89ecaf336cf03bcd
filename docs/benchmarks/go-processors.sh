#!/usr/bin/env bash
# One cqld binary under two GOMAXPROCS settings, side by side: a fresh node
# per cell, driven by cqlstress from its own process (prepared single-row
# UPDATEs of a 100-byte value, keys uniform over 100,000, closed loop). For
# each cell it prints the client's ops/s and what the node spent per
# operation: CPU (utime + stime from /proc) and context switches (voluntary
# and involuntary, summed over its threads), both over the measured seconds.
# The two settings take turns, the first alternating from one round to the
# next.
#
#   go build -o /tmp/cqld ./cmd/cqld && go build -o /tmp/cqlstress ./cmd/cqlstress
#   flock /tmp/cqld-bench.lock docs/benchmarks/go-processors.sh /tmp/cqld 5 "1 4 16 64" adaptive
#
# A and B are the two settings' GOMAXPROCS values (default: 3 and the
# node's default, "-"); MODE is cqlstress's -mode (default lean; gocql with
# four connections: MODE="connections=4 coalesce=0s"); SECS a cell's
# measured seconds (default 8, after an unmeasured 2 s).
set -euo pipefail
. "$(dirname "$0")/node.sh"
bin=$1 rounds=$2 counts=$3 sync=$4
stress=${CQLSTRESS:-/tmp/cqlstress}
a=${A:-3} b=${B:--}
mode=${MODE:-lean}
secs=${SECS:-8}

# context switches of every thread of a process
switches() { cat /proc/"$1"/task/*/status 2>/dev/null | awk '/ctxt_switches/ {n += $2} END {print n}'; }

cell() { # procs clients
	local procs=$1 n=$2 dir port pid t0 s0 t1 s1 ops
	dir=$(mktemp -d /var/tmp/cqld-procs.XXXXXX)
	if [ "$procs" = - ]; then
		start_node "$dir" env -u GOMAXPROCS "$bin" -commitlog_sync "$sync"
	else
		start_node "$dir" env GOMAXPROCS="$procs" "$bin" -commitlog_sync "$sync"
	fi
	port=$node_port pid=$node_pid
	local args=(update -node "127.0.0.1:$port" -rate threads="$n" -pop 'dist=uniform(1..100000)' -col 'size=fixed(100)' -log interval=1m -mode $mode)
	"$stress" "${args[@]:0:1}" duration=2s "${args[@]:1}" >/dev/null 2>&1
	"$stress" "${args[@]:0:1}" duration="$((secs + 1))s" "${args[@]:1}" >"$dir/stress" 2>&1 &
	local sp=$!
	sleep 0.5
	t0=$(cpu_ticks "$pid") s0=$(switches "$pid")
	sleep "$secs"
	t1=$(cpu_ticks "$pid") s1=$(switches "$pid")
	wait "$sp" || true
	kill "$pid"
	wait "$pid" || true
	ops=$(awk '/^Op rate/ {gsub(",", "", $4); print $4}' "$dir/stress")
	awk -v p="$procs" -v n="$n" -v ops="$ops" -v dt=$((t1 - t0)) -v ds=$((s1 - s0)) -v secs="$secs" -v hz="$(getconf CLK_TCK)" -v m="$sync" \
		'BEGIN { printf "GOMAXPROCS %s %s %3d clients: %6d ops/s, node %5.1f us/op, %.3f switches/op\n", p, m, n, ops, dt / hz * 1e6 / (ops * secs), ds / (ops * secs) }'
	rm -rf "$dir"
}

echo "# $(date -u +%FT%TZ) $bin, $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg); cqlstress -mode $mode; $sync; GOMAXPROCS $a against $b"
for r in $(seq "$rounds"); do
	for n in $counts; do
		if [ $((r % 2)) = 1 ]; then order="$a $b"; else order="$b $a"; fi
		for p in $order; do cell "$p" "$n"; done
	done
done
