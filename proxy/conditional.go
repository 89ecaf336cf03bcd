package proxy

import (
	"context"

	"github.com/datastax/go-cassandra-native-protocol/primitive"

	"github.com/cqld/cqld/cqlerr"
	"github.com/cqld/cqld/mutation"
	"github.com/cqld/cqld/ring"
	"github.com/cqld/cqld/storage"
)

// Lightweight transactions until they run Paxos (issue 14): a conditional
// write, and a SERIAL read, run on the partition's primary replica alone,
// when that is this node, under its partition lock; the write it decides
// is then sent to the other replicas at the statement's commit level. On
// any other node they are refused with an InvalidRequest that says so,
// rather than run without the isolation they promise.

// Conditional runs a read-decide-write on partition pk of t
// (Replica.Conditional) on its primary replica, this node, then writes
// what decide chose to the other replicas at level cl, the commit level,
// which counts the primary's write (ANY and ONE answer once it applied;
// the others still get the write).
func (p *Proxy) Conditional(ctx context.Context, cl primitive.ConsistencyLevel, t *storage.Table, pk []byte, decide func() (*mutation.Mutation, error), check func() error) error {
	ks, err := p.keyspace(t)
	if err != nil {
		return err
	}
	natural, pending, err := p.opts.Topology.Replicas(ks, storage.Token(pk))
	if err != nil {
		return err
	}
	h, err := p.primaryHere(t, natural)
	if err != nil {
		return err
	}
	rep, err := p.replica(h)
	if err != nil {
		return err
	}
	if len(natural) == 1 && len(pending) == 0 {
		return rep.Conditional(ctx, t, pk, decide, check)
	}
	var decided *mutation.Mutation
	err = rep.Conditional(ctx, t, pk, func() (*mutation.Mutation, error) {
		m, err := decide()
		decided = m
		return m, err
	}, check)
	if err != nil || decided == nil {
		return err
	}
	skip := make(map[int]ring.HostID, len(decided.Updates))
	for i := range decided.Updates {
		skip[i] = h
	}
	w, err := p.planWrite(cl, primitive.WriteTypeCas, decided.Updates, skip)
	if err != nil {
		return err
	}
	return p.write(ctx, w, nil, skip)
}

// primaryHere is natural's primary replica when it is this node, else the
// error that names the limitation.
func (p *Proxy) primaryHere(t *storage.Table, natural []ring.HostID) (ring.HostID, error) {
	if len(natural) > 0 && natural[0] == p.local() {
		return natural[0], nil
	}
	primary := "none"
	if len(natural) > 0 {
		primary = natural[0].String()
		if a := p.opts.Topology.Addr(natural[0]); a.IsValid() {
			primary = a.String()
		}
	}
	return ring.HostID{}, cqlerr.Invalidf("Conditional updates and SERIAL reads on %s.%s run only on the partition's primary replica (%s) until lightweight transactions use Paxos: send the request to that node (a token-aware driver does)",
		t.Def.Keyspace, t.Def.Name, primary)
}
