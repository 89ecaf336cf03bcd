package replica

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/cqld/cqld/messaging"
	"github.com/cqld/cqld/mutation"
	"github.com/cqld/cqld/storage"
)

// ErrUnknownTable reports a request for a table the replica does not know
// (its schema is behind the coordinator's). Errors that match it are
// *UnknownTableError.
var ErrUnknownTable = errors.New("replica: unknown table")

// UnknownTableError names the table a replica does not know.
type UnknownTableError struct{ ID [16]byte }

func (e *UnknownTableError) Error() string {
	return fmt.Sprintf("replica: unknown table %x", e.ID)
}

// Is makes an UnknownTableError match ErrUnknownTable.
func (e *UnknownTableError) Is(target error) bool { return target == ErrUnknownTable }

// Failure codes of the replica verbs' failure responses
// (messaging.RemoteError.Code); part of the wire format.
const (
	// FailureUnknownTable: the message is the table id, 32 hex digits.
	FailureUnknownTable uint16 = 16
	// FailureBadRequest: the request did not decode, or named what the
	// table does not have.
	FailureBadRequest uint16 = 17
	// FailureWriteFailed: storage.ErrWriteFailed, the write was not made
	// durable (WRITE_FAILURE).
	FailureWriteFailed uint16 = 18
	// FailureTimeout: the request's deadline passed on the replica.
	FailureTimeout uint16 = 19
)

// toFailure is the failure response of a handler's error.
func toFailure(err error) error {
	code := messaging.FailureUnknown
	text := err.Error()
	if ute, ok := errors.AsType[*UnknownTableError](err); ok {
		code, text = FailureUnknownTable, hex.EncodeToString(ute.ID[:])
	} else {
		switch {
		case errors.Is(err, storage.ErrWriteFailed):
			code = FailureWriteFailed
		case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
			code = FailureTimeout
		case errors.Is(err, ErrBadMessage), errors.Is(err, mutation.ErrBadUpdate), errors.Is(err, storage.ErrBadPartition):
			code = FailureBadRequest
		}
	}
	return &messaging.RemoteError{Code: code, Message: text}
}

// fromRemote maps a request's error back to what a Local replica would
// have returned, keeping the messaging error in the chain: a coordinator
// tests for ErrUnknownTable, storage.ErrWriteFailed,
// context.DeadlineExceeded or messaging's errors alike.
func fromRemote(peer fmt.Stringer, err error) error {
	re, ok := errors.AsType[*messaging.RemoteError](err)
	if !ok {
		return fmt.Errorf("replica %s: %w", peer, err)
	}
	switch re.Code {
	case FailureUnknownTable:
		var ute UnknownTableError
		if b, herr := hex.DecodeString(re.Message); herr == nil && len(b) == len(ute.ID) {
			copy(ute.ID[:], b)
			return fmt.Errorf("%w (%w)", &ute, err)
		}
	case FailureWriteFailed:
		return fmt.Errorf("%w: %w", storage.ErrWriteFailed, err)
	case FailureTimeout:
		return fmt.Errorf("%w: %w: %w", messaging.ErrTimeout, context.DeadlineExceeded, err)
	case FailureBadRequest:
		return fmt.Errorf("%w: %w", ErrBadMessage, err)
	case messaging.FailureNoHandler:
		// A node restarting serves the replica verbs only once its
		// schema is loaded, and its peers may not have noticed it went
		// down: it took nothing, as a node that is down takes nothing,
		// and the coordinator hints the write.
		return fmt.Errorf("%w: %s does not serve replica requests yet: %w", messaging.ErrUnreachable, peer, err)
	}
	return err
}
