// Package metalog is the cluster's metadata log: one replicated log of
// entries that every node applies in the same order to a state machine
// (the schema and the topology, which the caller's FSM keeps; entries are
// opaque bytes here). It is hashicorp/raft, wired from the package's own
// pieces:
//
//   - raftTransport: raft's RPCs over messaging.Transport on VerbMetadata,
//     so the messaging fault seams partition the log too. Each RPC is one
//     request; heartbeats take raft's fast path; a snapshot travels whole in
//     one message, so it must fit in MaxMessageSize (an InstallSnapshot
//     over it fails with an error saying so). Pipelining is not offered.
//   - store: raft's LogStore and StableStore on a pebble database of its
//     own (Dir/raft), WAL on, every write synced. A write its disk fails
//     (full, or failing) does not end the process as pebble asks: the
//     store refuses every write from then on and tells OnFailure, whose
//     node stops. Snapshots are raft's FileSnapshotStore in
//     Dir/snapshots, two kept.
//   - fsmAdapter: raft's FSM over the caller's FSM.
//
// # Proposals
//
// Propose wraps the entry in an envelope naming the proposal (a random
// incarnation of the Log and a sequence number) and registers a waiter
// for it; the leader appends the envelope (a follower forwards it). Every
// node's adapter unwraps each entry as it applies it and, on the node
// that proposed it, hands the FSM's result and error to the waiter. So
// Propose returns once the entry is committed and applied on the
// proposer's own node, with that node's FSM error unchanged (two CREATE
// TABLEs: the second gets its FSM's error), and a proposal whose answer is
// lost (a leader deposed before it commits, a timed-out forward) still
// finds its outcome if the entry commits before the caller's deadline.
// Nothing is proposed twice: only a request that was never taken (no
// leader, the node asked no longer leads, the peer unreachable) is sent
// again.
//
// # Restarts and the FSM's own durability
//
// FSM.Applied is the index the caller's state has made durable itself.
// After a restart raft restores its last snapshot and replays the log
// after it; the adapter skips every entry at or below Applied, and a
// snapshot at or below it, so nothing is applied twice. A node far behind
// (the leader's log compacted past it) receives a snapshot, which the FSM
// restores at its index.
//
// # Membership
//
// One node of a new cluster bootstraps (Options.Bootstrap: it becomes the
// only voter if Dir holds no raft state); the others Join through seeds:
// any member forwards the request to the leader, which adds the node as a
// voter. Remove takes a node out (removenode, decommission). raft.ServerID
// is the host id's string form, raft.ServerAddress the internode
// "ip:port".
//
// A node whose data was wiped comes back with a new host id, perhaps at
// a member's address, which the cluster's configuration still gives the
// old id. So every raft RPC names the server it is for (kindAddressed),
// and a node refuses one for another id (codeWrongServer, counted in
// cqld_metalog_misaddressed_rpcs_total) before raft sees it: the wiped
// node never follows the leader as its old self. The leader refuses a
// Join at an address another server has (ErrAddressTaken, Cassandra's
// "A node with address ... already exists, cancelling join"): the old
// server must be removed first. A first seed with no raft state first
// asks the other seeds which servers they know (kindProbe); if one is a
// member of a cluster, it joins rather than bootstraps, and so is refused
// the same way. A first seed with no other seed has nobody to ask: it
// bootstraps, and when a member of the running cluster reaches it with
// an RPC for another server, its configuration not holding the sender,
// it reports the split to Options.OnConflict, and its node stops.
//
// # Wire format
//
// These constants are frozen. Every message on VerbMetadata starts with
// the codec version (1) and a kind (codec.go), then the kind's fields:
// integers as unsigned varints, byte strings as a varint length and the
// bytes, times as signed varint nanoseconds (0: none). Configurations
// (in InstallSnapshot and in configuration entries) travel as a count and
// (suffrage, id, address) per server, never as raft's msgpack, so no byte
// from a peer reaches raft's decoder of them (which panics on bad input).
// Every length is checked against the bytes left, every count capped;
// bytes that do not decode are answered with failure code codeBadMessage
// and change nothing. Failures of forwarded requests carry codes that say
// whether the request may be sent again. A log entry on disk is the
// version byte and the same encoding of the entry, its data as raft gave
// it.
//
// # Logging
//
// Raft's lines go to the node's slog logger (hclog.go). Its warnings and
// errors about a peer that is down repeat every few hundred milliseconds
// while it is; each distinct line (message and peer) is logged once per
// 10 s, with a "suppressed" count of the repetitions left out since the
// last one (a count is told by the next line of its kind, so the last
// run's count is not told when the peer comes back).
//
// # Concurrency
//
// Every method of Log is safe for concurrent use. Close waits for every
// goroutine the Log started, its handlers included.
package metalog
