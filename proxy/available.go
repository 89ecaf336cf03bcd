package proxy

import (
	"github.com/datastax/go-cassandra-native-protocol/primitive"

	"github.com/cqld/cqld/ring"
	"github.com/cqld/cqld/storage"
)

// Available answers Unavailable when too few of the replicas of token tok
// of ks are up for level cl, as a request at cl would before sending
// anything; nil otherwise. A lightweight transaction asks it for its
// serial level, whose replicas take part in the transaction.
func (p *Proxy) Available(ks *storage.KeyspaceDef, tok int64, cl primitive.ConsistencyLevel) error {
	st, err := p.strategy(ks)
	if err != nil {
		return err
	}
	natural, pending, err := p.opts.Topology.Replicas(ks, tok)
	if err != nil {
		return err
	}
	n := p.needFor(cl, st, pending, false)
	live := make([]ring.HostID, 0, len(natural))
	for _, h := range natural {
		if p.alive(h) {
			live = append(live, h)
		}
	}
	return p.available(&n, live)
}
