package coordinator

import (
	"context"
	"errors"
	"time"

	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"

	"github.com/cqld/cqld/cqlerr"
)

// Timeouts are the deadlines of requests, by kind, as cassandra.yaml's
// read_request_timeout, write_request_timeout, range_request_timeout,
// truncate_request_timeout and request_timeout set them. Zero is no
// deadline.
type Timeouts struct {
	Read, Write, Range, Truncate, Request time.Duration
}

// requestKind is what a plan does, for its deadline and for the timeout it
// answers.
type requestKind uint8

const (
	kindOther requestKind = iota
	kindRead
	kindRange
	kindWrite
	kindTruncate
)

// kindOf classifies a plan.
func kindOf(p plan) requestKind {
	switch p := p.(type) {
	case *writePlan, *batchPlan, *casPlan:
		return kindWrite
	case *tableSelectPlan:
		if p.keys.pkComplete() {
			return kindRead
		}
		return kindRange
	case *truncatePlan:
		return kindTruncate
	}
	return kindOther
}

// withDeadline is ctx bounded by the deadline of p's kind.
func (c *Coordinator) withDeadline(ctx context.Context, p plan) (context.Context, context.CancelFunc) {
	var d time.Duration
	switch kindOf(p) {
	case kindRead:
		d = c.opts.Timeouts.Read
	case kindRange:
		d = c.opts.Timeouts.Range
	case kindWrite:
		d = c.opts.Timeouts.Write
	case kindTruncate:
		d = c.opts.Timeouts.Truncate
	default:
		d = c.opts.Timeouts.Request
	}
	if d <= 0 {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, d)
}

// runPlan runs p within its deadline. A run that its deadline stopped
// answers READ_TIMEOUT or WRITE_TIMEOUT, as a Cassandra coordinator whose
// replica did not answer in time.
func (c *Coordinator) runPlan(ctx context.Context, p plan, x *execution) (message.Message, error) {
	ctx, cancel := c.withDeadline(ctx, p)
	defer cancel()
	x.ctx = ctx
	start := c.latencyStart()
	msg, err := p.run(ctx, c, x)
	c.observed(p, start, err)
	if err != nil && errors.Is(err, context.DeadlineExceeded) {
		return nil, timeoutOf(kindOf(p), writeTypeOf(p), x.opts.Consistency)
	}
	return msg, err
}

// writeTypeOf is the write type a WRITE_TIMEOUT of p reports.
func writeTypeOf(p plan) primitive.WriteType {
	switch p := p.(type) {
	case *casPlan:
		return primitive.WriteTypeCas
	case *batchPlan:
		if p.counter {
			return primitive.WriteTypeCounter
		}
		return primitive.WriteTypeBatch
	case *writePlan:
		if p.counter {
			return primitive.WriteTypeCounter
		}
	}
	return primitive.WriteTypeSimple
}

// timeoutOf is the error of a request its deadline stopped. With one
// replica, the one that did not answer in time is this node's: none of the
// one response the level blocks for was received.
func timeoutOf(kind requestKind, wt primitive.WriteType, cl primitive.ConsistencyLevel) error {
	if kind == kindTruncate {
		return &cqlerr.Error{Code: primitive.ErrorCodeTruncateError, Msg: "Error during truncate: Truncate timed out - received only 0 responses"}
	}
	if kind == kindWrite {
		return &cqlerr.WriteTimeout{Consistency: cl, Received: 0, BlockFor: 1, WriteType: wt}
	}
	return &cqlerr.ReadTimeout{Consistency: cl, Received: 0, BlockFor: 1}
}
