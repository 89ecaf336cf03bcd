package coordinator

import (
	"encoding/binary"

	"github.com/cqld/cqld/storage"
)

// Counters on one node: an increment reads the current total and writes the
// new one as an ordinary cell with a newer timestamp, under one lock for
// all counter writes. Replaying the commit log replays totals, so it stays
// idempotent. (Cassandra's counter shards arrive with replication.)

// counterSection takes the counter lock and arms x to read counters; the
// returned function releases it.
func (c *Coordinator) counterSection(x *execution) func() {
	c.counterMu.Lock()
	x.counterRead = func(t *tableInfo, pk []byte, ck [][]byte, column string) (int64, int64, error) {
		o := storage.ReadOptions{Now: int32(x.now().Unix())}
		if len(ck) > 0 {
			o.Slice = storage.Slice{Start: &storage.Bound{Prefix: ck, Inclusive: true}, End: &storage.Bound{Prefix: ck, Inclusive: true}}
		}
		var total, ts int64
		err := c.engine.ReadPartition(t.st, pk, o, func(r *storage.Row) bool {
			for _, cc := range r.Cells {
				if cc.Column == column && len(cc.Cell.Value) == 8 {
					total = int64(binary.BigEndian.Uint64(cc.Cell.Value))
					ts = cc.Cell.Timestamp
				}
			}
			return true
		})
		return total, ts, err
	}
	return func() {
		x.counterRead = nil
		c.counterMu.Unlock()
	}
}
