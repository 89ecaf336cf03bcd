package coordinator

import "github.com/cqld/cqld/systables"

// ClusterView is what the coordinator shows clients of the cluster in
// system.local and system.peers. Implementations are safe for concurrent
// use and answer from memory.
type ClusterView interface {
	// LocalTokens are this node's tokens, sorted; nil before it has any.
	LocalTokens() []int64
	// Peers are the other members of the ring.
	Peers() []systables.Peer
}
