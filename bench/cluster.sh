#!/usr/bin/env bash
# RF 3 at QUORUM on a three-node cluster beside RF 1 on one node, on this
# machine, in one run: writes then reads at 1, 16 and 64 client threads,
# ops/s, p50/p99 as cqlstress reports them, and the server CPU per
# operation summed over the nodes (three nodes share the cores here, so
# ops/s alone says little). Run it under the shared locks:
#
#   flock /tmp/cqld-bench.lock flock /tmp/cqld-heavy.lock bench/cluster.sh [STEP] [DELAY]
#
# STEP is each run's duration (default 5s); DELAY, when set (e.g. 10ms),
# is internode_injected_delay for the cluster. Nodes listen on
# 127.0.0.1-3 only, on ports 19042 (CQL) and 17000 (internode), and are
# stopped by their PIDs at the end. The raw output is the table printed.
set -euo pipefail
cd "$(dirname "$0")/.."
step=${1:-5s}
delay=${2:-0s}
work=$(mktemp -d "${TMPDIR:-/tmp}/cqld-cluster-bench.XXXXXX")
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
	rm -rf "$work"
}
trap cleanup EXIT
go build -o "$work/cqld" ./cmd/cqld
go build -o "$work/cqlstress" ./cmd/cqlstress

# cpu prints the CPU seconds (user+system) the given PIDs have used.
cpu() {
	local ticks=0 hz
	hz=$(getconf CLK_TCK)
	for p in "$@"; do
		read -r -a f < "/proc/$p/stat"
		ticks=$((ticks + f[13] + f[14]))
	done
	echo "scale=4; $ticks / $hz" | bc
}

# start_node I SEED: node I on 127.0.0.I, its files under $work/nI.
start_node() {
	local i=$1 dir="$work/n$1"
	mkdir -p "$dir"
	cat > "$dir/cassandra.yaml" <<YAML
cluster_name: bench
listen_address: 127.0.0.$i
rpc_address: 127.0.0.$i
native_transport_port: 19042
storage_port: 17000
prometheus_port: 0
internode_injected_delay: $delay
data_file_directories: [$dir/data]
commitlog_directory: $dir/commitlog
saved_caches_directory: $dir/saved_caches
hints_directory: $dir/hints
seed_provider:
  - class_name: org.apache.cassandra.locator.SimpleSeedProvider
    parameters:
      - seeds: "127.0.0.1:17000"
YAML
	"$work/cqld" -config "$dir/cassandra.yaml" 2> "$dir/log" &
	pids+=($!)
	for _ in $(seq 600); do
		(echo > "/dev/tcp/127.0.0.$i/19042") 2>/dev/null && return 0
		sleep 0.05
	done
	echo "node $i did not start:" >&2; cat "$dir/log" >&2; exit 1
}

stop_all() {
	for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
	pids=()
	rm -rf "$work"/n*
}

# run LABEL NODES RF CL: writes then reads at each thread count.
run() {
	local label=$1 nodes=$2 rf=$3 cl=$4
	for op in write read; do
		for threads in 1 16 64; do
			local before after ops
			before=$(cpu "${pids[@]}")
			out=$("$work/cqlstress" "$op" "duration=$step" -rate "threads=$threads" -cl "$cl" \
				-schema "replication(factor=$rf)" -pop "seq=1..100000" -node "$(echo "$nodes" | sed 's/\([0-9.]*\)/\1:19042/g')" -json "$work/r.json" 2>&1) || {
				echo "$out" >&2; exit 1; }
			after=$(cpu "${pids[@]}")
			ops=$(python3 -c "import json; s=json.load(open('$work/r.json'))['steps'][0]['total']; print(s['ops'], s['errors'], round(s['op_rate']), s['latency']['median_ms'], s['latency']['p99_ms'])")
			read -r n errs rate p50 p99 <<< "$ops"
			printf '%-22s %-5s %4d  ops %-8s errors %-4s ops/s %-9s p50 %-6s ms p99 %-6s ms cpu/op %s us\n' \
				"$label" "$op" "$threads" "$n" "$errs" "$rate" "$p50" "$p99" \
				"$(echo "scale=1; ($after - $before) * 1000000 / $n" | bc)"
		done
	done
}

echo "# bench/cluster.sh step=$step internode_injected_delay=$delay, $(nproc) CPUs, $(date -u +%F)"
start_node 1
run "1 node, RF 1, ONE" 127.0.0.1 1 ONE
stop_all
start_node 1; start_node 2; start_node 3
sleep 3 # gossip: every node sees the others up
run "3 nodes, RF 3, QUORUM" 127.0.0.1,127.0.0.2,127.0.0.3 3 QUORUM
