package coordinator

import "github.com/cqld/cqld/statements"

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

// truncatePlan is TRUNCATE.
type truncatePlan struct {
	noMarkers
	keyspace, table string
}
