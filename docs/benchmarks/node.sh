# Sourced by the scripts here that measure one cqld node at a time
# (ab.sh, go-processors.sh, ingest.sh, ingest-profile.sh,
# read-after-write.sh): a node on a fresh folder and ports of its own,
# and the CPU time a process has used.

# start_node DIR CMD... starts CMD (a cqld binary and its flags, perhaps
# behind env) on 127.0.0.1 with its data, commit log, hints and caches
# under DIR and its log in DIR/log, on a random port below the ephemeral
# range (node_port; Prometheus on node_mport, the next one), and waits,
# 10 s at most, until it takes CQL connections. Its PID is node_pid.
start_node() {
	local dir=$1
	shift
	node_port=$((20000 + RANDOM % 10000))
	node_mport=$((node_port + 1))
	"$@" -native_transport_port "$node_port" -prometheus_port "$node_mport" \
		-data_file_directories "$dir/data" -commitlog_directory "$dir/commitlog" \
		-hints_directory "$dir/hints" -saved_caches_directory "$dir/caches" 2>"$dir/log" &
	node_pid=$!
	for _ in $(seq 100); do
		(exec 3<>"/dev/tcp/127.0.0.1/$node_port") 2>/dev/null && return 0
		sleep 0.1
	done
}

# cpu_ticks PID is the user and system time process PID has used, in
# clock ticks (getconf CLK_TCK of them a second).
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
