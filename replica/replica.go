package replica

import (
	"context"

	"github.com/cqld/cqld/mutation"
	"github.com/cqld/cqld/storage"
)

// Replica holds a set of partitions. Implementations are safe for
// concurrent use. They do not keep the mutations they are given, nor the
// rows they pass to a read's callback after it returns.
type Replica interface {
	// Apply makes m durable and visible, all of it or none. check, when
	// not nil, runs as m applies, in the same critical section as schema
	// changes take: a write planned against a table definition that has
	// changed since must fail rather than land after the change. Counter
	// deltas (mutation.KindCounterAdd) are added to the replica's current
	// totals, which it reads and writes under its partition's lock, and m
	// holds the totals written when Apply returns.
	Apply(ctx context.Context, m *mutation.Mutation, check func() error) error
	// ApplyAsync is Apply for a caller that must not block, such as an
	// event loop; a mutation with counters is applied before it returns. When the write has to wait (for a commit log sync),
	// pending is true and then is called exactly once, later and from
	// another goroutine, with Apply's result; otherwise the result is
	// returned and then is never called. m may be released as soon as
	// ApplyAsync returns.
	ApplyAsync(m *mutation.Mutation, check func() error, then func(error)) (pending bool, err error)
	// ApplyWaits reports whether an Apply waits for an fsync.
	ApplyWaits() bool

	// Read returns partition pk of t within slice unresolved: cells and
	// tombstones with their timestamps, for the coordinator to reconcile
	// with other replicas' answers (storage.ReconcilePartitions) and then
	// resolve into live rows (Table.Resolve).
	Read(ctx context.Context, t *storage.Table, pk []byte, slice storage.Slice) (*storage.Partition, error)
	// Digest is storage.PartitionDigest of what Read answers: the
	// coordinator reads data from one replica and digests from the
	// others, and reads in full only when they differ.
	Digest(ctx context.Context, t *storage.Table, pk []byte, slice storage.Slice) (storage.Digest, error)
	// ReadRange returns one page of c, unresolved as Read answers, in
	// ring order, and whether partitions may follow it (then the next
	// page resumes after the last partition returned).
	ReadRange(ctx context.Context, t *storage.Table, c RangeCommand) (ps []*storage.Partition, more bool, err error)
	// ReadPartition calls fn for each live row of partition pk of t within
	// o, until fn returns false.
	ReadPartition(ctx context.Context, t *storage.Table, pk []byte, o storage.ReadOptions, fn func(*storage.Row) bool) error
	// Scan calls fn for each live row of every partition of t within o, in
	// token order, until fn returns false.
	Scan(ctx context.Context, t *storage.Table, o storage.ScanOptions, fn func(pk []byte, row *storage.Row) bool) error
	// ScanIndex is Scan over the rows that index name's entries for value
	// point at; the caller checks each row still holds value.
	ScanIndex(ctx context.Context, t *storage.Table, name string, value []byte, o storage.ScanOptions, fn func(pk []byte, row *storage.Row) bool) error

	// Truncate removes every row of t (and of its indexes), durably.
	Truncate(ctx context.Context, t *storage.Table) error

	// Paxos is the replica's part in lightweight transactions.
	Paxos
}
