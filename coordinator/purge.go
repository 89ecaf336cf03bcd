package coordinator

import (
	"context"
	"fmt"
	"time"

	"github.com/cqld/cqld/storage"
	"github.com/cqld/cqld/systables"
)

// Purge drops, from every user table, system.paxos and system_traces, the tombstones
// older than the table's gc_grace_seconds and the data no read can see
// any more (see storage.Engine.Purge), judged at now.
func (c *Coordinator) Purge(now time.Time) (storage.PurgeStats, error) {
	var total storage.PurgeStats
	for _, ks := range c.catalog.Current().SortedKeyspaces() {
		if systables.IsSystemKeyspace(ks.Name) {
			continue
		}
		for _, def := range ks.Tables {
			t, err := compileTable(def, ks)
			if err != nil {
				return total, err
			}
			// Index entries have no tombstones; expired ones go at once.
			for _, tt := range append([]*storage.Table{t.st}, t.st.IndexTables()...) {
				st, err := c.engine.Purge(tt, int32(now.Unix()))
				total.Partitions += st.Partitions
				total.Keys += st.Keys
				if err != nil {
					return total, fmt.Errorf("purge %s: %w", tt.Def.Keyspace+"."+tt.Def.Name, err)
				}
			}
		}
	}
	// The Paxos state of lightweight transactions and the traces expire
	// (TTL) and go.
	for _, t := range append([]*storage.Table{systables.Lookup("system", "paxos").Storage}, systables.DistributedTables()...) {
		st, err := c.engine.Purge(t, int32(now.Unix()))
		total.Partitions += st.Partitions
		total.Keys += st.Keys
		if err != nil {
			return total, fmt.Errorf("purge %s.%s: %w", t.Def.Keyspace, t.Def.Name, err)
		}
	}
	return total, nil
}

// RunPurges purges every interval until ctx ends.
func (c *Coordinator) RunPurges(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			start := time.Now()
			st, err := c.Purge(now)
			switch {
			case err != nil:
				c.log.Error("tombstone purge failed", "err", err)
			case st.Keys > 0:
				c.log.Info("purged tombstones and shadowed data", "partitions", st.Partitions, "keys", st.Keys, "took", time.Since(start))
			}
		}
	}
}
