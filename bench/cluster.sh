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
# is internode_injected_delay for the clusters. The environment may set:
#   NET=127.0.15     the nodes' addresses, NET.1 to NET.4 (default 127.0.0)
#   CONFIGS="single rf3 nonreplica"   what to run (default "single rf3"):
#     single      one node, RF 1, ONE, gocql token aware
#     rf3         three nodes, RF 3, QUORUM, gocql token aware
#     nonreplica  four nodes, node 4 alone in data center dc2 and the
#                 keyspace on dc1 (RF 3), QUORUM: lean clients (one
#                 connection per thread, no routing) on node 1, a replica
#                 of every key, then on node 4, a replica of none
#   BASE=/path/to/cqld  a second build: every configuration runs with it
#                 first and then with this tree's, side by side
#   CQLD=/path/to/cqld  this tree's build, made beforehand (by default the
#                 script builds it when it starts)
#   ROUNDS=N      run that pair N times (default 1)
#   PROFILE=DIR   save a 4 s CPU profile of every node during each
#                 64-thread step, as DIR/<build>-<config>-<op>-nodeI.pprof
#                 (go tool pprof -top cqld DIR/*.pprof)
# Nodes listen on ports 19042 (CQL), 17000 (internode) and 19180
# (metrics, profiles) and are stopped by their PIDs at the end. The raw
# output is the table printed.
set -euo pipefail
cd "$(dirname "$0")/.."
step=${1:-5s}
delay=${2:-0s}
net=${NET:-127.0.0}
configs=${CONFIGS:-single rf3}
rounds=${ROUNDS:-1}
work=$(mktemp -d "${TMPDIR:-/tmp}/cqld-cluster-bench.XXXXXX")
. bench/nodes.sh
cleanup() {
	stop_nodes
	rm -rf "$work"
}
trap cleanup EXIT
if [ -n "${CQLD:-}" ]; then cp "$CQLD" "$work/cqld"; else go build -o "$work/cqld" ./cmd/cqld; fi
go build -o "$work/cqlstress" ./cmd/cqlstress
builds=("tree=$work/cqld")
if [ -n "${BASE:-}" ]; then builds=("base=$BASE" "${builds[@]}"); fi
if [ -n "${PROFILE:-}" ]; then mkdir -p "$PROFILE"; fi

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

# start_node BIN I [DC]: node I on $net.I, its files under $work/nI.
start_node() {
	local bin=$1 i=$2 dc=${3:-dc1}
	start_cqld "$bin" "$work/n$i" bench "$net.$i" 19042 17000 "$net.1:17000" "prometheus_address: $net.$i
prometheus_port: 19180
internode_injected_delay: $delay
data_center: $dc"
	wait_cql "$net.$i" 19042 "$work/n$i"
}

stop_all() {
	stop_nodes
	rm -rf "$work"/n*
}

# profile NAME NODES...: CPU profiles of the nodes for 4 s, in the
# background; profiled waits for them.
profs=()
profile() {
	local name=$1; shift
	[ -n "${PROFILE:-}" ] || return 0
	for i in "$@"; do
		curl -s -o "$PROFILE/$name-node$i.pprof" "http://$net.$i:19180/debug/pprof/profile?seconds=4" &
		profs+=($!)
	done
}
profiled() {
	for p in "${profs[@]}"; do wait "$p" || true; done
	profs=()
}

# run LABEL NODES RF CL THREADS [MODE]: writes then reads at each thread
# count, through the nodes listed (a comma-separated list of indexes).
run() {
	local label=$1 nodes=$2 schema=$3 cl=$4 threadlist=$5 mode=${6:-prepared}
	local hosts
	hosts=$(echo "$nodes" | tr ',' '\n' | sed "s/^/$net./; s/\$/:19042/" | paste -sd,)
	for op in write read; do
		for threads in $threadlist; do
			local before after ops
			if [ "$threads" = 64 ]; then profile "$build-$config-$op" $(seq "${#pids[@]}"); fi
			before=$(cpu "${pids[@]}")
			out=$("$work/cqlstress" "$op" "duration=$step" -rate "threads=$threads" -cl "$cl" -mode "$mode" \
				-schema "$schema" -pop "seq=1..100000" -node "$hosts" -json "$work/r.json" 2>&1) || {
				echo "$out" >&2; exit 1; }
			after=$(cpu "${pids[@]}")
			profiled
			ops=$(python3 -c "import json; s=json.load(open('$work/r.json'))['steps'][0]['total']; print(s['ops'], s['errors'], round(s['op_rate']), s['latency']['median_ms'], s['latency']['p99_ms'])")
			read -r n errs rate p50 p99 <<< "$ops"
			printf '%-5s %-34s %-5s %4d  ops %-8s errors %-4s ops/s %-9s p50 %-6s ms p99 %-6s ms cpu/op %s us\n' \
				"$build" "$label" "$op" "$threads" "$n" "$errs" "$rate" "$p50" "$p99" \
				"$(echo "scale=1; ($after - $before) * 1000000 / $n" | bc)"
		done
	done
}

echo "# bench/cluster.sh step=$step internode_injected_delay=$delay configs=\"$configs\" rounds=$rounds builds=\"${builds[*]%%=*}\", $(nproc) CPUs, $(date -u +%F)"
for _ in $(seq "$rounds"); do
	for config in $configs; do
		for b in "${builds[@]}"; do
			build=${b%%=*} bin=${b#*=}
			case $config in
			single)
				start_node "$bin" 1
				run "1 node, RF 1, ONE" 1 "replication(factor=1)" ONE "1 16 64"
				;;
			rf3)
				start_node "$bin" 1; start_node "$bin" 2; start_node "$bin" 3
				sleep 3 # gossip: every node sees the others up
				run "3 nodes, RF 3, QUORUM" 1,2,3 "replication(factor=3)" QUORUM "1 16 64"
				;;
			nonreplica)
				start_node "$bin" 1; start_node "$bin" 2; start_node "$bin" 3; start_node "$bin" 4 dc2
				sleep 3
				run "4 nodes, dc1 RF 3, QUORUM, via replica" 1 "replication(strategy=NetworkTopologyStrategy,dc1=3)" QUORUM "1 16" lean
				run "4 nodes, dc1 RF 3, QUORUM, via non-replica" 4 "replication(strategy=NetworkTopologyStrategy,dc1=3)" QUORUM "1 16" lean
				;;
			*) echo "unknown configuration $config" >&2; exit 2 ;;
			esac
			stop_all
		done
	done
done
