package batchlog

import (
	"context"
	"fmt"
	"net/netip"

	"github.com/cqld/cqld/messaging"
	"github.com/cqld/cqld/ring"
)

// Serve registers on tr the handlers of VerbBatchStore (a batch stored
// here, answered once durable) and VerbBatchRemove (one way).
func Serve(tr messaging.Transport, s *Store, m *Metrics) {
	tr.Handle(messaging.VerbBatchStore, func(_ context.Context, in messaging.Inbound) ([]byte, error) {
		id, batch, err := decodeStore(in.Payload)
		if err != nil {
			return nil, err
		}
		if err := s.Put(id, batch); err != nil {
			return nil, err
		}
		m.stored()
		return nil, nil
	})
	tr.Handle(messaging.VerbBatchRemove, func(_ context.Context, in messaging.Inbound) ([]byte, error) {
		id, err := decodeRemove(in.Payload)
		if err != nil {
			return nil, err
		}
		m.removed()
		return nil, s.Remove(id)
	})
}

// Client stores and removes batches in the batchlogs of this node and of
// its peers: the proxy's Batchlog. Safe for concurrent use.
type Client struct {
	self    ring.HostID
	local   *Store
	tr      messaging.Transport
	addr    func(ring.HostID) (netip.AddrPort, bool)
	metrics *Metrics
}

// NewClient returns the client of node self, whose own batchlog is local;
// addr gives a peer's internode address.
func NewClient(self ring.HostID, local *Store, tr messaging.Transport, addr func(ring.HostID) (netip.AddrPort, bool), m *Metrics) *Client {
	return &Client{self: self, local: local, tr: tr, addr: addr, metrics: m}
}

// Store writes batch id to host h's batchlog and returns once it is
// durable there. It does not keep batch.
func (c *Client) Store(ctx context.Context, h ring.HostID, id ID, batch []byte) error {
	if h == c.self {
		if err := c.local.Put(id, batch); err != nil {
			return err
		}
		c.metrics.stored()
		return nil
	}
	to, ok := c.addr(h)
	if !ok {
		return fmt.Errorf("batchlog: node %s is not a member of the cluster: %w", h, messaging.ErrUnreachable)
	}
	_, err := c.tr.Request(ctx, to, messaging.VerbBatchStore, appendStore(nil, id, batch))
	return err
}

// Remove removes batch id from host h's batchlog without waiting: a
// removal that is lost only costs a replay of a batch already applied.
func (c *Client) Remove(h ring.HostID, id ID) {
	if h == c.self {
		c.metrics.removed()
		_ = c.local.Remove(id)
		return
	}
	if to, ok := c.addr(h); ok {
		_ = c.tr.Send(context.Background(), to, messaging.VerbBatchRemove, appendRemove(nil, id))
	}
}
