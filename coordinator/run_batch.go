package coordinator

import (
	"context"
	"errors"
	"fmt"

	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"

	"github.com/cqld/cqld/mutation"
	"github.com/cqld/cqld/protocol"
	"github.com/cqld/cqld/statements"
)

func (p *batchPlan) run(_ context.Context, c *Coordinator, x *execution) (message.Message, error) {
	if err := checkWriteConsistency(x); err != nil {
		return nil, err
	}
	m := mutation.New()
	defer m.Release()
	for _, w := range p.children {
		if err := w.mutateInto(m, x); err != nil {
			return nil, err
		}
	}
	if err := c.checkBatch(m, p.logged, x); err != nil {
		return nil, err
	}
	if err := c.data.Apply(x.ctx, x.opts.Consistency, m, p.writeType(), func() error { return c.checkAllCurrent(p.children) }); err != nil {
		return nil, batchError(err)
	}
	return &message.VoidResult{}, nil
}

// batchError wraps a batch's apply error, leaving the schema errors a
// client must see as they are.
func batchError(err error) error {
	if isStale(err) || isDropped(err) {
		return err
	}
	return fmt.Errorf("batch: %w", err)
}

// batch executes a BATCH message: each child, prepared or not, with its own
// values, in one atomic mutation.
func (c *Coordinator) batch(ctx context.Context, req *protocol.Request, b *message.Batch) (message.Message, error) {
	if d := c.opts.Timeouts.Write; d > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, d)
		defer cancel()
	}
	msg, err := c.runBatch(ctx, req, b)
	if err != nil && errors.Is(err, context.DeadlineExceeded) {
		return nil, timeoutOf(kindWrite, primitive.WriteTypeBatch, b.Consistency)
	}
	return msg, err
}

// runBatch runs a BATCH message's statements within ctx.
func (c *Coordinator) runBatch(ctx context.Context, req *protocol.Request, b *message.Batch) (message.Message, error) {
	if len(b.Children) == 0 {
		return &message.VoidResult{}, nil
	}
	if len(b.Children) > 65535 {
		return nil, invalidf("Too many statements in a batch: %d (the maximum is 65535)", len(b.Children))
	}
	opts := &message.QueryOptions{Consistency: b.Consistency, SerialConsistency: b.SerialConsistency, DefaultTimestamp: b.DefaultTimestamp, Keyspace: b.Keyspace, NowInSeconds: b.NowInSeconds}
	ks := keyspaceOf(req, b.Keyspace)
	base := &execution{ctx: ctx, version: req.Version, opts: opts, clock: c.opts.Now, role: req.Role}
	base.now()
	var cas *casPlan
	var casXs []*execution
	var plainWs []*writePlan
	var plainXs []*execution
	counter := false
	for i, ch := range b.Children {
		var p plan
		if ch.Id != nil {
			ps, err := c.lookupPrepared(ch.Id)
			if err != nil {
				return nil, err
			}
			p = ps.plan
		} else {
			stmt, n, err := statements.Parse(ch.Query)
			if err != nil {
				return nil, err
			}
			if p, err = c.analyze(stmt, n, ks); err != nil {
				return nil, err
			}
		}
		if err := c.authorize(req.Role, p); err != nil {
			return nil, err
		}
		x := &execution{ctx: ctx, version: req.Version, opts: opts, clock: c.opts.Now, at: base.at, role: req.Role}
		if err := bindValues(p, &message.QueryOptions{PositionalValues: ch.Values}, x); err != nil {
			return nil, fmt.Errorf("statement %d of the batch: %w", i, err)
		}
		switch w := p.(type) {
		case *writePlan:
			if cas == nil {
				cas = &casPlan{batch: true}
			}
			cas.writes = append(cas.writes, casWrite{w: w})
			casXs = append(casXs, x)
			plainWs, plainXs = append(plainWs, w), append(plainXs, x)
			counter = counter || w.counter
		case *casPlan:
			if cas == nil {
				cas = &casPlan{batch: true}
			}
			for _, cw := range w.writes {
				cas.writes = append(cas.writes, cw)
				casXs = append(casXs, x)
			}
		default:
			return nil, invalidf("Invalid statement in batch: only UPDATE, INSERT and DELETE statements are allowed.")
		}
	}
	if len(cas.writes) > len(plainWs) {
		if counter {
			return nil, errConditionalCounter
		}
		return cas.runWith(c, casXs)
	}
	if err := checkWriteConsistency(base); err != nil {
		return nil, err
	}
	m := mutation.New()
	defer m.Release()
	for i, w := range plainWs {
		if err := w.mutateInto(m, plainXs[i]); err != nil {
			return nil, err
		}
	}
	logged := b.Type == primitive.BatchTypeLogged
	if err := c.checkBatch(m, logged, base); err != nil {
		return nil, err
	}
	if err := c.data.Apply(ctx, opts.Consistency, m, batchWriteType(logged, counter), func() error { return c.checkAllCurrent(plainWs) }); err != nil {
		return nil, batchError(err)
	}
	return base.result(&message.VoidResult{}, nil)
}
