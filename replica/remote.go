package replica

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/netip"
	"sync"

	"github.com/cqld/cqld/messaging"
	"github.com/cqld/cqld/mutation"
	"github.com/cqld/cqld/storage"
	"github.com/cqld/cqld/tracing"
)

// Remote is a replica on another node, reached over a messaging
// Transport: each call is one request (a scan, one per page) to the
// peer's Server, and resolved reads are resolved here, on the
// coordinator, from the unresolved partitions the peer answers.
type Remote struct {
	tr   messaging.Transport
	peer netip.AddrPort
	opts RemoteOptions
	// async are the ApplyAsync requests in flight; Close waits for them.
	async sync.WaitGroup
}

var _ Replica = (*Remote)(nil)

// RemoteOptions tune a Remote; zero fields take their defaults.
type RemoteOptions struct {
	// PagePartitions and PageBytes bound each page a Scan asks for.
	PagePartitions int
	PageBytes      int
}

// Default page of a Scan.
const (
	DefaultPagePartitions = 1000
	DefaultPageBytes      = 1 << 20
)

// NewRemote returns the replica at peer, reached through tr.
func NewRemote(tr messaging.Transport, peer netip.AddrPort, opts RemoteOptions) *Remote {
	if opts.PagePartitions <= 0 {
		opts.PagePartitions = DefaultPagePartitions
	}
	if opts.PageBytes <= 0 {
		opts.PageBytes = DefaultPageBytes
	}
	return &Remote{tr: tr, peer: peer, opts: opts}
}

// Peer is the replica's internode address.
func (r *Remote) Peer() netip.AddrPort { return r.peer }

// Close waits for the writes ApplyAsync started to complete (their then
// called). The transport's own Close fails those still waiting.
func (r *Remote) Close() { r.async.Wait() }

func (r *Remote) request(ctx context.Context, verb messaging.Verb, payload []byte) ([]byte, error) {
	ctx, answered := r.trace(ctx, verb)
	out, err := r.tr.Request(ctx, r.peer, verb, payload)
	if answered != nil {
		answered()
	}
	if err != nil {
		return nil, fromRemote(r.peer, err)
	}
	return out, nil
}

// trace, for a traced request, records its sending and marks ctx for the
// peer to trace its own steps; answered records the response, or is nil
// when the request is not traced.
func (r *Remote) trace(ctx context.Context, verb messaging.Verb) (_ context.Context, answered func()) {
	s := tracing.FromContext(ctx)
	if s == nil {
		return ctx, nil
	}
	s.Trace(fmt.Sprintf("Sending %s message to /%s", verb, r.peer))
	return messaging.WithTrace(ctx, s.ID()), func() { s.Trace(fmt.Sprintf("Processing response from /%s", r.peer)) }
}

// Apply implements Replica. check runs here, before the mutation is sent:
// the coordinator's schema is the one it planned against. With counters,
// the peer answers the totals it wrote, and m holds them on return.
func (r *Remote) Apply(ctx context.Context, m *mutation.Mutation, check func() error) error {
	payload, err := r.encode(ctx, m, check)
	if err != nil {
		return err
	}
	return r.send(ctx, m, payload)
}

func (r *Remote) encode(ctx context.Context, m *mutation.Mutation, check func() error) ([]byte, error) {
	if err := expired(ctx); err != nil {
		return nil, err
	}
	if check != nil {
		if err := check(); err != nil {
			return nil, err
		}
	}
	return appendMutation(nil, m)
}

// send sends an encoded mutation; m, when not nil, takes the totals of
// its counters from the answer.
func (r *Remote) send(ctx context.Context, m *mutation.Mutation, payload []byte) error {
	out, err := r.request(ctx, messaging.VerbMutation, payload)
	if err != nil || m == nil || !m.HasCounters() {
		return err
	}
	tables := map[[16]byte]*storage.Table{}
	for _, u := range m.Updates {
		tables[u.Table.Def.ID] = u.Table
	}
	applied, err := decodeMutation(out, func(id [16]byte) (*storage.Table, bool) { t, ok := tables[id]; return t, ok })
	if err != nil {
		return fmt.Errorf("replica %s: counter totals: %w", r.peer, err)
	}
	defer applied.Release()
	if len(applied.Updates) != len(m.Updates) {
		return fmt.Errorf("%w: replica %s answered %d updates for %d", ErrBadMessage, r.peer, len(applied.Updates), len(m.Updates))
	}
	for i, u := range m.Updates {
		a := applied.Updates[i]
		if len(a.Ops) != len(u.Ops) {
			return fmt.Errorf("%w: replica %s answered %d operations for %d", ErrBadMessage, r.peer, len(a.Ops), len(u.Ops))
		}
		copy(u.Ops, a.Ops) // the cells alias out, which nothing reuses
	}
	return nil
}

// ApplyAsync implements Replica: a write without counters is always
// pending, then called from the response's goroutine; the request's
// deadline is the transport's RequestTimeout.
func (r *Remote) ApplyAsync(m *mutation.Mutation, check func() error, then func(error)) (bool, error) {
	ctx := context.Background()
	if m.HasCounters() {
		return false, r.Apply(ctx, m, check)
	}
	payload, err := r.encode(ctx, m, check)
	if err != nil {
		return false, err
	}
	r.async.Add(1)
	go func() {
		defer r.async.Done()
		then(r.send(ctx, nil, payload))
	}()
	return true, nil
}

// ApplyWaits implements Replica: a remote write always waits for its
// answer.
func (r *Remote) ApplyWaits() bool { return true }

// Read implements Replica.
func (r *Remote) Read(ctx context.Context, t *storage.Table, pk []byte, slice storage.Slice) (*storage.Partition, error) {
	out, err := r.request(ctx, messaging.VerbRead, AppendReadCommand(nil, &ReadCommand{Table: t.Def.ID, Key: pk, Slice: slice}))
	if err != nil {
		return nil, err
	}
	return r.decodeRead(out, t, pk)
}

// decodeRead is the partition pk of t that a read's answer out holds.
func (r *Remote) decodeRead(out []byte, t *storage.Table, pk []byte) (*storage.Partition, error) {
	p, err := DecodePartition(out, t)
	if err != nil {
		return nil, fmt.Errorf("replica %s: %w", r.peer, err)
	}
	if string(p.Key) != string(pk) {
		return nil, fmt.Errorf("%w: replica %s answered partition %x for %x", ErrBadMessage, r.peer, p.Key, pk)
	}
	return p, nil
}

// Digest implements Replica.
func (r *Remote) Digest(ctx context.Context, t *storage.Table, pk []byte, slice storage.Slice) (storage.Digest, error) {
	out, err := r.request(ctx, messaging.VerbRead, AppendReadCommand(nil, &ReadCommand{Table: t.Def.ID, Key: pk, Slice: slice, Digest: true}))
	if err != nil {
		return storage.Digest{}, err
	}
	d, err := decodeDigest(out)
	if err != nil {
		return storage.Digest{}, fmt.Errorf("replica %s: %w", r.peer, err)
	}
	return d, nil
}

// ReadRange implements Replica. The peer bounds its pages too (at most
// 10,000 partitions, 4 MiB), so a page may end before c's bounds.
func (r *Remote) ReadRange(ctx context.Context, t *storage.Table, c RangeCommand) ([]*storage.Partition, bool, error) {
	out, err := r.request(ctx, messaging.VerbRangeRead, appendRangeRequest(nil, &rangeRequest{Table: t.Def.ID, RangeCommand: c}))
	if err != nil {
		return nil, false, err
	}
	ps, more, err := DecodePartitions(out, t)
	if err != nil {
		return nil, false, fmt.Errorf("replica %s: %w", r.peer, err)
	}
	for _, p := range ps {
		if !c.Range.Contains(storage.Token(p.Key)) {
			return nil, false, fmt.Errorf("%w: replica %s answered partition %x outside range (%d, %d]", ErrBadMessage, r.peer, p.Key, c.Range.Start, c.Range.End)
		}
	}
	return ps, more, nil
}

// ReadPartition implements Replica: Read, resolved here.
func (r *Remote) ReadPartition(ctx context.Context, t *storage.Table, pk []byte, o storage.ReadOptions, fn func(*storage.Row) bool) error {
	p, err := r.Read(ctx, t, pk, o.Slice)
	if err != nil {
		return err
	}
	return t.Resolve(p, o, fn)
}

// Scan implements Replica: range reads of PagePartitions and PageBytes,
// each page resolved here.
func (r *Remote) Scan(ctx context.Context, t *storage.Table, o storage.ScanOptions, fn func(pk []byte, row *storage.Row) bool) error {
	return r.scan(ctx, t, o, nil, fn)
}

// ScanIndex implements Replica: range reads through the index, each page
// resolved here. Each partition an entry names comes whole, so fn sees
// rows that do not hold value (as it may from a Local) and checks them.
func (r *Remote) ScanIndex(ctx context.Context, t *storage.Table, name string, value []byte, o storage.ScanOptions, fn func(pk []byte, row *storage.Row) bool) error {
	return r.scan(ctx, t, o, &storage.IndexQuery{Name: name, Value: value}, fn)
}

func (r *Remote) scan(ctx context.Context, t *storage.Table, o storage.ScanOptions, index *storage.IndexQuery, fn func(pk []byte, row *storage.Row) bool) error {
	c := RangeCommand{Range: storage.TokenRange{Start: storage.MinToken, End: storage.MinToken}, MaxPartitions: r.opts.PagePartitions, MaxBytes: r.opts.PageBytes, Index: index}
	if o.MinToken != nil && *o.MinToken > storage.MinToken {
		c.Range.Start = *o.MinToken - 1
	}
	if o.MaxToken != nil && *o.MaxToken < math.MaxInt64 {
		if *o.MaxToken <= c.Range.Start {
			return nil // empty (or only the empty key's token, which holds nothing)
		}
		c.Range.End = *o.MaxToken
	}
	ro := storage.ReadOptions{Now: o.Now}
	stopped := false
	emit := func(p *storage.Partition) error {
		err := t.Resolve(p, ro, func(row *storage.Row) bool {
			stopped = !fn(p.Key, row)
			return !stopped
		})
		if err == nil && stopped {
			return errStopped
		}
		return err
	}
	if from := o.FromPartition; from != nil {
		switch tok := storage.Token(from); {
		case c.Range.Contains(tok):
			// A range read resumes after a partition: read this one first
			// (through the index, it is read by a one-partition range).
			first := c
			first.Range = storage.TokenRange{Start: tok - 1, End: tok}
			first.MaxPartitions, first.MaxBytes = 0, 0
			if err := r.pages(ctx, t, first, func(p *storage.Partition) error {
				if string(p.Key) != string(from) {
					return nil
				}
				return emit(p)
			}); err != nil || stopped {
				return err
			}
			c.After = from
		case c.Range.End != storage.MinToken && tok > c.Range.End:
			return nil
		}
	}
	return r.pages(ctx, t, c, emit)
}

// errStopped is what a pages callback returns to end the pages early
// without an error.
var errStopped = errors.New("replica: scan stopped")

// pages calls fn for each partition of c, page after page, until fn
// returns an error; errStopped ends it quietly.
func (r *Remote) pages(ctx context.Context, t *storage.Table, c RangeCommand, fn func(*storage.Partition) error) error {
	for {
		ps, more, err := r.ReadRange(ctx, t, c)
		if err != nil {
			return err
		}
		for _, p := range ps {
			if err := fn(p); err != nil {
				if err == errStopped {
					return nil
				}
				return err
			}
		}
		if !more || len(ps) == 0 {
			return nil
		}
		c.After = ps[len(ps)-1].Key
	}
}

// Truncate implements Replica.
func (r *Remote) Truncate(ctx context.Context, t *storage.Table) error {
	payload := append([]byte{codecV1}, t.Def.ID[:]...)
	_, err := r.request(ctx, messaging.VerbTruncate, payload)
	return err
}

// requestAsync sends a request whose answer goes to done, on a transport
// goroutine when tr can (messaging.AsyncRequester), else before it
// returns, the request then blocking its caller (no goroutine is left
// that nobody waits for): done must not block.
func (r *Remote) requestAsync(ctx context.Context, verb messaging.Verb, payload []byte, done func([]byte, error)) {
	ar, ok := r.tr.(messaging.AsyncRequester)
	if !ok {
		done(r.request(ctx, verb, payload))
		return
	}
	ctx, answered := r.trace(ctx, verb)
	if answered != nil {
		inner := done
		done = func(out []byte, err error) {
			answered()
			inner(out, err)
		}
	}
	if err := ar.RequestAsync(ctx, r.peer, verb, payload, func(out []byte, err error) {
		if err != nil {
			err = fromRemote(r.peer, err)
		}
		done(out, err)
	}); err != nil {
		done(nil, fromRemote(r.peer, err))
	}
}

// ApplyEncodedAsync is Apply of a mutation without counters given in its
// encoding (AppendEncodedMutation, AppendHint), which the caller has
// checked against its schema: done is handed nil once the write is
// durable on the replica, or the error that failed it, and must not
// block. It does not keep payload.
func (r *Remote) ApplyEncodedAsync(ctx context.Context, payload []byte, done func(error)) {
	r.requestAsync(ctx, messaging.VerbMutation, payload, func(_ []byte, err error) { done(err) })
}

// ReadAsync is Read with the result handed to done, which must not block.
func (r *Remote) ReadAsync(ctx context.Context, t *storage.Table, pk []byte, slice storage.Slice, done func(*storage.Partition, error)) {
	r.requestAsync(ctx, messaging.VerbRead, AppendReadCommand(nil, &ReadCommand{Table: t.Def.ID, Key: pk, Slice: slice}), func(out []byte, err error) {
		if err != nil {
			done(nil, err)
			return
		}
		done(r.decodeRead(out, t, pk))
	})
}

// DigestAsync is Digest with the result handed to done, which must not
// block.
func (r *Remote) DigestAsync(ctx context.Context, t *storage.Table, pk []byte, slice storage.Slice, done func(storage.Digest, error)) {
	r.requestAsync(ctx, messaging.VerbRead, AppendReadCommand(nil, &ReadCommand{Table: t.Def.ID, Key: pk, Slice: slice, Digest: true}), func(out []byte, err error) {
		if err != nil {
			done(storage.Digest{}, err)
			return
		}
		d, err := decodeDigest(out)
		if err != nil {
			err = fmt.Errorf("replica %s: %w", r.peer, err)
		}
		done(d, err)
	})
}

// Prepare implements Paxos.
func (r *Remote) Prepare(ctx context.Context, t *storage.Table, pk []byte, b Ballot, read *storage.Slice) (*Promise, error) {
	out, err := r.request(ctx, messaging.VerbPaxosPrepare, appendPrepare(nil, &prepareRequest{Table: t.Def.ID, Key: pk, Ballot: b, Read: read}))
	if err != nil {
		return nil, err
	}
	p, err := decodePromise(out, t, pk)
	if err != nil {
		return nil, fmt.Errorf("replica %s: %w", r.peer, err)
	}
	if p.OK && read == nil && p.Data != nil {
		return nil, fmt.Errorf("%w: replica %s answered data to a prepare without a read", ErrBadMessage, r.peer)
	}
	return p, nil
}

// Propose implements Paxos.
func (r *Remote) Propose(ctx context.Context, p Proposal, o ProposeOptions) (*Acceptance, error) {
	if err := checkProposal(p, o.CatchUp); err != nil {
		return nil, err
	}
	payload, err := appendPropose(nil, &proposeRequest{Proposal: p, ProposeOptions: o})
	if err != nil {
		return nil, err
	}
	out, err := r.request(ctx, messaging.VerbPaxosPropose, payload)
	if err != nil {
		return nil, err
	}
	a, err := decodeAcceptance(out, p.Update.Table, p.Update.Key)
	if err != nil {
		return nil, fmt.Errorf("replica %s: %w", r.peer, err)
	}
	if (a.Data != nil) != (a.Next && o.Read != nil && !o.Next.IsZero()) {
		return nil, fmt.Errorf("%w: replica %s answered data to a proposal that did not ask for it, or none to one that did", ErrBadMessage, r.peer)
	}
	return a, nil
}

// Commit implements Paxos; check runs here, before the commit is sent.
func (r *Remote) Commit(ctx context.Context, p Proposal, check func() error) error {
	if err := checkProposal(p, Proposal{}); err != nil {
		return err
	}
	if check != nil {
		if err := check(); err != nil {
			return err
		}
	}
	payload, err := appendCommit(nil, p)
	if err != nil {
		return err
	}
	_, err = r.request(ctx, messaging.VerbPaxosCommit, payload)
	return err
}
