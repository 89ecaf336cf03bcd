package frontend

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"

	"github.com/cqld/cqld/protocol"
)

// waitHandler holds each request until its context ends, and reports why.
type waitHandler struct {
	started chan struct{}
	ended   chan error
}

var _ Handler = (*waitHandler)(nil)

func (h *waitHandler) Handle(ctx context.Context, _ *protocol.Request) *protocol.Response {
	h.started <- struct{}{}
	select {
	case <-ctx.Done():
		h.ended <- ctx.Err()
	case <-time.After(10 * time.Second):
		h.ended <- nil
	}
	return &protocol.Response{Message: &message.VoidResult{}}
}

// A connection that closes cancels the requests it has in flight: work for
// a client that is gone stops.
func TestClosedConnectionCancelsItsRequests(t *testing.T) {
	h := &waitHandler{started: make(chan struct{}, 1), ended: make(chan error, 1)}
	s := startServer(t, h, nil)
	c := dialClient(t, s.Addr())
	c.startup(primitive.ProtocolVersion4, nil)
	c.query(1, "anything")
	select {
	case <-h.started:
	case <-time.After(10 * time.Second):
		t.Fatal("the request never reached the handler")
	}
	c.nc.Close()
	if err := <-h.ended; !errors.Is(err, context.Canceled) {
		t.Fatalf("the request of a closed connection ended with %v, want its context cancelled", err)
	}
}
