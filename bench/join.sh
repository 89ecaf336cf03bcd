#!/usr/bin/env bash
# Time for a node to join a cluster holding data: two nodes hold GB
# (default 1) gigabytes of rows at replication factor 2 (each node all of
# it), a third node joins and streams the ranges it takes over. Prints the
# load, the join time (process start to NORMAL) with its streaming part,
# the bytes streamed, the streaming rate, the CPU each node spent during
# the join, and, measured in the same run, the ceilings the rate runs
# under: one loopback TCP connection's bulk rate (bench/loopback) and, when
# SHARED_LIMITS names the folder holding fsyncbench/, one writer's 1 MiB
# write + fdatasync rate on the data's file system. Run it under the
# shared locks:
#
#   flock /tmp/cqld-bench.lock flock /tmp/cqld-heavy.lock bench/join.sh
#
# BASE (default 127.0.0) is the address prefix, node i listening on
# BASE.i; ports 19042 (CQL), 17000 (internode), 19180 (metrics). Nodes run
# with the default commit log sync (adaptive) and are stopped by their
# PIDs at the end. The raw output is what it prints.
set -euo pipefail
cd "$(dirname "$0")/.."
base=${BASE:-127.0.0}
gb=${GB:-1}
work=$(mktemp -d "${TMPDIR:-/tmp}/cqld-join-bench.XXXXXX")
. bench/nodes.sh
cleanup() {
	stop_nodes
	rm -rf "$work"
}
trap cleanup EXIT
go build -o "$work/cqld" ./cmd/cqld
go build -o "$work/cqlstress" ./cmd/cqlstress
go build -o "$work/loopback" ./bench/loopback

# cpu prints the CPU seconds (user+system) process $1 has used.
cpu() {
	local f hz
	hz=$(getconf CLK_TCK)
	read -r -a f < "/proc/$1/stat"
	echo "scale=2; (${f[13]} + ${f[14]}) / $hz" | bc
}

# start_node I: node I on $base.I, its files under $work/nI.
start_node() {
	start_cqld "$work/cqld" "$work/n$1" join-bench "$base.$1" 19042 17000 "$base.1:17000" "prometheus_address: $base.$1
prometheus_port: 19180"
}

# netstats I prints node I's /nodetool/netstats.
netstats() { curl -sf "http://$base.$1:19180/nodetool/netstats" || true; }

# wait_normal I waits until node I says it is NORMAL.
wait_normal() {
	for _ in $(seq 1 36000); do
		if netstats "$1" | grep -q '"mode":"NORMAL"'; then return 0; fi
		sleep 0.1
	done
	echo "node $1 never became NORMAL" >&2
	tail -20 "$work/n$1/log" >&2
	exit 1
}

start_node 1
wait_normal 1
start_node 2
wait_normal 2

# Five columns of 2 KiB per row: 10 KiB of values.
rows=$(echo "$gb * 1000000000 / 10240" | bc)
echo "== load: $rows rows of 5 x 2048-byte values ($gb GB of values) at RF 2 on two nodes"
"$work/cqlstress" write n="$rows" -col 'size=fixed(2048)' -schema 'replication(factor=2)' \
	-rate threads=32 -mode lean -cl ONE -node "$base.1:19042,$base.2:19042" -log interval=10s | tail -12
"$work/cqld" nodetool -h "$base.1" -p 19180 status
echo "on disk (data, commit log):"
du -sh "$work"/n1/data "$work"/n1/commitlog "$work"/n2/data "$work"/n2/commitlog 2>/dev/null || true # files come and go with compactions

echo "== join: node 3 starts, streams, serves, becomes NORMAL"
c1=$(cpu "${pids[0]}")
c2=$(cpu "${pids[1]}")
t0=$(date +%s.%N)
start_node 3
wait_normal 3
t1=$(date +%s.%N)
c3=$(cpu "${pids[2]}")
d1=$(echo "$(cpu "${pids[0]}") - $c1" | bc)
d2=$(echo "$(cpu "${pids[1]}") - $c2" | bc)
ns=$(netstats 3)
echo "netstats of node 3: $ns"
"$work/cqld" nodetool -h "$base.3" -p 19180 netstats
"$work/cqld" nodetool -h "$base.1" -p 19180 status
bytes=$(echo "$ns" | sed -E 's/.*"bytes":([0-9]+).*/\1/')
started=$(echo "$ns" | sed -E 's/.*"streaming":"([^"]+)".*/\1/')
finished=$(echo "$ns" | sed -E 's/.*"finished":"([^"]+)".*/\1/')
stream_s=$(echo "$(date -d "$finished" +%s.%N) - $(date -d "$started" +%s.%N)" | bc)
join_s=$(echo "$t1 - $t0" | bc)
rate=$(echo "scale=1; $bytes / $stream_s / 1000000" | bc)
du -sh "$work"/n3/data "$work"/n3/commitlog 2>/dev/null || true
printf 'join time (start to NORMAL): %.1f s, of which streaming %.1f s\n' "$join_s" "$stream_s"
printf 'streamed: %d bytes (%.0f MB) at %s MB/s\n' "$bytes" "$(echo "$bytes / 1000000" | bc)" "$rate"
printf 'CPU during the join: node1 %s s, node2 %s s, node3 %s s\n' "$d1" "$d2" "$c3"

echo "== ceilings, same run"
lb=$("$work/loopback" -addr "$base.1:0" -dur 3s)
echo "$lb"
lbrate=$(echo "$lb" | sed -E 's/.* = ([0-9]+) MB\/s/\1/')
printf 'streaming rate / loopback bulk rate: %s\n' "$(echo "scale=3; $rate / $lbrate" | bc)"
if [ -n "${SHARED_LIMITS:-}" ] && [ -d "$SHARED_LIMITS/fsyncbench" ]; then
	(cd "$SHARED_LIMITS" && go run ./fsyncbench -mode single -sizes 1048576 -dur 3s -dir "$work")
fi
