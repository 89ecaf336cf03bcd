package cqlclient

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"

	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"

	"github.com/cqld/cqld/protocol"
)

// Statement is a query to prepare and the keyspace to prepare it in (""
// for none: then its tables must be qualified).
type Statement = protocol.BatchStatement

// Prepared is a prepared statement as the server described it. ID and
// ResultMetadataID are read at once; the bind and result metadata are
// decoded on the first call of Metadata, so a caller that only needs the
// id to EXECUTE never pays for them. It is safe for concurrent use.
type Prepared struct {
	ID []byte
	// ResultMetadataID is v5's result metadata id (nil on v4).
	ResultMetadataID []byte

	raw     *protocol.RawResult
	version primitive.ProtocolVersion
	once    sync.Once
	meta    *message.PreparedResult
	err     error
}

// Metadata is the whole PREPARED result: the bind markers' metadata with
// the partition key indexes (Variables) and the result rows' (Result). The
// caller must not modify it.
func (p *Prepared) Metadata() (*message.PreparedResult, error) {
	p.once.Do(func() {
		msg, err := protocol.DecodeResult(p.raw, p.version)
		if err != nil {
			p.err = fmt.Errorf("cqlclient: PREPARED result: %w", err)
			return
		}
		p.meta = msg.(*message.PreparedResult) // the reader checked the kind
	})
	return p.meta, p.err
}

// Body is the PREPARED result's body as the server sent it. The caller
// must not modify it.
func (p *Prepared) Body() []byte { return p.raw.Body }

// Result is one statement's outcome in PrepareBatch: Prepared, or the
// error (a *ServerError when the server refused the statement).
type Result struct {
	Prepared *Prepared
	Err      error
}

// fromRaw reads the ids of a PREPARED body: [int] kind, [short bytes] id,
// and on v5 [short bytes] result metadata id.
func fromRaw(raw *protocol.RawResult, v primitive.ProtocolVersion) (*Prepared, error) {
	b := raw.Body
	shortBytes := func() []byte {
		if len(b) < 2 || len(b) < 2+int(binary.BigEndian.Uint16(b)) {
			b = nil
			return nil
		}
		n := int(binary.BigEndian.Uint16(b))
		out := b[2 : 2+n]
		b = b[2+n:]
		return out
	}
	if len(b) < 4 || binary.BigEndian.Uint32(b) != uint32(primitive.ResultTypePrepared) {
		return nil, errors.New("cqlclient: RESULT is not PREPARED")
	}
	b = b[4:]
	p := &Prepared{raw: raw, version: v, ID: shortBytes()}
	if v >= primitive.ProtocolVersion5 {
		p.ResultMetadataID = shortBytes()
	}
	if b == nil || len(p.ID) == 0 {
		return nil, errors.New("cqlclient: PREPARED result too short")
	}
	return p, nil
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
	r, ok := msg.(*protocol.RawResult)
	if !ok {
		return nil, fmt.Errorf("cqlclient: PREPARE answered %v", msg)
	}
	return fromRaw(r, c.opts.Version)
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
	if len(groups) == 1 { // the usual case: no goroutine to wait for
		return out, c.prepareGroup(ctx, stmts, groups[0], out)
	}
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
		raw, ok := res.Results[j].(*protocol.RawResult)
		switch {
		case !ok:
			out[i].Err = fmt.Errorf("cqlclient: unexpected result %v", res.Results[j])
		case raw.OpCode == primitive.OpCodeResult:
			out[i].Prepared, out[i].Err = fromRaw(raw, c.opts.Version)
		default:
			msg, err := protocol.DecodeResult(raw, c.opts.Version)
			if e, ok := msg.(message.Error); ok && err == nil {
				err = serverError(e)
			}
			out[i].Err = err
		}
	}
	return nil
}
