package replica

import (
	"context"

	"github.com/cqld/cqld/messaging"
	"github.com/cqld/cqld/mutation"
)

// AppendHint appends m's encoding as a hint for a replica that missed it:
// the encoding a VerbMutation carries.
func AppendHint(dst []byte, m *mutation.Mutation) ([]byte, error) { return appendMutation(dst, m) }

// ApplyHint sends a hint made by AppendHint to the replica, which applies
// it as any mutation, and returns once it is durable there.
func (r *Remote) ApplyHint(ctx context.Context, hint []byte) error {
	_, err := r.request(ctx, messaging.VerbMutation, hint)
	return err
}
