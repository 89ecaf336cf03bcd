package replica

import (
	"context"
	"encoding/binary"

	"github.com/cqld/cqld/messaging"
	"github.com/cqld/cqld/mutation"
)

// AppendHint appends m's encoding as a hint for a replica that missed it:
// the encoding a VerbMutation carries.
func AppendHint(dst []byte, m *mutation.Mutation) ([]byte, error) { return appendMutation(dst, m) }

// ApplyHint sends a hint made by AppendHint to the replica, which applies
// it as any mutation, and returns once it is durable there.
func (r *Remote) ApplyHint(ctx context.Context, hint []byte) error { return r.ApplyEncoded(ctx, hint) }

// AppendEncodedMutation appends the encoding of a mutation of n Updates
// given already encoded, one after the other (mutation.Append), in
// updates: a coordinator encodes a write once for all its replicas. It is
// AppendHint's encoding too.
func AppendEncodedMutation(dst []byte, n int, updates []byte) []byte {
	dst = append(dst, codecV1)
	dst = binary.AppendUvarint(dst, uint64(n))
	return append(dst, updates...)
}

// ApplyEncoded is Apply of a mutation without counters given in its
// encoding (AppendEncodedMutation, AppendHint), which the caller has
// checked against its schema: it returns once the write is durable on
// the replica. It does not keep payload.
func (r *Remote) ApplyEncoded(ctx context.Context, payload []byte) error {
	_, err := r.request(ctx, messaging.VerbMutation, payload)
	return err
}
