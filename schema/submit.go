package schema

import (
	"context"
	"sync"

	"github.com/datastax/go-cassandra-native-protocol/message"
)

// Submitter takes a schema change where it is ordered and applied, and
// answers with Apply's result once the change has applied on this node.
// Implementations are safe for concurrent use.
type Submitter interface {
	// Submit orders and applies ch. The change's events are published by
	// each node that applies it, to its own clients, before Submit
	// returns on this one. ctx bounds the wait; a change already ordered
	// applies whether or not its submitter waits for it.
	Submit(ctx context.Context, ch Change) (message.Message, error)
}

// Local is the Submitter of a node alone: changes apply here, in the order
// submitted, each event published before the next change applies.
type Local struct {
	schema  *Schema
	publish func(message.Message)

	mu sync.Mutex // orders changes with their events
}

var _ Submitter = (*Local)(nil)

// NewLocal returns the Submitter applying changes to s and pushing their
// events through publish (nil drops them).
func NewLocal(s *Schema, publish func(message.Message)) *Local {
	if publish == nil {
		publish = func(message.Message) {}
	}
	return &Local{schema: s, publish: publish}
}

// Submit applies ch now; ctx is not consulted, as a change is never
// abandoned halfway.
func (l *Local) Submit(_ context.Context, ch Change) (message.Message, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	res, err := l.schema.Apply(ch)
	if err != nil {
		return nil, err
	}
	if ev := Event(res); ev != nil {
		l.publish(ev)
	}
	return res, nil
}
