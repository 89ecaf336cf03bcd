package coordinator

import (
	"github.com/cqld/cqld/schema"
	"github.com/cqld/cqld/statements"
)

// analyzeUser analyses the statements on user tables.
func (c *Coordinator) analyzeUser(stmt statements.Statement, n int, session string) (plan, error) {
	switch s := stmt.(type) {
	case *statements.CreateTable, *statements.DropTable, *statements.AlterTable,
		*statements.CreateType, *statements.AlterType, *statements.DropType,
		*statements.CreateIndex, *statements.DropIndex:
		return c.analyzeDDL(stmt, session)
	case *statements.Truncate:
		ks, err := schema.ResolveKeyspace(s.Keyspace, session)
		if err != nil {
			return nil, err
		}
		return &truncatePlan{keyspace: ks, table: s.Table}, nil
	case *statements.Insert:
		return c.analyzeInsert(s, n, session)
	case *statements.Update:
		return c.analyzeUpdate(s, n, session)
	case *statements.Delete:
		return c.analyzeDelete(s, n, session)
	case *statements.Batch:
		return c.analyzeBatch(s, n, session)
	case *statements.AlterKeyspace:
		return nil, invalidf("ALTER KEYSPACE statements are not supported yet")
	case *statements.CreateFunction:
		return nil, invalidf("User defined functions are disabled in cassandra.yaml - set enable_user_defined_functions=true to enable")
	}
	return nil, invalidf("This statement is not supported yet by cqld")
}
