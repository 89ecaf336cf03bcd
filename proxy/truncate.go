package proxy

import (
	"context"
	"errors"
	"fmt"

	"github.com/datastax/go-cassandra-native-protocol/primitive"

	"github.com/cqld/cqld/cqlerr"
	"github.com/cqld/cqld/ring"
	"github.com/cqld/cqld/storage"
)

// Truncate drops every row of t on every replica of its keyspace, which
// must all be up (Cassandra truncates at ALL: *cqlerr.Unavailable
// otherwise) and answer before ctx's deadline (TRUNCATE_ERROR otherwise).
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
	if ctx.Err() != nil {
		return truncateTimedOut(ctx, 0)
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
	for received := 0; received < len(hosts); received++ {
		select {
		case err := <-errs:
			if err != nil && ctx.Err() != nil {
				return truncateTimedOut(ctx, received)
			}
			if err != nil {
				return err
			}
		case <-ctx.Done():
			return truncateTimedOut(ctx, received)
		}
	}
	return nil
}

// truncateTimedOut is a truncate that did not hear from every replica by
// its deadline (truncate_request_timeout): TRUNCATE_ERROR, as Cassandra's
// TruncateStatement answers the TimeoutException of its
// TruncateResponseHandler. A truncate its client gave up on stays the
// context's error.
func truncateTimedOut(ctx context.Context, received int) error {
	if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("proxy: truncate: %w", ctx.Err())
	}
	return &cqlerr.Error{Code: primitive.ErrorCodeTruncateError,
		Msg: fmt.Sprintf("Error during truncate: Truncate timed out - received only %d responses", received)}
}
