package replica

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/cqld/cqld/messaging"
	"github.com/cqld/cqld/ring"
)

// A VerbHintTransfer message is the host id of the hint's target (16
// bytes), then what a VerbHint message carries: the hint's write time and
// the mutation. Frozen.
const hintTransferHeaderLen = len(ring.HostID{}) + hintHeaderLen

// AppendHintTransfer appends the VerbHintTransfer message of a hint for
// target written at created (a mutation's encoding, AppendHint's).
func AppendHintTransfer(dst []byte, target ring.HostID, created time.Time, hint []byte) []byte {
	dst = append(dst, target[:]...)
	dst = appendHintHeader(dst, created)
	return append(dst, hint...)
}

// DecodeHintTransfer decodes a VerbHintTransfer message; hint is a slice
// of b. The mutation is not decoded: its receiver does, against its
// schema.
func DecodeHintTransfer(b []byte) (target ring.HostID, created time.Time, hint []byte, err error) {
	if len(b) < hintTransferHeaderLen {
		return target, created, nil, fmt.Errorf("%w: hint transfer of %d bytes", ErrBadMessage, len(b))
	}
	copy(target[:], b)
	created, hint, err = decodeHintHeader(b[len(target):])
	return target, created, hint, err
}

// TransferHint hands a hint for target, written at created, over to the
// peer, which applies it if it is target and otherwise keeps it as a hint
// for target, and returns once it has done either.
func (r *Remote) TransferHint(ctx context.Context, target ring.HostID, created time.Time, hint []byte) error {
	_, err := r.request(ctx, messaging.VerbHintTransfer, AppendHintTransfer(nil, target, created, hint))
	return err
}

// HintSink keeps hints for other nodes (the node's hints.Store).
type HintSink interface {
	// Write keeps hint, written at created, for target; it does not keep
	// hint.
	Write(target ring.HostID, hint []byte, created time.Time) error
}

// ServeHintTransfer registers on tr the handler of VerbHintTransfer, as
// Cassandra's HintVerbHandler: a hint for self is applied as a VerbHint
// is; one for another node is kept in sink with its write time, for the
// dispatcher to deliver (sink nil: hinted handoff is off here and the
// hint is refused). A hint naming a table this node does not know is
// dropped with a log line, as Cassandra's: the table was dropped, and
// refusing the hint would only stop the transfer. The mutation is decoded
// first either way, so that nothing malformed is kept.
func (s *Server) ServeHintTransfer(tr messaging.Transport, self ring.HostID, sink HintSink, log *slog.Logger) {
	tr.Handle(messaging.VerbHintTransfer, func(ctx context.Context, in messaging.Inbound) ([]byte, error) {
		target, created, hint, err := DecodeHintTransfer(in.Payload)
		if err != nil {
			return nil, toFailure(err)
		}
		m, err := s.decode(hint)
		if ute, ok := errors.AsType[*UnknownTableError](err); ok {
			log.Warn("dropping a hint handed over for a table this node does not know (dropped?)",
				"from", in.From, "target", target, "table_id", fmt.Sprintf("%x", ute.ID))
			return nil, nil
		}
		if err != nil {
			return nil, toFailure(err)
		}
		defer m.Release()
		switch {
		case target == self:
			err = s.local.ApplyHint(ctx, created, m)
		case sink == nil:
			err = fmt.Errorf("hinted handoff is disabled on this node: it cannot keep a hint for %s", target)
		default:
			err = sink.Write(target, hint, created)
		}
		if err != nil {
			return nil, toFailure(err)
		}
		return nil, nil
	})
}
