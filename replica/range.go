package replica

import (
	"context"

	"github.com/cqld/cqld/storage"
)

// RangeCommand is one page of an unresolved range read: the partitions of
// a table whose tokens lie in Range, in ring order from Range.Start.
type RangeCommand struct {
	Range storage.TokenRange
	// After, when set, resumes after this partition: the key of the last
	// partition of the previous page.
	After []byte
	// Slice selects each partition's rows.
	Slice storage.Slice
	// MaxPartitions and MaxBytes (storage.Partition.Size) end the page
	// once reached; zero means no bound. A page holds at least one
	// partition, however large.
	MaxPartitions int
	MaxBytes      int
	// Index, when set, keeps the partitions the entries of a secondary
	// index for a value point at, each whole within Slice: a superset of
	// those holding the value, which the coordinator filters row by row
	// once resolved, as Replica.ScanIndex's caller does.
	Index *storage.IndexQuery
}

// ReadRange implements Replica.
func (l *Local) ReadRange(ctx context.Context, t *storage.Table, c RangeCommand) ([]*storage.Partition, bool, error) {
	if err := expired(ctx); err != nil {
		return nil, false, err
	}
	var (
		out    []*storage.Partition
		bytes  int
		ctxErr error
	)
	more, err := l.engine.ScanRaw(t, storage.RawScanOptions{Range: c.Range, After: c.After, Slice: c.Slice, Index: c.Index}, func(p *storage.Partition) bool {
		out = append(out, p)
		bytes += p.Size()
		// A partition costs an iterator: looking at ctx each time is cheap.
		if ctxErr = expired(ctx); ctxErr != nil {
			return false
		}
		return (c.MaxPartitions <= 0 || len(out) < c.MaxPartitions) && (c.MaxBytes <= 0 || bytes < c.MaxBytes)
	})
	if ctxErr != nil {
		return nil, false, ctxErr
	}
	if err != nil {
		return nil, false, err
	}
	return out, more, nil
}
