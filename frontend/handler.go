package frontend

import (
	"context"
	"net/netip"

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

// Inliner is a Handler that can take some requests on the event loop that
// read them, saving the hand-off to a worker and back.
//
// Inline is called on an event loop, which serves many connections: it
// must take only requests that are cheap and cannot block (no lock held
// across I/O, no scan, no waiting for an fsync), and decline every other
// (taken false) at once, having done nothing; those go to Handle on a
// worker. A request it takes it either answers at once (resp), or, when
// the answer must wait (a write waiting for its commit log sync), answers
// later through later.Answer, exactly once, from any goroutine, even
// before Inline returns; resp is then nil.
type Inliner interface {
	Inline(ctx context.Context, req *protocol.Request, later protocol.Later) (resp *protocol.Response, taken bool)
}

// Authenticator checks the credentials of connections that must log in
// before they send requests (PasswordAuthenticator): STARTUP is answered
// AUTHENTICATE with ClassName, and each AUTH_RESPONSE's token goes to
// Authenticate.
//
// Authenticate is slow on purpose (bcrypt), so it is called on a worker,
// never an event loop, from many goroutines at once; it must not keep
// token. remote is the client's address, for rate limiting. It returns the
// role logged in as, or an error whose message is the BAD_CREDENTIALS the
// client gets, so it must hold nothing secret.
type Authenticator interface {
	ClassName() string
	Authenticate(remote netip.Addr, token []byte) (role string, err error)
}
