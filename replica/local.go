package replica

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"time"

	"github.com/cqld/cqld/metrics"
	"github.com/cqld/cqld/mutation"
	"github.com/cqld/cqld/storage"
	"github.com/cqld/cqld/tracing"
)

// Local is this node's own data: the storage engine.
type Local struct {
	engine *storage.Engine
	locks  partitionLocks
	now    func() time.Time
	lat    *metrics.TableLatencies
	fast   fastPromises
	alone  aloneState
	// paxosCache keeps recently used partitions' Paxos state
	// (paxos_cache.go).
	paxosCache paxosCache
}

var _ Replica = (*Local)(nil)

// LocalOptions are a Local's seams; zero fields take their defaults.
type LocalOptions struct {
	// Now is the clock of the Paxos state's TTLs; time.Now when nil.
	Now func() time.Time
	// Latencies, when set, gets the time each read, scan and write of a
	// table takes here (system_views' local_*_latency).
	Latencies *metrics.TableLatencies
}

// NewLocal returns the replica over e.
func NewLocal(e *storage.Engine) *Local { return NewLocalWith(e, LocalOptions{}) }

// NewLocalWith returns the replica over e with o's seams. NB: one Local
// at a time serves an engine's Paxos rounds: each keeps the system.paxos
// rows it uses in memory (paxos_cache.go), and would not see another's
// writes.
func NewLocalWith(e *storage.Engine, o LocalOptions) *Local {
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Local{engine: e, now: o.Now, lat: o.Latencies}
}

// Kinds of local latencies, as system_views names their tables.
const (
	localRead  = "local_read_latency"
	localScan  = "local_scan_latency"
	localWrite = "local_write_latency"
)

// start is when an operation observed in l.lat begins.
func (l *Local) start() time.Time {
	if l.lat == nil {
		return time.Time{}
	}
	return l.lat.Now()
}

// observed records an operation of kind on t begun at start.
func (l *Local) observed(kind string, t *storage.Table, start time.Time) {
	if l.lat != nil {
		l.lat.Observe(kind, t.Def.ID, start)
	}
}

// wrote records a write begun at start of the tables ids.
func (l *Local) wrote(ids [][16]byte, start time.Time) {
	for _, id := range ids {
		l.lat.Observe(localWrite, id, start)
	}
}

// tablesOf are the tables m writes, once each; nil when no latencies are
// kept.
func (l *Local) tablesOf(m *mutation.Mutation) [][16]byte {
	if l.lat == nil {
		return nil
	}
	var ids [][16]byte
	for _, u := range m.Updates {
		if id := u.Table.Def.ID; !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	return ids
}

// Apply implements Replica.
func (l *Local) Apply(ctx context.Context, m *mutation.Mutation, check func() error) error {
	if err := expired(ctx); err != nil {
		return err
	}
	start := l.start()
	counters := m.HasCounters()
	if counters {
		defer l.locks.lockPartitions(m)()
		if err := l.addCounters(ctx, m); err != nil {
			return err
		}
	}
	ids := l.tablesOf(m)
	traced := tracing.FromContext(ctx) != nil
	if traced {
		tracing.Trace(ctx, "Appending to commitlog")
	}
	var err error
	if counters {
		err = l.apply(m, check)
	} else {
		err = l.applyWithin(ctx, m, check)
	}
	if err != nil {
		return err
	}
	l.wrote(ids, start)
	if traced {
		if l.engine.ApplyWaits() {
			tracing.Trace(ctx, "Commit log synced")
		}
		for _, u := range m.Updates {
			tracing.Tracef(ctx, "Adding to %s memtable", u.Table.Def.Name)
		}
	}
	return nil
}

// applyWithin is apply for a write that waits for its commit log sync no
// longer than ctx allows (the coordinator answers WRITE_TIMEOUT, as
// Cassandra's does for a replica that did not answer in time); the write
// goes on and lands once the sync is done.
func (l *Local) applyWithin(ctx context.Context, m *mutation.Mutation, check func() error) error {
	if ctx.Done() == nil || !l.engine.ApplyWaits() {
		return l.apply(m, check)
	}
	sm, err := l.batch(m)
	if err != nil {
		return err
	}
	done := make(chan error, 1)
	pending, err := l.engine.ApplyAsync(sm, check, func(err error) { done <- err })
	if !pending {
		return err
	}
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (l *Local) apply(m *mutation.Mutation, check func() error) error {
	sm, err := l.batch(m)
	if err != nil {
		return err
	}
	return l.engine.ApplyIf(sm, check)
}

// addCounters turns m's counter deltas into writes of the new totals:
// the current total plus the delta, at a timestamp newer than the total
// it replaces. Deltas to one counter within m add up. REQUIRES: the
// partitions of m locked.
func (l *Local) addCounters(ctx context.Context, m *mutation.Mutation) error {
	type counter struct {
		total, ts int64
	}
	seen := map[string]counter{}
	for _, u := range m.Updates {
		for i := range u.Ops {
			op := &u.Ops[i]
			if op.Kind != mutation.KindCounterAdd {
				continue
			}
			if len(op.Cell.Value) != 8 {
				return fmt.Errorf("replica: counter delta of %d bytes", len(op.Cell.Value))
			}
			key := counterKey(u, op)
			cur, ok := seen[key]
			if !ok {
				var err error
				if cur.total, cur.ts, err = l.readCounter(ctx, u, op); err != nil {
					return err
				}
			}
			cur.total += int64(binary.BigEndian.Uint64(op.Cell.Value))
			if ts := op.Cell.Timestamp; ts > cur.ts {
				cur.ts = ts
			} else {
				cur.ts++
			}
			seen[key] = cur
			op.Kind = mutation.KindCell
			op.Cell.Timestamp, op.Cell.Value = cur.ts, binary.BigEndian.AppendUint64(nil, uint64(cur.total))
		}
	}
	return nil
}

func counterKey(u *mutation.Update, op *mutation.Op) string {
	k := append(append([]byte(nil), u.Table.Def.ID[:]...), u.Key...)
	for _, c := range op.Target.Clustering {
		k = binary.AppendUvarint(k, uint64(len(c)))
		k = append(k, c...)
	}
	return string(append(k, op.Target.Column...))
}

// readCounter reads the counter op adds to: its total and timestamp, zero
// when it has none.
func (l *Local) readCounter(ctx context.Context, u *mutation.Update, op *mutation.Op) (total, ts int64, err error) {
	tg := &op.Target
	var o storage.ReadOptions
	switch {
	case tg.Static:
		o.Slice = storage.Slice{End: &storage.Bound{}}
	case len(tg.Clustering) > 0:
		o.Slice = storage.Slice{Start: &storage.Bound{Prefix: tg.Clustering, Inclusive: true}, End: &storage.Bound{Prefix: tg.Clustering, Inclusive: true}}
	}
	err = l.ReadPartition(ctx, u.Table, u.Key, o, func(r *storage.Row) bool {
		if r.Static != tg.Static {
			return true
		}
		for _, cc := range r.Cells {
			if cc.Column == tg.Column && len(cc.Cell.Value) == 8 {
				total, ts = int64(binary.BigEndian.Uint64(cc.Cell.Value)), cc.Cell.Timestamp
			}
		}
		return true
	})
	return total, ts, err
}

// ApplyAsync implements Replica.
func (l *Local) ApplyAsync(m *mutation.Mutation, check func() error, then func(error)) (bool, error) {
	if m.HasCounters() {
		return false, l.Apply(context.Background(), m, check)
	}
	sm, err := l.batch(m)
	if err != nil {
		return false, err
	}
	start, ids := l.start(), l.tablesOf(m)
	if ids != nil {
		done := then
		then = func(err error) {
			if err == nil {
				l.wrote(ids, start)
			}
			done(err)
		}
	}
	pending, err := l.engine.ApplyAsync(sm, check, then)
	if err == nil && !pending {
		l.wrote(ids, start)
	}
	return pending, err
}

// ApplyWaits implements Replica.
func (l *Local) ApplyWaits() bool { return l.engine.ApplyWaits() }

// batch replays m's operations into a storage mutation, which the engine
// appends to the commit log as one record and applies atomically.
func (l *Local) batch(m *mutation.Mutation) (*storage.Mutation, error) {
	sm := l.engine.NewMutation()
	for _, u := range m.Updates {
		if err := l.applyInto(sm, u); err != nil {
			return nil, discard(sm, err)
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
	case mutation.KindCounterAdd:
		return fmt.Errorf("counter delta applied unresolved")
	}
	return fmt.Errorf("operation of unknown kind %d", op.Kind)
}

// Read implements Replica.
func (l *Local) Read(ctx context.Context, t *storage.Table, pk []byte, slice storage.Slice) (*storage.Partition, error) {
	if err := expired(ctx); err != nil {
		return nil, err
	}
	if l.lat != nil {
		defer l.observed(localRead, t, l.lat.Now())
	}
	if s := tracing.FromContext(ctx); s != nil {
		s.Trace("Executing single-partition query on " + t.Def.Name)
		s.Trace("Merging memtable and sstable contents")
		p, err := l.engine.ReadRaw(t, pk, slice)
		if err == nil && p != nil {
			s.Trace(fmt.Sprintf("Read %d cells and tombstones", len(p.KVs)))
		}
		return p, err
	}
	return l.engine.ReadRaw(t, pk, slice)
}

// Digest implements Replica.
func (l *Local) Digest(ctx context.Context, t *storage.Table, pk []byte, slice storage.Slice) (storage.Digest, error) {
	p, err := l.Read(ctx, t, pk, slice)
	if err != nil {
		return storage.Digest{}, err
	}
	return storage.PartitionDigest(p), nil
}

// Truncate implements Replica. The Paxos state of t's partitions goes
// too, so that no commit or proposal made before brings a row back.
func (l *Local) Truncate(ctx context.Context, t *storage.Table) error {
	if err := expired(ctx); err != nil {
		return err
	}
	if err := l.engine.Truncate(t); err != nil {
		return err
	}
	return l.dropPaxos(t)
}

// ReadPartition implements Replica.
func (l *Local) ReadPartition(ctx context.Context, t *storage.Table, pk []byte, o storage.ReadOptions, fn func(*storage.Row) bool) error {
	if err := expired(ctx); err != nil {
		return err
	}
	if l.lat != nil {
		defer l.observed(localRead, t, l.lat.Now())
	}
	if s := tracing.FromContext(ctx); s != nil {
		s.Trace("Executing single-partition query on " + t.Def.Name)
		s.Trace("Merging memtable and sstable contents")
		rows := 0
		inner := fn
		fn = func(r *storage.Row) bool { rows++; return inner(r) }
		defer func() { s.Trace(fmt.Sprintf("Read %d live rows", rows)) }()
	}
	if _, ok := ctx.Deadline(); !ok {
		return l.engine.ReadPartition(t, pk, o, fn)
	}
	var d deadline
	err := l.engine.ReadPartition(t, pk, o, func(r *storage.Row) bool { return d.ok(ctx) && fn(r) })
	return d.result(err)
}

// Scan implements Replica.
func (l *Local) Scan(ctx context.Context, t *storage.Table, o storage.ScanOptions, fn func(pk []byte, row *storage.Row) bool) error {
	if err := expired(ctx); err != nil {
		return err
	}
	defer l.observed(localScan, t, l.start())
	tracing.Tracef(ctx, "Executing seq scan across the partitions of %s", t.Def.Name)
	var d deadline
	err := l.engine.Scan(t, o, func(pk []byte, r *storage.Row) bool { return d.ok(ctx) && fn(pk, r) })
	return d.result(err)
}

// ScanIndex implements Replica.
func (l *Local) ScanIndex(ctx context.Context, t *storage.Table, name string, value []byte, o storage.ScanOptions, fn func(pk []byte, row *storage.Row) bool) error {
	if err := expired(ctx); err != nil {
		return err
	}
	defer l.observed(localScan, t, l.start())
	tracing.Tracef(ctx, "Executing read on %s using index %s", t.Def.Name, name)
	var d deadline
	err := l.engine.ScanIndex(t, name, value, o, func(pk []byte, r *storage.Row) bool { return d.ok(ctx) && fn(pk, r) })
	return d.result(err)
}

// checkEvery is how many rows a read passes between two looks at its
// context: often enough to stop within a fraction of a millisecond, rarely
// enough to cost nothing.
const checkEvery = 64

// deadline stops a read whose context has ended.
type deadline struct {
	rows int
	err  error
}

// ok counts a row and reports whether the read may go on.
func (d *deadline) ok(ctx context.Context) bool {
	d.rows++
	if d.rows%checkEvery == 0 {
		d.err = expired(ctx)
	}
	return d.err == nil
}

// expired is ctx's error, or DeadlineExceeded once its deadline has
// passed even if its timer has not fired yet: a request whose deadline is
// past does no more work.
func expired(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if dl, ok := ctx.Deadline(); ok && !time.Now().Before(dl) {
		return context.DeadlineExceeded
	}
	return nil
}

// result is the read's error: the context's when it stopped the read.
func (d *deadline) result(err error) error {
	if d.err != nil {
		return d.err
	}
	return err
}
