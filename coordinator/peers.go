package coordinator

import (
	"net"
	"net/netip"
	"slices"
	"strconv"
)

// ClusterView is what the coordinator shows clients of the cluster in
// system.local and system.peers. Implementations are safe for concurrent
// use and answer from memory.
type ClusterView interface {
	// LocalTokens are this node's tokens, sorted; nil before it has any.
	LocalTokens() []int64
	// Peers are the other members of the ring.
	Peers() []Peer
}

// Peer is one other node, as system.peers and system.peers_v2 show it.
type Peer struct {
	HostID [16]byte
	// Addr is its internode address (peer, peer_port).
	Addr netip.AddrPort
	// NativeAddr and NativePort are where clients reach it; invalid and 0
	// while its gossip has not told them.
	NativeAddr     netip.Addr
	NativePort     int
	DataCenter     string
	Rack           string
	ReleaseVersion string
	SchemaVersion  [16]byte
	Tokens         []int64
}

func tokenStrings(ts []int64) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = strconv.FormatInt(t, 10)
	}
	return out
}

func (c *Coordinator) localTokens() []int64 {
	if c.opts.Cluster != nil {
		return c.opts.Cluster.LocalTokens()
	}
	return c.node.Tokens
}

func (c *Coordinator) peers() []Peer {
	if c.opts.Cluster == nil {
		return nil
	}
	ps := c.opts.Cluster.Peers()
	slices.SortFunc(ps, func(a, b Peer) int { return a.Addr.Compare(b.Addr) })
	return ps
}

// inetOrNil is a as system tables hold an inet: nil when invalid.
func inetOrNil(a netip.Addr) any {
	if !a.IsValid() {
		return nil
	}
	return net.IP(a.AsSlice())
}

func (c *Coordinator) peerRows() []row {
	var rows []row
	for _, p := range c.peers() {
		rows = append(rows, row{
			"peer":            net.IP(p.Addr.Addr().AsSlice()),
			"data_center":     p.DataCenter,
			"host_id":         p.HostID,
			"preferred_ip":    nil,
			"rack":            p.Rack,
			"release_version": nonEmptyOrNil(p.ReleaseVersion),
			"rpc_address":     inetOrNil(p.NativeAddr),
			"schema_version":  p.SchemaVersion,
			"tokens":          tokenStrings(p.Tokens),
		})
	}
	return rows
}

func (c *Coordinator) peerV2Rows() []row {
	var rows []row
	for _, p := range c.peers() {
		r := row{
			"peer":            net.IP(p.Addr.Addr().AsSlice()),
			"peer_port":       int32(p.Addr.Port()),
			"data_center":     p.DataCenter,
			"host_id":         p.HostID,
			"native_address":  inetOrNil(p.NativeAddr),
			"rack":            p.Rack,
			"release_version": nonEmptyOrNil(p.ReleaseVersion),
			"schema_version":  p.SchemaVersion,
			"tokens":          tokenStrings(p.Tokens),
		}
		if p.NativePort != 0 {
			r["native_port"] = int32(p.NativePort)
		}
		rows = append(rows, r)
	}
	return rows
}

func nonEmptyOrNil(s string) any {
	if s == "" {
		return nil
	}
	return s
}
