package coordinator

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"runtime/debug"
	"sync/atomic"
	"time"

	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"

	"github.com/cqld/cqld/auth"
	"github.com/cqld/cqld/metrics"
	"github.com/cqld/cqld/protocol"
	"github.com/cqld/cqld/replica"
	"github.com/cqld/cqld/schema"
	"github.com/cqld/cqld/statements"
	"github.com/cqld/cqld/statements/functions"
	"github.com/cqld/cqld/statements/prepared"
	"github.com/cqld/cqld/storage"
	"github.com/cqld/cqld/systables"
	"github.com/cqld/cqld/tracing"
)

// ReleaseVersion is the Cassandra version cqld reports.
const ReleaseVersion = systables.ReleaseVersion

// Options configures a Coordinator.
type Options struct {
	Catalog       *storage.Catalog
	Engine        *storage.Engine
	Node          storage.NodeInfo
	DataCenter    string
	Rack          string
	ListenAddress net.IP
	RPCAddress    net.IP // the address clients reach this node at
	NativePort    int
	StoragePort   int
	// Local is this node's replica; nil means one over Engine. Data reaches
	// every replica at a consistency level; nil means this node alone,
	// holding every partition on Local.
	Local replica.Replica
	Data  Data
	// Alone reports whether this node is the ring's only member, none
	// joining or leaving: only then may a request run inline, on an event
	// loop. Nil means always (a node on its own).
	Alone func() bool
	// Cluster, when set, is what system.local and system.peers say about
	// the ring: the other nodes and this node's tokens. Nil is a node on
	// its own, with Node's tokens.
	Cluster ClusterView
	// Publish pushes an event to registered clients; nil drops events.
	Publish func(message.Message)
	Logger  *slog.Logger
	// Schema applies schema changes to Catalog; nil makes one over Catalog
	// and Engine.
	Schema *schema.Schema
	// SchemaChanges orders and applies the schema changes this node
	// coordinates; nil applies them to Schema here, publishing their
	// events through Publish.
	SchemaChanges schema.Submitter
	// Roles is the node's role state, which the role statements and the
	// permission checks read and system_auth shows; nil is none.
	// RoleChanges orders and applies role changes (the metadata log);
	// nil applies them to Roles alone.
	Roles       *auth.Store
	RoleChanges auth.Submitter
	// Authorizer is set under authorizer: CassandraAuthorizer: every
	// statement's permission is checked against Roles, and creators are
	// granted permissions on what they create.
	Authorizer bool
	// PreparedCacheSize bounds the prepared statements' estimated memory
	// (prepared_statements_cache_size); 0 means 10 MiB.
	PreparedCacheSize int64
	// Timeouts are the requests' deadlines by kind; zero ones never end.
	Timeouts Timeouts
	// BatchLimits warn about and refuse large batches.
	BatchLimits BatchLimits
	// Tombstones warn about and fail reads that meet many tombstones.
	Tombstones TombstoneLimits
	// MaxResponseSize bounds a response's frame body and what a read
	// gathers for it (response.go): native_transport_max_frame_size; 0
	// means 16 MiB.
	MaxResponseSize int
	// PreparedMetrics, when set, receives the prepared-statement cache's
	// metrics; nil keeps them unregistered.
	PreparedMetrics *metrics.Prepared
	// Views are the node's live figures system_views shows; nil leaves
	// those tables empty.
	Views systables.Views
	// Latencies, when set, gets the time this node takes to answer each
	// read, scan and write of a user table (system_views'
	// coordinator_*_latency).
	Latencies *metrics.TableLatencies
	// Functions are the settings user-defined functions run with
	// (user_defined_functions_*); the zero value disables them.
	Functions functions.UserOptions
	// Tracer records the sessions of traced requests (nil: none are).
	Tracer *tracing.Tracer
	// Now is the clock behind server-side write timestamps, now() and the
	// other current-time functions, and TTL expiry on reads and writes;
	// nil means time.Now. It is called concurrently. Tests pass a clock
	// they advance, so TTLs run out without sleeping.
	Now func() time.Time
}

// Coordinator executes requests. It is safe for concurrent use.
type Coordinator struct {
	opts    Options
	catalog *storage.Catalog
	engine  *storage.Engine
	// data is the coordinator's one way to user data; local is this
	// node's replica, written to directly only by inline requests whose
	// replicas are all here.
	data       Data
	local      replica.Replica
	node       storage.NodeInfo
	generation int32
	log        *slog.Logger
	// sys are the system tables; sysRows reads them on this node.
	sys     map[string]map[string]*tableInfo
	sysRows nodeLocal

	schema *schema.Schema
	// schemaChanges takes each DDL statement's change to be applied.
	schemaChanges schema.Submitter

	// users are the user-defined functions and aggregates, compiled.
	users *functions.Users

	prep *prepared.Cache
	// byID indexes the current schema's tables by id.
	byID atomic.Pointer[tablesByID]
}

// New returns a coordinator over the given catalog.
func New(opts Options) (*Coordinator, error) {
	sys, err := systemTables()
	if err != nil {
		return nil, err
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Publish == nil {
		opts.Publish = func(message.Message) {}
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	c := &Coordinator{
		opts:          opts,
		catalog:       opts.Catalog,
		engine:        opts.Engine,
		local:         opts.Local,
		data:          opts.Data,
		node:          opts.Node,
		generation:    int32(opts.Now().Unix()),
		sys:           sys,
		log:           opts.Logger,
		schema:        opts.Schema,
		schemaChanges: opts.SchemaChanges,
	}
	c.users = functions.NewUsers(c.userOptions())
	if c.local == nil {
		c.local = replica.NewLocal(opts.Engine)
	}
	c.sysRows = nodeLocal{systables.NewReplica(sysState{c}, c.local, opts.Now)}
	if c.data == nil {
		d, err := aloneData(opts, c.local)
		if err != nil {
			return nil, err
		}
		c.data = d
	}
	if c.schema == nil {
		c.schema = schema.New(schema.Options{Catalog: opts.Catalog, Data: opts.Engine, Constant: Constant,
			SystemKeyspace: systables.IsSystemKeyspace, Logger: opts.Logger})
	}
	if c.schemaChanges == nil {
		c.schemaChanges = schema.NewLocal(c.schema, opts.Publish)
	}
	if err := c.openPrepared(); err != nil {
		return nil, err
	}
	if err := c.schema.FinishIndexBuilds(opts.Now()); err != nil {
		return nil, err
	}
	return c, nil
}

// SchemaVersion is the UUID drivers compare for schema agreement: a
// name-based (version 3) UUID of the schema digest.
func (c *Coordinator) SchemaVersion() [16]byte {
	return systables.SchemaVersion(c.catalog.Digest())
}

// Handle executes one QUERY, PREPARE, EXECUTE, BATCH or PREPARE_BATCH.
func (c *Coordinator) Handle(ctx context.Context, req *protocol.Request) (resp *protocol.Response) {
	var (
		msg message.Message
		err error
	)
	defer c.recoverRequest(req, &resp)
	if ts := c.beginTrace(req); ts != nil {
		ctx = tracing.WithSession(ctx, ts)
		defer func() { endTrace(ts, req, resp) }()
	}
	switch m := req.Message.(type) {
	case *message.Query:
		msg, err = c.query(ctx, req, m)
	case *message.Prepare:
		msg, err = c.prepare(ctx, req, m)
	case *message.Execute:
		msg, err = c.execute(ctx, req, m)
	case *message.Batch:
		msg, err = c.batch(ctx, req, m)
	case *protocol.PrepareBatch:
		msg, err = c.prepareBatch(req, m)
	default:
		err = protocolErrorf("Unexpected message %T", req.Message)
	}
	return respond(msg, err, req.Version)
}

// recoverRequest turns a panic while running req into a SERVER_ERROR
// answer, as Cassandra answers an unexpected exception: the bug is logged
// with its stack, and one request does not take the node down.
func (c *Coordinator) recoverRequest(req *protocol.Request, resp **protocol.Response) {
	r := recover()
	if r == nil {
		return
	}
	*resp = c.internalError(req, r)
}

// internalError logs the panic r of request req and is its answer.
func (c *Coordinator) internalError(req *protocol.Request, r any) *protocol.Response {
	c.log.Error("request failed with an internal error", "message", fmt.Sprintf("%T", req.Message), "error", r, "stack", string(debug.Stack()))
	return respond(nil, fmt.Errorf("internal error: %v", r), req.Version)
}

// respond is the response carrying msg, or err as an ERROR message.
func respond(msg message.Message, err error, v primitive.ProtocolVersion) *protocol.Response {
	if err != nil {
		msg = errorMessage(err)
	}
	var warnings []string
	if w, ok := msg.(*warned); ok {
		msg, warnings = w.Message, w.warnings
	}
	adaptForVersion(msg, v)
	return &protocol.Response{Message: msg, Warnings: warnings}
}

// keyspaceOf picks the keyspace a request runs in: v5's per-request keyspace
// wins over the connection's.
func keyspaceOf(req *protocol.Request, perRequest string) string {
	if perRequest != "" {
		return perRequest
	}
	return req.Keyspace
}

func (c *Coordinator) query(ctx context.Context, req *protocol.Request, m *message.Query) (message.Message, error) {
	opts := m.Options
	if opts == nil {
		opts = &message.QueryOptions{}
	}
	traceParse(ctx, m.Query)
	stmt, n, err := statements.Parse(m.Query)
	if err != nil {
		return nil, err
	}
	p, err := c.analyze(stmt, n, keyspaceOf(req, opts.Keyspace))
	if err != nil {
		return nil, err
	}
	if err := c.authorize(req.Role, p); err != nil {
		return nil, err
	}
	x := &execution{ctx: ctx, version: req.Version, opts: opts, clock: c.opts.Now, query: m.Query, role: req.Role}
	if err := bindValues(p, opts, x); err != nil {
		return nil, err
	}
	return x.result(c.runPlan(ctx, p, x))
}

// execution is one run of a plan.
type execution struct {
	// ctx is the request's: its deadline and cancellation reach every
	// replica call the run makes.
	ctx     context.Context
	version primitive.ProtocolVersion
	opts    *message.QueryOptions
	values  [][]byte // positional, resolved from named values when needed
	unset   []bool   // values[i] was bound as unset (v4+)
	// warnings are the client warnings the statement noted (warn).
	warnings []string
	clock    func() time.Time // Options.Now
	at       time.Time
	// query is the QUERY's text; EXECUTE's is prepared.query.
	query string
	// role is the role the connection logged in as; "" under
	// AllowAllAuthenticator.
	role string
	// prepared is set for EXECUTE, so results can honour skip_metadata and
	// v5's result metadata id.
	prepared  *preparedStmt
	reqMetaID []byte
	// casData, while a lightweight transaction decides, is the partition
	// it decides on: list operations that read the current list read it
	// there, as Cassandra's CAS does, not from the replicas again.
	casData *storage.Partition
	// local is set on a read the coordinator runs inline (inlinesHere):
	// this node's replica alone holds its data at its level, so it is
	// read there without asking the proxy to place it again.
	local bool
	// valBuf and unsetBuf hold values and unset for the common statement
	// with few markers, saving two allocations.
	valBuf   [8][]byte
	unsetBuf [8]bool
}

// text is the CQL text of the statement run.
func (x *execution) text() string {
	if x.prepared != nil {
		return x.prepared.st.Query
	}
	return x.query
}

// now is the execution's clock, fixed for the whole statement so every
// now() and every server-side timestamp of one statement agree.
func (x *execution) now() time.Time {
	if x.at.IsZero() {
		x.at = x.clock()
	}
	return x.at
}

// nowInSeconds is the statement's time for TTLs, expiry and deletion
// times: v5's now_in_seconds when the request sets it, as Cassandra's
// QueryOptions.getNowInSeconds, else its clock. Write timestamps and
// now() keep the clock.
func (x *execution) nowInSeconds() int32 {
	if n := x.opts.NowInSeconds; n != nil {
		return *n
	}
	return int32(x.now().Unix())
}

// bindValues resolves the request's values against the plan's markers
// into x: positional, or named and matched to the markers' names.
func bindValues(p plan, opts *message.QueryOptions, x *execution) error {
	markers := p.markers()
	if n := len(markers); n <= len(x.valBuf) {
		x.values, x.unset = x.valBuf[:n:n], x.unsetBuf[:n:n]
	} else {
		x.values, x.unset = make([][]byte, n), make([]bool, n)
	}
	if len(opts.PositionalValues) > 0 || len(opts.NamedValues) == 0 {
		if len(opts.PositionalValues) != len(markers) {
			return invalidf("There were %d markers(?) in CQL but %d bound variables", len(markers), len(opts.PositionalValues))
		}
		for i, v := range opts.PositionalValues {
			x.values[i], x.unset[i] = v.Contents, v.Type == primitive.ValueTypeUnset
		}
		return nil
	}
	if len(opts.NamedValues) != len(markers) {
		return invalidf("There were %d markers in CQL but %d bound variables", len(markers), len(opts.NamedValues))
	}
	for i, mk := range markers {
		v, ok := opts.NamedValues[mk.Name]
		if !ok {
			return invalidf("Invalid unset value for column %s", mk.Name)
		}
		x.values[i], x.unset[i] = v.Contents, v.Type == primitive.ValueTypeUnset
	}
	return nil
}

func (c *Coordinator) String() string {
	return fmt.Sprintf("coordinator(host %x)", c.node.HostID)
}
