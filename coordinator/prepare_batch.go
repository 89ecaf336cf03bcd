package coordinator

import (
	"github.com/datastax/go-cassandra-native-protocol/message"

	"github.com/cqld/cqld/protocol"
	"github.com/cqld/cqld/statements/prepared"
)

// prepareBatch answers PREPARE_BATCH (docs/prepare_batch.spec): each
// statement is prepared exactly as a PREPARE of it alone would be, and its
// PREPARED result or its ERROR takes its place in the answer. Repeated
// texts are prepared once, by the cache, and the new statements are
// persisted in one mutation.
func (c *Coordinator) prepareBatch(req *protocol.Request, m *protocol.PrepareBatch) (message.Message, error) {
	out := &protocol.PreparedBatch{Results: make([]message.Message, len(m.Statements))}
	var w prepared.Writes
	defer c.prep.Persist(&w)
	for i, s := range m.Statements {
		ps, err := c.prepareInto(keyspaceOf(req, s.Keyspace), s.Query, &w)
		if err != nil {
			out.Results[i] = errorMessage(err)
			continue
		}
		out.Results[i] = ps.result(req.Version)
	}
	return out, nil
}
