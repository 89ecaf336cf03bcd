package cluster

import (
	"context"
	"fmt"
	"sync"

	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"

	"github.com/cqld/cqld/schema"
)

// SchemaLog carries schema changes through the metadata log: as a
// schema.Submitter it proposes each change as an entry, and as the State's
// SchemaApplier it applies the entries in log order on every node,
// publishing each change's event to this node's clients.
type SchemaLog struct {
	schema  *schema.Schema
	publish func(message.Message)
	// onDrop is told of each keyspace or table (table "" for a keyspace)
	// a change drops, before the change is applied.
	onDrop func(keyspace, table string) error

	mu   sync.Mutex
	node *Node
}

var (
	_ schema.Submitter = (*SchemaLog)(nil)
	_ SchemaApplier    = (*SchemaLog)(nil)
)

// NewSchemaLog returns the SchemaLog applying changes to s; publish pushes
// events to this node's clients.
func NewSchemaLog(s *schema.Schema, publish func(message.Message)) *SchemaLog {
	if publish == nil {
		publish = func(message.Message) {}
	}
	return &SchemaLog{schema: s, publish: publish}
}

// OnDrop has f told, on every node, of each keyspace or table (table ""
// for a keyspace) a change drops, before the change applies: the grants
// on it are forgotten (AuthLog.ForgetDropped) as Cassandra's
// AuthSchemaChangeListener does. f must change nothing the second time
// for the same drop, since a restart between f and the schema's write
// applies the entry again. Call it before the node starts.
func (l *SchemaLog) OnDrop(f func(keyspace, table string) error) { l.onDrop = f }

// Attach gives the SchemaLog the node whose log it proposes to; Submit
// fails before.
func (l *SchemaLog) Attach(n *Node) {
	l.mu.Lock()
	l.node = n
	l.mu.Unlock()
}

// Submit proposes ch, once the current schema says it can apply, and
// answers with its result on this node.
func (l *SchemaLog) Submit(ctx context.Context, ch schema.Change) (message.Message, error) {
	l.mu.Lock()
	n := l.node
	l.mu.Unlock()
	if n == nil {
		return nil, fmt.Errorf("cluster: schema change before the node joined its cluster")
	}
	switch unchanged, err := l.schema.Unchanged(ch); {
	case err != nil:
		return nil, err
	case unchanged:
		// IF [NOT] EXISTS with nothing to do: answered here, as
		// Cassandra's coordinator does, without a schema change.
		return &message.VoidResult{}, nil
	}
	b, err := ch.Append(nil)
	if err != nil {
		return nil, err
	}
	if err := n.checkQuorum(ctx, "change the schema"); err != nil {
		return nil, err
	}
	v, err := n.Propose(ctx, Entry{Kind: KindSchema, Schema: b})
	if err != nil {
		return nil, err
	}
	res, ok := v.(message.Message)
	if !ok {
		return nil, fmt.Errorf("cluster: schema change answered %T", v)
	}
	return res, nil
}

// ApplySchema applies the change of the log's entry at index.
func (l *SchemaLog) ApplySchema(index uint64, b []byte) (any, error) {
	ch, err := schema.Decode(b)
	if err != nil {
		return nil, err
	}
	if l.onDrop != nil {
		if ev := schema.Event(l.outcome(ch)); ev != nil && ev.ChangeType == primitive.SchemaChangeTypeDropped &&
			(ev.Target == primitive.SchemaChangeTargetKeyspace || ev.Target == primitive.SchemaChangeTargetTable) {
			if err := l.onDrop(ev.Keyspace, ev.Object); err != nil {
				return nil, err
			}
		}
	}
	res, err := l.schema.ApplyAt(index, ch)
	if err != nil {
		return nil, err
	}
	if ev := schema.Event(res); ev != nil {
		l.publish(ev)
	}
	return res, nil
}

// outcome is what ch would answer if applied now; nil when it would fail.
func (l *SchemaLog) outcome(ch schema.Change) message.Message {
	res, err := l.schema.Outcome(ch)
	if err != nil {
		return nil
	}
	return res
}

// SchemaSnapshot and RestoreSchema are the schema's part of the log's
// snapshots.
func (l *SchemaLog) SchemaSnapshot() ([]byte, error) { return l.schema.Snapshot() }

func (l *SchemaLog) RestoreSchema(index uint64, b []byte) error { return l.schema.RestoreAt(index, b) }

// SchemaApplied is the log index the catalog last recorded.
func (l *SchemaLog) SchemaApplied() uint64 { return l.schema.Applied() }
