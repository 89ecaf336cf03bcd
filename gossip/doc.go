// Package gossip is cluster membership and failure detection:
// hashicorp/memberlist (SWIM with Lifeguard) over the node's internode
// messaging.Transport, so that one port carries everything and the
// messaging fault seams (InmemNetwork partitions, dropped messages)
// partition gossip too.
//
// Liveness comes from here only (Alive, and DownSince, which is
// hints.Liveness). Topology — who is a member of the
// ring, tokens, joining/leaving — and the schema come from the metadata
// log; gossip metadata (Meta) carries what changes often and needs no
// agreement: rpc address, native port, data center, rack, release and
// schema versions, load, a status word.
//
// # Transport
//
// memberlist's node name is the host id string and its node address the
// internode address (broadcast_address:storage_port). Its Transport is
// implemented under messaging.VerbGossip, each payload an envelope of one
// kind byte and memberlist's bytes:
//
//	[1 kind] [memberlist message ...]
//	kind 1: a packet, sent one-way (memberlist's UDP)
//	kind 2: a stream exchange (memberlist's TCP): a request whose
//	        response is the acceptor's answer, or one-way
//
// memberlist uses streams in three patterns (net.go): push/pull
// (sendAndReceiveState: the dialer writes its state, reads the peer's;
// handleConn reads, writes its state, closes), the stream ping
// (sendPingAndWaitForAck / handleConn: write ping, read ack), and reliable
// user messages (sendUserMsg: the dialer writes and closes without
// reading; handleConn reads and closes). All are one exchange: the dialer
// writes, then reads the answer or closes; the acceptor reads, then
// writes, then closes. So a dialed conn buffers what is written and sends
// it as one Request at its first Read (one-way at Close if never read),
// and an accepted conn serves the request bytes and answers with what was
// written when memberlist closes it. A write after the exchange fails
// (errExchanged), so a future memberlist pattern outside this one fails
// loudly rather than hanging. The stream ping is disabled: packets and
// streams ride one messaging connection, so it would learn nothing the
// packet ping did not. A packet that cannot be sent (peer unreachable,
// queue full) fails as a *net.OpError, the only error memberlist takes
// for the peer's failure rather than its own.
//
// Everything buffered is bounded: a packet to 64 KiB, each side of an
// exchange to 8 MiB, packets waiting for memberlist to 512 (more are
// dropped, as a full UDP buffer drops), streams open at once to 32. A
// payload that is not an envelope, or whose body does not start with a
// memberlist message type, is dropped and counted
// (cqld_gossip_dropped_messages_total{reason="malformed"}); memberlist
// drops what does not decode past that.
//
// # Membership and events
//
// memberlist reports joins, updates and deaths from inside its node lock,
// so the delegate only records the new state under the Gossip's own lock
// and queues an Event; one goroutine delivers them to OnEvent in order.
// Joined is a node not known before, Down a node memberlist declared
// dead (suspected and not refuted in time), Up a node down that answers
// again, Left a node that left (Leave), MetaChanged new metadata of an up
// node. A node down stays a Member (Up false) until it leaves or the
// cluster layer Forgets it (removenode).
//
// memberlist reports a node that left as it reports one that died, so a
// node's metadata is preceded by one byte of gossip's own flags, and Leave
// first spreads the flag "leaving", then memberlist's leave: a peer takes
// the death of a node that announced it is leaving as Left. Should the
// leave overtake the flag, the peer sees the node Down instead, which
// errs on the safe side.
//
// A peer is refused — memberlist ignores its alive announcements, the
// refusal is logged once and counted in cqld_gossip_refused_total — when
// its name is not a host id or its metadata does not decode, when it
// announces the address of another live node (two nodes configured with
// one broadcast_address), or when it announces the host id of a live node
// from another address (memberlist's conflict). A host id whose node is
// dead may come back on another address.
//
// # Seeds and partitions
//
// Start returns at once. In the background a node joins through the
// seeds, retrying with a doubling backoff and logging each failure once
// ("seeds 127.0.0.2:7000 unreachable, retrying in 2s"); a seed that finds
// no other seed up starts the cluster alone (Joined closes), and keeps
// trying the other seeds until one answers or a node joins it. A node
// with no seeds but itself is a cluster of one. memberlist
// stops gossiping to a dead node after GossipToTheDeadTime, so after a
// long partition both sides would hold each other down forever; every
// ReconnectInterval each node therefore tries a push/pull with the nodes
// it holds down, and the first that answers is up again.
//
// # Meta encoding
//
// Meta is encoded by AppendMeta after the flags byte in memberlist's node
// metadata (at most 512 bytes in all), version 1 frozen; later versions only append fields, which a
// version-1 reader ignores. DecodeMeta bounds every length by what is
// left and is fuzzed.
//
// # Goroutines
//
// Gossip owns two goroutines (the event dispatcher and the join and
// reconnect loop) and the messaging handlers serving VerbGossip while they
// run; Close waits for all of them after shutting memberlist down.
// memberlist's own loops return on its shutdown signal without a handle to
// wait on; the tests check that none is left shortly after Close.
package gossip
