package frontend

import (
	"context"

	"github.com/cqld/cqld/protocol"
)

// Handler executes the requests that are not part of the handshake: QUERY,
// PREPARE, EXECUTE and BATCH.
//
// Handle is called from many worker goroutines at once, for many
// connections, so implementations must be safe for concurrent use. The
// request is the handler's to keep; the frontend does not touch it after the
// call. Handle must always return a response: errors are answered as ERROR
// messages, which the handler builds.
//
// A *message.SetKeyspaceResult response (the answer to USE) switches the
// connection's keyspace for the requests that follow.
type Handler interface {
	Handle(ctx context.Context, req *protocol.Request) *protocol.Response
}
