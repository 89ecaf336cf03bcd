// Package messaging carries messages between cqld nodes: the internode
// transport the coordinator reaches remote replicas through, and that
// membership, the metadata log and streaming ride on.
//
// A Transport sends a request to a peer and returns its response, sends
// one-way messages, and serves what peers send with one Handler per Verb.
// TCPTransport runs it over TCP on storage_port; InmemTransport runs it
// between transports of one InmemNetwork in a process, whose links tests
// cut, partition, delay and drop (as hashicorp/raft's InmemTransport lets
// raft tests cut links). Both are the same code above the point where a
// message leaves for a peer: message ids, deadlines, bounded queues,
// InjectedDelay, handler slots and metrics.
//
// TCPTransport has a fault seam of its own for tests of cqld processes,
// Partitioner: Partition cuts the node off from chosen peers, dropping
// every message it writes to them and every message it reads from them
// (counted with reason "fault"), until Heal. One node's partition is a
// cut both ways, and gossip and the metadata log, riding messaging, are
// partitioned with the data path. Connections stay open, as across a real
// partition; requests across the cut time out. The server exposes it
// under internode_fault_injection (server/faults.go).
//
// # Connections
//
// As in Cassandra 4.0, each node dials its own connections to each peer it
// sends to: one for small messages and one for messages over
// LargeMessageThreshold, so a streamed range does not hold up a mutation.
// A connection carries the dialer's requests and one-way messages and, on
// the way back, the responses to them; any number of requests are in
// flight on it at once, matched to their responses by message id. So
// between two nodes there are up to four connections, two each way. A
// connection starts on the first message to the peer; once it fails its
// requests fail with ErrConnectionLost and the next message dials again
// (there is no retry schedule: a peer known to be down gets no messages,
// the coordinator hints instead).
//
// Each connection has one writer goroutine, which takes every message due
// from its queue and writes them as few segments in one write, and one
// reader goroutine. An accepted connection's reader hands each request to
// one of the transport's handler workers (started as needed, at most
// MaxConcurrentHandlers, kept until Close); when all are busy it stops
// reading, TCP's flow control stalls the sender's writer, and the sender's
// queue fills. The queue toward a peer is bounded in bytes (MaxQueueBytes): a
// message that does not fit fails at once with ErrQueueFull, so a stalled
// or slow peer costs a bounded amount of memory, never more.
//
// # Deadlines
//
// A request's deadline comes from its context (RequestTimeout if it has
// none). The message carries the time left to it, written when the
// message leaves its queue, so peers' clocks need not agree and time spent
// queued or delayed counts. The receiver's deadline is its receipt time
// plus that; a message whose deadline passes before it is written, or
// before a handler slot frees, is dropped and counted
// (cqld_internode_dropped_messages_total{reason="expired"}): its sender
// has given up on it. The handler's context carries the deadline.
//
// InjectedDelay (internode_injected_delay) holds every message a node
// sends, responses too, for that long before it is written. The queue is
// ordered by due time and the writer takes all that are due, so messages
// wait their delays side by side: a node sending a thousand messages in a
// millisecond delivers them a delay later, not a thousand delays later.
//
// # TLS
//
// With Options.TLS (server_encryption_options), a connection starts with
// a TLS handshake and everything below, the hello included, travels
// inside it. The dialer asks TLS.Client for the peer's configuration (nil:
// plaintext, as internode_encryption dc or rack leaves peers of the same
// data center or rack); the acceptor peeks at the first byte (0x16 starts
// a TLS handshake, "C" a hello) and, unless TLS.Optional, refuses a
// plaintext peer with a refuse hello that says TLS is required. A failed
// handshake (no certificate, one of a CA the truststore does not hold, an
// expired one) closes the connection and is logged, with the peer's
// address and the reason, on both sides, and counted in
// cqld_internode_connection_errors_total{reason="tls"}: a node without a
// valid certificate cannot join, since gossip and the metadata log ride
// these connections. TLS is set up before the first message and touches
// nothing after.
//
// # Wire format
//
// These constants are frozen. A connection starts with a handshake in the
// clear, then carries native protocol v5 segments (protocol.AppendSegments
// and protocol.SegmentDecoder; Cassandra 4.0's internode framing is the
// same design): a CRC24-protected header, a CRC32-protected payload of at
// most 128 KiB, LZ4-compressed if the dialer asked. A segment payload holds
// whole messages, or one part of a message too large for one segment.
//
// Handshake: the dialer sends an initiate hello, the acceptor answers with
// an accept or a refuse hello, and both then switch to segments. A hello
// (all integers big-endian):
//
//	0      4         5      6       7        8          10
//	+------+---------+------+-------+--------+----------+------+--------+
//	| CQLM | version | kind | flags | reason | body len | body | CRC32  |
//	|      | = 1     |      |       |        | uint16   |      | IEEE   |
//	+------+---------+------+-------+--------+----------+------+--------+
//	body: [uint16 n][n bytes cluster_name] [16 bytes host id]
//	      [uint8 n][n bytes "ip:port" of the sender] [uint16 n][n bytes detail]
//
// kind 1 initiate, 2 accept, 3 refuse; flags (initiate) 1 = LZ4 segments,
// 2 = the large-message connection; reason (refuse) 1 = another cluster,
// 2 = another version, with the refuser's cluster name and a detail text.
// The CRC covers every byte before it. A body is at most 4 KiB. Bytes that
// do not start with the magic close the connection after 10 bytes; the
// listener keeps serving. A peer whose cluster_name differs is refused,
// and both sides log and return an error (ErrClusterMismatch) naming both
// names.
//
// Message: one envelope in the segment stream, shaped as a legacy native
// protocol frame (a 9-byte header whose last four bytes are the length of
// the rest) so that protocol.SegmentDecoder cuts it, then the message
// header and the payload:
//
//	0         1       2      4      5          9        17              25
//	+---------+-------+------+------+----------+--------+---------------+---------+
//	| version | flags | verb | 0    | length   | id     | timeout       | payload |
//	| = 1     |       |      |      | uint32   | uint64 | ns left, <24h | ...     |
//	+---------+-------+------+------+----------+--------+---------------+---------+
//
// flags: 1 response (to the request with the same id, under its verb),
// 2 failure (a response whose payload is a uint16 code and UTF-8 text),
// 4 one-way. A message is at most MaxMessageSize bytes, header included;
// a larger one, like any byte that does not decode, closes the connection.
//
// # Concurrency
//
// Every exported method of both transports is safe for concurrent use.
// Request and Send copy their payload before they return; a handler owns
// the payload it is given; a caller owns the response it gets. Close
// returns once every goroutine of the transport, handlers included, has
// returned.
package messaging
