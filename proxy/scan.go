package proxy

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/datastax/go-cassandra-native-protocol/primitive"

	"github.com/cqld/cqld/cqlerr"
	"github.com/cqld/cqld/replica"
	"github.com/cqld/cqld/ring"
	"github.com/cqld/cqld/storage"
)

// scanFunc is one replica's scan: Scan or ScanIndex.
type scanFunc func(rep replica.Replica, o storage.ScanOptions, fn func(pk []byte, row *storage.Row) bool) error

// Scan calls fn for each live row of every partition of t within o, in
// token order, read at level cl, until fn returns false
// (StorageProxy.getRangeSlice): the ring's ranges in token order, each
// from as many of its replicas as the level blocks for, their partitions
// reconciled when more than one replica answers. o.FromPartition resumes
// a paged scan at that partition, included. Errors are Read's.
func (p *Proxy) Scan(ctx context.Context, cl primitive.ConsistencyLevel, t *storage.Table, o storage.ScanOptions, fn func(pk []byte, row *storage.Row) bool) error {
	return p.scan(ctx, cl, t, o, fn, func(rep replica.Replica, o storage.ScanOptions, fn func([]byte, *storage.Row) bool) error {
		return rep.Scan(ctx, t, o, fn)
	})
}

// ScanIndex is Scan over the rows that index name's entries for value
// point at; the caller checks each row still holds value (with several
// replicas, every row of each partition found is passed).
func (p *Proxy) ScanIndex(ctx context.Context, cl primitive.ConsistencyLevel, t *storage.Table, name string, value []byte, o storage.ScanOptions, fn func(pk []byte, row *storage.Row) bool) error {
	return p.scan(ctx, cl, t, o, fn, func(rep replica.Replica, o storage.ScanOptions, fn func([]byte, *storage.Row) bool) error {
		return rep.ScanIndex(ctx, t, name, value, o, fn)
	})
}

// segment is the tokens [lo, hi] and the replicas a scan asks there.
type segment struct {
	lo, hi   int64
	contacts []ring.HostID
}

func (p *Proxy) scan(ctx context.Context, cl primitive.ConsistencyLevel, t *storage.Table, o storage.ScanOptions, fn func([]byte, *storage.Row) bool, scanOne scanFunc) (err error) {
	start := p.started()
	defer func() { p.measured("range", cl, start, err) }()
	if err := checkRead(cl); err != nil {
		return err
	}
	// A range read at SERIAL reads what a quorum holds, as Cassandra 4.0
	// runs it: there is no partition to run Paxos on.
	switch cl {
	case primitive.ConsistencyLevelSerial:
		cl = primitive.ConsistencyLevelQuorum
	case primitive.ConsistencyLevelLocalSerial:
		cl = primitive.ConsistencyLevelLocalQuorum
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
			err = scanOne(rep, so, wrapped)
			if err != nil {
				return err
			}
		} else if err := p.scanReconciled(ctx, &n, s.contacts, t, so, scanOne, wrapped); err != nil {
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

// pageKeys is how many partitions a reconciled scan lists from each
// replica at a time.
const pageKeys = 128

type scanKey struct {
	tok int64
	pk  []byte
}

func keyCompare(a, b scanKey) int {
	if c := cmp.Compare(a.tok, b.tok); c != 0 {
		return c
	}
	return bytes.Compare(a.pk, b.pk)
}

// scanReconciled scans segment o from several replicas: each lists its
// partitions, a page at a time, and every partition any of them holds is
// read from all of them, reconciled and repaired as a partition read is.
// A partition only one replica lists is still read from every one, so a
// deletion another holds shadows it.
func (p *Proxy) scanReconciled(ctx context.Context, n *need, contacts []ring.HostID, t *storage.Table, o storage.ScanOptions, scanOne scanFunc, fn func([]byte, *storage.Row) bool) error {
	var after *scanKey // keys up to it were served
	for {
		var (
			union    []scanKey
			frontier *scanKey // the smallest last key of a replica that had more
		)
		for i, h := range contacts {
			rep, err := p.replica(h)
			if err != nil {
				return err
			}
			var keys []scanKey
			full := false
			err = scanOne(rep, o, func(pk []byte, _ *storage.Row) bool {
				if k := len(keys); k > 0 && bytes.Equal(keys[k-1].pk, pk) {
					return true
				}
				if len(keys) == pageKeys {
					full = true
					return false
				}
				keys = append(keys, scanKey{tok: storage.Token(pk), pk: bytes.Clone(pk)})
				return true
			})
			if err != nil {
				if errors.Is(err, context.DeadlineExceeded) {
					return &cqlerr.ReadTimeout{Consistency: n.cl, Received: int32(i), BlockFor: int32(n.total()), DataPresent: i > 0}
				}
				return &cqlerr.ReadFailure{Consistency: n.cl, Received: int32(i), BlockFor: int32(n.total()), DataPresent: i > 0,
					Reasons: p.failureReasons([]ring.HostID{h}), Err: fmt.Errorf("proxy: range read from %s: %w", h, err)}
			}
			if full {
				last := keys[len(keys)-1]
				if frontier == nil || keyCompare(last, *frontier) < 0 {
					frontier = &last
				}
			}
			union = append(union, keys...)
		}
		slices.SortFunc(union, keyCompare)
		union = slices.CompactFunc(union, func(a, b scanKey) bool { return keyCompare(a, b) == 0 })
		for _, k := range union {
			if frontier != nil && keyCompare(k, *frontier) > 0 {
				break
			}
			if after != nil && keyCompare(k, *after) <= 0 {
				continue
			}
			part, err := p.readReconciled(ctx, t, readPlan{n: *n, contacts: contacts}, k.pk, storage.Slice{})
			if err != nil {
				return err
			}
			stop := false
			if err := t.Resolve(part, storage.ReadOptions{Now: o.Now, Tombstones: o.Tombstones}, func(r *storage.Row) bool {
				stop = !fn(k.pk, r)
				return !stop
			}); err != nil {
				return err
			}
			if stop {
				return nil
			}
		}
		if frontier == nil {
			return nil
		}
		after = frontier
		o.FromPartition = frontier.pk
	}
}
