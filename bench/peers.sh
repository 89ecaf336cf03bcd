#!/bin/sh
# Measures cqld beside Redis on this machine and prints one table
# (docs/benchmarks/peers.md). Run it under the shared locks:
#
#   flock /tmp/cqld-bench.lock flock /tmp/cqld-heavy.lock bench/peers.sh [-step 5s] [-clients 1,16,64] [-modes periodic,batch,adaptive] [-rotate N]
#
# The work is bench/peers (go doc ./bench/peers): it builds cqld and
# cqlstress, starts Redis and each cqld on 127.0.0.1, and stops each by its
# PID. This wrapper builds it, and stops it (which stops its servers) when
# the script is interrupted.
set -eu
cd "$(dirname "$0")/.."
bin=$(mktemp -d "${TMPDIR:-/tmp}/cqld-peers-bin.XXXXXX")
child=
cleanup() {
	if [ -n "$child" ]; then
		kill -TERM "$child" 2>/dev/null || true
		wait "$child" 2>/dev/null || true
	fi
	rm -rf "$bin"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
go build -o "$bin/peers" ./bench/peers
"$bin/peers" "$@" &
child=$!
status=0
wait "$child" || status=$?
child=
exit "$status"
