package coordinator

import (
	"context"
	"fmt"

	"github.com/datastax/go-cassandra-native-protocol/message"

	"github.com/cqld/cqld/schema"
	"github.com/cqld/cqld/statements"
)

// ddlPlan is a schema change: checked when analysed as Cassandra checks it
// when preparing, then made into a schema.Change and applied when it runs.
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

func (p *ddlPlan) run(_ context.Context, c *Coordinator, x *execution) (message.Message, error) {
	ch := schema.NewChange(p.stmt, x.text(), p.session, serverTimestamp(x.now()), c.dataCenters())
	c.schemaMu.Lock()
	defer c.schemaMu.Unlock()
	res, err := c.schema.Apply(ch)
	if ev := schema.Event(res); ev != nil {
		c.opts.Publish(ev)
	}
	return res, err
}

// truncatePlan is TRUNCATE.
type truncatePlan struct {
	noMarkers
	keyspace, table string
}

func (p *truncatePlan) run(_ context.Context, c *Coordinator, _ *execution) (message.Message, error) {
	if err := userModifiable(p.keyspace); err != nil {
		return nil, err
	}
	t, err := c.userTable(p.keyspace, p.table)
	if err != nil {
		return nil, err
	}
	if err := c.engine.Truncate(t.st); err != nil {
		return nil, fmt.Errorf("truncate %s.%s: %w", p.keyspace, p.table, err)
	}
	return &message.VoidResult{}, nil
}
