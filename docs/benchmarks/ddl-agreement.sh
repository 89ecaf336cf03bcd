#!/usr/bin/env bash
# DDL latency and schema agreement on a 3-node cluster, for each binary
# given, one after the other in one run: ddl-agreement.sh N BIN...
# Each cluster runs on 127.0.0.1-3 with ports 19042/17000 and is stopped
# by PID (SIGINT to `cqld cluster`, which stops its nodes).
set -euo pipefail
n=$1; shift
here=$(cd "$(dirname "$0")" && pwd)
for bin in "$@"; do
	dir=$(mktemp -d /tmp/ddl-agreement.XXXXXX)
	"$bin" cluster -n 3 -dir "$dir" -native_transport_port 19042 -storage_port 17000 -prometheus_port 0 >"$dir/out" 2>&1 &
	pid=$!
	for _ in $(seq 60); do grep -q "3 nodes up" "$dir/out" && break; sleep 1; done
	if ! grep -q "3 nodes up" "$dir/out"; then
		echo "$bin: the cluster did not start:" >&2; cat "$dir/out" >&2
		kill -INT "$pid" || true; wait "$pid" || true; exit 1
	fi
	echo "== $bin ($(date -u +%H:%M:%S))"
	/usr/bin/python3 "$here/ddl-agreement.py" 19042 "$n"
	kill -INT "$pid"; wait "$pid" || true
	rm -rf "$dir"
done
