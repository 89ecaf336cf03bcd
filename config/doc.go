// Package config is a cqld node's configuration: where it listens, where it
// keeps data, how its commit log syncs, and the limits and timeouts of the
// native transport.
//
// A Config comes from three layers, each overriding the one before:
//
//  1. Default, built into the binary, which runs a single local node;
//  2. a YAML file read by Load, using cassandra.yaml's key names, so that
//     an operator's knowledge (and much of their file) carries over;
//  3. command-line flags defined by AddFlags and applied by Flags.Apply,
//     one per key and named exactly like it: -native_transport_port=9043.
//
// A typical main:
//
//	fs := flag.NewFlagSet("cqld", flag.ExitOnError)
//	path := fs.String("config", "", "cassandra.yaml-style file")
//	overrides := config.AddFlags(fs)
//	fs.Parse(os.Args[1:])
//	cfg, err := config.Load(*path)
//	if err == nil {
//		err = overrides.Apply(&cfg)
//	}
//
// Both Load and Apply end with Validate, so a Config that either returns is
// ready to use. Note that the file is validated on its own, before flags
// are applied: a flag cannot rescue a file that is invalid by itself.
//
// # Strictness
//
// A configuration mistake should stop the node at start-up, not surface as
// odd behaviour weeks later. So an unknown key (often a typo, or a Cassandra
// setting cqld does not have), a repeated key, a value of the wrong type, or
// a value out of range is an error, and every error names the key and where
// it was set:
//
//	config: native_transport_port (line 3): cannot parse "abc" as an integer
//	config: commitlog_sync (flag -commitlog_sync): "fast" is not one of periodic, batch, group, adaptive
//
// Every problem is reported at once, not just the first; range and
// consistency checks run once every value has parsed. An empty file, or one
// holding only comments, is valid and means the defaults. A key with a null
// value ("hints_directory:" with nothing after it) also keeps its default,
// which is how Cassandra treats an unset option. Flag values are taken
// literally, as if quoted in YAML: -cluster_name=null names the cluster
// "null".
//
// # Units
//
// Durations and sizes use Cassandra 4.1's forms: a whole number and a unit
// with no space between, such as 10s, 15ms, 10000ms, 500us or 2m, and 32MiB,
// 512KiB, 1GiB or 100B. KB, MB and GB are accepted too and mean KiB, MiB
// and GiB, as the old *_in_mb keys always did; Cassandra 4.1 itself takes
// only the binary spellings.
// A number without a unit is an error, since it was the ambiguity 4.1's
// units exist to remove.
//
// The pre-4.1 names, whose unit is in the name and whose value is a bare
// number, are accepted too: commitlog_sync_period_in_ms,
// commitlog_sync_group_window_in_ms (fractions allowed),
// commitlog_segment_size_in_mb, commitlog_total_space_in_mb,
// native_transport_max_frame_size_in_mb, prepared_statements_cache_size_mb,
// batch_size_warn_threshold_in_kb, batch_size_fail_threshold_in_kb,
// read_request_timeout_in_ms, write_request_timeout_in_ms and
// request_timeout_in_ms. Setting a key under both its old and new name is an
// error naming both.
//
// # Keys of cqld's own
//
// data_center and rack place the node in the topology under
// endpoint_snitch SimpleSnitch. Cassandra does not read them from
// cassandra.yaml: its snitches read dc= and rack= from
// cassandra-rackdc.properties. Under GossipingPropertyFileSnitch cqld
// does too (ReadSnitchProperties, the file beside the configuration
// file: dc, rack, dc_suffix; prefer_local accepted and without effect),
// and data_center or rack set in cassandra.yaml to anything else is an
// error.
//
// commitlog_ignore_replay_errors (default false) makes start-up skip a
// corrupt record in the middle of a commit log segment, with a log line,
// instead of refusing to start; Cassandra sets the same with
// -Dcassandra.commitlog.ignorereplayerrors=true. A torn tail is cut either
// way.
//
// native_transport_max_requests_per_connection and
// native_transport_max_queued_requests bound the requests one connection,
// and the node as a whole, may hold before cqld answers OVERLOADED.
//
// native_transport_send_queue_capacity (default 256KiB) and
// native_transport_max_response_data_in_flight (default 256MiB) bound the
// answers queued and not yet taken by the sockets, per connection and
// node-wide: a connection past either (the node-wide one counts only for
// connections with answers queued) is not read until its answers drain.
// Cassandra's counterpart is Netty's fixed write-buffer water mark.
// native_transport_socket_send_buffer_size (default 256KiB, 0 for the
// kernel's own) is each client socket's SO_SNDBUF: what the kernel takes
// of a connection's answers before any of the bounds above sees them.
// native_transport_handshake_timeout (default 10s) closes a connection
// that has not sent STARTUP that long after connecting, and
// native_transport_frame_timeout (default 30s) one that began a frame and
// did not finish it in that long, so a client trickling bytes cannot hold
// a connection forever; 0s turns either off.
//
// native_transport_event_loops (cqld's own, default 0: half the CPUs, at
// least one) is the number of network event loops. They answer single-row
// reads and blind writes themselves; native_transport_max_threads workers
// run everything else. A node alone on its machine may do better with one
// loop per CPU.
//
// # Encryption
//
// client_encryption_options and server_encryption_options take Cassandra
// 4.1's keys (enabled, optional, ssl_context_factory, keystore,
// keystore_password, truststore, truststore_password, cipher_suites,
// protocol, accepted_protocols, algorithm, store_type,
// require_client_auth, require_endpoint_verification; the server side
// internode_encryption, outbound_keystore and outbound_keystore_password
// instead of enabled), and are as strict as the top level. cqld reads PEM
// only: ssl_context_factory, if given, must be
// org.apache.cassandra.security.PEMBasedSslContextFactory (its inline
// parameters are refused: keys live in files, which are reloaded), and a
// store_type other than PEM is refused with a message saying how to
// convert. optional, unset, follows Cassandra: true when TLS is not
// enabled and the keystore file exists. truststore_password and algorithm
// are accepted and mean nothing to PEM files, as in Cassandra.
// native_transport_port_ssl, when set, serves TLS clients on a port of its
// own and leaves native_transport_port plaintext. Protocols and cipher
// suites are checked here (see package tlsconf); the files are read when
// the node starts.
//
// # Normalisation
//
// Validate shortens the class names Cassandra writes out in full:
// org.apache.cassandra.auth.PasswordAuthenticator becomes
// PasswordAuthenticator, and org.apache.cassandra.locator.SimpleSnitch
// becomes SimpleSnitch. seed_provider's class_name is kept as written.
//
// # What the node reads
//
// Every key is validated; these are used by the running node:
// cluster_name (checked against the name saved with the data), rpc_address,
// broadcast_rpc_address and native_transport_port (where clients connect
// and what they are told), listen_address, broadcast_address and
// storage_port (the internode transport: gossip, the metadata log, the
// replicas' reads and writes, hints; shown in system.local and the peers'
// system.peers), seed_provider (SimpleSeedProvider's seeds, or -seeds),
// num_tokens and allocate_tokens_for_local_replication_factor (at the
// first start: the tokens are saved with the data), endpoint_snitch,
// data_center, rack, auto_bootstrap (a new node that is not a seed streams
// the ranges it takes over before it serves), data_file_directories (the
// first one), commitlog_directory, the commitlog_* sync, segment, space
// and replay keys, commit_failure_policy (stop stops the client transports
// and keeps the process up; stop_commit keeps serving reads; die exits;
// ignore fails the writes the error hit and carries on),
// disk_failure_policy (when the data engine's MANIFEST cannot be written:
// stop and stop_paranoid stop the client transports and gossip, die exits,
// best_effort and ignore keep serving reads, and writes fail until a
// restart; die also ends the process when the metadata log cannot apply
// an entry; a data disk that cannot take a flush makes writes fail with
// WRITE_FAILURE until a flush succeeds, whatever it says),
// hinted_handoff_enabled, hints_directory, max_hint_window,
// hints_flush_period, max_hints_file_size and hinted_handoff_throttle, the
// request timeouts (read_request_timeout, write_request_timeout,
// range_request_timeout, request_timeout: a request still running past its
// deadline answers READ_TIMEOUT or WRITE_TIMEOUT), authenticator
// (PasswordAuthenticator makes clients log in as a role of the cluster's
// metadata log, with the default superuser cassandra/cassandra in a new
// cluster), authorizer (CassandraAuthorizer, with PasswordAuthenticator:
// every statement's permission is checked), roles_validity and
// permissions_validity (both 0s: no cache of what roles may do; the cache
// is emptied by the log's role changes, never by time) and
// roles_cache_max_entries and permissions_cache_max_entries (its bound),
// the native_transport_* keys (among them the connection
// caps native_transport_max_concurrent_connections and _per_ip; the bounds
// on request bytes in flight, native_transport_max_request_data_in_flight,
// default 256MiB, and _per_ip, default 64MiB, both fixed where Cassandra's
// are a tenth and a fortieth of the heap, and at least one largest frame;
// the queue bounds native_transport_receive_queue_capacity,
// native_transport_send_queue_capacity and
// native_transport_max_response_data_in_flight; and the deadlines
// native_transport_handshake_timeout and native_transport_frame_timeout),
// client_encryption_options, native_transport_port_ssl,
// server_encryption_options,
// prepared_statements_cache_size (default a fixed 10MiB: Cassandra's
// max(10MiB, heap/256) has no heap to divide in Go), the batch checks
// batch_size_warn_threshold (5KiB), batch_size_fail_threshold (50KiB) and
// unlogged_batch_across_partitions_warn_threshold (10),
// tombstone_warn_threshold (1000), tombstone_failure_threshold (100000),
// prometheus_address and prometheus_port, and cqld's own
// internode_injected_delay and internode_fault_injection (tests only).
//
// Validated and not used yet: saved_caches_directory, role_manager
// (CassandraRoleManager only), roles_update_interval,
// permissions_update_interval and the credentials_* keys (every login
// checks its password's hash).
package config
