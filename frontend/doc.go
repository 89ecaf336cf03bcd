// Package frontend is cqld's network server for the CQL native protocol.
//
// One goroutine owns the listening socket (listener.go): it accepts, backs
// off while accept fails (out of descriptors, say) instead of giving up,
// closes at once a connection over native_transport_max_concurrent_connections
// or its per-address cap, as Cassandra does, and hands the others to gnet.
// A gnet engine runs a few event loops (half the cores by default) that own
// every client socket. An event loop reads, cuts frames and writes: for each
// whole frame it answers the handshake at once (OPTIONS, STARTUP, REGISTER:
// cheap and stateful), decodes every other request, and either answers it
// itself, when the Handler is an Inliner that takes it (a single-row read,
// a write that waits for no fsync), or hands it to the worker pool. Workers
// call the Handler, encode the response and give it back to the event loop,
// which writes all the answers it has in one system call. Responses
// therefore leave in completion order, matched to requests by stream id, as
// the protocol allows. A connection cuts at most maxCutPerTurn frames in
// one turn of its loop, then yields: a wake brings it back after the
// loop's other connections had theirs, so a client that pipelines a
// thousand requests in one read does not hold the loop from the others.
//
// The worker pool (pool.go) keeps a queue per connection and takes the
// connections in turn, one request each, so a request on a quiet
// connection waits for at most one request of each busy connection, not
// for everything a greedy one has queued, and runs at most
// MaxRunningPerConn of one connection's requests at once.
//
// Answering inline saves two goroutine hand-offs and a wake-up of the event
// loop per request, which on a busy node cost more than a point read or a
// memtable write; the price is that an inline request delays the other
// connections of its event loop while it runs, which is why only requests
// that are cheap and cannot block qualify.
//
// TLS (tls.go). gnet has no TLS, so a TLS connection's handshake runs on
// a goroutine of its own, over the socket as Go's net package has it
// (crypto/tls's handshake must be able to block); then the socket is
// handed to an event loop like a plaintext one, and the same tls.Conn
// carries on over buffers: each OnTraffic decrypts what gnet read into a
// plaintext buffer, answers are encrypted as they are written, all on the
// loop. The state machine reaches its socket through sock, the subset of
// gnet.Conn it calls, which a tlsSock implements over the plaintext, so
// every limit below holds for TLS connections as for plaintext ones. The
// connection counts as open from accept, so the handshake deadline bounds
// a stalled TLS handshake too. A listener is plaintext, TLS only, or
// optional: then the first byte, peeked and left unread, says which (0x16
// starts a TLS handshake, never a CQL frame). With a separate TLS address
// (native_transport_port_ssl) the main address stays plaintext.
// Handshakes take the certificate of the moment from the tls.Config, so
// reloaded certificates reach new connections and leave open ones alone.
//
// Authentication. With an Authenticator (PasswordAuthenticator), STARTUP
// is answered AUTHENTICATE and the connection can then send only OPTIONS
// and AUTH_RESPONSE; anything else gets Cassandra's PROTOCOL_ERROR
// "Unexpected message X, expecting SASL_RESPONSE" on its stream. The SASL
// PLAIN token goes to a worker, since bcrypt takes milliseconds an event
// loop must not spend; the worker records the role before it answers
// AUTH_SUCCESS, and the event loop marks the connection ready when it next
// reads from it. A failed check answers BAD_CREDENTIALS and leaves the
// connection open for another attempt, as Cassandra does; the
// HandshakeTimeout covers the login too. The role rides on every Request.
//
// Connection state (protocol version, compression, v5 framing, keyspace,
// role, registered events) lives in a conn. The event loop is its only writer
// except for the keyspace, which a worker sets after a USE, and the role,
// which a worker sets after a login, so those fields are atomic.
//
// Each connection's requests run under a context that ends when the
// connection closes, so a request whose client is gone stops at the next
// point its handler looks (the coordinator's reads look every few rows).
//
// Limits. A request whose body is longer than MaxFrameSize is skipped as
// it arrives, as Cassandra does: a legacy frame's body is dropped from the
// inbound buffer as it comes (conn.skip), a v5 envelope's segments are
// checked and dropped by the segment decoder (SkipOversized); neither is
// kept nor counted against the request data budgets, and once the last
// byte is in, the request is answered INVALID on its stream with
// Cassandra's message ("Request is too big: ..." on v3/v4, "CQL Message of
// size N bytes exceeds allowed maximum of M bytes" on v5) and the
// connection goes on. Closing instead would make the kernel reset the
// connection over the body still coming, and the client would lose the
// answer. The frame deadline bounds a skip as it bounds any frame; a
// header over the limit that names no request is a broken stream. An
// answer longer than MaxFrameSize is replaced by INVALID "Response is too
// big" on its stream (write.go: the coordinator keeps its reads within the
// limit, this catches the rest).
// Every input is bounded
// (budget.go, write.go, admit.go, housekeep.go):
//
//   - Request data: a frame is counted in full, against its client
//     address's budget and the node's, as soon as its header is read;
//     what does not fit is answered OVERLOADED on its stream and its body
//     skipped as it arrives. Requests keep their share until answered.
//   - Answers: counted from when a worker makes them until the socket
//     takes them. A connection whose answers back up (past
//     SendQueueCapacity, or at all while the node's pass MaxResponseData)
//     has the requests it read wait in its queue before they run, until
//     they drain; once the part its socket did not take backs up too, it
//     is paused: its frames stay unread in the inbound buffer. So a
//     connection holds at most SendQueueCapacity of answers plus those of
//     its requests already running (at most MaxRunningPerConn), each
//     within MaxFrameSize, beside what its socket's kernel buffer takes
//     (SocketSendBuffer, doubled by Linux). gnet cannot
//     stop reading a socket, so a paused connection that keeps sending
//     past ReceiveQueueCapacity is closed.
//   - Requests in flight: past MaxRequestsPerConn on one connection,
//     MaxQueued in the server, or a connection's fair share of MaxQueued
//     once half of it is used, a request waits, as in Cassandra: it is
//     left in the inbound buffer and the connection stalls (is not read,
//     like a paused one, within the same receive queue) until a request
//     ends and leaves room, then it is decoded and admitted (admit.go).
//     A client whose STARTUP set THROW_ON_OVERLOAD to "1" gets
//     OVERLOADED on the request's stream instead; a draining server
//     answers OVERLOADED to both. The requests waiting on a connection
//     whose answers are backed up count against its MaxRequestsPerConn
//     only, not the server's, so clients that never read cannot make
//     another's request wait (or get OVERLOADED);
//     their bytes stay within the request data bounds, each request
//     handed to the workers counted queuedCost more than its frame. The workers run at
//     most MaxRunningPerConn of one connection's requests at once. The
//     event loop never waits for a worker.
//   - Time: STARTUP must come within HandshakeTimeout, a frame begun must
//     finish within FrameTimeout, and a connection with nothing in flight
//     that has sent no whole frame (and been sent no answer) for
//     IdleTimeout is closed.
//
// Errors follow Cassandra: a broken byte stream (garbage, unsupported
// version, bad v5 CRC) gets a PROTOCOL_ERROR (or, for the
// version, the error drivers parse to downgrade) and the connection is
// closed; a bad request gets an ERROR on its own stream and the connection
// stays open. An answer that cannot be encoded is answered SERVER_ERROR on
// its stream; one for which not even that can be framed closes the
// connection (logged, and counted in cqld_native_connections_closed_total),
// since its client would otherwise wait for it forever.
//
// Extensions are opt-in per connection (prepare_batch.go): SUPPORTED lists
// CQLD_PREPARE_BATCH, and only a connection whose STARTUP asked for it may
// send PREPARE_BATCH; to the others its opcode is unknown, as to Cassandra.
//
// The package knows nothing of CQL: requests other than the handshake go to
// a Handler, and events to push come from Publish.
package frontend
