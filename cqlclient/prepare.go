package cqlclient

import (
	"context"
	"fmt"
	"sync"

	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"

	"github.com/cqld/cqld/protocol"
)

// Statement is a query to prepare and the keyspace to prepare it in (""
// for none: then its tables must be qualified).
type Statement = protocol.BatchStatement

// Prepared is a prepared statement as the server described it.
type Prepared struct {
	ID []byte
	// ResultMetadataID is v5's result metadata id (nil on v4).
	ResultMetadataID []byte
	// Variables describes the bind markers (and, v4+, the partition key
	// indexes); Result the rows the statement returns.
	Variables *message.VariablesMetadata
	Result    *message.RowsMetadata
}

// Result is one statement's outcome in PrepareBatch: Prepared, or the
// error (a *ServerError when the server refused the statement).
type Result struct {
	Prepared *Prepared
	Err      error
}

func fromPrepared(r *message.PreparedResult) *Prepared {
	return &Prepared{ID: r.PreparedQueryId, ResultMetadataID: r.ResultMetadataId, Variables: r.VariablesMetadata, Result: r.ResultMetadata}
}

// Prepare prepares one statement with a plain PREPARE. A statement's
// keyspace needs protocol v5.
func (c *Conn) Prepare(ctx context.Context, s Statement) (*Prepared, error) {
	m := &message.Prepare{Query: s.Query, Keyspace: s.Keyspace}
	if s.Keyspace != "" && c.opts.Version < primitive.ProtocolVersion5 {
		return nil, fmt.Errorf("cqlclient: PREPARE carries a keyspace only in protocol v5 (statement in %q)", s.Keyspace)
	}
	msg, err := c.roundTrip(ctx, m)
	if err != nil {
		return nil, err
	}
	r, ok := msg.(*message.PreparedResult)
	if !ok {
		return nil, fmt.Errorf("cqlclient: PREPARE answered %v", msg)
	}
	return fromPrepared(r), nil
}

// PrepareBatch prepares stmts and returns one Result per statement, in
// order. With the extension on, the statements travel in PREPARE_BATCH
// requests: one, or as many as the frame limit and the 65,535-statement
// limit require, sent together; a statement too long for any frame fails
// alone, without being sent. Without the extension every statement is a
// PREPARE, all in flight at once.
//
// The error is for the requests as a whole (a broken connection, a
// request the server rejected); the statements' own errors are in their
// Results.
func (c *Conn) PrepareBatch(ctx context.Context, stmts []Statement) ([]Result, error) {
	out := make([]Result, len(stmts))
	if !c.batchOn {
		var wg sync.WaitGroup
		for i := range stmts {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				out[i].Prepared, out[i].Err = c.Prepare(ctx, stmts[i])
			}(i)
		}
		wg.Wait()
		return out, nil
	}
	groups := c.split(stmts, out)
	errs := make([]error, len(groups))
	var wg sync.WaitGroup
	for g, idx := range groups {
		wg.Add(1)
		go func(g int, idx []int) {
			defer wg.Done()
			errs[g] = c.prepareGroup(ctx, stmts, idx, out)
		}(g, idx)
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

// split groups the indexes of stmts into requests that fit a frame; a
// statement that fits none gets its error in out.
func (c *Conn) split(stmts []Statement, out []Result) [][]int {
	const overhead = 4 // the count
	var groups [][]int
	var cur []int
	size := overhead
	for i, s := range stmts {
		n := 4 + len(s.Query) + 2 + len(s.Keyspace)
		if overhead+n > c.opts.MaxFrameSize || len(s.Keyspace) > 0xffff {
			out[i].Err = fmt.Errorf("cqlclient: statement of %d bytes does not fit the frame limit of %d bytes", n, c.opts.MaxFrameSize)
			continue
		}
		if len(cur) == protocol.MaxPrepareBatch || size+n > c.opts.MaxFrameSize {
			groups = append(groups, cur)
			cur, size = nil, overhead
		}
		cur = append(cur, i)
		size += n
	}
	if len(cur) > 0 {
		groups = append(groups, cur)
	}
	return groups
}

func (c *Conn) prepareGroup(ctx context.Context, stmts []Statement, idx []int, out []Result) error {
	req := &protocol.PrepareBatch{Statements: make([]Statement, len(idx))}
	for j, i := range idx {
		req.Statements[j] = stmts[i]
	}
	msg, err := c.roundTrip(ctx, req)
	if err != nil {
		return err
	}
	res, ok := msg.(*protocol.PreparedBatch)
	if !ok || len(res.Results) != len(idx) {
		return fmt.Errorf("cqlclient: PREPARE_BATCH of %d statements answered %v", len(idx), msg)
	}
	for j, i := range idx {
		switch r := res.Results[j].(type) {
		case *message.PreparedResult:
			out[i].Prepared = fromPrepared(r)
		case message.Error:
			out[i].Err = serverError(r)
		}
	}
	return nil
}
