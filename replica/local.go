package replica

import (
	"context"
	"fmt"

	"github.com/cqld/cqld/mutation"
	"github.com/cqld/cqld/storage"
)

// Local is this node's own data: the storage engine.
type Local struct {
	engine *storage.Engine
}

var _ Replica = (*Local)(nil)

// NewLocal returns the replica over e.
func NewLocal(e *storage.Engine) *Local { return &Local{engine: e} }

// Apply implements Replica.
func (l *Local) Apply(ctx context.Context, m *mutation.Mutation, check func() error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	sm, err := l.batch(m)
	if err != nil {
		return err
	}
	return l.engine.ApplyIf(sm, check)
}

// ApplyAsync implements Replica.
func (l *Local) ApplyAsync(m *mutation.Mutation, check func() error, then func(error)) (bool, error) {
	sm, err := l.batch(m)
	if err != nil {
		return false, err
	}
	return l.engine.ApplyAsync(sm, check, then)
}

// ApplyWaits implements Replica.
func (l *Local) ApplyWaits() bool { return l.engine.ApplyWaits() }

// batch replays m's operations into a storage mutation, which the engine
// appends to the commit log as one record and applies atomically.
func (l *Local) batch(m *mutation.Mutation) (*storage.Mutation, error) {
	sm := l.engine.NewMutation()
	for _, u := range m.Updates {
		for i := range u.Ops {
			if err := apply(sm, u, &u.Ops[i]); err != nil {
				// sm is dropped unapplied, as the engine drops a mutation
				// whose check fails.
				return nil, fmt.Errorf("replica: %s.%s: %w", u.Table.Def.Keyspace, u.Table.Def.Name, err)
			}
		}
	}
	return sm, nil
}

func apply(sm *storage.Mutation, u *mutation.Update, op *mutation.Op) error {
	switch op.Kind {
	case mutation.KindCell:
		return sm.WriteCell(u.Table, u.Key, op.Target, op.Cell)
	case mutation.KindCollectionDeletion:
		return sm.DeleteCollection(u.Table, u.Key, op.Target, op.Cell)
	case mutation.KindRowMarker:
		return sm.WriteRowMarker(u.Table, u.Key, op.Target.Clustering, op.Cell)
	case mutation.KindRowDeletion:
		return sm.DeleteRow(u.Table, u.Key, op.Target.Clustering, op.Cell)
	case mutation.KindPartitionDeletion:
		return sm.DeletePartition(u.Table, u.Key, op.Cell)
	case mutation.KindRangeDeletion:
		return sm.DeleteRange(u.Table, u.Key, op.Range, op.Cell)
	}
	return fmt.Errorf("operation of unknown kind %d", op.Kind)
}

// Read implements Replica.
func (l *Local) Read(ctx context.Context, t *storage.Table, pk []byte, slice storage.Slice) (*storage.Partition, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return l.engine.ReadRaw(t, pk, slice)
}

// ReadPartition implements Replica.
func (l *Local) ReadPartition(ctx context.Context, t *storage.Table, pk []byte, o storage.ReadOptions, fn func(*storage.Row) bool) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return l.engine.ReadPartition(t, pk, o, fn)
}

// Scan implements Replica.
func (l *Local) Scan(ctx context.Context, t *storage.Table, o storage.ScanOptions, fn func(pk []byte, row *storage.Row) bool) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return l.engine.Scan(t, o, fn)
}

// ScanIndex implements Replica.
func (l *Local) ScanIndex(ctx context.Context, t *storage.Table, name string, value []byte, o storage.ScanOptions, fn func(pk []byte, row *storage.Row) bool) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return l.engine.ScanIndex(t, name, value, o, fn)
}
