package coordinator

import (
	"context"
	"encoding/binary"
	"slices"

	"github.com/cqld/cqld/storage"
)

// Counters on one node: an increment reads the current total and writes the
// new one as an ordinary cell with a newer timestamp, holding the lock of
// every partition it changes (the conditional writes' partition locks:
// counter tables take no conditions) from the read until the write is
// applied. Replaying the commit log replays totals, so it stays
// idempotent. (Cassandra's counter shards arrive with replication.)

// counterSection locks the partitions that the counter writes ws, each
// run with xs[i], change, and arms each execution to read counters; the
// returned function releases the locks. Locks are taken in stripe order,
// so concurrent batches cannot deadlock.
func (c *Coordinator) counterSection(ws []*writePlan, xs []*execution) (func(), error) {
	var stripes []int
	for i, w := range ws {
		if !w.counter {
			continue
		}
		pks, err := evalKeys(w.t, w.keys.pk, w.t.pk, xs[i])
		if err != nil {
			return nil, err
		}
		for _, vals := range pks {
			stripes = append(stripes, c.locks.stripe(storage.Token(w.t.partitionKey(vals))))
		}
	}
	slices.Sort(stripes)
	stripes = slices.Compact(stripes)
	for _, s := range stripes {
		c.locks[s].Lock()
	}
	for _, x := range xs {
		x.counterRead = c.readCounter
	}
	return func() {
		for _, x := range xs {
			x.counterRead = nil
		}
		for i := len(stripes) - 1; i >= 0; i-- {
			c.locks[stripes[i]].Unlock()
		}
	}, nil
}

// readCounter reads a counter's current total and timestamp.
func (c *Coordinator) readCounter(ctx context.Context, t *tableInfo, pk []byte, ck [][]byte, column string, now int32) (int64, int64, error) {
	o := storage.ReadOptions{Now: now}
	if len(ck) > 0 {
		o.Slice = storage.Slice{Start: &storage.Bound{Prefix: ck, Inclusive: true}, End: &storage.Bound{Prefix: ck, Inclusive: true}}
	}
	var total, ts int64
	err := c.replica.ReadPartition(ctx, t.st, pk, o, func(r *storage.Row) bool {
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
