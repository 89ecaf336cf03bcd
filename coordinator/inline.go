package coordinator

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"

	"github.com/cqld/cqld/protocol"
)

// Inline takes req when it is an EXECUTE that cannot block and costs about
// as much as handing it to a worker would: a read of one row by its whole
// primary key, or a blind write; or one of a statement not prepared,
// answered UNPREPARED. A read, and a write while the commit log
// waits for no fsync (periodic mode), are answered at once: resp. A write
// that waits for a sync is started, and later gets its answer once the sync
// and the memtable apply are done, from the commit log's completion
// goroutine: resp is nil. taken is false for every other request, which
// the frontend then hands to a worker and Handle: nothing was done but
// the statement's lookup, which Inline leaves to Handle (req.Prepared).
//
// The frontend calls Inline on its event loops: answering there saves the
// hand-off to a worker and back, which on a busy node costs more than the
// read or the write itself, and a write waiting for its fsync holds no
// goroutine.
func (c *Coordinator) Inline(ctx context.Context, req *protocol.Request, later protocol.Later) (resp *protocol.Response, taken bool) {
	defer c.recoverInline(req, &resp, &taken)
	m, ok := req.Message.(*message.Execute)
	if !ok || c.opts.Tracer != nil && (req.Tracing || c.opts.Tracer.Sampling()) {
		return nil, false // traced: Handle records the session
	}
	ps, err := c.lookupPrepared(m.QueryId)
	if err != nil {
		return respond(nil, err, req.Version), true // UNPREPARED
	}
	if !inlines(ps.plan, m.Options) || !c.inlinesHere(ps.plan, m.Options.Consistency) {
		req.Prepared = ps
		return nil, false
	}
	x, err := c.bindExecute(ctx, req, m, ps)
	if err != nil {
		return respond(nil, err, req.Version), true
	}
	w, ok := ps.plan.(*writePlan)
	if !ok {
		// A read of this node's replica, which inlinesHere found to be
		// its only one at the request's level.
		x.local = true
		msg, err := c.runPrepared(ctx, m, ps, x)
		return respond(msg, err, req.Version), true
	}
	// A write goes to this node's replica, which inlinesHere found to be
	// its only one: answered at once when the commit log acknowledges it
	// buffered, later when it waits for a sync.
	iw := inlineWrites.Get().(*inlineWrite)
	iw.c, iw.w, iw.ps, iw.m, iw.req, iw.later = c, w, ps, m, req, later
	iw.start = c.latencyStart()
	pending, msg, err := w.start(c, x, iw.applied)
	if pending {
		if t := c.opts.Timeouts.Write; t > 0 {
			iw.d.start(time.Until(req.Received.Add(t)), func() {
				later.Answer(req, respond(nil, timeoutOf(kindWrite, writeTypeOf(w), m.Options.Consistency), req.Version))
			})
		}
		return nil, true
	}
	// Answered at once: nothing else holds iw.
	c.observed(w, iw.start, err)
	*iw = inlineWrite{applied: iw.applied}
	inlineWrites.Put(iw)
	msg, err = c.executed(ps, m, msg, err)
	return respond(msg, err, req.Version), true
}

// inlineWrite is a write taken inline: what its answer, given later when
// it waits for its commit log sync, needs. It comes from a pool, and goes
// back when the write was answered at once; one answered later is left
// to the collector, as its timer may still fire.
type inlineWrite struct {
	c     *Coordinator
	w     *writePlan
	ps    *preparedStmt
	m     *message.Execute
	req   *protocol.Request
	later protocol.Later
	start time.Time
	d     inlineDeadline
	// applied is iw.answer, made once per pooled value so that a write
	// makes no closure for it.
	applied func(error)
}

var inlineWrites = sync.Pool{New: func() any {
	iw := new(inlineWrite)
	iw.applied = iw.answer
	return iw
}}

// answer answers the write once the engine applied it, or failed to,
// unless its deadline answered first.
func (iw *inlineWrite) answer(err error) {
	if iw.d.answer() {
		msg, err := iw.w.applied(err)
		iw.c.observed(iw.w, iw.start, err)
		msg, err = iw.c.executed(iw.ps, iw.m, msg, err)
		iw.later.Answer(iw.req, respond(msg, err, iw.req.Version))
	}
}

// inlineDeadline answers a write taken inline WRITE_TIMEOUT once
// write_request_timeout passes while it waits for its commit log sync, as
// a write on a worker does (replica.Local.Apply): the event loop cannot
// wait, so a timer does. Whichever comes first, the sync or the timer,
// answers; the write itself is not undone, as Cassandra's is not.
type inlineDeadline struct {
	answered atomic.Bool
	timer    atomic.Pointer[time.Timer]
}

// answer reports whether the caller is first to answer, and stops the
// timer if it is.
func (d *inlineDeadline) answer() bool {
	if !d.answered.CompareAndSwap(false, true) {
		return false
	}
	if t := d.timer.Load(); t != nil {
		t.Stop()
	}
	return true
}

// start runs timedOut after after, unless the write is answered first.
func (d *inlineDeadline) start(after time.Duration, timedOut func()) {
	t := time.AfterFunc(after, func() {
		if d.answer() {
			timedOut()
		}
	})
	d.timer.Store(t)
	if d.answered.Load() {
		t.Stop() // answered before the timer was stored
	}
}

// inlinesHere reports whether p's data is on this node alone at level cl,
// so that running it inline touches no other node.
func (c *Coordinator) inlinesHere(p plan, cl primitive.ConsistencyLevel) bool {
	if c.opts.Alone != nil && !c.opts.Alone() {
		return false
	}
	var t *tableInfo
	switch p := p.(type) {
	case *tableSelectPlan:
		t = p.t
	case *writePlan:
		t = p.t
	default:
		return false
	}
	if t.system {
		return false // its rows are made on each read: not cheap enough
	}
	ks := c.catalog.Current().Keyspace(t.def.Keyspace)
	return ks != nil && c.data.AllLocal(ks, 0, cl)
}

// inlines reports whether p, run with opts, is cheap and cannot block.
func inlines(p plan, opts *message.QueryOptions) bool {
	if opts == nil || isSerial(opts.Consistency) {
		return false
	}
	switch p := p.(type) {
	case *tableSelectPlan:
		return p.index.name == "" && p.keys.onePartition() && p.keys.oneRow(p.t) && p.sel == nil && p.json == nil
	case *writePlan:
		return !p.counter && p.lists == nil
	}
	return false
}

// recoverInline is recoverRequest for Inline: a request that panicked was
// taken, and is answered with the error.
func (c *Coordinator) recoverInline(req *protocol.Request, resp **protocol.Response, taken *bool) {
	r := recover()
	if r == nil {
		return
	}
	*resp, *taken = c.internalError(req, r), true
}
