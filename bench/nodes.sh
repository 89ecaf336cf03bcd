# Sourced by the bench scripts (cluster.sh, join.sh, paxos.sh): starting
# cqld nodes on this machine and stopping them by their PIDs, kept in
# pids.

pids=()

# start_cqld BIN DIR CLUSTER ADDR CQL_PORT STORAGE_PORT SEED [EXTRA]
# starts a node of cluster CLUSTER listening on ADDR, its configuration
# and files under DIR and its log in DIR/log, with the configuration
# lines EXTRA; its PID goes to pids.
start_cqld() {
	local bin=$1 dir=$2 cluster=$3 addr=$4 cql=$5 storage=$6 seed=$7 extra=${8:-}
	mkdir -p "$dir"
	cat > "$dir/cassandra.yaml" <<YAML
cluster_name: $cluster
listen_address: $addr
rpc_address: $addr
native_transport_port: $cql
storage_port: $storage
data_file_directories: [$dir/data]
commitlog_directory: $dir/commitlog
saved_caches_directory: $dir/saved_caches
hints_directory: $dir/hints
seed_provider:
  - class_name: org.apache.cassandra.locator.SimpleSeedProvider
    parameters:
      - seeds: "$seed"
$extra
YAML
	"$bin" -config "$dir/cassandra.yaml" 2> "$dir/log" &
	pids+=($!)
}

# wait_cql ADDR PORT DIR waits, 30 s at most, until the node started in
# DIR takes CQL connections on ADDR:PORT; past that it prints the node's
# log and exits.
wait_cql() {
	for _ in $(seq 600); do
		(echo > "/dev/tcp/$1/$2") 2>/dev/null && return 0
		sleep 0.05
	done
	echo "the node on $1 did not start:" >&2
	cat "$3/log" >&2
	exit 1
}

# stop_nodes stops every node started, by its PID, and waits for it.
stop_nodes() {
	for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
	pids=()
}
