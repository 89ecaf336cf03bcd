package proxy

import (
	"context"
	"fmt"

	"github.com/datastax/go-cassandra-native-protocol/primitive"

	"github.com/cqld/cqld/ring"
	"github.com/cqld/cqld/storage"
)

// Truncate drops every row of t on every replica of its keyspace, which
// must all be up (Cassandra truncates at ALL: *cqlerr.Unavailable
// otherwise).
func (p *Proxy) Truncate(ctx context.Context, t *storage.Table) error {
	ks, err := p.keyspace(t)
	if err != nil {
		return err
	}
	ranges, err := p.opts.Topology.Ranges(ks)
	if err != nil {
		return err
	}
	seen := map[ring.HostID]bool{}
	var hosts []ring.HostID
	live := 0
	for _, rr := range ranges {
		for _, h := range rr.Replicas {
			if !seen[h] {
				seen[h] = true
				hosts = append(hosts, h)
				if p.alive(h) {
					live++
				}
			}
		}
	}
	if live < len(hosts) {
		return unavailable(primitive.ConsistencyLevelAll, len(hosts), live)
	}
	errs := make(chan error, len(hosts))
	for _, h := range hosts {
		rep, err := p.replica(h)
		if err != nil {
			return err
		}
		p.goBackground(func() {
			if err := rep.Truncate(ctx, t); err != nil {
				errs <- fmt.Errorf("proxy: truncate %s.%s on %s: %w", t.Def.Keyspace, t.Def.Name, h, err)
				return
			}
			errs <- nil
		})
	}
	for range hosts {
		select {
		case err := <-errs:
			if err != nil {
				return err
			}
		case <-ctx.Done():
			return fmt.Errorf("proxy: truncate %s.%s: %w", t.Def.Keyspace, t.Def.Name, ctx.Err())
		}
	}
	return nil
}
