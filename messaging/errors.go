package messaging

import (
	"errors"
	"fmt"
	"net/netip"
)

var (
	// ErrClosed means the transport was closed.
	ErrClosed = errors.New("messaging: transport closed")
	// ErrQueueFull means the bytes queued toward the peer reached
	// MaxQueueBytes: the message was not sent. A coordinator treats it as
	// it treats a timeout (a hint, an error to the client), at once.
	ErrQueueFull = errors.New("messaging: outbound queue to peer full")
	// ErrTooLarge means a message exceeds MaxMessageSize.
	ErrTooLarge = errors.New("messaging: message exceeds maximum size")
	// ErrTimeout means no response arrived before the request's deadline.
	// It is returned wrapped together with context.DeadlineExceeded.
	ErrTimeout = errors.New("messaging: request timed out")
	// ErrUnreachable means no connection to the peer could be made (or, in
	// memory, the link to it is cut).
	ErrUnreachable = errors.New("messaging: peer unreachable")
	// ErrConnectionLost means the connection a request was sent on broke
	// before its response arrived.
	ErrConnectionLost = errors.New("messaging: connection lost")
	// ErrHandshake means a connection's handshake failed or was refused.
	ErrHandshake = errors.New("messaging: handshake failed")
	// ErrClusterMismatch means the peer belongs to another cluster; the
	// error names both cluster names.
	ErrClusterMismatch = errors.New("messaging: cluster name mismatch")
	// ErrBadMessage means bytes from a peer do not decode; the connection
	// they came on is closed.
	ErrBadMessage = errors.New("messaging: malformed internode message")
)

// Failure codes carried by a failure response. Handlers choose their own
// codes above FailureNoHandler.
const (
	// FailureUnknown is the code of a handler error that is not a
	// *RemoteError.
	FailureUnknown uint16 = 0
	// FailureNoHandler means the receiver has no handler for the verb.
	FailureNoHandler uint16 = 1
)

// RemoteError is a request's failure as its receiver reported it. A handler
// returns one to choose the code the caller sees; any other error reaches
// the caller as FailureUnknown with the error's text.
type RemoteError struct {
	Peer    netip.AddrPort
	Verb    Verb
	Code    uint16
	Message string
}

func (e *RemoteError) Error() string {
	return fmt.Sprintf("messaging: %s from %s failed (code %d): %s", e.Verb, e.Peer, e.Code, e.Message)
}
