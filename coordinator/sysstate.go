package coordinator

import (
	"github.com/cqld/cqld/auth"
	"github.com/cqld/cqld/storage"
	"github.com/cqld/cqld/systables"
)

// sysState is the node's state as the system tables read it.
type sysState struct{ c *Coordinator }

var _ systables.State = sysState{}

func (s sysState) Schema() *storage.Schema { return s.c.catalog.Current() }

func (s sysState) Local() systables.Local {
	c := s.c
	return systables.Local{
		ClusterName:   c.node.ClusterName,
		HostID:        c.node.HostID,
		DataCenter:    c.opts.DataCenter,
		Rack:          c.opts.Rack,
		ListenAddress: c.opts.ListenAddress,
		RPCAddress:    c.opts.RPCAddress,
		NativePort:    c.opts.NativePort,
		StoragePort:   c.opts.StoragePort,
		Generation:    c.generation,
		Tokens:        c.localTokens(),
	}
}

func (s sysState) Peers() []systables.Peer {
	if s.c.opts.Cluster == nil {
		return nil
	}
	return s.c.opts.Cluster.Peers()
}

func (s sysState) Roles() *auth.State { return s.c.roles() }

func (c *Coordinator) localTokens() []int64 {
	if c.opts.Cluster != nil {
		return c.opts.Cluster.LocalTokens()
	}
	return c.node.Tokens
}
