package systables

import (
	"crypto/md5"
	"net"
	"net/netip"

	"github.com/cqld/cqld/auth"
	"github.com/cqld/cqld/storage"
)

// ReleaseVersion is the Cassandra version cqld reports. Drivers pick their
// schema queries and protocol caps by it (4.x: system_schema, peers_v2).
const ReleaseVersion = "4.0.11"

// cqlVersion is system.local's cql_version.
const cqlVersion = "3.4.5"

// State is the node's state the generated tables show, read on each query
// so that they never disagree with the node. Implementations are safe for
// concurrent use and answer from memory.
type State interface {
	// Schema is the user schema now.
	Schema() *storage.Schema
	// Local is what system.local says about this node.
	Local() Local
	// Peers are the other members of the ring, in any order.
	Peers() []Peer
	// Roles is the role state system_auth shows; nil when the node keeps
	// none.
	Roles() *auth.State
	// Views are the node's live figures system_views shows; nil makes
	// those tables empty.
	Views() Views
	// SizeEstimates are system.size_estimates' rows: for each user table,
	// the token ranges this node is the primary replica of.
	SizeEstimates() []SizeEstimate
}

// SizeEstimate is one table's partitions in one token range
// (RangeStart, RangeEnd], as system.size_estimates shows it.
type SizeEstimate struct {
	Keyspace, Table                    string
	RangeStart, RangeEnd               int64
	MeanPartitionSize, PartitionsCount int64
}

// Local is this node as system.local shows it.
type Local struct {
	ClusterName string
	HostID      [16]byte
	DataCenter  string
	Rack        string
	// ListenAddress is the internode address (listen_address,
	// broadcast_address); RPCAddress is where clients reach the node.
	ListenAddress net.IP
	RPCAddress    net.IP
	NativePort    int
	StoragePort   int
	// Generation is gossip_generation: the node's start, in seconds.
	Generation int32
	// Tokens are the node's tokens, sorted; nil before it has any.
	Tokens []int64
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

// SchemaVersion is the UUID drivers compare for schema agreement: a
// name-based (version 3) UUID of the schema digest, so equal schemas have
// equal versions.
func SchemaVersion(digest [16]byte) [16]byte {
	v := md5.Sum(digest[:])
	v[6] = v[6]&0x0f | 0x30
	v[8] = v[8]&0x3f | 0x80
	return v
}
