package replica

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/cqld/cqld/messaging"
	"github.com/cqld/cqld/mutation"
	"github.com/cqld/cqld/storage"
	"github.com/cqld/cqld/tracing"
)

// Bounds of a range read page a server answers, whatever the command asks:
// a page must fit in one internode message (messaging.DefaultMaxMessageSize).
const (
	serveMaxPartitions = 10000
	serveMaxBytes      = 4 << 20
	// maxUpdates caps the updates of one mutation message.
	maxUpdates = 1 << 20
)

// Server serves a Local replica to peers: the handlers of VerbMutation,
// VerbRead, VerbRangeRead, VerbTruncate, VerbStream and the Paxos verbs.
type Server struct {
	local  *Local
	tables func(id [16]byte) (*storage.Table, bool)
	tracer *tracing.Tracer
}

// Serve registers on tr the handlers that serve local to peers; tables
// resolves the table ids requests name (the node's current schema). A
// request for a table tables does not know fails with
// FailureUnknownTable, which the coordinator's Remote returns as an
// *UnknownTableError. A request of a traced client request records this
// node's events in its session through tracer (nil: none).
func Serve(tr messaging.Transport, local *Local, tables func(id [16]byte) (*storage.Table, bool), tracer *tracing.Tracer) *Server {
	s := &Server{local: local, tables: tables, tracer: tracer}
	for verb, h := range map[messaging.Verb]func(context.Context, []byte) ([]byte, error){
		messaging.VerbMutation:     s.mutation,
		messaging.VerbHint:         s.hint,
		messaging.VerbRead:         s.read,
		messaging.VerbRangeRead:    s.rangeRead,
		messaging.VerbTruncate:     s.truncate,
		messaging.VerbStream:       s.stream,
		messaging.VerbPaxosPrepare: s.prepare,
		messaging.VerbPaxosPropose: s.propose,
		messaging.VerbPaxosCommit:  s.commit,
	} {
		tr.Handle(verb, func(ctx context.Context, m messaging.Inbound) ([]byte, error) {
			if m.Traced && s.tracer != nil {
				ts := s.tracer.Continue(m.Trace, stage(m.Verb))
				ts.Trace(fmt.Sprintf("%s message received from /%s", m.Verb, m.From))
				defer ts.Trace(fmt.Sprintf("Enqueuing response to /%s", m.From))
				ctx = tracing.WithSession(ctx, ts)
			}
			out, err := h(ctx, m.Payload)
			if err != nil {
				return nil, toFailure(err)
			}
			return out, nil
		})
	}
	if as, ok := tr.(messaging.AsyncServer); ok {
		as.HandleAsync(messaging.VerbMutation, s.mutationAsync)
	}
	return s
}

// mutationAsync is mutation served on the goroutine that read it: the
// mutation goes to Local.ApplyAsync and is answered when durable, from
// the commit log's goroutine, with no handler waiting for it. Counters,
// which read before they write, and the mutations of a traced request,
// whose events the worker's handler records, are left to mutation on a
// worker.
func (s *Server) mutationAsync(_ time.Time, in messaging.Inbound, reply func([]byte, error)) bool {
	if in.Traced && s.tracer != nil {
		return false
	}
	answer := func(out []byte, err error) {
		if err != nil {
			err = toFailure(err)
		}
		reply(out, err)
	}
	m, err := s.decode(in.Payload)
	switch {
	case err != nil:
		answer(nil, err)
		return true
	case m.HasCounters():
		m.Release()
		return false
	}
	pending, err := s.local.ApplyAsync(m, nil, func(err error) { answer(nil, err) })
	m.Release()
	if !pending {
		answer(nil, err)
	}
	return true
}

// stage is the thread a replica's trace events name, after Cassandra's
// stages.
func stage(v messaging.Verb) string {
	switch v {
	case messaging.VerbRead, messaging.VerbRangeRead:
		return "ReadStage"
	}
	return "MutationStage"
}

func (s *Server) table(id [16]byte) (*storage.Table, error) {
	t, ok := s.tables(id)
	if !ok {
		return nil, &UnknownTableError{ID: id}
	}
	return t, nil
}

// mutation applies a mutation and answers once Local.Apply returns; with
// counters, the answer is the mutation as applied (the totals written).
func (s *Server) mutation(ctx context.Context, b []byte) ([]byte, error) {
	m, err := s.decode(b)
	if err != nil {
		return nil, err
	}
	defer m.Release()
	counters := m.HasCounters()
	if err := s.local.Apply(ctx, m, nil); err != nil {
		return nil, err
	}
	if !counters {
		return nil, nil
	}
	return appendMutation(nil, m)
}

// decode decodes a mutation of tables this replica knows; the caller
// releases it.
func (s *Server) decode(b []byte) (*mutation.Mutation, error) {
	var missing *UnknownTableError
	lookup := func(id [16]byte) (*storage.Table, bool) {
		t, ok := s.tables(id)
		if !ok && missing == nil {
			missing = &UnknownTableError{ID: id}
		}
		return t, ok
	}
	m, err := decodeMutation(b, lookup)
	if missing != nil {
		return nil, missing
	}
	return m, err
}

func (s *Server) read(ctx context.Context, b []byte) ([]byte, error) {
	c, err := DecodeReadCommand(b)
	if err != nil {
		return nil, err
	}
	t, err := s.table(c.Table)
	if err != nil {
		return nil, err
	}
	p, err := s.local.Read(ctx, t, c.Key, c.Slice)
	if err != nil {
		return nil, badRequest(err)
	}
	if c.Digest {
		return appendDigest(nil, storage.PartitionDigest(p)), nil
	}
	return AppendPartition(nil, p), nil
}

func (s *Server) rangeRead(ctx context.Context, b []byte) ([]byte, error) {
	c, err := decodeRangeRequest(b)
	if err != nil {
		return nil, err
	}
	t, err := s.table(c.Table)
	if err != nil {
		return nil, err
	}
	rc := c.RangeCommand
	if rc.MaxPartitions <= 0 || rc.MaxPartitions > serveMaxPartitions {
		rc.MaxPartitions = serveMaxPartitions
	}
	if rc.MaxBytes <= 0 || rc.MaxBytes > serveMaxBytes {
		rc.MaxBytes = serveMaxBytes
	}
	ps, more, err := s.local.ReadRange(ctx, t, rc)
	if err != nil {
		return nil, badRequest(err)
	}
	return AppendPartitions(nil, ps, more), nil
}

func (s *Server) truncate(ctx context.Context, b []byte) ([]byte, error) {
	r := newReader(b)
	r.version()
	var id [16]byte
	copy(id[:], r.Next(16))
	if err := r.End(); err != nil {
		return nil, err
	}
	t, err := s.table(id)
	if err != nil {
		return nil, err
	}
	return nil, s.local.Truncate(ctx, t)
}

func (s *Server) prepare(ctx context.Context, b []byte) ([]byte, error) {
	c, err := decodePrepare(b)
	if err != nil {
		return nil, err
	}
	t, err := s.table(c.Table)
	if err != nil {
		return nil, err
	}
	p, err := s.local.Prepare(ctx, t, c.Key, c.Ballot, c.Read)
	if err != nil {
		return nil, badRequest(err)
	}
	return appendPromise(nil, p)
}

func (s *Server) propose(ctx context.Context, b []byte) ([]byte, error) {
	c, err := decodePropose(b, s.tables)
	if err != nil {
		return nil, err
	}
	a, err := s.local.Propose(ctx, c.Proposal, c.ProposeOptions)
	if err != nil {
		return nil, badRequest(err)
	}
	return appendAcceptance(nil, a), nil
}

func (s *Server) commit(ctx context.Context, b []byte) ([]byte, error) {
	p, err := decodeCommit(b, s.tables)
	if err != nil {
		return nil, err
	}
	return nil, s.local.Commit(ctx, p, nil)
}

// badRequest marks a read's error that is not the context's as the
// request's fault: a key or slice the table cannot encode.
func badRequest(err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return fmt.Errorf("%w: %w", ErrBadMessage, err)
}

// appendMutation appends m's encoding (see codec.go) to dst.
func appendMutation(dst []byte, m *mutation.Mutation) ([]byte, error) {
	dst = append(dst, codecV1)
	dst = binary.AppendUvarint(dst, uint64(len(m.Updates)))
	var err error
	for _, u := range m.Updates {
		if dst, err = mutation.Append(dst, u); err != nil {
			return nil, err
		}
	}
	return dst, nil
}

// decodeMutation decodes a mutation; it references b.
func decodeMutation(b []byte, tables func(id [16]byte) (*storage.Table, bool)) (*mutation.Mutation, error) {
	r := newReader(b)
	r.version()
	// An update takes at least 19 bytes.
	n := r.Uvarint(min(maxUpdates, len(r.B)/19))
	if r.Err() != nil {
		return nil, r.Err()
	}
	m := mutation.New()
	rest := r.B
	for range n {
		u, after, err := mutation.Decode(rest, tables)
		if err != nil {
			m.Release()
			return nil, err
		}
		m.Updates, rest = append(m.Updates, u), after
	}
	if len(rest) != 0 {
		m.Release()
		return nil, fmt.Errorf("%w: %d bytes after the mutation", ErrBadMessage, len(rest))
	}
	return m, nil
}
