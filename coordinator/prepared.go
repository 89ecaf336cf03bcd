package coordinator

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/cqld/cqld/metrics"
	"github.com/cqld/cqld/protocol"
	"github.com/cqld/cqld/statements"
	"github.com/cqld/cqld/statements/prepared"
	"github.com/cqld/cqld/storage"
	"github.com/cqld/cqld/systables"
)

// preparedStmt is a statement prepared by some client, compiled: the
// Plan the cache (package prepared) keeps for it, st. It is immutable.
type preparedStmt struct {
	st     *prepared.Statement
	plan   plan
	metaID []byte
	// schema is the schema the plan was analysed against: a PREPARE that
	// finds the statement under an older schema analyses it again.
	schema *storage.Schema
	size   int64 // estimated bytes, charged to the cache
	// encoded is the PREPARED body per protocol version, made on first use
	// by PREPARE_BATCH: answering a known statement copies bytes.
	encoded [protocol.MaxVersion + 1]atomic.Pointer[protocol.RawResult]
}

var _ prepared.Plan = (*preparedStmt)(nil)

// Size is ps's estimated memory, for the cache's budget.
func (ps *preparedStmt) Size() int64 { return ps.size }

// compiled is the compiled form of st, a statement this coordinator
// prepared.
func compiled(st *prepared.Statement) *preparedStmt { return st.Plan.(*preparedStmt) }

// result is the PREPARED answer for ps in protocol version v, encoded.
func (ps *preparedStmt) result(v primitive.ProtocolVersion) message.Message {
	if r := ps.encoded[v].Load(); r != nil {
		return r
	}
	msg := preparedResult(ps, v)
	adaptForVersion(msg, v)
	r, err := protocol.EncodeResult(msg, v)
	if err != nil {
		return msg // the frame encoder reports it
	}
	ps.encoded[v].Store(r)
	return r
}

// Estimated cost of a cached statement: the text twice (as text and in the
// plan's names and literals), plus a fixed part and a part per bind marker
// and result column (their metadata).
const (
	prepBaseBytes   = 512
	prepColumnBytes = 128
)

func (c *Coordinator) prepare(ctx context.Context, req *protocol.Request, m *message.Prepare) (message.Message, error) {
	traceParse(ctx, m.Query)
	ps, err := c.prepareStmt(keyspaceOf(req, m.Keyspace), m.Query)
	if err != nil {
		return nil, err
	}
	return preparedResult(ps, req.Version), nil
}

// prepareStmt returns the statement for query in keyspace: from the cache
// when it holds one analysed against the current schema, else parsed,
// analysed and cached.
func (c *Coordinator) prepareStmt(keyspace, query string) (*preparedStmt, error) {
	var w prepared.Writes
	ps, err := c.prepareInto(keyspace, query, &w)
	c.prep.Persist(&w)
	return ps, err
}

// prepareInto is prepareStmt leaving the store writes in w, so that a
// request preparing many statements persists them in one mutation.
func (c *Coordinator) prepareInto(keyspace, query string, w *prepared.Writes) (*preparedStmt, error) {
	id := prepared.ID(keyspace, query)
	schema := c.catalog.Current()
	if st := c.prep.Get(id); st != nil && compiled(st).schema == schema {
		return compiled(st), nil
	}
	ps, err := c.analyzePrepared(id, keyspace, query, schema)
	if err != nil {
		return nil, err
	}
	if err := c.prep.Put(ps.st, true, w); err != nil {
		return nil, err
	}
	return ps, nil
}

func (c *Coordinator) analyzePrepared(id [16]byte, keyspace, query string, schema *storage.Schema) (*preparedStmt, error) {
	stmt, n, err := statements.Parse(query)
	if err != nil {
		return nil, err
	}
	if n > statements.MaxBindMarkers {
		return nil, invalidf("Too many markers(?). %d markers exceed the allowed maximum of %d", n, statements.MaxBindMarkers)
	}
	p, err := c.analyze(stmt, n, keyspace)
	if err != nil {
		return nil, err
	}
	cols := p.resultColumns()
	size := prepBaseBytes + 2*len(query) + len(keyspace) + prepColumnBytes*(len(p.markers())+len(cols))
	ps := &preparedStmt{plan: p, metaID: metadataID(cols), schema: schema, size: int64(size)}
	ps.st = &prepared.Statement{ID: id, Keyspace: keyspace, Query: query, Plan: ps}
	return ps, nil
}

// preparedResult is the PREPARED answer for ps in protocol version v.
func preparedResult(ps *preparedStmt, v primitive.ProtocolVersion) *message.PreparedResult {
	cols := ps.plan.resultColumns()
	res := &message.PreparedResult{
		PreparedQueryId:   ps.st.ID[:],
		VariablesMetadata: &message.VariablesMetadata{Columns: ps.plan.markers()},
		ResultMetadata:    &message.RowsMetadata{ColumnCount: int32(len(cols)), Columns: cols},
	}
	if v >= primitive.ProtocolVersion4 {
		res.VariablesMetadata.PkIndices = ps.plan.pkIndices()
	}
	if v >= primitive.ProtocolVersion5 {
		res.ResultMetadataId = ps.metaID
	}
	return res
}

// preparedOf is the statement the EXECUTE req names: the one Inline or
// beginTrace found, which it takes from req, else looked up now.
func (c *Coordinator) preparedOf(req *protocol.Request, m *message.Execute) (*preparedStmt, error) {
	if ps, ok := req.Prepared.(*preparedStmt); ok {
		req.Prepared = nil
		return ps, nil
	}
	return c.lookupPrepared(m.QueryId)
}

// lookupPrepared finds the statement an EXECUTE or a BATCH entry names.
func (c *Coordinator) lookupPrepared(rawID []byte) (*preparedStmt, error) {
	var id [16]byte
	if len(rawID) != len(id) {
		return nil, unprepared(rawID)
	}
	copy(id[:], rawID)
	st := c.prep.Get(id)
	if st == nil {
		return nil, unprepared(rawID)
	}
	return compiled(st), nil
}

func (c *Coordinator) execute(ctx context.Context, req *protocol.Request, m *message.Execute) (message.Message, error) {
	ps, err := c.preparedOf(req, m)
	if err != nil {
		return nil, err
	}
	return c.executePrepared(ctx, req, m, ps)
}

// executePrepared runs ps, the statement m names.
func (c *Coordinator) executePrepared(ctx context.Context, req *protocol.Request, m *message.Execute, ps *preparedStmt) (message.Message, error) {
	x, err := c.bindExecute(ctx, req, m, ps)
	if err != nil {
		return nil, err
	}
	return c.runPrepared(ctx, m, ps, x)
}

// runPrepared runs x, the execution of ps that m asks for.
func (c *Coordinator) runPrepared(ctx context.Context, m *message.Execute, ps *preparedStmt, x *execution) (message.Message, error) {
	res, err := x.result(c.runPlan(ctx, ps.plan, x))
	return c.executed(ps, m, res, err)
}

// bindExecute is the execution of ps that m asks for, its values bound.
func (c *Coordinator) bindExecute(ctx context.Context, req *protocol.Request, m *message.Execute, ps *preparedStmt) (*execution, error) {
	opts := m.Options
	if opts == nil {
		opts = &message.QueryOptions{}
	}
	if err := c.authorize(req.Role, ps.plan); err != nil {
		return nil, err
	}
	x := &execution{ctx: ctx, version: req.Version, opts: opts, clock: c.opts.Now, prepared: ps, reqMetaID: m.ResultMetadataId, role: req.Role}
	if err := bindValues(ps.plan, opts, x); err != nil {
		return nil, err
	}
	return x, nil
}

// executed is the answer to m, which ran ps: the plan's, unless ps turned
// out stale or dropped, which the cache then forgets.
func (c *Coordinator) executed(ps *preparedStmt, m *message.Execute, res message.Message, err error) (message.Message, error) {
	switch {
	case err == nil:
	case isStale(err):
		// The table changed under the statement: forget it, so the driver
		// prepares it again against the new definition.
		c.prep.Remove(ps.st)
		return nil, unprepared(m.QueryId)
	case isDropped(err):
		c.prep.Remove(ps.st)
	}
	return res, err
}

func isStale(err error) bool {
	var stale *staleError
	return errors.As(err, &stale)
}

func isDropped(err error) bool {
	var d *droppedError
	return errors.As(err, &d)
}

// droppedError is a plan whose table has been dropped. It reads as the
// INVALID error it wraps.
type droppedError struct{ err error }

func (e *droppedError) Error() string { return e.err.Error() }
func (e *droppedError) Unwrap() error { return e.err }

// openPrepared sets up the statement cache and fills it from the store,
// each statement analysed against today's schema.
func (c *Coordinator) openPrepared() error {
	size := c.opts.PreparedCacheSize
	if size <= 0 {
		size = 10 << 20
	}
	m := c.opts.PreparedMetrics
	if m == nil {
		m = metrics.NewPrepared(prometheus.NewRegistry())
	}
	var store *prepared.Store
	if c.engine != nil {
		t := systables.Lookup("system", "prepared_statements")
		if t == nil || !t.Stored() {
			return fmt.Errorf("coordinator: no stored system.prepared_statements")
		}
		store = prepared.OpenStore(c.engine, t.Storage, c.log, c.opts.Now)
	}
	c.prep = prepared.NewCache(prepared.Options{MaxBytes: size, Metrics: m, Store: store, Now: c.opts.Now})
	schema := c.catalog.Current()
	return c.prep.Load(func(id [16]byte, keyspace, query string) (*prepared.Statement, error) {
		ps, err := c.analyzePrepared(id, keyspace, query, schema)
		if err != nil {
			return nil, err
		}
		return ps.st, nil
	})
}

// PreparedStats are the prepared statement cache's figures
// (system_views.caches). It is safe for concurrent use.
func (c *Coordinator) PreparedStats() prepared.Stats { return c.prep.Stats() }
