package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/cqld/cqld/auth"
	"github.com/cqld/cqld/batchlog"
	"github.com/cqld/cqld/cluster"
	"github.com/cqld/cqld/commitlog"
	"github.com/cqld/cqld/config"
	"github.com/cqld/cqld/coordinator"
	"github.com/cqld/cqld/frontend"
	"github.com/cqld/cqld/hints"
	"github.com/cqld/cqld/messaging"
	"github.com/cqld/cqld/metrics"
	"github.com/cqld/cqld/proxy"
	"github.com/cqld/cqld/replica"
	"github.com/cqld/cqld/ring"
	"github.com/cqld/cqld/schema"
	"github.com/cqld/cqld/statements/functions"
	"github.com/cqld/cqld/storage"
	"github.com/cqld/cqld/tlsconf"
	"github.com/cqld/cqld/tracing"
)

// Node is a running cqld node.
type Node struct {
	cfg      config.Config
	fs       vfs.FS
	log      *slog.Logger
	Registry *prometheus.Registry
	Coord    *coordinator.Coordinator
	frontend *frontend.Server
	metrics  *metrics.Server
	Info     storage.NodeInfo
	// Auth is the node's role state, the metadata log's auth part;
	// authLog carries role changes through the log; authn is the
	// authenticator under PasswordAuthenticator, nil otherwise.
	Auth    *auth.Store
	authLog *cluster.AuthLog
	authn   *auth.Authenticator
	engine  *storage.Engine
	catalog *storage.Catalog

	// The cluster: this node's membership (transport, metadata log,
	// gossip), the schema applied through the log, and the data path.
	cluster  *cluster.Node
	members  *members
	proxy    *proxy.Proxy
	hints    *hints.Store
	replicas *replica.Server
	// tracer writes the traces of this node's part of traced requests.
	tracer    *tracing.Tracer
	schema    *schema.Schema
	schemaLog *cluster.SchemaLog
	// changes runs this node's topology changes (topology.go).
	changes *changes
	// The batchlog: this node's store of logged batches, its metrics and
	// the replay of those their coordinators did not finish.
	batches      *batchlog.Store
	batchMetrics *batchlog.Metrics
	batchReplay  *batchlog.Manager
	// coordRef is the coordinator once it exists, for the schema version
	// gossip spreads.
	coordRef atomic.Pointer[coordinator.Coordinator]
	// latencies are the tables' read, scan and write latencies, here and
	// as coordinator (system_views).
	latencies *metrics.TableLatencies
	// stopPurges ends the background purge of old tombstones; purges
	// waits for it.
	stopPurges context.CancelFunc
	purges     sync.WaitGroup

	// shutdown runs Shutdown's work once; later calls get its result.
	shutdown    sync.Once
	shutdownErr error

	// The client transports stop once: at Shutdown, or earlier when a
	// commit log failure under commit_failure_policy stop stops them.
	stopOnce     sync.Once
	stopErr      error
	failedCommit atomic.Bool
	// clientCerts and internodeCerts are the key material of client and
	// internode TLS, reloaded by the purge goroutines' neighbours; nil
	// when off.
	clientCerts    *tlsconf.Store
	internodeCerts *tlsconf.Store

	// fe is frontend for the commit log's failure hook, which may run
	// while StartWith is still setting the node up.
	fe atomic.Pointer[frontend.Server]
	// stoppedByFailure is set once failStop stopped the node; clusterRef
	// is its membership once started, for failStop; dieFunc is
	// Options.Die.
	stoppedByFailure atomic.Bool
	stopping         sync.WaitGroup // failStop's goroutine
	clusterRef       atomic.Pointer[cluster.Node]
	dieFunc          func(error)
}

// purgeInterval is how often the node walks its tables to drop tombstones
// older than their gc_grace_seconds (Cassandra does it at compaction).
const purgeInterval = time.Hour

// Options are what StartWith takes beyond the configuration.
type Options struct {
	// FS does all of the node's file I/O (data, schema, commit log); nil
	// means vfs.Default. Tests use it to inject faults or latency.
	FS vfs.FS
	// Now is the coordinator's clock (coordinator.Options.Now); nil means
	// time.Now. Tests advance a fake one to run TTLs out.
	Now func() time.Time
	// Context bounds the start: a new node waits for a seed to let it
	// join the cluster until it ends. Nil means no bound.
	Context context.Context
	// CertReloadInterval is how often the keystore and truststore files
	// are looked at for changes; 0 means DefaultCertReloadInterval.
	CertReloadInterval time.Duration
	// BcryptCost is the bcrypt cost of the password hashes the node makes
	// (Cassandra's auth_bcrypt_gensalt_log2_rounds); 0 means
	// auth.DefaultCost. Tests lower it: a login checks a hash of this
	// cost, which takes seconds under the race detector.
	BcryptCost int
	// Die ends the process when the node must stop for good (failStop);
	// nil means os.Exit(1). Tests of nodes in the process set it.
	Die func(error)
}

// Start opens the node's data and starts serving clients. On error nothing
// is left running.
func Start(cfg config.Config, log *slog.Logger) (*Node, error) {
	return StartWith(cfg, log, Options{FS: vfs.Default})
}

// StartWith is Start with Options.
func StartWith(cfg config.Config, log *slog.Logger, o Options) (*Node, error) {
	if log == nil {
		log = slog.Default()
	}
	fs := o.FS
	if fs == nil {
		fs = vfs.Default
	}
	if o.Context == nil {
		o.Context = context.Background()
	}
	// Key material first: a keystore that does not load stops the node
	// before it touches its data.
	ctls, err := startClientTLS(cfg, log)
	if err != nil {
		return nil, err
	}
	dataDir := cfg.DataFileDirectories[0]
	info, err := storage.LoadOrCreateNode(fs, filepath.Join(dataDir, "system"), cfg.ClusterName, cfg.NumTokens)
	if err != nil {
		return nil, err
	}
	catalog, err := storage.OpenCatalog(fs, filepath.Join(dataDir, "system_schema"))
	if err != nil {
		return nil, err
	}
	roles, authn, err := startAuth(cfg, fs, dataDir, o.BcryptCost)
	if err != nil {
		return nil, err
	}
	reg := metrics.NewRegistry()
	n := &Node{cfg: cfg, fs: fs, log: log, Registry: reg, Info: info, Auth: roles, clientCerts: ctls.store, dieFunc: o.Die, catalog: catalog}
	if a, ok := authn.(*auth.Authenticator); ok {
		n.authn = a
	}
	engine, err := storage.OpenEngine(storage.EngineOptions{
		FS:  fs,
		Dir: filepath.Join(dataDir, "tables"),
		Log: commitlog.Options{
			Dir:                cfg.CommitlogDirectory,
			SegmentSize:        int64(cfg.CommitlogSegmentSize),
			TotalSpace:         int64(cfg.CommitlogTotalSpace),
			Sync:               cfg.CommitlogSync,
			SyncPeriod:         cfg.CommitlogSyncPeriod.Duration,
			GroupWindow:        cfg.CommitlogSyncGroupWindow.Duration,
			FailurePolicy:      cfg.CommitFailurePolicy,
			IgnoreReplayErrors: cfg.CommitlogIgnoreReplayErrors,
			Metrics:            metrics.NewCommitLog(reg),
			OnFailure:          n.commitFailed,
		},
		Logger:        log,
		OnDiskFailure: n.diskFailed,
	})
	if err != nil {
		return nil, err
	}

	rpc := cfg.RPCAddress
	if cfg.BroadcastRPCAddress != "" {
		rpc = cfg.BroadcastRPCAddress
	}
	n.engine = engine
	metrics.NewLSM(reg, engine.LSMStats)
	n.latencies = metrics.NewTableLatencies(o.Now)
	views, err := newViews(n, cfg, n.latencies, reg)
	if err != nil {
		engine.Close()
		return nil, err
	}
	var srv atomic.Pointer[frontend.Server]
	publish := func(m message.Message) {
		if s := srv.Load(); s != nil {
			s.Publish(m)
		}
	}
	if err := n.joinCluster(o, catalog, publish); err != nil {
		n.closeCluster()
		engine.Close()
		return nil, err
	}
	n.tracer = n.newTracer(cfg, o)
	coord, err := coordinator.New(coordinator.Options{
		Catalog:           catalog,
		Engine:            engine,
		Node:              info,
		DataCenter:        cfg.DataCenter,
		Rack:              cfg.Rack,
		ListenAddress:     resolveIP(cfg.ListenAddress),
		RPCAddress:        resolveIP(rpc),
		NativePort:        cfg.NativeTransportPort,
		StoragePort:       cfg.StoragePort,
		Local:             n.members.local,
		Data:              n.proxy,
		Alone:             n.members.alone,
		Cluster:           n.members,
		Schema:            n.schema,
		SchemaChanges:     n.schemaLog,
		Roles:             n.Auth,
		RoleChanges:       n.authLog,
		Authorizer:        cfg.Authorizer == "CassandraAuthorizer",
		Publish:           publish,
		Logger:            log,
		PreparedCacheSize: int64(cfg.PreparedStatementsCacheSize),
		MaxResponseSize:   int(cfg.NativeTransportMaxFrameSize),
		Timeouts: coordinator.Timeouts{
			Read:     cfg.ReadRequestTimeout.Duration,
			Write:    cfg.WriteRequestTimeout.Duration,
			Range:    cfg.RangeRequestTimeout.Duration,
			Truncate: cfg.TruncateRequestTimeout.Duration,
			Request:  cfg.RequestTimeout.Duration,
		},
		BatchLimits: coordinator.BatchLimits{
			WarnBytes:              int64(cfg.BatchSizeWarnThreshold),
			FailBytes:              int64(cfg.BatchSizeFailThreshold),
			UnloggedPartitionsWarn: cfg.UnloggedBatchAcrossPartitionsWarnThreshold,
		},
		Functions: functions.UserOptions{
			Enabled:  cfg.UserDefinedFunctionsEnabled,
			Scripted: cfg.ScriptedUserDefinedFunctionsEnabled,
			Warn:     cfg.UserDefinedFunctionsWarnTimeout.Duration,
			Fail:     cfg.UserDefinedFunctionsFailTimeout.Duration,
		},
		PreparedMetrics: metrics.NewPrepared(reg),
		Tombstones:      coordinator.TombstoneLimits{Warn: cfg.TombstoneWarnThreshold, Fail: cfg.TombstoneFailureThreshold},
		Views:           views,
		Latencies:       n.latencies,
		Tracer:          n.tracer,
		Now:             o.Now,
	})
	if err != nil {
		n.closeCluster()
		engine.Close()
		return nil, err
	}
	n.coordRef.Store(coord)
	n.replicas = replica.Serve(n.cluster.Transport(), n.members.local, coord.TableByID, n.tracer)
	var sink replica.HintSink
	if n.hints != nil {
		sink = hintSink{store: n.hints, members: n.members}
	}
	n.replicas.ServeHintTransfer(n.cluster.Transport(), n.members.self, sink, log)
	n.startBatchlog(coord.TableByID)
	if err := n.cluster.StartGossip(); err != nil {
		n.closeCluster()
		engine.Close()
		return nil, err
	}
	n.changes = &changes{
		node:    n.cluster,
		members: n.members,
		catalog: catalog,
		tables:  coord.TableByID,
		metrics: replica.NewStreamMetrics(reg),
		log:     log,
		settle:  cfg.WriteRequestTimeout.Duration,
		after:   time.After,
		left:    make(chan struct{}),
	}
	n.cluster.UpdateMeta()
	n.Coord = coord
	// From here a failure stops what has started, in reverse order.
	fail := func(err error) (*Node, error) {
		if n.metrics != nil {
			_ = n.metrics.Close(context.Background())
		}
		n.closeCluster()
		engine.Close()
		return nil, err
	}
	faults := map[string]http.Handler{}
	if cfg.InternodeFaultInjection {
		p, ok := n.cluster.Transport().(messaging.Partitioner)
		switch {
		case !ok:
			log.Warn("internode_fault_injection is set but this node's transport cannot be partitioned")
		case cfg.PrometheusPort == 0:
			log.Warn("internode_fault_injection is set but prometheus_port is 0: no endpoint to drive it")
		default:
			log.Warn("internode_fault_injection is set (test only): loopback clients of the metrics endpoint "+
				"may cut this node off from its peers", "partition", partitionPath, "heal", healPath)
			faults = faultHandlers(p, log)
		}
	}
	if cfg.PrometheusPort != 0 {
		ms, err := metrics.ServeWith(cfg.PrometheusAddr(), reg, n.adminEndpoints(authn, faults))
		if err != nil {
			return fail(err)
		}
		n.metrics = ms
	}
	// A node joining the ring streams the ranges it takes over before it
	// serves clients; it becomes NORMAL once it does.
	bootstrapped := false
	if n.cluster.Bootstrapping() {
		if err := n.changes.bootstrap(o.Context); err != nil {
			return fail(fmt.Errorf("server: bootstrap failed; this node stays JOINING until it is started again, "+
				"or removed with nodetool removenode: %w", err))
		}
		bootstrapped = true
	}
	n.waitForPeers(o.Context, gossipSettle)
	fe := frontend.New(coord, frontend.Options{
		Addr:                 cfg.NativeAddr(),
		MaxFrameSize:         int(cfg.NativeTransportMaxFrameSize),
		Workers:              cfg.NativeTransportMaxThreads,
		MaxRequestsPerConn:   cfg.NativeTransportMaxRequestsPerConnection,
		MaxQueued:            cfg.NativeTransportMaxQueuedRequests,
		MaxRunningPerConn:    cfg.NativeTransportMaxRunningRequestsPerConnection,
		EventLoops:           cfg.NativeTransportEventLoops,
		IdleTimeout:          cfg.NativeTransportIdleTimeout.Duration,
		MaxConnections:       cfg.NativeTransportMaxConcurrentConnections,
		MaxConnectionsPerIP:  cfg.NativeTransportMaxConcurrentConnectionsPerIP,
		MaxRequestData:       int(cfg.NativeTransportMaxRequestDataInFlight),
		MaxRequestDataPerIP:  int(cfg.NativeTransportMaxRequestDataInFlightPerIP),
		ReceiveQueueCapacity: int(cfg.NativeTransportReceiveQueueCapacity),
		SendQueueCapacity:    int(cfg.NativeTransportSendQueueCapacity),
		SocketSendBuffer:     int(cfg.NativeTransportSocketSendBufferSize),
		MaxResponseData:      int(cfg.NativeTransportMaxResponseDataInFlight),
		HandshakeTimeout:     cfg.NativeTransportHandshakeTimeout.Duration,
		FrameTimeout:         cfg.NativeTransportFrameTimeout.Duration,
		Authenticator:        authn,
		TLS:                  ctls.config,
		TLSOptional:          ctls.optional,
		TLSAddr:              ctls.addr,
		Metrics:              metrics.NewNative(reg),
		Logger:               log,
		Bursts:               n.engine.CommitLog(),
	})
	if err := fe.Start(); err != nil {
		return fail(err)
	}
	n.frontend = fe
	srv.Store(fe)
	n.fe.Store(fe)
	if n.failedCommit.Load() || n.stoppedByFailure.Load() {
		// The commit log failed, or the node fail-stopped, before the
		// transports existed.
		_ = n.stopTransports()
	}
	if bootstrapped {
		// Serving first, then NORMAL: the NEW_NODE event drivers get
		// then finds the node serving.
		if _, err := n.cluster.SetStatus(o.Context, ring.HostID(info.HostID), cluster.StatusNormal); err != nil {
			_ = n.stopTransports()
			return fail(fmt.Errorf("server: bootstrap streamed, but the node could not become NORMAL: %w", err))
		}
		log.Info("bootstrap complete: this node is NORMAL")
	}
	purgeCtx, stop := context.WithCancel(context.Background())
	n.stopPurges = stop
	n.purges.Add(1)
	go func() {
		defer n.purges.Done()
		coord.RunPurges(purgeCtx, purgeInterval)
	}()
	n.purges.Add(1)
	go func() {
		defer n.purges.Done()
		n.spreadLoad(purgeCtx)
	}()
	every := o.CertReloadInterval
	if every <= 0 {
		every = DefaultCertReloadInterval
	}
	for _, st := range []*tlsconf.Store{n.clientCerts, n.internodeCerts} {
		if st != nil {
			n.purges.Add(1)
			go func() {
				defer n.purges.Done()
				watchCerts(purgeCtx, st, every)
			}()
		}
	}
	log.Info("cqld started", "native", fe.Addr(), "native_tls", n.clientTLSMode(), "metrics", n.MetricsAddr(),
		"data", dataDir, "cluster", info.ClusterName, "host_id", fmt.Sprintf("%x", info.HostID))
	return n, nil
}

// Addr is the address clients connect to.
func (n *Node) Addr() string { return n.frontend.Addr() }

// TLSAddr is the address of the TLS port (native_transport_port_ssl), ""
// when there is none.
func (n *Node) TLSAddr() string { return n.frontend.TLSAddr() }

// clientTLSMode says how clients connect, for the start-up line.
func (n *Node) clientTLSMode() string {
	switch on, optional := n.cfg.ClientEncryptionOptions.ClientTLS(); {
	case !on:
		return "off"
	case n.frontend.TLSAddr() != "":
		return "on " + n.frontend.TLSAddr()
	case optional:
		return "optional"
	}
	return "required"
}

// MetricsAddr is the Prometheus endpoint's address, "" when disabled.
func (n *Node) MetricsAddr() string {
	if n.metrics == nil {
		return ""
	}
	return n.metrics.Addr()
}

// Decommissioned is closed once the node has decommissioned: it has left
// the cluster and should be shut down.
func (n *Node) Decommissioned() <-chan struct{} { return n.changes.Left() }

// Frontend exposes the network server, for tests that look at its counters.
func (n *Node) Frontend() *frontend.Server { return n.frontend }

// commitFailed is the commit log's OnFailure: an I/O error stopped it under
// commit_failure_policy stop, stop_commit or die. Under stop, as in
// Cassandra, the node stops its client transports and keeps the process
// (and its metrics endpoint) up for inspection; under stop_commit it goes
// on serving reads, every write failing; under die the commit log exits
// the process next.
func (n *Node) commitFailed(err error) {
	if n.cfg.CommitFailurePolicy != commitlog.PolicyStop {
		return
	}
	n.log.Error("commit log failure: stopping the client transports; the process stays up for inspection "+
		"(commit_failure_policy: stop)", "err", err)
	n.failedCommit.Store(true)
	if n.fe.Load() != nil {
		_ = n.stopTransports()
	}
}

// diskFailed is the engine's OnDiskFailure: the LSM could not record a
// change in its MANIFEST, a data disk failure, and disk_failure_policy
// applies as in Cassandra: die ends the process; stop and stop_paranoid
// fail-stop the node (its client transports and gossip stop, the process
// and its metrics endpoint stay up for inspection); best_effort and
// ignore go on serving reads, since this node has one data directory to
// fall back on. Writes fail until a restart under every policy.
func (n *Node) diskFailed(err error) {
	switch p := n.cfg.DiskFailurePolicy; p {
	case "die", "stop", "stop_paranoid":
		n.failStop(fmt.Errorf("data disk failure (disk_failure_policy %s): %w", p, err))
	default:
		n.log.Error("data disk failure: reads go on, writes fail until a restart (disk_failure_policy: "+p+")", "err", err)
	}
}

// stopTransportsWait bounds how long stopping the transports waits for the
// requests in flight when the commit log failed.
const stopTransportsWait = 10 * time.Second

// stopTransports stops the client transports, once; a later call waits for
// the first and returns its error.
func (n *Node) stopTransports() error {
	return n.stopTransportsWithin(context.Background())
}

func (n *Node) stopTransportsWithin(ctx context.Context) error {
	n.stopOnce.Do(func() {
		ctx, cancel := context.WithTimeout(ctx, stopTransportsWait)
		defer cancel()
		n.stopErr = n.fe.Load().Shutdown(ctx)
	})
	return n.stopErr
}

// TransportsStopped reports whether a commit log failure stopped the
// client transports (commit_failure_policy stop), or a fail-stop did.
func (n *Node) TransportsStopped() bool { return n.failedCommit.Load() || n.stoppedByFailure.Load() }

// Shutdown stops taking requests, lets those in flight finish (within ctx),
// then closes everything. Schema changes are already durable when answered.
// Calling it again, or from several goroutines, waits for the first call
// and returns its result.
func (n *Node) Shutdown(ctx context.Context) error {
	n.shutdown.Do(func() { n.shutdownErr = n.shutdownOnce(ctx) })
	return n.shutdownErr
}

func (n *Node) shutdownOnce(ctx context.Context) error {
	err := n.stopTransportsWithin(ctx)
	n.stopping.Wait()
	n.stopPurges()
	n.purges.Wait()
	if n.metrics != nil {
		err = errors.Join(err, n.metrics.Close(ctx))
	}
	err = errors.Join(err, n.closeCluster())
	err = errors.Join(err, n.engine.Close())
	n.log.Info("cqld stopped")
	return err
}

func resolveIP(host string) net.IP {
	if ip := net.ParseIP(host); ip != nil {
		return ip
	}
	if ips, err := net.LookupIP(host); err == nil && len(ips) > 0 {
		return ips[0]
	}
	return nil
}

// gossipSettle bounds how long a starting node waits, before it serves
// clients, to hear by gossip from the ring's other members.
const gossipSettle = 5 * time.Second

// waitForPeers waits until gossip holds every other member of the ring up,
// for at most bound, as Cassandra waits for gossip to settle before it
// opens its native transport: a seed restarted with no other seed hears
// from its peers only when they next try it, and meanwhile answered its
// clients Unavailable for peers that were up. A peer really down costs a
// start the bound.
func (n *Node) waitForPeers(ctx context.Context, bound time.Duration) {
	if n.cluster == nil {
		return
	}
	deadline := time.Now().Add(bound)
	for {
		var missing []string
		for _, m := range n.cluster.Topology().Members() {
			if !n.cluster.Alive(m.HostID) {
				missing = append(missing, m.Addr.Addr().String())
			}
		}
		if len(missing) == 0 {
			return
		}
		if !time.Now().Before(deadline) {
			n.log.Warn("serving clients before hearing from every member of the ring", "waited", bound, "not_heard_from", strings.Join(missing, ","))
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// The commit log is told where the event loops' bursts of requests begin
// and end.
var _ frontend.Bursts = (*commitlog.Log)(nil)
