#!/usr/bin/env bash
# Issue 14's table: lightweight transactions on three nodes, RF 3, with
# internode_injected_delay (10ms: one round trip is about 20 ms), driven by
# cqlstress's cas workload through token-aware gocql. For each protocol
# (Paxos as configured by default, then each variant), commit level (ANY,
# QUORUM), key choice (uncontended: every operation its own key;
# contended: five keys in all) and thread count (1, 5, 10): N conditional
# writes, their total time, mean, p75, p95, p99, timeouts and conditions
# not applied; then N SERIAL reads. Each row also shows the machine's
# load average when it ended (the machine is shared). Run it under the
# shared locks:
#
#   flock /tmp/cqld-bench.lock flock /tmp/cqld-heavy.lock bench/paxos.sh [N] [DELAY]
#
# N is the operations per row (default 10000; 500 makes a quick run),
# DELAY the injected one-way delay (default 10ms). THREADS, LEVELS, KEYS
# and SERIAL_THREADS narrow the rows (defaults "1 5 10", "ANY QUORUM",
# "uncontended contended", and THREADS or "1 10" for the SERIAL reads;
# empty: none), for a run short enough to repeat. Each
# table starts with a plain write at QUORUM, one thread: one round trip
# and one synced write, the unit the issue's targets count in. VARIANTS lists the
# configuration lines of the other protocols, separated by ';' (default:
# paxos_variant v2_no_repeat, without the repeat proposer's one round
# trip, and v1, Cassandra 3.0's four round trips; empty: none). Nodes
# listen on NET.1-3 only (NET defaults to 127.0.12), on ports 19242 (CQL)
# and 17200 (internode), and are stopped by their PIDs at the end. The raw
# output is the table printed.
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-10000}
delay=${2:-10ms}
variants=${VARIANTS-paxos_variant: v2_no_repeat;paxos_variant: v1}
threads_list=${THREADS:-1 5 10}
serial_threads=${SERIAL_THREADS-${THREADS:-1 10}}
levels=${LEVELS:-ANY QUORUM}
keys_list=${KEYS:-uncontended contended}
net=${NET:-127.0.12}
work=$(mktemp -d "${TMPDIR:-/tmp}/cqld-paxos-bench.XXXXXX")
. bench/nodes.sh
cleanup() {
	stop_nodes
	rm -rf "$work"
}
trap cleanup EXIT
go build -o "$work/cqld" ./cmd/cqld
go build -o "$work/cqlstress" ./cmd/cqlstress
nodes=$net.1:19242,$net.2:19242,$net.3:19242

# start_node I EXTRA: node I on $net.I, its files under $work/nI, with
# the configuration line EXTRA.
start_node() {
	start_cqld "$work/cqld" "$work/n$1" paxos-bench "$net.$1" 19242 17200 "$net.1:17200" "prometheus_port: 0
internode_injected_delay: $delay
$2"
	wait_cql "$net.$1" 19242 "$work/n$1"
}

# start_cluster EXTRA: three fresh nodes, every one seeing the others up.
start_cluster() {
	rm -rf "$work"/n*
	start_node 1 "$1"; start_node 2 "$1"; start_node 3 "$1"
	sleep 3
}

# stress ARGS...: one cqlstress run whose figures are printed as a row.
stress() {
	local label=$1
	shift
	local out
	out=$("$work/cqlstress" "$@" -node "$nodes" -schema 'replication(factor=3)' -max-errors "$n" -json "$work/r.json" 2>&1) || {
		echo "$out" >&2; exit 1; }
	python3 - "$work/r.json" "$label" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
s = r['steps'][0]
t, l = s['total'], s['total']['latency']
load = open('/proc/loadavg').read().split()[0]
print(f"{sys.argv[2]:<44} {t['ops']:>6} {t['seconds']:>8.1f} {l['mean_ms']:>8.1f} {l['median_ms']:>8.1f} {l['p75_ms']:>8.1f} {l['p95_ms']:>8.1f} {l['p99_ms']:>8.1f} {s['timeouts']:>8} {t.get('not_applied', 0):>8} {t['errors']:>6} {load:>5}")
PY
}

header() {
	printf '%-44s %6s %8s %8s %8s %8s %8s %8s %8s %8s %6s %5s\n' \
		"$1" ops total_s mean_ms p50_ms p75_ms p95_ms p99_ms timeouts not_appl errors load
}

# table LABEL EXTRA: the rows of one protocol.
table() {
	local label=$1 base=0
	start_cluster "$2"
	header "$label"
	stress "plain write, QUORUM, threads=1" \
		write "n=$n" cl=QUORUM -rate threads=1 -pop "seq=1..$n"
	for cl in $levels; do
		for keys in $keys_list; do
			for threads in $threads_list; do
				local pop="seq=$((base + 1))..$((base + n))"
				if [ "$keys" = contended ]; then pop="dist=uniform($((base + 1))..$((base + 5)))"; fi
				base=$((base + n))
				stress "cas commit $cl, $keys, threads=$threads" \
					cas "n=$n" "cl=$cl" -serial-cl SERIAL -rate "threads=$threads" -pop "$pop"
			done
		done
	done
	for threads in $serial_threads; do
		stress "serial_read, threads=$threads" \
			serial_read "n=$n" -serial-cl SERIAL -rate "threads=$threads" -pop "seq=$((base + 1))..$((base + 1000))" -populate n=1000
		base=$((base + 1000))
	done
	stop_nodes
}

echo "# bench/paxos.sh n=$n internode_injected_delay=$delay, $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%F), $(git rev-parse --short HEAD)"
echo "# latencies in ms; timeouts: write/read timeouts and client timeouts; not_appl: conditions that did not hold (contention)"
table "Paxos (default configuration)" ""
IFS=';' read -r -a extra <<< "$variants"
for v in "${extra[@]}"; do
	echo
	table "$v" "$v"
done
