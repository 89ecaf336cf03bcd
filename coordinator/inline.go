package coordinator

import (
	"context"

	"github.com/datastax/go-cassandra-native-protocol/message"

	"github.com/cqld/cqld/protocol"
)

// Inline answers req at once when it is an EXECUTE that cannot block and
// costs about as much as handing it to a worker would: a read of one row
// by its whole primary key, or a blind write while the commit log waits for
// no fsync (periodic mode). It returns nil, having done nothing, for every
// other request; the frontend then hands req to a worker and Handle.
//
// The frontend calls Inline on its event loops, so answering there saves
// the hand-off to a worker and back, which on a busy node costs more than
// the read or the write itself.
func (c *Coordinator) Inline(ctx context.Context, req *protocol.Request) *protocol.Response {
	m, ok := req.Message.(*message.Execute)
	if !ok {
		return nil
	}
	ps, err := c.lookupPrepared(m.QueryId)
	if err != nil || !c.inlines(ps.plan, m.Options) {
		return nil
	}
	msg, err := c.executePrepared(ctx, req, m, ps)
	return respond(msg, err, req.Version)
}

// inlines reports whether p, run with opts, is cheap and cannot block.
func (c *Coordinator) inlines(p plan, opts *message.QueryOptions) bool {
	if opts == nil || isSerial(opts.Consistency) {
		return false
	}
	switch p := p.(type) {
	case *tableSelectPlan:
		return p.index.name == "" && p.keys.onePartition() && p.keys.oneRow(p.t) && p.sel == nil && p.json == nil
	case *writePlan:
		return !p.counter && p.engine == nil && !c.engine.ApplyWaits()
	}
	return false
}
