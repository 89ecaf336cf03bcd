package coordinator

import (
	"context"
	"errors"
	"fmt"

	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"

	"github.com/cqld/cqld/cqlerr"
	"github.com/cqld/cqld/schema"
	"github.com/cqld/cqld/statements"
	"github.com/cqld/cqld/storage"
	"github.com/cqld/cqld/systables"
)

func (p *ddlPlan) run(ctx context.Context, c *Coordinator, x *execution) (message.Message, error) {
	ch := schema.NewChange(p.stmt, x.text(), p.session, serverTimestamp(x.now()), c.dataCenters())
	var before *storage.KeyspaceDef
	if s, ok := p.stmt.(*statements.AlterKeyspace); ok {
		before, _ = c.catalog.Keyspace(s.Keyspace)
	}
	res, err := c.schemaChanges.Submit(ctx, ch)
	if err != nil {
		return nil, err
	}
	c.replicationWarnings(res, before, x)
	if err := c.grantCreator(ctx, x.role, res); err != nil {
		return nil, err
	}
	return res, nil
}

func (p *truncatePlan) run(ctx context.Context, c *Coordinator, _ *execution) (message.Message, error) {
	if systables.IsVirtualKeyspace(p.keyspace) && systables.Lookup(p.keyspace, p.table) != nil {
		return nil, invalidf("Cannot truncate virtual tables")
	}
	if err := userModifiable(p.keyspace); err != nil {
		return nil, err
	}
	t, err := c.userTable(p.keyspace, p.table)
	if err != nil {
		return nil, err
	}
	if err := c.data.Truncate(ctx, t.st); err != nil {
		var ua *cqlerr.Unavailable
		if errors.As(err, &ua) {
			// Cassandra's TruncateStatement answers the replicas not all
			// being up with a TruncateException, not UNAVAILABLE.
			return nil, &cqlerr.Error{Code: primitive.ErrorCodeTruncateError, Msg: "Error during truncate: " + ua.Error()}
		}
		return nil, fmt.Errorf("truncate %s.%s: %w", p.keyspace, p.table, err)
	}
	return &message.VoidResult{}, nil
}

func (p *usePlan) run(_ context.Context, c *Coordinator, _ *execution) (message.Message, error) {
	if !c.keyspaceExists(p.keyspace) {
		return nil, invalidf("Keyspace '%s' does not exist", p.keyspace)
	}
	return &message.SetKeyspaceResult{Keyspace: p.keyspace}, nil
}
