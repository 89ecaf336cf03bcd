package coordinator

import (
	"context"
	"errors"

	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"

	"github.com/cqld/cqld/protocol"
	"github.com/cqld/cqld/statements"
)

// preparedStmt is a statement prepared by some client.
type preparedStmt struct {
	id       [16]byte
	query    string
	keyspace string
	plan     plan
	metaID   []byte
}

func (c *Coordinator) prepare(req *protocol.Request, m *message.Prepare) (message.Message, error) {
	ks := keyspaceOf(req, m.Keyspace)
	id := statementID(ks, m.Query)
	c.prepMu.RLock()
	ps := c.prepared[id]
	c.prepMu.RUnlock()
	if ps == nil {
		stmt, n, err := statements.Parse(m.Query)
		if err != nil {
			return nil, err
		}
		p, err := c.analyze(stmt, n, ks)
		if err != nil {
			return nil, err
		}
		ps = &preparedStmt{id: id, query: m.Query, keyspace: ks, plan: p, metaID: metadataID(p.resultColumns())}
		c.prepMu.Lock()
		c.prepared[id] = ps
		c.prepMu.Unlock()
	}
	res := &message.PreparedResult{
		PreparedQueryId:   ps.id[:],
		VariablesMetadata: &message.VariablesMetadata{Columns: ps.plan.markers()},
		ResultMetadata:    &message.RowsMetadata{ColumnCount: int32(len(ps.plan.resultColumns())), Columns: ps.plan.resultColumns()},
	}
	if req.Version >= primitive.ProtocolVersion4 {
		res.VariablesMetadata.PkIndices = ps.plan.pkIndices()
	}
	if req.Version >= primitive.ProtocolVersion5 {
		res.ResultMetadataId = ps.metaID
	}
	return res, nil
}

func (c *Coordinator) execute(ctx context.Context, req *protocol.Request, m *message.Execute) (message.Message, error) {
	var id [16]byte
	if len(m.QueryId) != len(id) {
		return nil, unprepared(m.QueryId)
	}
	copy(id[:], m.QueryId)
	c.prepMu.RLock()
	ps := c.prepared[id]
	c.prepMu.RUnlock()
	if ps == nil {
		return nil, unprepared(m.QueryId)
	}
	opts := m.Options
	if opts == nil {
		opts = &message.QueryOptions{}
	}
	x := &execution{version: req.Version, opts: opts, prepared: ps, reqMetaID: m.ResultMetadataId}
	if err := bindValues(ps.plan, opts, x); err != nil {
		return nil, err
	}
	res, err := ps.plan.run(ctx, c, x)
	if err != nil && isStale(err) {
		// The table changed under the statement: forget it, so the driver
		// prepares it again against the new definition.
		c.prepMu.Lock()
		if c.prepared[id] == ps {
			delete(c.prepared, id)
		}
		c.prepMu.Unlock()
		return nil, unprepared(m.QueryId)
	}
	return res, err
}

func isStale(err error) bool {
	var stale *staleError
	return errors.As(err, &stale)
}
