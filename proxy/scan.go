package proxy

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/datastax/go-cassandra-native-protocol/primitive"

	"github.com/cqld/cqld/cqlerr"
	"github.com/cqld/cqld/replica"
	"github.com/cqld/cqld/ring"
	"github.com/cqld/cqld/storage"
)

// Scan calls fn for each live row of every partition of t within o, in
// token order, read at level cl, until fn returns false
// (StorageProxy.getRangeSlice): the ring's ranges in token order, each
// from as many of its replicas as the level blocks for, their partitions
// reconciled when more than one replica answers. o.FromPartition resumes
// a paged scan at that partition, included. Errors are Read's.
func (p *Proxy) Scan(ctx context.Context, cl primitive.ConsistencyLevel, t *storage.Table, o storage.ScanOptions, fn func(pk []byte, row *storage.Row) bool) error {
	return p.scan(ctx, cl, t, o, nil, fn)
}

// ScanIndex is Scan over the rows that index name's entries for value
// point at; the caller checks each row still holds value (with several
// replicas, every row of each partition found is passed).
func (p *Proxy) ScanIndex(ctx context.Context, cl primitive.ConsistencyLevel, t *storage.Table, name string, value []byte, o storage.ScanOptions, fn func(pk []byte, row *storage.Row) bool) error {
	return p.scan(ctx, cl, t, o, &storage.IndexQuery{Name: name, Value: value}, fn)
}

// segment is the tokens [lo, hi] and the replicas a scan asks there.
type segment struct {
	lo, hi   int64
	contacts []ring.HostID
}

func (p *Proxy) scan(ctx context.Context, cl primitive.ConsistencyLevel, t *storage.Table, o storage.ScanOptions, index *storage.IndexQuery, fn func([]byte, *storage.Row) bool) (err error) {
	start := p.started()
	defer func() { p.measured("range", cl, start, err) }()
	if err := checkRead(cl); err != nil {
		return err
	}
	// A range read at SERIAL reads what a quorum holds, as Cassandra 4.0
	// runs it: there is no partition to run Paxos on.
	if isSerial(cl) {
		cl = quorumOf(cl)
	}
	ks, err := p.keyspace(t)
	if err != nil {
		return err
	}
	st, err := p.strategy(ks)
	if err != nil {
		return err
	}
	ranges, err := p.opts.Topology.Ranges(ks)
	if err != nil {
		return err
	}
	n := p.needFor(cl, st, nil, false)
	segs, err := p.segments(&n, ranges, o)
	if err != nil {
		return err
	}
	stopped := false
	wrapped := func(pk []byte, r *storage.Row) bool {
		if !fn(pk, r) {
			stopped = true
		}
		return !stopped
	}
	for i, s := range segs {
		so := o
		// The first segment starts where o does: at its partition, or the
		// ring's start, as the one replica of a one-node ring is asked.
		if i > 0 || o.MinToken != nil || (s.lo != math.MinInt64 && o.FromPartition == nil) {
			so.MinToken = &s.lo
		}
		if s.hi != math.MaxInt64 || o.MaxToken != nil {
			so.MaxToken = &s.hi
		}
		if len(s.contacts) == 1 {
			rep, err := p.replica(s.contacts[0])
			if err != nil {
				return err
			}
			if index != nil {
				err = rep.ScanIndex(ctx, t, index.Name, index.Value, so, wrapped)
			} else {
				err = rep.Scan(ctx, t, so, wrapped)
			}
			if err != nil {
				return err
			}
		} else if err := p.scanReconciled(ctx, &n, s.contacts, t, s, so, index, wrapped); err != nil {
			return err
		}
		if stopped {
			return nil
		}
	}
	return nil
}

// segments cuts the tokens o scans into the ring's ranges in token order,
// with the replicas each is read from; neighbours read from the same one
// replica are joined, so that a node holding everything scans once.
func (p *Proxy) segments(n *need, ranges []RangeReplicas, o storage.ScanOptions) ([]segment, error) {
	lo, hi := int64(math.MinInt64), int64(math.MaxInt64)
	if o.MinToken != nil {
		lo = *o.MinToken
	}
	if o.MaxToken != nil {
		hi = *o.MaxToken
	}
	if o.FromPartition != nil {
		lo = max(lo, storage.Token(o.FromPartition))
	}
	var segs []segment
	for _, rr := range ranges {
		for _, iv := range intervals(rr.Range) {
			a, b := max(iv[0], lo), min(iv[1], hi)
			if a > b {
				continue
			}
			rp, err := p.contacts(*n, rr.Replicas)
			if err != nil {
				return nil, err
			}
			segs = append(segs, segment{lo: a, hi: b, contacts: rp.contacts})
		}
	}
	slices.SortFunc(segs, func(x, y segment) int { return cmp.Compare(x.lo, y.lo) })
	out := segs[:0]
	for _, s := range segs {
		if k := len(out) - 1; k >= 0 && len(s.contacts) == 1 && slices.Equal(out[k].contacts, s.contacts) && out[k].hi+1 == s.lo {
			out[k].hi = s.hi
			continue
		}
		out = append(out, s)
	}
	return out, nil
}

// intervals are range r's tokens as inclusive intervals in token order:
// two for the range that wraps past the ring's end.
func intervals(r ring.Range) [][2]int64 {
	if r.Start < r.End {
		return [][2]int64{{r.Start + 1, r.End}}
	}
	out := [][2]int64{{math.MinInt64, r.End}}
	if r.Start != math.MaxInt64 {
		out = append(out, [2]int64{r.Start + 1, math.MaxInt64})
	}
	return out
}

// Bounds of the page a reconciled scan asks each replica for at a time
// (Proxy.rangePage, which tests lower, is the first).
const (
	pagePartitions = 128
	pageBytes      = 1 << 20
)

// rangeSource is one replica's part of a reconciled scan: its partitions
// of the segment, a page at a time.
type rangeSource struct {
	host ring.HostID
	rep  replica.Replica
	// cmd is the next page's command; from, while set, is the partition
	// the scan resumes at, read on its own first (a page starts after a
	// partition, never at one).
	cmd  replica.RangeCommand
	from []byte
	// buf holds the partitions fetched and not yet merged; more reports
	// whether pages follow it.
	buf  []*storage.Partition
	more bool
	err  error
}

// fetch reads source s's next page into its empty buffer.
func (s *rangeSource) fetch(ctx context.Context, t *storage.Table) {
	for len(s.buf) == 0 && s.more && s.err == nil {
		if s.from != nil {
			tok := storage.Token(s.from)
			one := s.cmd
			one.Range = storage.TokenRange{Start: tok - 1, End: tok}
			one.After, one.MaxPartitions, one.MaxBytes = nil, 0, 0
			ps, _, err := s.rep.ReadRange(ctx, t, one)
			for _, p := range ps {
				if string(p.Key) == string(s.from) {
					s.buf = append(s.buf, p)
				}
			}
			s.err, s.cmd.After, s.from = err, s.from, nil
			continue
		}
		ps, more, err := s.rep.ReadRange(ctx, t, s.cmd)
		s.buf, s.more, s.err = ps, more && len(ps) > 0, err
		if len(ps) > 0 {
			s.cmd.After = ps[len(ps)-1].Key
		}
	}
}

func (s *rangeSource) head() (scanKey, bool) {
	if len(s.buf) == 0 {
		return scanKey{}, false
	}
	pk := s.buf[0].Key
	return scanKey{tok: storage.Token(pk), pk: pk}, true
}

type scanKey struct {
	tok int64
	pk  []byte
}

// keyCompare orders partitions as the ring and the storage do: by token,
// then by key.
func keyCompare(a, b scanKey) int {
	if c := cmp.Compare(a.tok, b.tok); c != 0 {
		return c
	}
	return bytes.Compare(a.pk, b.pk)
}

// scanReconciled scans segment seg (o within it) from several replicas
// (StorageProxy's range reads, DataResolver): each replica's partitions
// come unresolved, a page at a time (Replica.ReadRange), and are merged
// in ring order; each partition is the reconciliation of every replica's
// version of it, a replica without it holding none, and a replica whose
// version differs is repaired before its rows are passed on. Through an
// index, a replica that does not list a partition another lists may hold
// a version that no longer matches, so it is read on its own to take part
// (Cassandra's ReplicaFilteringProtection).
func (p *Proxy) scanReconciled(ctx context.Context, n *need, contacts []ring.HostID, t *storage.Table, seg segment, o storage.ScanOptions, index *storage.IndexQuery, fn func([]byte, *storage.Row) bool) error {
	cmd := replica.RangeCommand{Range: segmentRange(seg), MaxPartitions: p.rangePage, MaxBytes: pageBytes, Index: index}
	var from []byte
	if o.FromPartition != nil && seg.lo <= storage.Token(o.FromPartition) && storage.Token(o.FromPartition) <= seg.hi {
		from = o.FromPartition
	}
	sources := make([]*rangeSource, len(contacts))
	for i, h := range contacts {
		rep, err := p.replica(h)
		if err != nil {
			return err
		}
		sources[i] = &rangeSource{host: h, rep: rep, cmd: cmd, from: from, more: true}
	}
	ro := storage.ReadOptions{Now: o.Now, Tombstones: o.Tombstones}
	parts := make([]*storage.Partition, len(sources))
	for {
		if err := p.fetchAll(ctx, n, t, sources); err != nil {
			return err
		}
		var next *scanKey
		for _, s := range sources {
			if k, ok := s.head(); ok && (next == nil || keyCompare(k, *next) < 0) {
				next = &k
			}
		}
		if next == nil {
			return nil
		}
		var missing []int
		for i, s := range sources {
			if k, ok := s.head(); ok && keyCompare(k, *next) == 0 {
				parts[i], s.buf = s.buf[0], s.buf[1:]
				continue
			}
			parts[i] = &storage.Partition{Key: next.pk}
			missing = append(missing, i)
		}
		if index != nil && len(missing) > 0 {
			if err := p.completeIndexed(ctx, n, t, sources, missing, parts); err != nil {
				return err
			}
		}
		merged, err := storage.ReconcilePartitions(parts...)
		if err != nil {
			return fmt.Errorf("proxy: range read of %s.%s: %w", t.Def.Keyspace, t.Def.Name, err)
		}
		if err := p.repair(ctx, n, contacts, t, merged, parts); err != nil {
			return err
		}
		stop := false
		if err := t.Resolve(merged, ro, func(r *storage.Row) bool {
			stop = !fn(merged.Key, r)
			return !stop
		}); err != nil || stop {
			return err
		}
	}
}

// fetchAll fills, at once, the buffer of every source that has emptied
// and has pages left.
func (p *Proxy) fetchAll(ctx context.Context, n *need, t *storage.Table, sources []*rangeSource) error {
	var wg sync.WaitGroup
	for _, s := range sources {
		if len(s.buf) == 0 && s.more {
			wg.Add(1)
			go func() {
				defer wg.Done()
				s.fetch(ctx, t)
			}()
		}
	}
	wg.Wait()
	for i, s := range sources {
		if s.err != nil {
			return p.rangeError(n, i, s.host, s.err)
		}
	}
	return nil
}

// completeIndexed reads, for an index query, the partition the other
// sources listed from each source in missing, into parts.
func (p *Proxy) completeIndexed(ctx context.Context, n *need, t *storage.Table, sources []*rangeSource, missing []int, parts []*storage.Partition) error {
	pk := parts[missing[0]].Key
	for _, i := range missing {
		part, err := sources[i].rep.Read(ctx, t, pk, sources[i].cmd.Slice)
		if err != nil {
			return p.rangeError(n, i, sources[i].host, err)
		}
		parts[i] = part
	}
	return nil
}

// rangeError is a range read's answer when replica h, the i-th asked,
// failed with err.
func (p *Proxy) rangeError(n *need, i int, h ring.HostID, err error) error {
	if hintable(err) {
		return &cqlerr.ReadTimeout{Consistency: n.cl, Received: int32(i), BlockFor: int32(n.total()), DataPresent: i > 0}
	}
	return &cqlerr.ReadFailure{Consistency: n.cl, Received: int32(i), BlockFor: int32(n.total()), DataPresent: i > 0,
		Reasons: p.failureReasons([]ring.HostID{h}), Err: fmt.Errorf("proxy: range read from %s: %w", h, err)}
}

// segmentRange is the tokens [lo, hi] of seg as a storage.TokenRange.
func segmentRange(seg segment) storage.TokenRange {
	r := storage.TokenRange{Start: storage.MinToken, End: storage.MinToken}
	if seg.lo > math.MinInt64 {
		r.Start = seg.lo - 1
	}
	if seg.hi < math.MaxInt64 {
		r.End = seg.hi
	}
	return r
}
