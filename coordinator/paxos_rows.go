package coordinator

import (
	"bytes"
	"encoding/binary"

	"github.com/cqld/cqld/replica"
	"github.com/cqld/cqld/storage"
)

// paxosRows are system.paxos's rows: the Paxos state this node's replica
// keeps in the engine (replica/paxos_table.go), expired state left out.
func (c *Coordinator) paxosRows() []row {
	t := replica.PaxosTable()
	var rows []row
	err := c.engine.Scan(t, storage.ScanOptions{Now: int32(c.opts.Now().Unix())}, func(pk []byte, r *storage.Row) bool {
		if r.Static || len(r.Clustering) != 1 {
			return true
		}
		out := row{"row_key": bytes.Clone(pk), "cf_id": uuidOf(r.Clustering[0])}
		for _, cc := range r.Cells {
			v := cc.Cell.Value
			switch cc.Column {
			case "in_progress_ballot", "proposal_ballot", "most_recent_commit_at":
				out[cc.Column] = uuidOf(v)
			case "proposal", "most_recent_commit":
				out[cc.Column] = bytes.Clone(v)
			case "proposal_version", "most_recent_commit_version":
				if len(v) == 4 {
					out[cc.Column] = int32(binary.BigEndian.Uint32(v))
				}
			}
		}
		rows = append(rows, out)
		return true
	})
	if err != nil {
		c.log.Warn("cannot read system.paxos", "err", err)
	}
	return rows
}

// uuidOf is a 16-byte value as a uuid, nil when it is not one.
func uuidOf(b []byte) any {
	if len(b) != 16 {
		return nil
	}
	return [16]byte(b)
}
