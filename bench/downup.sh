#!/usr/bin/env bash
# How long a three-node cluster of cqld processes takes to hold a node
# DOWN and then UP again, as nodetool status through node 1 shows it
# (DN, then UN): node 3 is paused (SIGSTOP: a process that stops
# answering, as a machine lost or a long stall) and resumed (SIGCONT), then
# killed -9 and restarted on its data. Times are from the signal (or the
# restart) to node 1's status changing, polled every 100 ms. Run it under
# the shared locks:
#
#   flock /tmp/cqld-bench.lock flock /tmp/cqld-heavy.lock bench/downup.sh [ROUNDS]
#
# The environment may set NET (the nodes' addresses NET.1 to NET.3,
# default 127.0.0) and CQLD (a build made beforehand). Nodes listen on
# ports 19042 (CQL), 17000 (internode) and 19180 (metrics) and are stopped
# by their PIDs at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}
net=${NET:-127.0.0}
work=$(mktemp -d "${TMPDIR:-/tmp}/cqld-downup.XXXXXX")
. bench/nodes.sh
cleanup() {
	for p in "${pids[@]}"; do kill -CONT "$p" 2>/dev/null || true; done
	stop_nodes
	rm -rf "$work"
}
trap cleanup EXIT
if [ -n "${CQLD:-}" ]; then cp "$CQLD" "$work/cqld"; else go build -o "$work/cqld" ./cmd/cqld; fi

start_node() {
	local i=$1
	start_cqld "$work/cqld" "$work/n$i" downup "$net.$i" 19042 17000 "$net.1:17000" "prometheus_address: $net.$i
prometheus_port: 19180
num_tokens: 8"
	wait_cql "$net.$i" 19042 "$work/n$i"
}

# state prints what node 1's nodetool status says of node 3: UN, DN, ...
state() {
	"$work/cqld" nodetool -h "$net.1" -p 19180 status 2>/dev/null | awk -v a="$net.3" '$2 == a { print $1 }'
}

# until_state WANT prints the seconds until node 3 is WANT on node 1,
# from the time (date +%s.%N) given.
until_state() {
	local want=$1 from=$2
	for _ in $(seq 1200); do
		if [ "$(state)" = "$want" ]; then
			echo "scale=2; ($(date +%s.%N) - $from) / 1" | bc
			return 0
		fi
		sleep 0.1
	done
	echo "node 3 not $want after 120 s" >&2
	exit 1
}

start_node 1; start_node 2; start_node 3
until_state UN "$(date +%s.%N)" > /dev/null
echo "# bench/downup.sh rounds=$rounds, memberlist's LAN timing, $(nproc) CPUs, $(date -u +%F), commit $(git rev-parse --short HEAD)"
for r in $(seq "$rounds"); do
	p=${pids[2]}
	t=$(date +%s.%N); kill -STOP "$p"; down=$(until_state DN "$t")
	t=$(date +%s.%N); kill -CONT "$p"; up=$(until_state UN "$t")
	echo "round $r  SIGSTOP: DN after $down s  SIGCONT: UN after $up s"
	t=$(date +%s.%N); kill -KILL "$p"; wait "$p" 2>/dev/null || true; down=$(until_state DN "$t")
	unset 'pids[2]'; pids=("${pids[@]}")
	t=$(date +%s.%N); start_node 3; up=$(until_state UN "$t")
	echo "round $r  kill -9: DN after $down s  restart: UN after $up s (from the process's start)"
done
