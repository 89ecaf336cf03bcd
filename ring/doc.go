// Package ring is the cluster's token ring: which nodes own which Murmur3
// tokens, where each keyspace's replicas are, what a joining or leaving
// node changes, and how a new node picks its tokens.
//
// # Tokens and the ring
//
// A partition key's token is Cassandra's Murmur3Partitioner token,
// storage.Token. Every member node owns a few tokens (vnodes, num_tokens);
// a node owns, as primary, the range (previous ring token, its token], the
// ring wrapping from math.MaxInt64 to math.MinInt64 (Range). The minimum
// token is never a node's: it is the ring's start and no key hashes to it.
//
// A Ring is immutable: built once from its members (host id, address, data
// center, rack, tokens) with New, and replaced, never modified, on every
// topology change (Ring.With, Ring.Without). Readers share one *Ring
// without locks; the cluster layer publishes the current one (an
// atomic.Pointer) and builds the next from its metadata log.
//
// # Replica placement
//
// Drivers compute replicas themselves to send each request straight to
// one (token-aware routing), so placement must be Cassandra's to the node
// and, for the primary replica, to the order (Strategy):
//
//   - SimpleStrategy: the first RF distinct nodes clockwise from the token.
//   - NetworkTopologyStrategy: RF[dc] nodes in each data center, in one walk
//     clockwise, each data center's replicas on distinct racks while it has
//     racks left, rack repeats taken from the first nodes met when it has
//     fewer racks than replicas.
//
// ParseStrategy reads a keyspace's replication options with Cassandra's
// checks and messages, refusing transient replicas ("3/1"). A Placement
// computes a strategy's replicas for every range of one ring once, so that
// the request path looks them up with one binary search. The tests check
// placement on random multi-dc, multi-rack vnode rings against the DataStax
// Python driver's make_token_replica_map (testdata/replicas.py).
//
// # Topology changes
//
// A joining node is not a member until it has streamed its data; until
// then writes must also reach it, and when a node leaves, writes must also
// reach the nodes that take over its ranges. PendingRanges computes these
// pending endpoints as Cassandra's TokenMetadata.calculatePendingRanges
// does; reads and consistency levels keep counting natural replicas only.
// Movements says what must be streamed for the change: each range that
// gains replicas, with its replicas before (where the data is) and the
// nodes that gain it.
//
// # Ownership and token allocation
//
// Ring.Ownership and Placement.Ownership are nodetool status's "Owns" and
// "Owns (effective)". With 16 random tokens per node some nodes own far
// more than others (docs/benchmarks/ring-ownership.txt), so AllocateTokens
// chooses a joining node's tokens to balance the replicated ownership of
// its data center (allocate_tokens_for_local_replication_factor, and in a
// one-rack data center one replica fewer too: a keyspace of RF 2 on a
// cluster allocated for 3), greedily, token by token; randomness is
// injected so a seed replays an allocation.
//
// Everything here is computation on immutable values: no goroutines, no
// I/O, no clock.
package ring
