package coordinator

import (
	"context"
	"fmt"

	"github.com/datastax/go-cassandra-native-protocol/message"

	"github.com/cqld/cqld/schema"
	"github.com/cqld/cqld/statements"
)

// ddlPlan is a schema change: checked when analysed as Cassandra checks it
// when preparing; when it runs, made into a schema.Change (its text, the
// statement's time, the ids it needs) and submitted to be applied.
type ddlPlan struct {
	noMarkers
	stmt    statements.Statement
	session string
}

func (c *Coordinator) analyzeDDL(stmt statements.Statement, session string) (plan, error) {
	if err := c.schema.Check(stmt, session, c.dataCenters()); err != nil {
		return nil, err
	}
	return &ddlPlan{stmt: stmt, session: session}, nil
}

// dataCenters are the data centers this node knows.
func (c *Coordinator) dataCenters() []string { return []string{c.opts.DataCenter} }

func (p *ddlPlan) run(ctx context.Context, c *Coordinator, x *execution) (message.Message, error) {
	ch := schema.NewChange(p.stmt, x.text(), p.session, serverTimestamp(x.now()), c.dataCenters())
	return c.schemaChanges.Submit(ctx, ch)
}

// truncatePlan is TRUNCATE.
type truncatePlan struct {
	noMarkers
	keyspace, table string
}

func (p *truncatePlan) run(ctx context.Context, c *Coordinator, _ *execution) (message.Message, error) {
	if err := userModifiable(p.keyspace); err != nil {
		return nil, err
	}
	t, err := c.userTable(p.keyspace, p.table)
	if err != nil {
		return nil, err
	}
	if err := c.data.Truncate(ctx, t.st); err != nil {
		return nil, fmt.Errorf("truncate %s.%s: %w", p.keyspace, p.table, err)
	}
	return &message.VoidResult{}, nil
}
