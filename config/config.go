package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/netip"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// Config is one node's configuration. The yaml tags are cassandra.yaml's key
// names, so yaml.Marshal of a Config writes a file that Load reads back.
type Config struct {
	// ClusterName must be the same on every node of a cluster.
	ClusterName string `yaml:"cluster_name"`

	// ListenAddress is where other nodes reach this one, on StoragePort.
	ListenAddress string `yaml:"listen_address"`
	// RPCAddress is where clients connect, on NativeTransportPort.
	RPCAddress string `yaml:"rpc_address"`
	// BroadcastAddress is the internode address this node gives its peers
	// (broadcast_address:storage_port). Empty means ListenAddress.
	BroadcastAddress string `yaml:"broadcast_address"`
	// BroadcastRPCAddress is the client address this node advertises
	// (system.peers, topology events). Empty means RPCAddress.
	BroadcastRPCAddress string `yaml:"broadcast_rpc_address"`
	NativeTransportPort int    `yaml:"native_transport_port"`
	StoragePort         int    `yaml:"storage_port"`

	DataFileDirectories  []string `yaml:"data_file_directories"`
	CommitlogDirectory   string   `yaml:"commitlog_directory"`
	SavedCachesDirectory string   `yaml:"saved_caches_directory"`
	HintsDirectory       string   `yaml:"hints_directory"`

	// CommitlogSync is periodic, batch, group or adaptive.
	CommitlogSync string `yaml:"commitlog_sync"`
	// CommitlogSyncPeriod is how often periodic mode syncs.
	CommitlogSyncPeriod Duration `yaml:"commitlog_sync_period"`
	// CommitlogSyncGroupWindow is how long group mode gathers writes
	// before one sync.
	CommitlogSyncGroupWindow Duration `yaml:"commitlog_sync_group_window"`
	CommitlogSegmentSize     DataSize `yaml:"commitlog_segment_size"`
	// CommitlogTotalSpace caps the commit log on disk; at least one segment.
	CommitlogTotalSpace DataSize `yaml:"commitlog_total_space"`
	// CommitlogIgnoreReplayErrors makes start-up skip a corrupt record in
	// the middle of a commit log segment instead of stopping (Cassandra's
	// -Dcassandra.commitlog.ignorereplayerrors=true).
	CommitlogIgnoreReplayErrors bool `yaml:"commitlog_ignore_replay_errors"`
	// CommitFailurePolicy is stop, stop_commit, die or ignore.
	CommitFailurePolicy string `yaml:"commit_failure_policy"`
	// DiskFailurePolicy is die, stop_paranoid, stop, best_effort or ignore.
	DiskFailurePolicy string `yaml:"disk_failure_policy"`

	// Authenticator is AllowAllAuthenticator or PasswordAuthenticator;
	// Validate turns org.apache.cassandra.auth.X into X.
	Authenticator string `yaml:"authenticator"`
	// Authorizer is AllowAllAuthorizer or CassandraAuthorizer, and
	// RoleManager CassandraRoleManager (the only one); Validate shortens
	// their class names too.
	Authorizer  string `yaml:"authorizer"`
	RoleManager string `yaml:"role_manager"`
	// The caches of roles and permissions, by Cassandra's keys. cqld's
	// are invalidated by the metadata log entry that changes a role or a
	// permission, on every node as it applies it, never by time: the
	// validity periods and update intervals only turn the cache off when
	// roles_validity and permissions_validity are both 0s, and the
	// *_cache_max_entries bound it. The credentials keys are accepted:
	// every login checks its password's hash.
	RolesValidity              Duration `yaml:"roles_validity"`
	RolesUpdateInterval        Duration `yaml:"roles_update_interval"`
	RolesCacheMaxEntries       int      `yaml:"roles_cache_max_entries"`
	PermissionsValidity        Duration `yaml:"permissions_validity"`
	PermissionsUpdateInterval  Duration `yaml:"permissions_update_interval"`
	PermissionsCacheMaxEntries int      `yaml:"permissions_cache_max_entries"`
	CredentialsValidity        Duration `yaml:"credentials_validity"`
	CredentialsUpdateInterval  Duration `yaml:"credentials_update_interval"`
	CredentialsCacheMaxEntries int      `yaml:"credentials_cache_max_entries"`

	NumTokens int `yaml:"num_tokens"`
	// AllocateTokensForLocalReplicationFactor is the replication factor a
	// joining node balances its tokens for, in its data center.
	AllocateTokensForLocalReplicationFactor int `yaml:"allocate_tokens_for_local_replication_factor"`
	// EndpointSnitch is SimpleSnitch (DataCenter and Rack as set here) or
	// GossipingPropertyFileSnitch (dc and rack from
	// cassandra-rackdc.properties: ReadSnitchProperties).
	EndpointSnitch string `yaml:"endpoint_snitch"`
	// AutoBootstrap makes a new node that is not a seed stream the data of
	// the ranges it takes over before it serves them.
	AutoBootstrap bool `yaml:"auto_bootstrap"`
	// DataCenter and Rack are cqld's own keys; Cassandra reads them as dc
	// and rack from cassandra-rackdc.properties.
	DataCenter   string       `yaml:"data_center"`
	Rack         string       `yaml:"rack"`
	SeedProvider SeedProvider `yaml:"seed_provider"`

	// HintedHandoffEnabled keeps writes for replicas that are down or slow
	// in HintsDirectory and replays them when the replica is back, as
	// long as it has been down less than MaxHintWindow.
	HintedHandoffEnabled bool     `yaml:"hinted_handoff_enabled"`
	MaxHintWindow        Duration `yaml:"max_hint_window"`
	// HintsFlushPeriod is how often buffered hints are written and synced;
	// MaxHintsFileSize is when a target's hint file is rotated;
	// HintedHandoffThrottle bounds the replay rate per second.
	HintsFlushPeriod      Duration `yaml:"hints_flush_period"`
	MaxHintsFileSize      DataSize `yaml:"max_hints_file_size"`
	HintedHandoffThrottle DataSize `yaml:"hinted_handoff_throttle"`
	// BatchlogReplayThrottle bounds the bytes per second of logged
	// batches the cluster replays, shared among its nodes.
	BatchlogReplayThrottle DataSize `yaml:"batchlog_replay_throttle"`
	// InternodeInjectedDelay (cqld's own, for tests and benchmarks) holds
	// every internode message this node sends for this long, so nodes on
	// one machine see a real round-trip time. Logged as a warning.
	InternodeInjectedDelay Duration `yaml:"internode_injected_delay"`
	// TestBatchlogKillAfterStore (cqld's own, for tests only) makes the
	// node kill itself (SIGKILL) when a logged batch it coordinates is in
	// the batchlog and none of its writes is sent, so a test can see
	// another node replay it. Logged as an error at start-up.
	TestBatchlogKillAfterStore bool `yaml:"test_batchlog_kill_after_store"`
	// InternodeFaultInjection (cqld's own, for tests only) serves
	// /debug/internode/partition and /debug/internode/heal on the metrics
	// endpoint, to loopback clients, which cut this node off from chosen
	// peers (every internode message to and from them dropped). Logged as
	// a warning.
	InternodeFaultInjection bool `yaml:"internode_fault_injection"`

	// CASContentionTimeout is how long a lightweight transaction retries
	// the Paxos rounds it loses to other proposers before it answers a
	// WriteTimeout (ReadTimeout for a SERIAL read).
	CASContentionTimeout Duration `yaml:"cas_contention_timeout"`
	// PaxosVariant is v2, the prepare and the read in one round trip and
	// one round trip for a coordinator's repeated transactions on a
	// partition; v2_no_repeat, the same without the repeated ones'; or
	// v1, Cassandra 3.0's four round trips, kept as a benchmark's
	// baseline.
	PaxosVariant string `yaml:"paxos_variant"`
	// PaxosUnsafeSkipInProgress (cqld's own, for tests alone) skips
	// finishing the proposals a Paxos round finds in progress: a broken
	// Paxos that loses acknowledged writes, for showing that the
	// linearizability test catches it. Logged as an error at start.
	PaxosUnsafeSkipInProgress bool `yaml:"paxos_unsafe_skip_in_progress"`

	// NativeTransportMaxFrameSize bounds one CQL frame, 1KiB to 256MiB.
	NativeTransportMaxFrameSize DataSize `yaml:"native_transport_max_frame_size"`
	// NativeTransportMaxThreads is the size of the request worker pool.
	NativeTransportMaxThreads int `yaml:"native_transport_max_threads"`
	// NativeTransportMaxRequestsPerConnection (cqld's own) is how many
	// requests one connection may have in flight before it gets OVERLOADED.
	NativeTransportMaxRequestsPerConnection int `yaml:"native_transport_max_requests_per_connection"`
	// NativeTransportMaxQueuedRequests (cqld's own) is how many requests the
	// node holds, queued or running, before it answers OVERLOADED.
	NativeTransportMaxQueuedRequests int `yaml:"native_transport_max_queued_requests"`
	// NativeTransportMaxRunningRequestsPerConnection (cqld's own) is how
	// many requests of one connection the workers run at once; 0 means
	// half of NativeTransportMaxThreads.
	NativeTransportMaxRunningRequestsPerConnection int `yaml:"native_transport_max_running_requests_per_connection"`
	// NativeTransportEventLoops (cqld's own) is the number of network event
	// loops; 0 means half the CPUs (at least one).
	NativeTransportEventLoops int `yaml:"native_transport_event_loops"`
	// NativeTransportIdleTimeout closes connections idle this long; 0 never.
	NativeTransportIdleTimeout Duration `yaml:"native_transport_idle_timeout"`
	// NativeTransportMaxConcurrentConnections and
	// NativeTransportMaxConcurrentConnectionsPerIP cap the client
	// connections open at once, in all and from one address; -1 is no cap.
	NativeTransportMaxConcurrentConnections      int `yaml:"native_transport_max_concurrent_connections"`
	NativeTransportMaxConcurrentConnectionsPerIP int `yaml:"native_transport_max_concurrent_connections_per_ip"`
	// NativeTransportMaxRequestDataInFlight and ...PerIP bound the bytes
	// of requests held (frames being read, waiting or executing),
	// node-wide and per client address; a frame past them gets OVERLOADED.
	// Either is at least one frame of NativeTransportMaxFrameSize.
	NativeTransportMaxRequestDataInFlight      DataSize `yaml:"native_transport_max_request_data_in_flight"`
	NativeTransportMaxRequestDataInFlightPerIP DataSize `yaml:"native_transport_max_request_data_in_flight_per_ip"`
	// NativeTransportReceiveQueueCapacity is how much a paused connection
	// may send before it is closed.
	NativeTransportReceiveQueueCapacity DataSize `yaml:"native_transport_receive_queue_capacity"`
	// NativeTransportSendQueueCapacity and
	// NativeTransportMaxResponseDataInFlight (cqld's own) bound the answers
	// queued and not yet taken by the sockets, per connection and
	// node-wide: past them a connection is not read until its answers
	// drain.
	NativeTransportSendQueueCapacity       DataSize `yaml:"native_transport_send_queue_capacity"`
	NativeTransportMaxResponseDataInFlight DataSize `yaml:"native_transport_max_response_data_in_flight"`
	// NativeTransportSocketSendBufferSize (cqld's own) is the clients'
	// sockets' kernel send buffer (SO_SNDBUF); 0 leaves it to the kernel,
	// which grows it to net.ipv4.tcp_wmem's maximum (4MiB on Linux) for
	// a client that does not read, before the send queue above sees
	// anything.
	NativeTransportSocketSendBufferSize DataSize `yaml:"native_transport_socket_send_buffer_size"`
	// NativeTransportHandshakeTimeout and NativeTransportFrameTimeout
	// (cqld's own) close a connection that has not sent STARTUP this long
	// after connecting, or has begun a frame and not finished it in this
	// long; 0 never.
	NativeTransportHandshakeTimeout Duration `yaml:"native_transport_handshake_timeout"`
	NativeTransportFrameTimeout     Duration `yaml:"native_transport_frame_timeout"`
	PreparedStatementsCacheSize     DataSize `yaml:"prepared_statements_cache_size"`

	// A batch of several partitions whose data is bigger than
	// BatchSizeWarnThreshold is answered with a client warning, and one
	// bigger than BatchSizeFailThreshold is refused; an unlogged batch of
	// more than UnloggedBatchAcrossPartitionsWarnThreshold partitions is
	// answered with a warning. As in Cassandra.
	BatchSizeWarnThreshold                     DataSize `yaml:"batch_size_warn_threshold"`
	BatchSizeFailThreshold                     DataSize `yaml:"batch_size_fail_threshold"`
	UnloggedBatchAcrossPartitionsWarnThreshold int      `yaml:"unlogged_batch_across_partitions_warn_threshold"`

	// A read that meets more tombstones than TombstoneWarnThreshold is
	// answered with a client warning and logged; one that meets more
	// than TombstoneFailureThreshold fails with READ_FAILURE. As in
	// Cassandra.
	TombstoneWarnThreshold    int `yaml:"tombstone_warn_threshold"`
	TombstoneFailureThreshold int `yaml:"tombstone_failure_threshold"`
	// User-defined functions run only when both are true (4.0's names:
	// enable_user_defined_functions, enable_scripted_user_defined_functions;
	// cqld runs JavaScript bodies alone). A call running longer than the
	// warn timeout is answered with a client warning; one running longer
	// than the fail timeout is stopped and fails with FUNCTION_FAILURE.
	UserDefinedFunctionsEnabled         bool     `yaml:"user_defined_functions_enabled"`
	ScriptedUserDefinedFunctionsEnabled bool     `yaml:"scripted_user_defined_functions_enabled"`
	UserDefinedFunctionsWarnTimeout     Duration `yaml:"user_defined_functions_warn_timeout"`
	UserDefinedFunctionsFailTimeout     Duration `yaml:"user_defined_functions_fail_timeout"`

	// TraceTypeQueryTTL is how long a traced request's session and events
	// stay in system_traces (4.0's tracetype_query_ttl, in seconds).
	// TraceProbability is the share of requests traced though their
	// client did not ask, what Cassandra sets with nodetool
	// settraceprobability (cqld has no JMX: it is a key).
	TraceTypeQueryTTL Duration `yaml:"trace_type_query_ttl"`
	TraceProbability  float64  `yaml:"trace_probability"`

	// The deadlines of requests, by kind: reads of one partition (or of
	// an IN list of them), writes (batches and lightweight transactions
	// included), reads of token ranges, and everything else. A request
	// past its deadline answers READ_TIMEOUT or WRITE_TIMEOUT.
	ReadRequestTimeout  Duration `yaml:"read_request_timeout"`
	WriteRequestTimeout Duration `yaml:"write_request_timeout"`
	RangeRequestTimeout Duration `yaml:"range_request_timeout"`
	// TruncateRequestTimeout bounds a TRUNCATE, which every replica must
	// acknowledge.
	TruncateRequestTimeout Duration `yaml:"truncate_request_timeout"`
	RequestTimeout         Duration `yaml:"request_timeout"`

	// ClientEncryptionOptions is TLS for clients; NativeTransportPortSSL,
	// when set (not 0) and not NativeTransportPort, is a port of its own
	// for TLS clients, the main port then staying plaintext.
	ClientEncryptionOptions ClientEncryptionOptions `yaml:"client_encryption_options"`
	NativeTransportPortSSL  int                     `yaml:"native_transport_port_ssl"`
	// ServerEncryptionOptions is TLS between nodes, on StoragePort.
	ServerEncryptionOptions ServerEncryptionOptions `yaml:"server_encryption_options"`

	PrometheusAddress string `yaml:"prometheus_address"`
	// PrometheusPort serves /metrics; 0 turns the endpoint off.
	PrometheusPort int `yaml:"prometheus_port"`
}

// SeedProvider is the seed_provider key: the class that finds the seed nodes
// a node first contacts, and its parameters. cassandra.yaml writes it as a
// one-entry list whose parameters are a one-entry list of maps:
//
//	seed_provider:
//	  - class_name: org.apache.cassandra.locator.SimpleSeedProvider
//	    parameters:
//	      - seeds: "127.0.0.1:7000"
//
// SeedProvider holds the same thing without the one-entry lists.
type SeedProvider struct {
	ClassName  string
	Parameters map[string]string
}

// Default returns the configuration a node runs with when it has no file.
func Default() Config {
	return Config{
		ClusterName:                             "Test Cluster",
		ListenAddress:                           "127.0.0.1",
		RPCAddress:                              "127.0.0.1",
		NativeTransportPort:                     9042,
		StoragePort:                             7000,
		DataFileDirectories:                     []string{"data/data"},
		CommitlogDirectory:                      "data/commitlog",
		SavedCachesDirectory:                    "data/saved_caches",
		HintsDirectory:                          "data/hints",
		CommitlogSync:                           "adaptive",
		CommitlogSyncPeriod:                     Duration{10 * time.Second},
		CommitlogSyncGroupWindow:                Duration{15 * time.Millisecond},
		CommitlogSegmentSize:                    32 * MiB,
		CommitlogTotalSpace:                     8192 * MiB,
		CommitFailurePolicy:                     "stop",
		DiskFailurePolicy:                       "stop",
		Authenticator:                           "AllowAllAuthenticator",
		Authorizer:                              "AllowAllAuthorizer",
		RoleManager:                             "CassandraRoleManager",
		RolesValidity:                           Duration{2 * time.Second},
		RolesUpdateInterval:                     Duration{2 * time.Second},
		RolesCacheMaxEntries:                    1000,
		PermissionsValidity:                     Duration{2 * time.Second},
		PermissionsUpdateInterval:               Duration{2 * time.Second},
		PermissionsCacheMaxEntries:              1000,
		CredentialsValidity:                     Duration{2 * time.Second},
		CredentialsUpdateInterval:               Duration{2 * time.Second},
		CredentialsCacheMaxEntries:              1000,
		NumTokens:                               16,
		AllocateTokensForLocalReplicationFactor: 3,
		HintedHandoffEnabled:                    true,
		MaxHintWindow:                           Duration{3 * time.Hour},
		HintsFlushPeriod:                        Duration{10 * time.Second},
		MaxHintsFileSize:                        128 * MiB,
		HintedHandoffThrottle:                   1024 * KiB,
		BatchlogReplayThrottle:                  1024 * KiB,
		EndpointSnitch:                          "SimpleSnitch",
		AutoBootstrap:                           true,
		DataCenter:                              "datacenter1",
		Rack:                                    "rack1",
		// NB: no port, so the default seed is this node at whatever
		// storage_port it is given; cassandra.yaml's "127.0.0.1:7000"
		// would leave a node moved off 7000 trying to join a seed that
		// is not there.
		SeedProvider: SeedProvider{
			ClassName:  "org.apache.cassandra.locator.SimpleSeedProvider",
			Parameters: map[string]string{"seeds": "127.0.0.1"},
		},
		NativeTransportMaxFrameSize:                  16 * MiB,
		NativeTransportMaxThreads:                    128,
		NativeTransportMaxRequestsPerConnection:      1024,
		NativeTransportMaxQueuedRequests:             8192,
		NativeTransportMaxConcurrentConnections:      -1,
		NativeTransportMaxConcurrentConnectionsPerIP: -1,
		NativeTransportMaxRequestDataInFlight:        256 * MiB,
		NativeTransportMaxRequestDataInFlightPerIP:   64 * MiB,
		NativeTransportReceiveQueueCapacity:          1 * MiB,
		NativeTransportSendQueueCapacity:             256 * KiB,
		NativeTransportSocketSendBufferSize:          256 * KiB,
		NativeTransportMaxResponseDataInFlight:       256 * MiB,
		NativeTransportHandshakeTimeout:              Duration{10 * time.Second},
		NativeTransportFrameTimeout:                  Duration{30 * time.Second},
		PreparedStatementsCacheSize:                  10 * MiB,
		BatchSizeWarnThreshold:                       5 * KiB,
		BatchSizeFailThreshold:                       50 * KiB,
		UnloggedBatchAcrossPartitionsWarnThreshold:   10,
		TombstoneWarnThreshold:                       1000,
		TombstoneFailureThreshold:                    100000,
		UserDefinedFunctionsWarnTimeout:              Duration{500 * time.Millisecond},
		UserDefinedFunctionsFailTimeout:              Duration{1500 * time.Millisecond},
		TraceTypeQueryTTL:                            Duration{24 * time.Hour},
		ReadRequestTimeout:                           Duration{5 * time.Second},
		WriteRequestTimeout:                          Duration{2 * time.Second},
		CASContentionTimeout:                         Duration{time.Second},
		PaxosVariant:                                 "v2",
		RangeRequestTimeout:                          Duration{10 * time.Second},
		TruncateRequestTimeout:                       Duration{60 * time.Second},
		RequestTimeout:                               Duration{10 * time.Second},
		ServerEncryptionOptions:                      ServerEncryptionOptions{EncryptionOptions{InternodeEncryption: "none"}},
		PrometheusAddress:                            "127.0.0.1",
		PrometheusPort:                               9180,
	}
}

// Load reads the YAML file at path over Default and validates the result.
// An empty path means no file: Default as is.
func Load(path string) (Config, error) {
	c := Default()
	if path == "" {
		return c, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return Config{}, fmt.Errorf("config: %w", err)
	}
	origins, err := decodeYAML(&c, data)
	if err != nil {
		return Config{}, err
	}
	if err := c.validate(origins); err != nil {
		return Config{}, err
	}
	return c, nil
}

// NativeAddr is the host:port clients connect to.
func (c Config) NativeAddr() string {
	return net.JoinHostPort(c.RPCAddress, strconv.Itoa(c.NativeTransportPort))
}

// InternodeAddr is the address other nodes reach this one at:
// broadcast_address (or listen_address) and storage_port. It is invalid
// when the address is a host name that does not resolve.
func (c Config) InternodeAddr() netip.AddrPort {
	h := c.ListenAddress
	if c.BroadcastAddress != "" {
		h = c.BroadcastAddress
	}
	return netip.AddrPortFrom(resolveAddr(h), uint16(c.StoragePort))
}

// ListenAddr is where this node listens for other nodes: listen_address
// and storage_port.
func (c Config) ListenAddr() netip.AddrPort {
	return netip.AddrPortFrom(resolveAddr(c.ListenAddress), uint16(c.StoragePort))
}

// Seeds are SimpleSeedProvider's seeds as internode addresses; a seed
// without a port has storage_port, as in Cassandra.
func (c Config) Seeds() ([]netip.AddrPort, error) {
	var out []netip.AddrPort
	for _, s := range strings.Split(c.SeedProvider.Parameters["seeds"], ",") {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		host, port := s, c.StoragePort
		if h, p, err := net.SplitHostPort(s); err == nil {
			n, err := strconv.Atoi(p)
			if err != nil || n < 1 || n > 65535 {
				return nil, fmt.Errorf("seed %q: bad port", s)
			}
			host, port = h, n
		}
		a := resolveAddr(host)
		if !a.IsValid() {
			return nil, fmt.Errorf("seed %q: not an IP address or a host name that resolves", s)
		}
		ap := netip.AddrPortFrom(a, uint16(port))
		if !slices.Contains(out, ap) {
			out = append(out, ap)
		}
	}
	return out, nil
}

// resolveAddr is host as an IP address, resolving a name; the zero Addr
// when it cannot.
func resolveAddr(host string) netip.Addr {
	if a, err := netip.ParseAddr(host); err == nil {
		return a.Unmap()
	}
	if ips, err := net.LookupIP(host); err == nil && len(ips) > 0 {
		if a, ok := netip.AddrFromSlice(ips[0]); ok {
			return a.Unmap()
		}
	}
	return netip.Addr{}
}

// PrometheusAddr is the host:port /metrics is served on.
func (c Config) PrometheusAddr() string {
	return net.JoinHostPort(c.PrometheusAddress, strconv.Itoa(c.PrometheusPort))
}

// keyError is a problem with one key. Its message leads with the key and
// where the value came from, so an operator can go straight to it.
type keyError struct {
	key   string
	where string // "line 3", "flag -x", or "" for a value set in code
	err   error
}

func (e *keyError) Error() string {
	if e.where == "" {
		return fmt.Sprintf("config: %s: %v", e.key, e.err)
	}
	return fmt.Sprintf("config: %s (%s): %v", e.key, e.where, e.err)
}

func (e *keyError) Unwrap() error { return e.err }

// origin records under which name, and where, a key was set, so that errors
// found later by Validate point at what the operator actually wrote.
type origin struct {
	key   string // may be a legacy alias of the key it is filed under
	where string
}

// legacyUnit says how a bare number under a pre-4.1 key becomes a value.
type legacyUnit int

const (
	notLegacy         legacyUnit = iota
	legacyMillis                 // whole milliseconds
	legacyMillisFloat            // milliseconds, fractions allowed
	legacyMebibytes              // whole MiB
	legacyKibibytes              // whole KiB
	legacySeconds                // whole seconds
	legacyRenamed                // the same value under an older name
)

// key is one top-level key cqld reads.
type key struct {
	name   string
	usage  string
	field  func(c *Config) any // pointer to the field the key sets
	alias  string              // for a legacy key, the current key it stands for
	legacy legacyUnit
}

// keys lists every top-level key. It is a function, not a table variable,
// because the package keeps no globals; building it is cheap.
func keys() []key {
	legacy := func(name, current string, u legacyUnit, field func(*Config) any) key {
		unit := map[legacyUnit]string{legacyMillis: " in milliseconds", legacyMillisFloat: " in milliseconds", legacyMebibytes: " in MiB", legacyKibibytes: " in KiB", legacySeconds: " in seconds"}[u]
		return key{name: name, usage: "deprecated: " + current + unit, field: field, alias: current, legacy: u}
	}
	return []key{
		{name: "cluster_name", usage: "cluster name, the same on every node", field: func(c *Config) any { return &c.ClusterName }},
		{name: "listen_address", usage: "address other nodes reach this node on", field: func(c *Config) any { return &c.ListenAddress }},
		{name: "rpc_address", usage: "address clients connect to", field: func(c *Config) any { return &c.RPCAddress }},
		{name: "broadcast_address", usage: "internode address advertised to other nodes (empty: listen_address)", field: func(c *Config) any { return &c.BroadcastAddress }},
		{name: "broadcast_rpc_address", usage: "client address advertised to clients (empty: rpc_address)", field: func(c *Config) any { return &c.BroadcastRPCAddress }},
		{name: "native_transport_port", usage: "CQL native protocol port", field: func(c *Config) any { return &c.NativeTransportPort }},
		{name: "storage_port", usage: "inter-node port", field: func(c *Config) any { return &c.StoragePort }},
		{name: "data_file_directories", usage: "comma-separated data directories", field: func(c *Config) any { return &c.DataFileDirectories }},
		{name: "commitlog_directory", usage: "commit log directory", field: func(c *Config) any { return &c.CommitlogDirectory }},
		{name: "saved_caches_directory", usage: "saved caches directory", field: func(c *Config) any { return &c.SavedCachesDirectory }},
		{name: "hints_directory", usage: "hints directory", field: func(c *Config) any { return &c.HintsDirectory }},
		{name: "commitlog_sync", usage: "commit log sync mode: periodic, batch, group or adaptive", field: func(c *Config) any { return &c.CommitlogSync }},
		{name: "commitlog_sync_period", usage: "sync interval in periodic mode, e.g. 10s", field: func(c *Config) any { return &c.CommitlogSyncPeriod }},
		{name: "commitlog_sync_group_window", usage: "write-gathering window in group mode, e.g. 15ms", field: func(c *Config) any { return &c.CommitlogSyncGroupWindow }},
		{name: "commitlog_segment_size", usage: "commit log segment size, e.g. 32MiB", field: func(c *Config) any { return &c.CommitlogSegmentSize }},
		{name: "commitlog_total_space", usage: "commit log disk cap, e.g. 8192MiB", field: func(c *Config) any { return &c.CommitlogTotalSpace }},
		{name: "commitlog_ignore_replay_errors", usage: "skip corrupt records in the middle of a commit log segment at replay instead of refusing to start", field: func(c *Config) any { return &c.CommitlogIgnoreReplayErrors }},
		{name: "commit_failure_policy", usage: "on commit log failure: stop, stop_commit, die or ignore", field: func(c *Config) any { return &c.CommitFailurePolicy }},
		{name: "disk_failure_policy", usage: "on data disk failure: die, stop_paranoid, stop, best_effort or ignore", field: func(c *Config) any { return &c.DiskFailurePolicy }},
		{name: "authenticator", usage: "AllowAllAuthenticator or PasswordAuthenticator", field: func(c *Config) any { return &c.Authenticator }},
		{name: "authorizer", usage: "AllowAllAuthorizer or CassandraAuthorizer", field: func(c *Config) any { return &c.Authorizer }},
		{name: "role_manager", usage: "CassandraRoleManager", field: func(c *Config) any { return &c.RoleManager }},
		{name: "roles_validity", usage: "0s with permissions_validity 0s: no cache of roles (the cache is invalidated by the metadata log, not by time)", field: func(c *Config) any { return &c.RolesValidity }},
		{name: "roles_update_interval", usage: "accepted: the cache of roles is invalidated by the metadata log", field: func(c *Config) any { return &c.RolesUpdateInterval }},
		{name: "roles_cache_max_entries", usage: "roles whose permissions are cached", field: func(c *Config) any { return &c.RolesCacheMaxEntries }},
		{name: "permissions_validity", usage: "0s with roles_validity 0s: no cache of permissions (the cache is invalidated by the metadata log, not by time)", field: func(c *Config) any { return &c.PermissionsValidity }},
		{name: "permissions_update_interval", usage: "accepted: the cache of permissions is invalidated by the metadata log", field: func(c *Config) any { return &c.PermissionsUpdateInterval }},
		{name: "permissions_cache_max_entries", usage: "roles whose permissions are cached", field: func(c *Config) any { return &c.PermissionsCacheMaxEntries }},
		{name: "credentials_validity", usage: "accepted: every login checks its password's hash", field: func(c *Config) any { return &c.CredentialsValidity }},
		{name: "credentials_update_interval", usage: "accepted: every login checks its password's hash", field: func(c *Config) any { return &c.CredentialsUpdateInterval }},
		{name: "credentials_cache_max_entries", usage: "accepted: every login checks its password's hash", field: func(c *Config) any { return &c.CredentialsCacheMaxEntries }},
		{name: "num_tokens", usage: "tokens per node, 1 to 1536", field: func(c *Config) any { return &c.NumTokens }},
		{name: "allocate_tokens_for_local_replication_factor", usage: "replication factor a joining node balances its tokens for", field: func(c *Config) any { return &c.AllocateTokensForLocalReplicationFactor }},
		{name: "endpoint_snitch", usage: "snitch class: SimpleSnitch or GossipingPropertyFileSnitch", field: func(c *Config) any { return &c.EndpointSnitch }},
		{name: "auto_bootstrap", usage: "a new node that is not a seed streams its ranges before it serves them", field: func(c *Config) any { return &c.AutoBootstrap }},
		{name: "data_center", usage: "this node's data center", field: func(c *Config) any { return &c.DataCenter }},
		{name: "rack", usage: "this node's rack", field: func(c *Config) any { return &c.Rack }},
		{name: "seed_provider", usage: "seed provider class and parameters", field: func(c *Config) any { return &c.SeedProvider }},
		{name: "hinted_handoff_enabled", usage: "keep writes for unreachable replicas and replay them", field: func(c *Config) any { return &c.HintedHandoffEnabled }},
		{name: "max_hint_window", usage: "no hints for a replica down longer than this, e.g. 3h", field: func(c *Config) any { return &c.MaxHintWindow }},
		{name: "hints_flush_period", usage: "how often buffered hints are written and synced, e.g. 10s", field: func(c *Config) any { return &c.HintsFlushPeriod }},
		{name: "max_hints_file_size", usage: "size at which a hints file is rotated, e.g. 128MiB", field: func(c *Config) any { return &c.MaxHintsFileSize }},
		{name: "hinted_handoff_throttle", usage: "hint replay rate per second, e.g. 1024KiB", field: func(c *Config) any { return &c.HintedHandoffThrottle }},
		{name: "batchlog_replay_throttle", usage: "logged batch replay rate per second, cluster-wide, e.g. 1024KiB", field: func(c *Config) any { return &c.BatchlogReplayThrottle }},
		{name: "test_batchlog_kill_after_store", usage: "test only: SIGKILL this node once a logged batch is in the batchlog, before its writes", field: func(c *Config) any { return &c.TestBatchlogKillAfterStore }},
		{name: "internode_injected_delay", usage: "test only: one-way delay added to every internode message sent, e.g. 10ms", field: func(c *Config) any { return &c.InternodeInjectedDelay }},
		{name: "cas_contention_timeout", usage: "how long a lightweight transaction retries rounds lost to other proposers, e.g. 1s", field: func(c *Config) any { return &c.CASContentionTimeout }},
		{name: "paxos_variant", usage: "v2 (prepare and read in one round trip, a repeated proposer's in one), v2_no_repeat, or v1 (four round trips, a benchmark's baseline)", field: func(c *Config) any { return &c.PaxosVariant }},
		{name: "paxos_unsafe_skip_in_progress", usage: "test only: a deliberately broken Paxos that loses writes (never set it)", field: func(c *Config) any { return &c.PaxosUnsafeSkipInProgress }},
		{name: "internode_fault_injection", usage: "test only: serve /debug/internode/partition and /heal on the metrics endpoint to loopback clients", field: func(c *Config) any { return &c.InternodeFaultInjection }},
		{name: "native_transport_max_frame_size", usage: "largest CQL frame, 1KiB to 256MiB", field: func(c *Config) any { return &c.NativeTransportMaxFrameSize }},
		{name: "native_transport_max_threads", usage: "request worker pool size", field: func(c *Config) any { return &c.NativeTransportMaxThreads }},
		{name: "native_transport_max_requests_per_connection", usage: "requests in flight on one connection before OVERLOADED", field: func(c *Config) any { return &c.NativeTransportMaxRequestsPerConnection }},
		{name: "native_transport_max_queued_requests", usage: "requests queued or running on the node before OVERLOADED", field: func(c *Config) any { return &c.NativeTransportMaxQueuedRequests }},
		{name: "native_transport_max_running_requests_per_connection", usage: "requests of one connection the workers run at once; 0 is half of native_transport_max_threads", field: func(c *Config) any { return &c.NativeTransportMaxRunningRequestsPerConnection }},
		{name: "native_transport_event_loops", usage: "network event loops (0: half the CPUs, at least one)", field: func(c *Config) any { return &c.NativeTransportEventLoops }},
		{name: "native_transport_idle_timeout", usage: "close connections idle this long (0s: never)", field: func(c *Config) any { return &c.NativeTransportIdleTimeout }},
		{name: "native_transport_max_concurrent_connections", usage: "client connections open at once (-1: no cap)", field: func(c *Config) any { return &c.NativeTransportMaxConcurrentConnections }},
		{name: "native_transport_max_concurrent_connections_per_ip", usage: "client connections open at once from one address (-1: no cap)", field: func(c *Config) any { return &c.NativeTransportMaxConcurrentConnectionsPerIP }},
		{name: "native_transport_max_request_data_in_flight", usage: "bytes of client requests held node-wide before OVERLOADED, e.g. 256MiB", field: func(c *Config) any { return &c.NativeTransportMaxRequestDataInFlight }},
		{name: "native_transport_max_request_data_in_flight_per_ip", usage: "bytes of client requests held per client address before OVERLOADED, e.g. 64MiB", field: func(c *Config) any { return &c.NativeTransportMaxRequestDataInFlightPerIP }},
		{name: "native_transport_receive_queue_capacity", usage: "bytes a paused connection may send before it is closed, e.g. 1MiB", field: func(c *Config) any { return &c.NativeTransportReceiveQueueCapacity }},
		{name: "native_transport_send_queue_capacity", usage: "answers queued for one connection before it is not read until they drain, e.g. 256KiB", field: func(c *Config) any { return &c.NativeTransportSendQueueCapacity }},
		{name: "native_transport_socket_send_buffer_size", usage: "the kernel send buffer (SO_SNDBUF) of each client socket, 0 for the kernel's own, e.g. 256KiB", field: func(c *Config) any { return &c.NativeTransportSocketSendBufferSize }},
		{name: "native_transport_max_response_data_in_flight", usage: "answers queued node-wide before connections with answers queued are not read, e.g. 256MiB", field: func(c *Config) any { return &c.NativeTransportMaxResponseDataInFlight }},
		{name: "native_transport_handshake_timeout", usage: "close connections that have not sent STARTUP this long after connecting (0s: never)", field: func(c *Config) any { return &c.NativeTransportHandshakeTimeout }},
		{name: "native_transport_frame_timeout", usage: "close connections that began a frame and did not finish it in this long (0s: never)", field: func(c *Config) any { return &c.NativeTransportFrameTimeout }},
		{name: "prepared_statements_cache_size", usage: "prepared statement cache size, e.g. 10MiB", field: func(c *Config) any { return &c.PreparedStatementsCacheSize }},
		{name: "batch_size_warn_threshold", usage: "batches of several partitions bigger than this are answered with a warning, e.g. 5KiB", field: func(c *Config) any { return &c.BatchSizeWarnThreshold }},
		{name: "batch_size_fail_threshold", usage: "batches of several partitions bigger than this are refused, e.g. 50KiB", field: func(c *Config) any { return &c.BatchSizeFailThreshold }},
		{name: "unlogged_batch_across_partitions_warn_threshold", usage: "unlogged batches of more partitions than this are answered with a warning", field: func(c *Config) any { return &c.UnloggedBatchAcrossPartitionsWarnThreshold }},
		{name: "tombstone_warn_threshold", usage: "reads meeting more tombstones than this are answered with a warning", field: func(c *Config) any { return &c.TombstoneWarnThreshold }},
		{name: "tombstone_failure_threshold", usage: "reads meeting more tombstones than this fail", field: func(c *Config) any { return &c.TombstoneFailureThreshold }},
		{name: "user_defined_functions_enabled", usage: "allow CREATE FUNCTION and AGGREGATE and run user-defined functions", field: func(c *Config) any { return &c.UserDefinedFunctionsEnabled }},
		{name: "scripted_user_defined_functions_enabled", usage: "allow user-defined functions in LANGUAGE javascript (needs user_defined_functions_enabled)", field: func(c *Config) any { return &c.ScriptedUserDefinedFunctionsEnabled }},
		{name: "user_defined_functions_warn_timeout", usage: "warn the client of a user-defined function call running longer, e.g. 500ms", field: func(c *Config) any { return &c.UserDefinedFunctionsWarnTimeout }},
		{name: "user_defined_functions_fail_timeout", usage: "stop and fail a user-defined function call running longer, e.g. 1500ms", field: func(c *Config) any { return &c.UserDefinedFunctionsFailTimeout }},
		{name: "trace_type_query_ttl", usage: "how long traces stay in system_traces, e.g. 1d", field: func(c *Config) any { return &c.TraceTypeQueryTTL }},
		{name: "trace_probability", usage: "share of requests traced without their client asking, 0 to 1 (nodetool settraceprobability)", field: func(c *Config) any { return &c.TraceProbability }},
		{name: "read_request_timeout", usage: "read timeout, e.g. 5s", field: func(c *Config) any { return &c.ReadRequestTimeout }},
		{name: "write_request_timeout", usage: "write timeout, e.g. 2s", field: func(c *Config) any { return &c.WriteRequestTimeout }},
		{name: "range_request_timeout", usage: "timeout of range reads, e.g. 10s", field: func(c *Config) any { return &c.RangeRequestTimeout }},
		{name: "truncate_request_timeout", usage: "timeout of TRUNCATE, e.g. 60s", field: func(c *Config) any { return &c.TruncateRequestTimeout }},
		{name: "request_timeout", usage: "timeout for other requests, e.g. 10s", field: func(c *Config) any { return &c.RequestTimeout }},
		{name: "client_encryption_options", usage: "TLS for clients", field: func(c *Config) any { return &c.ClientEncryptionOptions }},
		{name: "native_transport_port_ssl", usage: "a port for TLS clients beside a plaintext native_transport_port (0: none)", field: func(c *Config) any { return &c.NativeTransportPortSSL }},
		{name: "server_encryption_options", usage: "TLS between nodes", field: func(c *Config) any { return &c.ServerEncryptionOptions }},
		{name: "prometheus_address", usage: "address /metrics is served on", field: func(c *Config) any { return &c.PrometheusAddress }},
		{name: "prometheus_port", usage: "port /metrics is served on (0: off)", field: func(c *Config) any { return &c.PrometheusPort }},

		legacy("commitlog_sync_period_in_ms", "commitlog_sync_period", legacyMillis, func(c *Config) any { return &c.CommitlogSyncPeriod }),
		legacy("commitlog_sync_group_window_in_ms", "commitlog_sync_group_window", legacyMillisFloat, func(c *Config) any { return &c.CommitlogSyncGroupWindow }),
		legacy("commitlog_segment_size_in_mb", "commitlog_segment_size", legacyMebibytes, func(c *Config) any { return &c.CommitlogSegmentSize }),
		legacy("commitlog_total_space_in_mb", "commitlog_total_space", legacyMebibytes, func(c *Config) any { return &c.CommitlogTotalSpace }),
		legacy("native_transport_max_frame_size_in_mb", "native_transport_max_frame_size", legacyMebibytes, func(c *Config) any { return &c.NativeTransportMaxFrameSize }),
		legacy("prepared_statements_cache_size_mb", "prepared_statements_cache_size", legacyMebibytes, func(c *Config) any { return &c.PreparedStatementsCacheSize }),
		legacy("batch_size_warn_threshold_in_kb", "batch_size_warn_threshold", legacyKibibytes, func(c *Config) any { return &c.BatchSizeWarnThreshold }),
		legacy("batch_size_fail_threshold_in_kb", "batch_size_fail_threshold", legacyKibibytes, func(c *Config) any { return &c.BatchSizeFailThreshold }),
		legacy("enable_user_defined_functions", "user_defined_functions_enabled", legacyRenamed, func(c *Config) any { return &c.UserDefinedFunctionsEnabled }),
		legacy("enable_scripted_user_defined_functions", "scripted_user_defined_functions_enabled", legacyRenamed, func(c *Config) any { return &c.ScriptedUserDefinedFunctionsEnabled }),
		legacy("user_defined_function_warn_timeout", "user_defined_functions_warn_timeout", legacyMillis, func(c *Config) any { return &c.UserDefinedFunctionsWarnTimeout }),
		legacy("user_defined_function_fail_timeout", "user_defined_functions_fail_timeout", legacyMillis, func(c *Config) any { return &c.UserDefinedFunctionsFailTimeout }),
		legacy("tracetype_query_ttl", "trace_type_query_ttl", legacySeconds, func(c *Config) any { return &c.TraceTypeQueryTTL }),
		legacy("read_request_timeout_in_ms", "read_request_timeout", legacyMillis, func(c *Config) any { return &c.ReadRequestTimeout }),
		legacy("write_request_timeout_in_ms", "write_request_timeout", legacyMillis, func(c *Config) any { return &c.WriteRequestTimeout }),
		legacy("request_timeout_in_ms", "request_timeout", legacyMillis, func(c *Config) any { return &c.RequestTimeout }),
		legacy("cas_contention_timeout_in_ms", "cas_contention_timeout", legacyMillis, func(c *Config) any { return &c.CASContentionTimeout }),
		legacy("roles_validity_in_ms", "roles_validity", legacyMillis, func(c *Config) any { return &c.RolesValidity }),
		legacy("roles_update_interval_in_ms", "roles_update_interval", legacyMillis, func(c *Config) any { return &c.RolesUpdateInterval }),
		legacy("permissions_validity_in_ms", "permissions_validity", legacyMillis, func(c *Config) any { return &c.PermissionsValidity }),
		legacy("permissions_update_interval_in_ms", "permissions_update_interval", legacyMillis, func(c *Config) any { return &c.PermissionsUpdateInterval }),
		legacy("credentials_validity_in_ms", "credentials_validity", legacyMillis, func(c *Config) any { return &c.CredentialsValidity }),
		legacy("credentials_update_interval_in_ms", "credentials_update_interval", legacyMillis, func(c *Config) any { return &c.CredentialsUpdateInterval }),
	}
}

// current is the key k's value is filed under: itself, or what it aliases.
func (k key) current() string {
	if k.alias != "" {
		return k.alias
	}
	return k.name
}

// decodeYAML overlays the YAML document in data onto c and reports where
// each key was set, by current key name.
//
// It walks the yaml.Node tree itself instead of decoding into a struct with
// Decoder.KnownFields(true): KnownFields does not apply to a yaml.Node, and
// yaml.v3's struct errors give a line but not the key. The walk rejects
// unknown and repeated keys itself and names the key in every error.
func decodeYAML(c *Config, data []byte) (map[string]origin, error) {
	origins := map[string]origin{}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	switch err := dec.Decode(&doc); {
	case errors.Is(err, io.EOF): // empty, or only comments
		return origins, nil
	case err != nil:
		return nil, fmt.Errorf("config: invalid YAML: %w", err)
	}
	var extra yaml.Node
	switch err := dec.Decode(&extra); {
	case err == nil:
		return nil, fmt.Errorf("config: a second YAML document starts on line %d; the file must hold one", extra.Line)
	case !errors.Is(err, io.EOF):
		return nil, fmt.Errorf("config: invalid YAML: %w", err)
	}
	if len(doc.Content) == 0 {
		return origins, nil
	}
	root := deref(doc.Content[0])
	if root.Kind == yaml.ScalarNode && root.ShortTag() == "!!null" { // a bare "---"
		return origins, nil
	}
	if root.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("config: line %d: the file must be a mapping of cassandra.yaml keys to values", root.Line)
	}

	all := keys()
	byName := make(map[string]key, len(all))
	for _, k := range all {
		byName[k.name] = k
	}
	firstLine := map[string]int{}
	var errs []error
	for i := 0; i+1 < len(root.Content); i += 2 {
		kn, vn := root.Content[i], root.Content[i+1]
		where := fmt.Sprintf("line %d", kn.Line)
		name := kn.Value
		if kn.Kind != yaml.ScalarNode {
			errs = append(errs, fmt.Errorf("config: line %d: a key must be a plain name", kn.Line))
			continue
		}
		if line, dup := firstLine[name]; dup {
			errs = append(errs, &keyError{name, where, fmt.Errorf("set again; first set on line %d", line)})
			continue
		}
		firstLine[name] = kn.Line
		k, ok := byName[name]
		if !ok {
			msg := "unknown key"
			if s := suggest(name, all); s != "" {
				msg += "; did you mean " + s + "?"
			}
			errs = append(errs, &keyError{name, where, errors.New(msg)})
			continue
		}
		if o, dup := origins[k.current()]; dup {
			errs = append(errs, &keyError{name, where, fmt.Errorf("conflicts with %s (%s); set only %s", o.key, o.where, k.current())})
			continue
		}
		origins[k.current()] = origin{name, where}
		if err := setKey(c, k, vn); err != nil {
			errs = append(errs, &keyError{name, where, err})
		}
	}
	return origins, errors.Join(errs...)
}

// setKey parses n as k's value and stores it in c. A YAML null leaves the
// default in place, as if the key were absent. Errors do not name the key.
func setKey(c *Config, k key, n *yaml.Node) error {
	n = deref(n)
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null" {
		return nil
	}
	if k.legacy != notLegacy && k.legacy != legacyRenamed {
		return setLegacy(c, k, n)
	}
	switch p := k.field(c).(type) {
	case *string:
		s, _, err := scalarText(n)
		if err != nil {
			return err
		}
		*p = s
	case *int:
		v, err := parseInt(n)
		if err != nil {
			return err
		}
		*p = v
	case *float64:
		v, err := parseFloat(n)
		if err != nil {
			return err
		}
		*p = v
	case *bool:
		s, _, err := scalarText(n)
		if err != nil {
			return err
		}
		v, err := strconv.ParseBool(s)
		if err != nil {
			return fmt.Errorf("%q is not true or false", s)
		}
		*p = v
	case *[]string:
		v, err := parseStrings(n)
		if err != nil {
			return err
		}
		*p = v
	case yaml.Unmarshaler: // Duration, DataSize, SeedProvider
		return p.UnmarshalYAML(n)
	default:
		return fmt.Errorf("cqld bug: no parser for %T", p)
	}
	return nil
}

// setLegacy parses a pre-4.1 key, whose unit is in its name, so its value
// is a bare number.
func setLegacy(c *Config, k key, n *yaml.Node) error {
	switch k.legacy {
	case legacyMillis, legacySeconds:
		unit, name := time.Millisecond, "milliseconds"
		if k.legacy == legacySeconds {
			unit, name = time.Second, "seconds"
		}
		v, err := parseInt(n)
		if err != nil {
			return err
		}
		if v < 0 || int64(v) > math.MaxInt64/int64(unit) {
			return fmt.Errorf("%d %s is out of range", v, name)
		}
		*k.field(c).(*Duration) = Duration{time.Duration(v) * unit}
	case legacyMillisFloat:
		f, err := parseFloat(n)
		if err != nil {
			return err
		}
		ns := f * float64(time.Millisecond)
		if math.IsNaN(f) || f < 0 || ns >= math.MaxInt64 {
			return fmt.Errorf("%v milliseconds is out of range", f)
		}
		*k.field(c).(*Duration) = Duration{time.Duration(math.Round(ns))}
	case legacyMebibytes, legacyKibibytes:
		unit, name := MiB, "MiB"
		if k.legacy == legacyKibibytes {
			unit, name = KiB, "KiB"
		}
		v, err := parseInt(n)
		if err != nil {
			return err
		}
		if v < 0 || int64(v) > math.MaxInt64/int64(unit) {
			return fmt.Errorf("%d %s is out of range", v, name)
		}
		*k.field(c).(*DataSize) = DataSize(v) * unit
	}
	return nil
}

// parseInt reads a YAML integer. A quoted integer is accepted too, which is
// also how flag values arrive. yaml.v3 on its own would truncate 1.5 to 1.
func parseInt(n *yaml.Node) (int, error) {
	s, _, err := scalarText(n)
	if err != nil {
		return 0, err
	}
	var v int
	switch n.ShortTag() {
	case "!!int":
		err = n.Decode(&v)
	case "!!str":
		v, err = strconv.Atoi(s)
	default:
		err = errors.New("not an integer")
	}
	if err != nil {
		return 0, fmt.Errorf("cannot parse %q as an integer", s)
	}
	return v, nil
}

// parseFloat reads a YAML number, integer or not, quoted or not.
func parseFloat(n *yaml.Node) (float64, error) {
	s, _, err := scalarText(n)
	if err != nil {
		return 0, err
	}
	var v float64
	switch n.ShortTag() {
	case "!!int", "!!float":
		err = n.Decode(&v)
	case "!!str":
		v, err = strconv.ParseFloat(s, 64)
	default:
		err = errors.New("not a number")
	}
	if err != nil {
		return 0, fmt.Errorf("cannot parse %q as a number", s)
	}
	return v, nil
}

// parseStrings reads a YAML list of strings.
func parseStrings(n *yaml.Node) ([]string, error) {
	if n.Kind != yaml.SequenceNode {
		if n.Kind == yaml.ScalarNode {
			return nil, fmt.Errorf("expected a list, e.g. [%s], got a single value", n.Value)
		}
		return nil, errors.New("expected a list, got a mapping")
	}
	out := make([]string, 0, len(n.Content))
	for i, e := range n.Content {
		s, null, err := scalarText(e)
		if err == nil && null {
			err = errors.New("is null")
		}
		if err != nil {
			return nil, fmt.Errorf("entry %d (line %d): %w", i+1, e.Line, err)
		}
		out = append(out, s)
	}
	return out, nil
}

// MarshalYAML writes p in cassandra.yaml's one-entry-list form.
func (p SeedProvider) MarshalYAML() (any, error) {
	type entry struct {
		ClassName  string              `yaml:"class_name"`
		Parameters []map[string]string `yaml:"parameters,omitempty"`
	}
	e := entry{ClassName: p.ClassName}
	if len(p.Parameters) > 0 {
		e.Parameters = []map[string]string{p.Parameters}
	}
	return []entry{e}, nil
}

// UnmarshalYAML reads cassandra.yaml's seed_provider list. It is as strict
// as the top level: unknown or repeated keys are errors.
func (p *SeedProvider) UnmarshalYAML(n *yaml.Node) error {
	n = deref(n)
	if n.Kind != yaml.SequenceNode || len(n.Content) != 1 {
		return errors.New("expected a list of one entry: - class_name: ...  parameters: [{seeds: ...}]")
	}
	e := deref(n.Content[0])
	if e.Kind != yaml.MappingNode {
		return fmt.Errorf("line %d: the entry must be a mapping with class_name and parameters", e.Line)
	}
	var out SeedProvider
	seen := map[string]bool{}
	for i := 0; i+1 < len(e.Content); i += 2 {
		kn, vn := e.Content[i], deref(e.Content[i+1])
		if seen[kn.Value] {
			return fmt.Errorf("%s (line %d): set twice", kn.Value, kn.Line)
		}
		seen[kn.Value] = true
		var err error
		switch kn.Value {
		case "class_name":
			out.ClassName, _, err = scalarText(vn)
		case "parameters":
			out.Parameters, err = parseSeedParameters(vn)
		default:
			err = errors.New("unknown key; want class_name or parameters")
		}
		if err != nil {
			return fmt.Errorf("%s (line %d): %w", kn.Value, kn.Line, err)
		}
	}
	*p = out
	return nil
}

// parseSeedParameters reads parameters: [{name: value, ...}].
func parseSeedParameters(n *yaml.Node) (map[string]string, error) {
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null" {
		return nil, nil
	}
	if n.Kind != yaml.SequenceNode || len(n.Content) > 1 {
		return nil, errors.New("expected a list of one mapping, e.g. - seeds: \"127.0.0.1:7000\"")
	}
	if len(n.Content) == 0 {
		return nil, nil
	}
	m := deref(n.Content[0])
	if m.Kind != yaml.MappingNode {
		return nil, errors.New("expected a list of one mapping, e.g. - seeds: \"127.0.0.1:7000\"")
	}
	out := make(map[string]string, len(m.Content)/2)
	for i := 0; i+1 < len(m.Content); i += 2 {
		kn := m.Content[i]
		if _, dup := out[kn.Value]; dup {
			return nil, fmt.Errorf("%s (line %d): set twice", kn.Value, kn.Line)
		}
		v, _, err := scalarText(m.Content[i+1])
		if err != nil {
			return nil, fmt.Errorf("%s (line %d): %w", kn.Value, kn.Line, err)
		}
		out[kn.Value] = v
	}
	return out, nil
}

// suggest returns the known key closest to an unknown one, if any is close
// enough to be a likely typo.
func suggest(name string, all []key) string {
	best, bestDist := "", min(3, len(name)/3)+1
	for _, k := range all {
		if d := editDistance(name, k.name); d < bestDist {
			best, bestDist = k.name, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// Validate checks c and reports every problem found, each naming its key.
// It also normalises class names: org.apache.cassandra.auth.X and
// org.apache.cassandra.locator.X become X.
func (c *Config) Validate() error { return c.validate(nil) }

// validate is Validate, with each problem pointed at where its key was set.
func (c *Config) validate(origins map[string]origin) error {
	var errs []error
	for _, p := range c.problems() {
		if o, ok := origins[p.key]; ok {
			p.key, p.where = o.key, o.where
		}
		errs = append(errs, p)
	}
	return errors.Join(errs...)
}

// problems lists what is wrong with c, in key order.
func (c *Config) problems() []*keyError {
	var ps []*keyError
	bad := func(key, format string, args ...any) {
		ps = append(ps, &keyError{key: key, err: fmt.Errorf(format, args...)})
	}
	nonEmpty := func(key, v string) bool {
		if strings.TrimSpace(v) == "" {
			bad(key, "must not be empty")
			return false
		}
		return true
	}
	oneOf := func(key, v string, allowed ...string) {
		if !slices.Contains(allowed, v) {
			bad(key, "%q is not one of %s", v, strings.Join(allowed, ", "))
		}
	}
	inRange := func(key string, v, lo, hi int) {
		if v < lo || v > hi {
			bad(key, "%d is out of range %d to %d", v, lo, hi)
		}
	}
	atLeastOne := func(key string, v int) {
		if v < 1 {
			bad(key, "%d must be at least 1", v)
		}
	}
	positive := func(key string, d Duration) {
		if d.Duration <= 0 {
			bad(key, "%s must be greater than 0", d)
		}
	}
	notNegative := func(key string, d Duration) {
		if d.Duration < 0 {
			bad(key, "%s is negative", d)
		}
	}
	// A host with a colon that is not an IPv6 address has a port stuck on;
	// net.JoinHostPort would then make "[host:port]:port".
	host := func(key, v string) bool {
		if strings.Contains(v, ":") && net.ParseIP(v) == nil {
			bad(key, "%q must be a host name or IP address, without a port", v)
			return false
		}
		return true
	}
	wildcard := func(v string) bool {
		ip := net.ParseIP(v)
		return ip != nil && ip.IsUnspecified()
	}

	nonEmpty("cluster_name", c.ClusterName)
	if nonEmpty("listen_address", c.ListenAddress) && host("listen_address", c.ListenAddress) && wildcard(c.ListenAddress) {
		bad("listen_address", "%q is a wildcard address; other nodes need one they can reach", c.ListenAddress)
	}
	// As in Cassandra: a node bound to every interface must say which
	// address clients should use.
	if nonEmpty("rpc_address", c.RPCAddress) && host("rpc_address", c.RPCAddress) &&
		wildcard(c.RPCAddress) && (c.BroadcastRPCAddress == "" || wildcard(c.BroadcastRPCAddress)) {
		bad("rpc_address", "%q is a wildcard address, so broadcast_rpc_address must be set to an address clients can reach", c.RPCAddress)
	}
	if c.BroadcastRPCAddress != "" && host("broadcast_rpc_address", c.BroadcastRPCAddress) && wildcard(c.BroadcastRPCAddress) {
		bad("broadcast_rpc_address", "%q is a wildcard address; clients need one they can reach", c.BroadcastRPCAddress)
	}
	if c.BroadcastAddress != "" && host("broadcast_address", c.BroadcastAddress) && wildcard(c.BroadcastAddress) {
		bad("broadcast_address", "%q is a wildcard address; other nodes need one they can reach", c.BroadcastAddress)
	}
	inRange("native_transport_port", c.NativeTransportPort, 1, 65535)
	inRange("storage_port", c.StoragePort, 1, 65535)

	if len(c.DataFileDirectories) == 0 {
		bad("data_file_directories", "must list at least one directory")
	}
	for i, d := range c.DataFileDirectories {
		if strings.TrimSpace(d) == "" {
			bad("data_file_directories", "entry %d is empty", i+1)
		} else if j := slices.Index(c.DataFileDirectories, d); j < i {
			bad("data_file_directories", "%q is listed twice", d)
		}
	}
	nonEmpty("commitlog_directory", c.CommitlogDirectory)
	nonEmpty("saved_caches_directory", c.SavedCachesDirectory)
	nonEmpty("hints_directory", c.HintsDirectory)

	oneOf("commitlog_sync", c.CommitlogSync, "periodic", "batch", "group", "adaptive")
	if c.CommitlogSync == "periodic" {
		positive("commitlog_sync_period", c.CommitlogSyncPeriod)
	} else if c.CommitlogSyncPeriod.Duration < 0 {
		bad("commitlog_sync_period", "%s is negative", c.CommitlogSyncPeriod)
	}
	if c.CommitlogSync == "group" {
		positive("commitlog_sync_group_window", c.CommitlogSyncGroupWindow)
	} else if c.CommitlogSyncGroupWindow.Duration < 0 {
		bad("commitlog_sync_group_window", "%s is negative", c.CommitlogSyncGroupWindow)
	}
	// Cassandra's limit: segment offsets are 32-bit.
	if c.CommitlogSegmentSize <= 0 || c.CommitlogSegmentSize >= 2*GiB {
		bad("commitlog_segment_size", "%s must be greater than 0 and less than 2GiB", c.CommitlogSegmentSize)
	} else if c.CommitlogTotalSpace < c.CommitlogSegmentSize {
		bad("commitlog_total_space", "%s is less than commitlog_segment_size %s", c.CommitlogTotalSpace, c.CommitlogSegmentSize)
	}
	oneOf("commit_failure_policy", c.CommitFailurePolicy, "stop", "stop_commit", "die", "ignore")
	oneOf("disk_failure_policy", c.DiskFailurePolicy, "die", "stop_paranoid", "stop", "best_effort", "ignore")

	if a := strings.TrimPrefix(c.Authenticator, "org.apache.cassandra.auth."); a == "AllowAllAuthenticator" || a == "PasswordAuthenticator" {
		c.Authenticator = a
	} else {
		bad("authenticator", "%q is not supported; use AllowAllAuthenticator or PasswordAuthenticator", c.Authenticator)
	}
	if a := strings.TrimPrefix(c.Authorizer, "org.apache.cassandra.auth."); a == "AllowAllAuthorizer" || a == "CassandraAuthorizer" {
		c.Authorizer = a
	} else {
		bad("authorizer", "%q is not supported; use AllowAllAuthorizer or CassandraAuthorizer", c.Authorizer)
	}
	if c.Authenticator == "AllowAllAuthenticator" && c.Authorizer == "CassandraAuthorizer" {
		bad("authorizer", "AllowAllAuthenticator can't be used with %s", c.Authorizer)
	}
	if a := strings.TrimPrefix(c.RoleManager, "org.apache.cassandra.auth."); a == "CassandraRoleManager" {
		c.RoleManager = a
	} else {
		bad("role_manager", "%q is not supported; cqld has only CassandraRoleManager", c.RoleManager)
	}
	notNegative("roles_validity", c.RolesValidity)
	notNegative("roles_update_interval", c.RolesUpdateInterval)
	notNegative("permissions_validity", c.PermissionsValidity)
	notNegative("permissions_update_interval", c.PermissionsUpdateInterval)
	notNegative("credentials_validity", c.CredentialsValidity)
	notNegative("credentials_update_interval", c.CredentialsUpdateInterval)
	for _, k := range []struct {
		key string
		n   int
	}{{"roles_cache_max_entries", c.RolesCacheMaxEntries}, {"permissions_cache_max_entries", c.PermissionsCacheMaxEntries},
		{"credentials_cache_max_entries", c.CredentialsCacheMaxEntries}} {
		if k.n < 0 {
			bad(k.key, "%d must not be negative", k.n)
		}
	}

	inRange("num_tokens", c.NumTokens, 1, 1536)
	if nonEmpty("endpoint_snitch", c.EndpointSnitch) {
		c.EndpointSnitch = strings.TrimPrefix(c.EndpointSnitch, "org.apache.cassandra.locator.")
		if c.EndpointSnitch != "SimpleSnitch" && c.EndpointSnitch != GossipingPropertyFileSnitch {
			bad("endpoint_snitch", "%q is not supported; use SimpleSnitch or GossipingPropertyFileSnitch", c.EndpointSnitch)
		}
	}
	inRange("allocate_tokens_for_local_replication_factor", c.AllocateTokensForLocalReplicationFactor, 1, 100)
	nonEmpty("data_center", c.DataCenter)
	nonEmpty("rack", c.Rack)
	if nonEmpty("seed_provider", c.SeedProvider.ClassName) &&
		strings.TrimPrefix(c.SeedProvider.ClassName, "org.apache.cassandra.locator.") == "SimpleSeedProvider" &&
		strings.TrimSpace(c.SeedProvider.Parameters["seeds"]) == "" {
		bad("seed_provider", "SimpleSeedProvider needs a seeds parameter, e.g. seeds: \"127.0.0.1:7000\"")
	} else if _, err := c.Seeds(); err != nil {
		bad("seed_provider", "%v", err)
	}
	positive("max_hint_window", c.MaxHintWindow)
	positive("hints_flush_period", c.HintsFlushPeriod)
	if c.MaxHintsFileSize < MiB {
		bad("max_hints_file_size", "%s must be at least 1MiB", c.MaxHintsFileSize)
	}
	if c.HintedHandoffThrottle < KiB {
		bad("hinted_handoff_throttle", "%s must be at least 1KiB", c.HintedHandoffThrottle)
	}
	if c.BatchlogReplayThrottle < KiB {
		bad("batchlog_replay_throttle", "%s must be at least 1KiB", c.BatchlogReplayThrottle)
	}
	notNegative("internode_injected_delay", c.InternodeInjectedDelay)
	positive("cas_contention_timeout", c.CASContentionTimeout)
	oneOf("paxos_variant", c.PaxosVariant, "v2", "v2_no_repeat", "v1")

	if c.NativeTransportMaxFrameSize < KiB || c.NativeTransportMaxFrameSize > 256*MiB {
		bad("native_transport_max_frame_size", "%s is out of range 1KiB to 256MiB", c.NativeTransportMaxFrameSize)
	}
	atLeastOne("native_transport_max_threads", c.NativeTransportMaxThreads)
	atLeastOne("native_transport_max_requests_per_connection", c.NativeTransportMaxRequestsPerConnection)
	atLeastOne("native_transport_max_queued_requests", c.NativeTransportMaxQueuedRequests)
	if c.NativeTransportMaxRunningRequestsPerConnection < 0 {
		bad("native_transport_max_running_requests_per_connection", "%d is negative", c.NativeTransportMaxRunningRequestsPerConnection)
	}
	if c.NativeTransportEventLoops < 0 {
		bad("native_transport_event_loops", "%d is negative", c.NativeTransportEventLoops)
	}
	if c.NativeTransportIdleTimeout.Duration < 0 {
		bad("native_transport_idle_timeout", "%s is negative", c.NativeTransportIdleTimeout)
	}
	capOrNone := func(key string, v int) {
		if v != -1 && v < 1 {
			bad(key, "%d must be -1 (no cap) or at least 1", v)
		}
	}
	capOrNone("native_transport_max_concurrent_connections", c.NativeTransportMaxConcurrentConnections)
	capOrNone("native_transport_max_concurrent_connections_per_ip", c.NativeTransportMaxConcurrentConnectionsPerIP)
	positiveSize := func(key string, v DataSize) {
		if v <= 0 {
			bad(key, "%s must be greater than 0", v)
		}
	}
	positiveSize("native_transport_max_request_data_in_flight", c.NativeTransportMaxRequestDataInFlight)
	positiveSize("native_transport_max_request_data_in_flight_per_ip", c.NativeTransportMaxRequestDataInFlightPerIP)
	positiveSize("native_transport_receive_queue_capacity", c.NativeTransportReceiveQueueCapacity)
	positiveSize("native_transport_send_queue_capacity", c.NativeTransportSendQueueCapacity)
	positiveSize("native_transport_max_response_data_in_flight", c.NativeTransportMaxResponseDataInFlight)
	if v := c.NativeTransportSocketSendBufferSize; v < 0 || v > 1<<30 {
		bad("native_transport_socket_send_buffer_size", "%s must be between 0 (the kernel's own) and 1GiB", v)
	}
	notNegative("native_transport_handshake_timeout", c.NativeTransportHandshakeTimeout)
	notNegative("native_transport_frame_timeout", c.NativeTransportFrameTimeout)
	if c.BatchSizeWarnThreshold < 0 {
		bad("batch_size_warn_threshold", "%s must not be negative", c.BatchSizeWarnThreshold)
	}
	if c.BatchSizeFailThreshold < 0 {
		bad("batch_size_fail_threshold", "%s must not be negative", c.BatchSizeFailThreshold)
	}
	if c.TombstoneWarnThreshold < 0 {
		bad("tombstone_warn_threshold", "%d must not be negative", c.TombstoneWarnThreshold)
	}
	if c.TombstoneFailureThreshold < 0 {
		bad("tombstone_failure_threshold", "%d must not be negative", c.TombstoneFailureThreshold)
	}
	if c.TraceProbability < 0 || c.TraceProbability > 1 || c.TraceProbability != c.TraceProbability {
		bad("trace_probability", "%v must be between 0 and 1", c.TraceProbability)
	}
	if c.UserDefinedFunctionsFailTimeout.Duration < c.UserDefinedFunctionsWarnTimeout.Duration {
		bad("user_defined_functions_fail_timeout", "%s must not be shorter than user_defined_functions_warn_timeout (%s)", c.UserDefinedFunctionsFailTimeout, c.UserDefinedFunctionsWarnTimeout)
	}
	if c.UnloggedBatchAcrossPartitionsWarnThreshold < 0 {
		bad("unlogged_batch_across_partitions_warn_threshold", "%d must not be negative", c.UnloggedBatchAcrossPartitionsWarnThreshold)
	}
	if c.PreparedStatementsCacheSize <= 0 {
		bad("prepared_statements_cache_size", "%s must be greater than 0", c.PreparedStatementsCacheSize)
	}

	positive("read_request_timeout", c.ReadRequestTimeout)
	positive("write_request_timeout", c.WriteRequestTimeout)
	positive("truncate_request_timeout", c.TruncateRequestTimeout)
	positive("request_timeout", c.RequestTimeout)

	clientTLS, _ := c.ClientEncryptionOptions.ClientTLS()
	c.ClientEncryptionOptions.problems("client_encryption_options", clientTLS, bad)
	if c.ClientEncryptionOptions.InternodeEncryption != "" {
		bad("client_encryption_options", "internode_encryption is a key of server_encryption_options")
	}
	if c.NativeTransportPortSSL != 0 {
		inRange("native_transport_port_ssl", c.NativeTransportPortSSL, 1, 65535)
		if !clientTLS {
			bad("native_transport_port_ssl", "%d is set but client_encryption_options is not enabled", c.NativeTransportPortSSL)
		}
	}
	so := &c.ServerEncryptionOptions
	if so.InternodeEncryption == "" {
		so.InternodeEncryption = "none"
	}
	oneOf("server_encryption_options", so.InternodeEncryption, "none", "all", "dc", "rack")
	internodeTLS, _ := so.InternodeTLS()
	so.problems("server_encryption_options", internodeTLS, bad)
	if internodeTLS && so.Truststore == "" {
		bad("server_encryption_options", "internode encryption needs a truststore: a PEM file of the CAs that sign the nodes' certificates")
	}

	if c.PrometheusPort != 0 {
		nonEmpty("prometheus_address", c.PrometheusAddress)
	}
	host("prometheus_address", c.PrometheusAddress)
	inRange("prometheus_port", c.PrometheusPort, 0, 65535)
	return ps
}
