#!/usr/bin/env bash
# A hot partition's lightweight transactions as its history grows: three
# nodes, RF 3, internode_injected_delay 10ms (as bench/paxos.sh), and
# ROUNDS runs of cqlstress's cas workload in a row on the same five keys,
# N operations each, one thread, commit at ANY (the repeat proposer's
# case: a queue of transactions per key through one coordinator). One line
# a round: p50, p75, p99, timeouts, errors. A flat p50 means a partition's
# cost does not grow with the transactions it has had. Run it under the
# shared lock:
#
#   flock /tmp/cqld-bench.lock bench/paxos-hot.sh [N] [ROUNDS]
#
# Nodes listen on NET.1-3 (NET defaults to 127.0.12), ports 19242 and
# 17200, and are stopped by their PIDs at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-1000}
rounds=${2:-6}
net=${NET:-127.0.12}
work=$(mktemp -d "${TMPDIR:-/tmp}/cqld-paxos-hot.XXXXXX")
. bench/nodes.sh
trap 'stop_nodes; rm -rf "$work"' EXIT
go build -o "$work/cqld" ./cmd/cqld
go build -o "$work/cqlstress" ./cmd/cqlstress
for i in 1 2 3; do
	start_cqld "$work/cqld" "$work/n$i" paxos-hot "$net.$i" 19242 17200 "$net.1:17200" "prometheus_port: 0
internode_injected_delay: 10ms"
	wait_cql "$net.$i" 19242 "$work/n$i"
done
sleep 3
echo "# bench/paxos-hot.sh n=$n rounds=$rounds, $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%F), $(git rev-parse --short HEAD)"
for r in $(seq "$rounds"); do
	"$work/cqlstress" cas "n=$n" cl=ANY -serial-cl SERIAL -rate threads=1 -pop 'dist=uniform(1..5)' \
		-node "$net.1:19242,$net.2:19242,$net.3:19242" -schema 'replication(factor=3)' -max-errors "$n" -json "$work/r.json" > /dev/null 2>&1
	python3 - "$work/r.json" "$r" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))['steps'][0]
l = s['total']['latency']
print(f"round {sys.argv[2]}: ops {s['total']['ops']} p50 {l['median_ms']:.1f} p75 {l['p75_ms']:.1f} p99 {l['p99_ms']:.1f} timeouts {s['timeouts']} errors {s['total']['errors']}")
PY
done
