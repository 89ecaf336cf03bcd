package config

import (
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

// loadYAML writes text to a file and Loads it.
func loadYAML(t *testing.T, text string) (Config, error) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "cqld.yaml")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return Load(path)
}

// wantError fails unless err mentions every one of wants.
func wantError(t *testing.T, err error, wants ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want one mentioning %q", wants)
	}
	for _, w := range wants {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not mention %q", err, w)
		}
	}
}

func TestDefault(t *testing.T) {
	d := Default()
	for _, tc := range []struct {
		key       string
		got, want any
	}{
		{"cluster_name", d.ClusterName, "Test Cluster"},
		{"listen_address", d.ListenAddress, "127.0.0.1"},
		{"rpc_address", d.RPCAddress, "127.0.0.1"},
		{"broadcast_rpc_address", d.BroadcastRPCAddress, ""},
		{"native_transport_port", d.NativeTransportPort, 9042},
		{"storage_port", d.StoragePort, 7000},
		{"data_file_directories", d.DataFileDirectories, []string{"data/data"}},
		{"commitlog_directory", d.CommitlogDirectory, "data/commitlog"},
		{"saved_caches_directory", d.SavedCachesDirectory, "data/saved_caches"},
		{"hints_directory", d.HintsDirectory, "data/hints"},
		{"commitlog_sync", d.CommitlogSync, "adaptive"},
		{"commitlog_sync_period", d.CommitlogSyncPeriod.Duration, 10 * time.Second},
		{"commitlog_sync_group_window", d.CommitlogSyncGroupWindow.Duration, 15 * time.Millisecond},
		{"commitlog_segment_size", d.CommitlogSegmentSize, DataSize(32 << 20)},
		{"commitlog_total_space", d.CommitlogTotalSpace, DataSize(8192 << 20)},
		{"commit_failure_policy", d.CommitFailurePolicy, "stop"},
		{"disk_failure_policy", d.DiskFailurePolicy, "stop"},
		{"authenticator", d.Authenticator, "AllowAllAuthenticator"},
		{"authorizer", d.Authorizer, "AllowAllAuthorizer"},
		{"role_manager", d.RoleManager, "CassandraRoleManager"},
		{"num_tokens", d.NumTokens, 16},
		{"endpoint_snitch", d.EndpointSnitch, "SimpleSnitch"},
		{"auto_bootstrap", d.AutoBootstrap, true},
		{"data_center", d.DataCenter, "datacenter1"},
		{"rack", d.Rack, "rack1"},
		{"allocate_tokens_for_local_replication_factor", d.AllocateTokensForLocalReplicationFactor, 3},
		{"hinted_handoff_enabled", d.HintedHandoffEnabled, true},
		{"max_hint_window", d.MaxHintWindow.Duration, 3 * time.Hour},
		{"hints_flush_period", d.HintsFlushPeriod.Duration, 10 * time.Second},
		{"max_hints_file_size", d.MaxHintsFileSize, DataSize(128 << 20)},
		{"hinted_handoff_throttle", d.HintedHandoffThrottle, DataSize(1024 << 10)},
		{"batchlog_replay_throttle", d.BatchlogReplayThrottle, DataSize(1024 << 10)},
		{"internode_injected_delay", d.InternodeInjectedDelay.Duration, time.Duration(0)},
		{"test_batchlog_kill_after_store", d.TestBatchlogKillAfterStore, false},
		{"cas_contention_timeout", d.CASContentionTimeout.Duration, time.Second},
		{"paxos_variant", d.PaxosVariant, "v2"},
		{"paxos_unsafe_skip_in_progress", d.PaxosUnsafeSkipInProgress, false},
		{"internode_fault_injection", d.InternodeFaultInjection, false},
		{"truncate_request_timeout", d.TruncateRequestTimeout.Duration, 60 * time.Second},
		{"seed_provider", d.SeedProvider, SeedProvider{"org.apache.cassandra.locator.SimpleSeedProvider", map[string]string{"seeds": "127.0.0.1"}}},
		{"native_transport_max_frame_size", d.NativeTransportMaxFrameSize, DataSize(16 << 20)},
		{"native_transport_max_threads", d.NativeTransportMaxThreads, 128},
		{"native_transport_max_requests_per_connection", d.NativeTransportMaxRequestsPerConnection, 1024},
		{"native_transport_max_queued_requests", d.NativeTransportMaxQueuedRequests, 8192},
		{"native_transport_max_running_requests_per_connection", d.NativeTransportMaxRunningRequestsPerConnection, 0},
		{"native_transport_event_loops", d.NativeTransportEventLoops, 0},
		{"native_transport_idle_timeout", d.NativeTransportIdleTimeout.Duration, time.Duration(0)},
		{"native_transport_max_concurrent_connections", d.NativeTransportMaxConcurrentConnections, -1},
		{"native_transport_max_concurrent_connections_per_ip", d.NativeTransportMaxConcurrentConnectionsPerIP, -1},
		{"native_transport_max_request_data_in_flight", d.NativeTransportMaxRequestDataInFlight, DataSize(256 << 20)},
		{"native_transport_max_request_data_in_flight_per_ip", d.NativeTransportMaxRequestDataInFlightPerIP, DataSize(64 << 20)},
		{"native_transport_receive_queue_capacity", d.NativeTransportReceiveQueueCapacity, DataSize(1 << 20)},
		{"native_transport_send_queue_capacity", d.NativeTransportSendQueueCapacity, DataSize(256 << 10)},
		{"native_transport_socket_send_buffer_size", d.NativeTransportSocketSendBufferSize, DataSize(256 << 10)},
		{"native_transport_max_response_data_in_flight", d.NativeTransportMaxResponseDataInFlight, DataSize(256 << 20)},
		{"native_transport_handshake_timeout", d.NativeTransportHandshakeTimeout.Duration, 10 * time.Second},
		{"native_transport_frame_timeout", d.NativeTransportFrameTimeout.Duration, 30 * time.Second},
		{"prepared_statements_cache_size", d.PreparedStatementsCacheSize, DataSize(10 << 20)},
		{"batch_size_warn_threshold", d.BatchSizeWarnThreshold, DataSize(5 << 10)},
		{"batch_size_fail_threshold", d.BatchSizeFailThreshold, DataSize(50 << 10)},
		{"unlogged_batch_across_partitions_warn_threshold", d.UnloggedBatchAcrossPartitionsWarnThreshold, 10},
		{"read_request_timeout", d.ReadRequestTimeout.Duration, 5 * time.Second},
		{"write_request_timeout", d.WriteRequestTimeout.Duration, 2 * time.Second},
		{"request_timeout", d.RequestTimeout.Duration, 10 * time.Second},
		{"prometheus_address", d.PrometheusAddress, "127.0.0.1"},
		{"prometheus_port", d.PrometheusPort, 9180},
	} {
		if !reflect.DeepEqual(tc.got, tc.want) {
			t.Errorf("%s = %v, want %v", tc.key, tc.got, tc.want)
		}
	}
	if err := d.Validate(); err != nil {
		t.Errorf("Default().Validate() = %v", err)
	}
	if d.NativeAddr() != "127.0.0.1:9042" || d.PrometheusAddr() != "127.0.0.1:9180" {
		t.Errorf("addrs = %s, %s", d.NativeAddr(), d.PrometheusAddr())
	}

	// Each call is independent: changing one Default must not change another.
	d.DataFileDirectories[0] = "x"
	d.SeedProvider.Parameters["seeds"] = "x"
	if e := Default(); e.DataFileDirectories[0] != "data/data" || e.SeedProvider.Parameters["seeds"] != "127.0.0.1" {
		t.Error("Default shares state between calls")
	}
}

func TestLoadNoFileOrEmptyFile(t *testing.T) {
	for name, text := range map[string]string{
		"empty":         "",
		"comments only": "# cqld\n\n   # nothing set here\n",
		"bare document": "---\n",
		"null document": "~\n",
	} {
		t.Run(name, func(t *testing.T) {
			c, err := loadYAML(t, text)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(c, Default()) {
				t.Errorf("got %+v, want defaults", c)
			}
		})
	}
	c, err := Load("")
	if err != nil || !reflect.DeepEqual(c, Default()) {
		t.Errorf(`Load("") = %+v, %v; want defaults`, c, err)
	}
	_, err = Load(filepath.Join(t.TempDir(), "missing.yaml"))
	wantError(t, err, "config: ", "missing.yaml")
}

// TestEachKey sets each key, current and legacy, from YAML alone and checks
// that exactly the matching field changed.
func TestEachKey(t *testing.T) {
	for _, tc := range []struct {
		yaml string
		want func(c *Config)
	}{
		{`cluster_name: "Prod 1"`, func(c *Config) { c.ClusterName = "Prod 1" }},
		{`listen_address: 10.0.0.1`, func(c *Config) { c.ListenAddress = "10.0.0.1" }},
		{`rpc_address: "::1"`, func(c *Config) { c.RPCAddress = "::1" }},
		{`broadcast_rpc_address: 192.0.2.7`, func(c *Config) { c.BroadcastRPCAddress = "192.0.2.7" }},
		{`native_transport_port: 19042`, func(c *Config) { c.NativeTransportPort = 19042 }},
		{`native_transport_port: "19042"`, func(c *Config) { c.NativeTransportPort = 19042 }},
		{`storage_port: 7001`, func(c *Config) { c.StoragePort = 7001 }},
		{"data_file_directories:\n  - /d1\n  - /d2\n", func(c *Config) { c.DataFileDirectories = []string{"/d1", "/d2"} }},
		{`data_file_directories: [/d1]`, func(c *Config) { c.DataFileDirectories = []string{"/d1"} }},
		{`commitlog_directory: /cl`, func(c *Config) { c.CommitlogDirectory = "/cl" }},
		{`saved_caches_directory: /sc`, func(c *Config) { c.SavedCachesDirectory = "/sc" }},
		{`hints_directory: /h`, func(c *Config) { c.HintsDirectory = "/h" }},
		{`commitlog_sync: batch`, func(c *Config) { c.CommitlogSync = "batch" }},
		{`commitlog_sync_period: 10000ms`, func(c *Config) { c.CommitlogSyncPeriod.Duration = 10 * time.Second }},
		{`commitlog_sync_period: 2m`, func(c *Config) { c.CommitlogSyncPeriod.Duration = 2 * time.Minute }},
		{`commitlog_sync_group_window: 500us`, func(c *Config) { c.CommitlogSyncGroupWindow.Duration = 500 * time.Microsecond }},
		{`commitlog_segment_size: 64MiB`, func(c *Config) { c.CommitlogSegmentSize = 64 * MiB }},
		{`commitlog_segment_size: 16MB`, func(c *Config) { c.CommitlogSegmentSize = 16 * MiB }},
		{`commitlog_total_space: 1GiB`, func(c *Config) { c.CommitlogTotalSpace = GiB }},
		{`commitlog_ignore_replay_errors: true`, func(c *Config) { c.CommitlogIgnoreReplayErrors = true }},
		{`commit_failure_policy: die`, func(c *Config) { c.CommitFailurePolicy = "die" }},
		{`disk_failure_policy: best_effort`, func(c *Config) { c.DiskFailurePolicy = "best_effort" }},
		{`authenticator: PasswordAuthenticator`, func(c *Config) { c.Authenticator = "PasswordAuthenticator" }},
		{`authenticator: org.apache.cassandra.auth.PasswordAuthenticator`, func(c *Config) { c.Authenticator = "PasswordAuthenticator" }},
		{`authenticator: org.apache.cassandra.auth.AllowAllAuthenticator`, func(c *Config) {}},
		{`authorizer: org.apache.cassandra.auth.AllowAllAuthorizer`, func(c *Config) {}},
		{"authenticator: PasswordAuthenticator\nauthorizer: org.apache.cassandra.auth.CassandraAuthorizer", func(c *Config) {
			c.Authenticator, c.Authorizer = "PasswordAuthenticator", "CassandraAuthorizer"
		}},
		{`role_manager: org.apache.cassandra.auth.CassandraRoleManager`, func(c *Config) {}},
		{`num_tokens: 256`, func(c *Config) { c.NumTokens = 256 }},
		{`endpoint_snitch: GossipingPropertyFileSnitch`, func(c *Config) { c.EndpointSnitch = "GossipingPropertyFileSnitch" }},
		{`endpoint_snitch: org.apache.cassandra.locator.SimpleSnitch`, func(c *Config) {}},
		{`data_center: dc-east`, func(c *Config) { c.DataCenter = "dc-east" }},
		{`rack: r7`, func(c *Config) { c.Rack = "r7" }},
		{"seed_provider:\n  - class_name: org.apache.cassandra.locator.SimpleSeedProvider\n    parameters:\n      - seeds: \"10.0.0.1:7000,10.0.0.2:7000\"\n",
			func(c *Config) { c.SeedProvider.Parameters = map[string]string{"seeds": "10.0.0.1:7000,10.0.0.2:7000"} }},
		{"seed_provider:\n  - class_name: com.example.K8sSeeds\n",
			func(c *Config) { c.SeedProvider = SeedProvider{ClassName: "com.example.K8sSeeds"} }},
		{`native_transport_max_frame_size: 512KiB`, func(c *Config) { c.NativeTransportMaxFrameSize = 512 * KiB }},
		{`native_transport_max_threads: 8`, func(c *Config) { c.NativeTransportMaxThreads = 8 }},
		{`native_transport_max_requests_per_connection: 64`, func(c *Config) { c.NativeTransportMaxRequestsPerConnection = 64 }},
		{`native_transport_max_queued_requests: 100`, func(c *Config) { c.NativeTransportMaxQueuedRequests = 100 }},
		{`native_transport_max_running_requests_per_connection: 4`, func(c *Config) { c.NativeTransportMaxRunningRequestsPerConnection = 4 }},
		{`native_transport_idle_timeout: 1h`, func(c *Config) { c.NativeTransportIdleTimeout.Duration = time.Hour }},
		{`native_transport_max_concurrent_connections: 1000`, func(c *Config) { c.NativeTransportMaxConcurrentConnections = 1000 }},
		{`native_transport_max_concurrent_connections_per_ip: 10`, func(c *Config) { c.NativeTransportMaxConcurrentConnectionsPerIP = 10 }},
		{`native_transport_max_request_data_in_flight: 1GiB`, func(c *Config) { c.NativeTransportMaxRequestDataInFlight = GiB }},
		{`native_transport_max_request_data_in_flight_per_ip: 100MiB`, func(c *Config) { c.NativeTransportMaxRequestDataInFlightPerIP = 100 * MiB }},
		{`native_transport_receive_queue_capacity: 4MiB`, func(c *Config) { c.NativeTransportReceiveQueueCapacity = 4 * MiB }},
		{`native_transport_send_queue_capacity: 1MiB`, func(c *Config) { c.NativeTransportSendQueueCapacity = MiB }},
		{`native_transport_socket_send_buffer_size: 0B`, func(c *Config) { c.NativeTransportSocketSendBufferSize = 0 }},
		{`native_transport_max_response_data_in_flight: 64MiB`, func(c *Config) { c.NativeTransportMaxResponseDataInFlight = 64 * MiB }},
		{`native_transport_handshake_timeout: 0s`, func(c *Config) { c.NativeTransportHandshakeTimeout.Duration = 0 }},
		{`native_transport_frame_timeout: 2m`, func(c *Config) { c.NativeTransportFrameTimeout.Duration = 2 * time.Minute }},
		{`prepared_statements_cache_size: 100B`, func(c *Config) { c.PreparedStatementsCacheSize = 100 }},
		{`read_request_timeout: 10s`, func(c *Config) { c.ReadRequestTimeout.Duration = 10 * time.Second }},
		{`write_request_timeout: 1500ms`, func(c *Config) { c.WriteRequestTimeout.Duration = 1500 * time.Millisecond }},
		{`request_timeout: 1d`, func(c *Config) { c.RequestTimeout.Duration = 24 * time.Hour }},
		{`prometheus_address: 0.0.0.0`, func(c *Config) { c.PrometheusAddress = "0.0.0.0" }},
		{`prometheus_port: 0`, func(c *Config) { c.PrometheusPort = 0 }},
		{`internode_fault_injection: true`, func(c *Config) { c.InternodeFaultInjection = true }},

		// Legacy names.
		{`commitlog_sync_period_in_ms: 5000`, func(c *Config) { c.CommitlogSyncPeriod.Duration = 5 * time.Second }},
		{`commitlog_sync_group_window_in_ms: 2.5`, func(c *Config) { c.CommitlogSyncGroupWindow.Duration = 2500 * time.Microsecond }},
		{`commitlog_sync_group_window_in_ms: 20`, func(c *Config) { c.CommitlogSyncGroupWindow.Duration = 20 * time.Millisecond }},
		{`commitlog_segment_size_in_mb: 64`, func(c *Config) { c.CommitlogSegmentSize = 64 * MiB }},
		{`commitlog_total_space_in_mb: 4096`, func(c *Config) { c.CommitlogTotalSpace = 4 * GiB }},
		{`native_transport_max_frame_size_in_mb: 32`, func(c *Config) { c.NativeTransportMaxFrameSize = 32 * MiB }},
		{`prepared_statements_cache_size_mb: 20`, func(c *Config) { c.PreparedStatementsCacheSize = 20 * MiB }},
		{`batch_size_warn_threshold_in_kb: 7`, func(c *Config) { c.BatchSizeWarnThreshold = 7 * KiB }},
		{`batch_size_fail_threshold_in_kb: 70`, func(c *Config) { c.BatchSizeFailThreshold = 70 * KiB }},
		{`read_request_timeout_in_ms: 7000`, func(c *Config) { c.ReadRequestTimeout.Duration = 7 * time.Second }},
		{`write_request_timeout_in_ms: 3000`, func(c *Config) { c.WriteRequestTimeout.Duration = 3 * time.Second }},
		{`request_timeout_in_ms: 12000`, func(c *Config) { c.RequestTimeout.Duration = 12 * time.Second }},
		{`enable_user_defined_functions: true`, func(c *Config) { c.UserDefinedFunctionsEnabled = true }},
		{`enable_scripted_user_defined_functions: true`, func(c *Config) { c.ScriptedUserDefinedFunctionsEnabled = true }},
		{`user_defined_function_warn_timeout: 100`, func(c *Config) { c.UserDefinedFunctionsWarnTimeout.Duration = 100 * time.Millisecond }},
		{`user_defined_function_fail_timeout: 3000`, func(c *Config) { c.UserDefinedFunctionsFailTimeout.Duration = 3 * time.Second }},
		{`tracetype_query_ttl: 3600`, func(c *Config) { c.TraceTypeQueryTTL.Duration = time.Hour }},
		{`trace_probability: 0.5`, func(c *Config) { c.TraceProbability = 0.5 }},

		// A null keeps the default, as an absent key does.
		{"hints_directory:\nnative_transport_port: ~\n", func(c *Config) {}},
	} {
		t.Run(tc.yaml, func(t *testing.T) {
			got, err := loadYAML(t, tc.yaml)
			if err != nil {
				t.Fatal(err)
			}
			want := Default()
			tc.want(&want)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("got  %+v\nwant %+v", got, want)
			}
		})
	}
}

// TestKeyTable checks that the key table and Config's yaml tags agree: each
// tagged field has a key of the same name that sets that very field.
func TestKeyTable(t *testing.T) {
	var c Config
	byName := map[string]key{}
	for _, k := range keys() {
		if _, dup := byName[k.name]; dup {
			t.Errorf("key %s listed twice", k.name)
		}
		byName[k.name] = k
		if k.usage == "" {
			t.Errorf("key %s has no usage text", k.name)
		}
		if (k.alias == "") != (k.legacy == notLegacy) {
			t.Errorf("key %s: alias %q with legacy unit %d", k.name, k.alias, k.legacy)
		}
	}
	v := reflect.ValueOf(&c).Elem()
	typ := v.Type()
	current := 0
	for i := range typ.NumField() {
		name := typ.Field(i).Tag.Get("yaml")
		k, ok := byName[name]
		if !ok || k.alias != "" {
			t.Errorf("field %s (yaml %q) has no key", typ.Field(i).Name, name)
			continue
		}
		current++
		if got, want := reflect.ValueOf(k.field(&c)).Pointer(), v.Field(i).Addr().Pointer(); got != want {
			t.Errorf("key %s sets the wrong field", name)
		}
	}
	for _, k := range byName {
		if k.alias != "" {
			if a, ok := byName[k.alias]; !ok || reflect.ValueOf(a.field(&c)).Pointer() != reflect.ValueOf(k.field(&c)).Pointer() {
				t.Errorf("legacy key %s does not set the field of %s", k.name, k.alias)
			}
		}
	}
	if n := len(byName) - current; n != 23 {
		t.Errorf("%d legacy keys, want 23", n)
	}
}

// TestMarshalRoundTrip writes a Config in which every field differs from
// the default and reads it back.
func TestMarshalRoundTrip(t *testing.T) {
	c := Config{
		ClusterName:                             "Round Trip",
		ListenAddress:                           "10.1.1.1",
		RPCAddress:                              "0.0.0.0",
		BroadcastRPCAddress:                     "10.1.1.2",
		BroadcastAddress:                        "10.1.1.3",
		AllocateTokensForLocalReplicationFactor: 2,
		HintedHandoffEnabled:                    false,
		MaxHintWindow:                           Duration{time.Hour},
		HintsFlushPeriod:                        Duration{time.Second},
		MaxHintsFileSize:                        64 * MiB,
		HintedHandoffThrottle:                   2048 * KiB,
		BatchlogReplayThrottle:                  512 * KiB,
		InternodeInjectedDelay:                  Duration{10 * time.Millisecond},
		TestBatchlogKillAfterStore:              true,
		CASContentionTimeout:                    Duration{3 * time.Second},
		PaxosVariant:                            "v1",
		PaxosUnsafeSkipInProgress:               true,
		InternodeFaultInjection:                 true,
		TruncateRequestTimeout:                  Duration{2 * time.Minute},
		NativeTransportPort:                     9043,
		StoragePort:                             7002,
		DataFileDirectories:                     []string{"/a", "/b"},
		CommitlogDirectory:                      "/cl",
		SavedCachesDirectory:                    "/sc",
		HintsDirectory:                          "/h",
		CommitlogSync:                           "group",
		CommitlogSyncPeriod:                     Duration{3 * time.Second},
		CommitlogSyncGroupWindow:                Duration{1500 * time.Microsecond},
		CommitlogSegmentSize:                    8 * MiB,
		CommitlogTotalSpace:                     100*MiB + 512*KiB,
		CommitlogIgnoreReplayErrors:             true,
		CommitFailurePolicy:                     "ignore",
		DiskFailurePolicy:                       "die",
		Authenticator:                           "PasswordAuthenticator",
		Authorizer:                              "CassandraAuthorizer",
		RoleManager:                             "CassandraRoleManager",
		NumTokens:                               8,
		EndpointSnitch:                          "GossipingPropertyFileSnitch",
		DataCenter:                              "dc2",
		Rack:                                    "r2",
		SeedProvider:                            SeedProvider{"org.apache.cassandra.locator.SimpleSeedProvider", map[string]string{"seeds": "10.1.1.1"}},
		NativeTransportMaxFrameSize:             256 * MiB,
		NativeTransportMaxThreads:               3,
		NativeTransportMaxRequestsPerConnection: 5,
		NativeTransportMaxQueuedRequests:        7,
		NativeTransportMaxRunningRequestsPerConnection: 2,
		NativeTransportEventLoops:                      3,
		NativeTransportIdleTimeout:                     Duration{90 * time.Second},
		NativeTransportMaxConcurrentConnections:        100,
		NativeTransportMaxConcurrentConnectionsPerIP:   9,
		NativeTransportMaxRequestDataInFlight:          512 * MiB,
		NativeTransportMaxRequestDataInFlightPerIP:     300 * MiB,
		NativeTransportReceiveQueueCapacity:            2 * MiB,
		NativeTransportSendQueueCapacity:               3 * MiB,
		NativeTransportSocketSendBufferSize:            128 * KiB,
		NativeTransportMaxResponseDataInFlight:         100 * MiB,
		NativeTransportHandshakeTimeout:                Duration{5 * time.Second},
		NativeTransportFrameTimeout:                    Duration{time.Minute},
		PreparedStatementsCacheSize:                    1000,
		BatchSizeWarnThreshold:                         6 * KiB,
		BatchSizeFailThreshold:                         60 * KiB,
		UnloggedBatchAcrossPartitionsWarnThreshold:     20,
		UserDefinedFunctionsEnabled:                    true,
		ScriptedUserDefinedFunctionsEnabled:            true,
		UserDefinedFunctionsWarnTimeout:                Duration{time.Second},
		UserDefinedFunctionsFailTimeout:                Duration{2 * time.Second},
		TraceTypeQueryTTL:                              Duration{time.Hour},
		TraceProbability:                               0.25,
		ReadRequestTimeout:                             Duration{time.Minute},
		WriteRequestTimeout:                            Duration{time.Hour + time.Nanosecond},
		RequestTimeout:                                 Duration{1},
		PrometheusAddress:                              "::",
		PrometheusPort:                                 0,
		ClientEncryptionOptions: ClientEncryptionOptions{EncryptionOptions{
			Enabled: true, Optional: new(bool), SSLContextFactory: PEMFactory, Keystore: "/k.pem", KeystorePassword: "pw",
			Truststore: "/t.pem", TruststorePassword: "x", CipherSuites: []string{"TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"},
			Protocol: "TLS", AcceptedProtocols: []string{"TLSv1.2", "TLSv1.3"}, Algorithm: "SunX509", StoreType: "PEM",
			RequireClientAuth: true, RequireEndpointVerification: true,
		}},
		NativeTransportPortSSL: 9142,
		ServerEncryptionOptions: ServerEncryptionOptions{EncryptionOptions{
			InternodeEncryption: "all", Keystore: "/n.pem", OutboundKeystore: "/o.pem", OutboundKeystorePassword: "pw2", Truststore: "/t.pem",
		}},
	}
	// RoleManager has a single legal value; every other field must differ
	// from the default so that this test covers every key.
	cv, dv := reflect.ValueOf(c), reflect.ValueOf(Default())
	for i := range cv.NumField() {
		name := cv.Type().Field(i).Name
		if name != "RoleManager" && reflect.DeepEqual(cv.Field(i).Interface(), dv.Field(i).Interface()) {
			t.Errorf("%s has its default value; pick another", name)
		}
	}
	out, err := yaml.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	got, err := loadYAML(t, string(out))
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !reflect.DeepEqual(got, c) {
		t.Errorf("round trip changed the config\ngot  %+v\nwant %+v\nyaml:\n%s", got, c, out)
	}
}

func TestLoadErrors(t *testing.T) {
	for _, tc := range []struct {
		name  string
		yaml  string
		wants []string
	}{
		{"unknown key", "cluster_name: x\nnative_transport_prot: 9042\n",
			[]string{"config: native_transport_prot (line 2): unknown key", "did you mean native_transport_port?"}},
		{"unknown key, no suggestion", "row_cache_size: 0MiB\n", []string{"row_cache_size (line 1): unknown key"}},
		{"repeated key", "rack: a\nrack: b\n", []string{"rack (line 2)", "first set on line 1"}},
		{"all errors reported", "foo: 1\nbar: 2\n", []string{"foo (line 1)", "bar (line 2)"}},

		{"int key given a word", "cluster_name: x\n\nnative_transport_port: abc\n",
			[]string{`config: native_transport_port (line 3): cannot parse "abc" as an integer`}},
		{"int key given a fraction", "num_tokens: 1.5\n", []string{`num_tokens (line 1): cannot parse "1.5" as an integer`}},
		{"int key given a list", "storage_port: [1]\n", []string{"storage_port (line 1): expected a single value, got a list"}},
		{"string key given a mapping", "cluster_name: {a: b}\n", []string{"cluster_name (line 1): expected a single value, got a mapping"}},
		{"list key given a string", "data_file_directories: /var/lib/data\n", []string{"data_file_directories (line 1): expected a list"}},
		{"list key with a null entry", "data_file_directories:\n  - /a\n  -\n", []string{"data_file_directories (line 1): entry 2 (line 3)"}},

		{"duration without unit", "commitlog_sync_period: 10000\n", []string{"commitlog_sync_period (line 1)", "no unit"}},
		{"duration garbage", "read_request_timeout: soon\n", []string{`read_request_timeout (line 1): cannot parse "soon" as a duration`}},
		{"duration bad unit", "read_request_timeout: 10sec\n", []string{"read_request_timeout (line 1)", `unknown unit "sec"`}},
		{"duration negative", "write_request_timeout: -5s\n", []string{"write_request_timeout (line 1)", "negative"}},
		{"duration fraction", "request_timeout: 1.5s\n", []string{"request_timeout (line 1)", "fraction"}},
		{"duration with space", "request_timeout: 10 s\n", []string{"request_timeout (line 1)", "unknown unit"}},

		{"size without unit", "commitlog_segment_size: 32\n", []string{"commitlog_segment_size (line 1)", "no unit"}},
		{"size garbage", "commitlog_total_space: lots\n", []string{`commitlog_total_space (line 1): cannot parse "lots" as a data size`}},
		{"size bad unit", "native_transport_max_frame_size: 16TB\n", []string{"native_transport_max_frame_size (line 1)", `unknown unit "TB"`}},
		{"size negative", "prepared_statements_cache_size: -1MiB\n", []string{"prepared_statements_cache_size (line 1)", "negative"}},
		{"size overflow", "commitlog_total_space: 99999999999GiB\n", []string{"commitlog_total_space (line 1)", "too large"}},

		{"legacy ms given a word", "read_request_timeout_in_ms: x\n", []string{`read_request_timeout_in_ms (line 1): cannot parse "x" as an integer`}},
		{"legacy ms negative", "request_timeout_in_ms: -1\n", []string{"request_timeout_in_ms (line 1)", "out of range"}},
		{"legacy ms with unit", "commitlog_sync_period_in_ms: 10s\n", []string{`commitlog_sync_period_in_ms (line 1): cannot parse "10s" as an integer`}},
		{"legacy float ms garbage", "commitlog_sync_group_window_in_ms: x\n", []string{`commitlog_sync_group_window_in_ms (line 1): cannot parse "x" as a number`}},
		{"legacy float ms infinite", "commitlog_sync_group_window_in_ms: .inf\n", []string{"commitlog_sync_group_window_in_ms (line 1)", "out of range"}},
		{"legacy mb given a fraction", "commitlog_segment_size_in_mb: 1.5\n", []string{"commitlog_segment_size_in_mb (line 1)", "as an integer"}},

		{"new and legacy", "commitlog_sync_period: 10s\ncommitlog_sync_period_in_ms: 10000\n",
			[]string{"commitlog_sync_period_in_ms (line 2)", "conflicts with commitlog_sync_period (line 1)"}},
		{"legacy and new", "read_request_timeout_in_ms: 5000\nread_request_timeout: 5s\n",
			[]string{"read_request_timeout (line 2)", "conflicts with read_request_timeout_in_ms (line 1)"}},

		{"seed_provider not a list", "seed_provider: {class_name: x}\n", []string{"seed_provider (line 1)", "list of one entry"}},
		{"seed_provider unknown key", "seed_provider:\n  - class_name: x\n    clas: y\n", []string{"seed_provider (line 1)", "clas (line 3): unknown key"}},
		{"seed_provider parameters not a list", "seed_provider:\n  - class_name: x\n    parameters: {seeds: a}\n", []string{"seed_provider (line 1)", "parameters (line 3)"}},
		{"seed_provider nested value", "seed_provider:\n  - class_name: x\n    parameters:\n      - seeds: [a]\n", []string{"seed_provider (line 1)", "seeds (line 4)"}},

		{"not a mapping", "- a\n- b\n", []string{"config: line 1", "mapping"}},
		{"invalid YAML", "cluster_name: [\n", []string{"config: invalid YAML", "line"}},
		{"two documents", "rack: a\n---\nrack: b\n", []string{"config: ", "second YAML document", "line 2"}},

		// Validation errors point at the line too.
		{"bad enum", "cluster_name: x\ncommitlog_sync: fast\n",
			[]string{`config: commitlog_sync (line 2): "fast" is not one of periodic, batch, group, adaptive`}},
		{"bad commit failure policy", "commit_failure_policy: panic\n", []string{"commit_failure_policy (line 1)", `"panic"`}},
		{"bad disk failure policy", "disk_failure_policy: stop_commit\n", []string{"disk_failure_policy (line 1)"}},
		{"bad authenticator", "authenticator: LdapAuthenticator\n", []string{"authenticator (line 1)", "LdapAuthenticator"}},
		{"authorizer without authenticator", "authorizer: CassandraAuthorizer\n", []string{"authorizer (line 1)", "AllowAllAuthenticator can't be used with CassandraAuthorizer"}},
		{"bad authorizer", "authenticator: PasswordAuthenticator\nauthorizer: LdapAuthorizer\n", []string{"authorizer (line 2)", "LdapAuthorizer"}},
		{"bad role manager", "role_manager: LDAPRoleManager\n", []string{"role_manager (line 1)", "LDAPRoleManager"}},
		{"num_tokens zero", "num_tokens: 0\n", []string{"num_tokens (line 1)", "out of range 1 to 1536"}},
		{"num_tokens too many", "num_tokens: 1537\n", []string{"num_tokens (line 1)"}},
		{"port out of range", "native_transport_port: 70000\n", []string{"native_transport_port (line 1)", "out of range"}},
		{"port zero", "storage_port: 0\n", []string{"storage_port (line 1)"}},
		{"prometheus port negative", "prometheus_port: -1\n", []string{"prometheus_port (line 1)"}},
		{"periodic needs a period", "commitlog_sync: periodic\ncommitlog_sync_period: 0ms\n", []string{"commitlog_sync_period (line 2)", "greater than 0"}},
		{"periodic needs a legacy period", "commitlog_sync: periodic\ncommitlog_sync_period_in_ms: 0\n", []string{"commitlog_sync_period_in_ms (line 2)", "greater than 0"}},
		{"group needs a window", "commitlog_sync: group\ncommitlog_sync_group_window: 0s\n", []string{"commitlog_sync_group_window (line 2)"}},
		{"total below segment", "commitlog_total_space: 16MiB\n", []string{"commitlog_total_space (line 1)", "less than commitlog_segment_size 32MiB"}},
		{"segment too big", "commitlog_segment_size: 2GiB\ncommitlog_total_space: 8GiB\n", []string{"commitlog_segment_size (line 1)"}},
		{"frame too small", "native_transport_max_frame_size: 1000B\n", []string{"native_transport_max_frame_size (line 1)", "1KiB to 256MiB"}},
		{"frame too big", "native_transport_max_frame_size_in_mb: 257\n", []string{"native_transport_max_frame_size_in_mb (line 1)"}},
		{"no threads", "native_transport_max_threads: 0\n", []string{"native_transport_max_threads (line 1)"}},
		{"no requests per connection", "native_transport_max_requests_per_connection: 0\n", []string{"native_transport_max_requests_per_connection (line 1)"}},
		{"no queued requests", "native_transport_max_queued_requests: -3\n", []string{"native_transport_max_queued_requests (line 1)"}},
		{"negative running requests", "native_transport_max_running_requests_per_connection: -1\n", []string{"native_transport_max_running_requests_per_connection (line 1)", "negative"}},
		{"zero connections", "native_transport_max_concurrent_connections: 0\n", []string{"native_transport_max_concurrent_connections (line 1)", "-1 (no cap) or at least 1"}},
		{"negative connections per ip", "native_transport_max_concurrent_connections_per_ip: -2\n", []string{"native_transport_max_concurrent_connections_per_ip (line 1)"}},
		{"zero request data", "native_transport_max_request_data_in_flight_per_ip: 0MiB\n", []string{"native_transport_max_request_data_in_flight_per_ip (line 1)", "greater than 0"}},
		{"zero receive queue", "native_transport_receive_queue_capacity: 0B\n", []string{"native_transport_receive_queue_capacity (line 1)", "greater than 0"}},
		{"zero send queue", "native_transport_send_queue_capacity: 0B\n", []string{"native_transport_send_queue_capacity (line 1)"}},
		{"huge socket send buffer", "native_transport_socket_send_buffer_size: 2GiB\n", []string{"native_transport_socket_send_buffer_size (line 1)", "between 0"}},
		{"negative frame timeout", "native_transport_frame_timeout: -1s\n", []string{"native_transport_frame_timeout (line 1)", "negative"}},
		{"zero timeout", "read_request_timeout: 0ms\n", []string{"read_request_timeout (line 1)", "greater than 0"}},
		{"zero cache", "prepared_statements_cache_size: 0B\n", []string{"prepared_statements_cache_size (line 1)"}},
		{"empty directory list", "data_file_directories: []\n", []string{"data_file_directories (line 1)", "at least one"}},
		{"repeated directory", "data_file_directories: [/a, /a]\n", []string{"data_file_directories (line 1)", "listed twice"}},
		{"empty commitlog directory", `commitlog_directory: ""` + "\n", []string{"commitlog_directory (line 1)", "empty"}},
		{"empty cluster name", `cluster_name: ""` + "\n", []string{"cluster_name (line 1)"}},
		{"empty rack", `rack: ""` + "\n", []string{"rack (line 1)"}},
		{"address with port", "rpc_address: 127.0.0.1:9042\n", []string{"rpc_address (line 1)", "without a port"}},
		{"wildcard rpc needs broadcast", "rpc_address: 0.0.0.0\n", []string{"rpc_address (line 1)", "broadcast_rpc_address"}},
		{"wildcard listen", "listen_address: \"::\"\n", []string{"listen_address (line 1)", "wildcard"}},
		{"seeds missing", "seed_provider:\n  - class_name: org.apache.cassandra.locator.SimpleSeedProvider\n", []string{"seed_provider (line 1)", "seeds"}},
		{"trace probability over one", "trace_probability: 2\n", []string{"trace_probability (line 1)", "between 0 and 1"}},
		{"udf fail before warn", "user_defined_functions_fail_timeout: 100ms\n", []string{"user_defined_functions_fail_timeout (line 1)", "warn_timeout"}},
		{"seed class missing", "seed_provider:\n  - parameters:\n      - seeds: a\n", []string{"seed_provider (line 1)", "empty"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := loadYAML(t, tc.yaml)
			wantError(t, err, tc.wants...)
			if !reflect.DeepEqual(c, Config{}) {
				t.Error("Load returned a config along with an error")
			}
		})
	}
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		name  string
		edit  func(c *Config)
		wants []string // empty: valid
	}{
		{"default", func(c *Config) {}, nil},
		{"wildcard rpc with broadcast", func(c *Config) { c.RPCAddress, c.BroadcastRPCAddress = "0.0.0.0", "10.0.0.1" }, nil},
		{"ipv6 rpc", func(c *Config) { c.RPCAddress = "::1" }, nil},
		{"prometheus off needs no address", func(c *Config) { c.PrometheusAddress, c.PrometheusPort = "", 0 }, nil},
		{"bad enum", func(c *Config) { c.CommitlogSync = "fast" }, []string{`config: commitlog_sync: "fast" is not one of`}},
		{"negative duration from code", func(c *Config) { c.NativeTransportIdleTimeout.Duration = -time.Second }, []string{"native_transport_idle_timeout: -1s is negative"}},
		{"many problems at once", func(c *Config) { c.NumTokens, c.Rack = 0, "" }, []string{"num_tokens", "rack"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := Default()
			tc.edit(&c)
			err := c.Validate()
			if len(tc.wants) == 0 {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			wantError(t, err, tc.wants...)
		})
	}
}

func TestValidateNormalises(t *testing.T) {
	c := Default()
	c.Authenticator = "org.apache.cassandra.auth.PasswordAuthenticator"
	c.Authorizer = "org.apache.cassandra.auth.AllowAllAuthorizer"
	c.EndpointSnitch = "org.apache.cassandra.locator.GossipingPropertyFileSnitch"
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if c.Authenticator != "PasswordAuthenticator" || c.Authorizer != "AllowAllAuthorizer" || c.EndpointSnitch != "GossipingPropertyFileSnitch" {
		t.Errorf("not normalised: %q %q %q", c.Authenticator, c.Authorizer, c.EndpointSnitch)
	}
}

func TestAddrs(t *testing.T) {
	c := Default()
	c.RPCAddress, c.NativeTransportPort = "::1", 9043
	c.PrometheusAddress, c.PrometheusPort = "fe80::1", 9100
	if got := c.NativeAddr(); got != "[::1]:9043" {
		t.Errorf("NativeAddr = %s", got)
	}
	if got := c.PrometheusAddr(); got != "[fe80::1]:9100" {
		t.Errorf("PrometheusAddr = %s", got)
	}
}

// TestCassandraYAML reads a file shaped like a stock cassandra.yaml, with
// Cassandra's comments, quoting, legacy names and fully-qualified classes.
func TestCassandraYAML(t *testing.T) {
	const text = `# Cassandra storage config YAML

# The name of the cluster. This is mainly used to prevent machines in
# one logical cluster from joining another.
cluster_name: 'Test Cluster'

# This defines the number of tokens randomly assigned to this node on the ring
num_tokens: 16

hints_directory: /var/lib/cassandra/hints

# Authentication backend, implementing IAuthenticator; used to identify users
authenticator: org.apache.cassandra.auth.PasswordAuthenticator
authorizer: AllowAllAuthorizer

data_file_directories:
    - /var/lib/cassandra/data

commitlog_directory: /var/lib/cassandra/commitlog
disk_failure_policy: stop
commit_failure_policy: stop

prepared_statements_cache_size:

saved_caches_directory: /var/lib/cassandra/saved_caches

commitlog_sync: periodic
commitlog_sync_period: 10000ms

commitlog_segment_size: 32MiB
commitlog_total_space: 8192MiB

seed_provider:
  # Addresses of hosts that are deemed contact points.
  - class_name: org.apache.cassandra.locator.SimpleSeedProvider
    parameters:
      # seeds is actually a comma-delimited list of addresses.
      # Ex: "<ip1>,<ip2>,<ip3>"
      - seeds: "10.0.0.1:7000,10.0.0.2:7000"

storage_port: 7000
listen_address: 10.0.0.1
rpc_address: 0.0.0.0
broadcast_rpc_address: 10.0.0.1
native_transport_port: 9042
native_transport_max_threads: 128
native_transport_max_frame_size: 16MiB
native_transport_idle_timeout: 0ms

read_request_timeout_in_ms: 5000
write_request_timeout: 2000ms
request_timeout: 10000ms

endpoint_snitch: SimpleSnitch
`
	c, err := loadYAML(t, text)
	if err != nil {
		t.Fatal(err)
	}
	want := Default()
	want.Authenticator = "PasswordAuthenticator"
	want.HintsDirectory = "/var/lib/cassandra/hints"
	want.DataFileDirectories = []string{"/var/lib/cassandra/data"}
	want.CommitlogDirectory = "/var/lib/cassandra/commitlog"
	want.SavedCachesDirectory = "/var/lib/cassandra/saved_caches"
	want.CommitlogSync = "periodic"
	want.SeedProvider.Parameters = map[string]string{"seeds": "10.0.0.1:7000,10.0.0.2:7000"}
	want.ListenAddress = "10.0.0.1"
	want.RPCAddress = "0.0.0.0"
	want.BroadcastRPCAddress = "10.0.0.1"
	if !reflect.DeepEqual(c, want) {
		t.Errorf("got  %+v\nwant %+v", c, want)
	}
	if got := c.NativeAddr(); got != "0.0.0.0:9042" {
		t.Errorf("NativeAddr = %s", got)
	}
}

func TestYAMLAliases(t *testing.T) {
	// Anchors and aliases are plain YAML; they must work like written values.
	c, err := loadYAML(t, "data_center: &dc east\nrack: *dc\n")
	if err != nil {
		t.Fatal(err)
	}
	if c.DataCenter != "east" || c.Rack != "east" {
		t.Errorf("got %q %q", c.DataCenter, c.Rack)
	}
}

func TestSeeds(t *testing.T) {
	c := Default()
	c.StoragePort = 7010
	c.SeedProvider.Parameters = map[string]string{"seeds": " 127.0.0.1, 127.0.0.2:7001,127.0.0.1:7010 ,"}
	got, err := c.Seeds()
	if err != nil {
		t.Fatal(err)
	}
	want := []netip.AddrPort{netip.MustParseAddrPort("127.0.0.1:7010"), netip.MustParseAddrPort("127.0.0.2:7001")}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Seeds() = %v, want %v", got, want)
	}
	for _, bad := range []string{"127.0.0.1:x", "127.0.0.1:70000", "127.0.0.1:"} {
		c.SeedProvider.Parameters["seeds"] = bad
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "seed_provider") {
			t.Errorf("seeds %q: Validate() = %v, want a seed_provider error", bad, err)
		}
	}
	// The default seed is this node, at its storage_port.
	c = Default()
	c.StoragePort = 23456
	if got, err := c.Seeds(); err != nil || !reflect.DeepEqual(got, []netip.AddrPort{c.ListenAddr()}) {
		t.Errorf("default Seeds() with storage_port 23456 = %v, %v; want [%v]", got, err, c.ListenAddr())
	}
	c = Default()
	c.BroadcastAddress = "127.0.0.3"
	if got := c.InternodeAddr(); got != netip.MustParseAddrPort("127.0.0.3:7000") {
		t.Errorf("InternodeAddr() = %v", got)
	}
}
