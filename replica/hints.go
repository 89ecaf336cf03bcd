package replica

import (
	"context"
	"encoding/binary"
	"fmt"
	"time"

	"github.com/cqld/cqld/messaging"
	"github.com/cqld/cqld/mutation"
	"github.com/cqld/cqld/storage"
)

// AppendHint appends m's encoding as a hint for a replica that missed it:
// the encoding a VerbMutation carries.
func AppendHint(dst []byte, m *mutation.Mutation) ([]byte, error) { return appendMutation(dst, m) }

// AppendEncodedMutation appends the encoding of a mutation of n Updates
// given already encoded, one after the other (mutation.Append), in
// updates: a coordinator encodes a write once for all its replicas. It is
// AppendHint's encoding too.
func AppendEncodedMutation(dst []byte, n int, updates []byte) []byte {
	dst = append(dst, codecV1)
	dst = binary.AppendUvarint(dst, uint64(n))
	return append(dst, updates...)
}

// hintHeaderLen is the length of the header a VerbHint message puts
// before the hint (a mutation's encoding): the time the hint was written,
// as unix microseconds, big-endian. Frozen.
const hintHeaderLen = 8

// ApplyHint sends a hint made by AppendHint, written at created, to the
// replica, which applies it as any mutation except for the tables
// truncated there since created, and returns once it is durable there.
func (r *Remote) ApplyHint(ctx context.Context, created time.Time, hint []byte) error {
	b := appendHintHeader(make([]byte, 0, hintHeaderLen+len(hint)), created)
	_, err := r.request(ctx, messaging.VerbHint, append(b, hint...))
	return err
}

func appendHintHeader(dst []byte, created time.Time) []byte {
	return binary.BigEndian.AppendUint64(dst, uint64(created.UnixMicro()))
}

// decodeHintHeader splits a VerbHint message into the hint's write time
// and the mutation (a slice of b).
func decodeHintHeader(b []byte) (created time.Time, hint []byte, err error) {
	if len(b) < hintHeaderLen {
		return created, nil, fmt.Errorf("%w: hint of %d bytes", ErrBadMessage, len(b))
	}
	return time.UnixMicro(int64(binary.BigEndian.Uint64(b))), b[hintHeaderLen:], nil
}

// ApplyHint applies a hint written at created: m without the updates of
// the tables truncated here at or after created, as Cassandra's hints
// skip them (a write made before a TRUNCATE does not come back after it).
func (l *Local) ApplyHint(ctx context.Context, created time.Time, m *mutation.Mutation) error {
	if err := expired(ctx); err != nil {
		return err
	}
	kept := m
	for i, u := range m.Updates {
		if !truncatedSince(l.engine, u.Table, created) {
			if kept != m {
				kept.Updates = append(kept.Updates, u)
			}
			continue
		}
		if kept == m {
			kept = &mutation.Mutation{Updates: append([]*mutation.Update(nil), m.Updates[:i]...)}
		}
	}
	if len(kept.Updates) == 0 {
		return nil
	}
	return l.Apply(ctx, kept, nil)
}

func truncatedSince(e *storage.Engine, t *storage.Table, created time.Time) bool {
	at, ok := e.TruncatedAt(t.Def.ID)
	return ok && !at.Before(created)
}

// hint serves VerbHint: a hint's header, then the mutation.
func (s *Server) hint(ctx context.Context, b []byte) ([]byte, error) {
	created, hint, err := decodeHintHeader(b)
	if err != nil {
		return nil, err
	}
	m, err := s.decode(hint)
	if err != nil {
		return nil, err
	}
	defer m.Release()
	return nil, s.local.ApplyHint(ctx, created, m)
}
