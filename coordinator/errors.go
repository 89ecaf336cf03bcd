package coordinator

import (
	"errors"
	"fmt"

	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"

	"github.com/cqld/cqld/cqlerr"
	"github.com/cqld/cqld/protocol"
	"github.com/cqld/cqld/schema"
	"github.com/cqld/cqld/statements"
	"github.com/cqld/cqld/storage"
	"github.com/cqld/cqld/systables"
)

// cqlError is the error a client sees, with its CQL error code.
type cqlError = cqlerr.Error

func invalidf(format string, args ...any) error {
	return cqlerr.Invalidf(format, args...)
}

func configErrorf(format string, args ...any) error {
	return cqlerr.ConfigErrorf(format, args...)
}

func unauthorizedf(format string, args ...any) error {
	return cqlerr.Unauthorizedf(format, args...)
}

func protocolErrorf(format string, args ...any) error {
	return cqlerr.ProtocolErrorf(format, args...)
}

// userModifiable refuses a schema or data change in a system keyspace with
// Cassandra's words.
func userModifiable(ks string) error {
	if systables.IsSystemKeyspace(ks) {
		return unauthorizedf("%s keyspace is not user-modifiable.", ks)
	}
	return nil
}

func keyspaceExists(ks string) error { return schema.KeyspaceExists(ks) }

func unprepared(id []byte) error {
	return &cqlError{Code: primitive.ErrorCodeUnprepared,
		Msg: fmt.Sprintf("Prepared query with ID %x not found (either the query was not prepared on this host (maybe the host has been restarted?) or you have prepared too many queries and it has been evicted from the internal cache)", id),
		ID:  id}
}

// errorMessage converts an error from any layer below into the ERROR
// message the client gets. It is the only place where internal errors
// become CQL error codes; anything it does not know is a SERVER_ERROR.
func errorMessage(err error) message.Error {
	var se *statements.SyntaxError
	if errors.As(err, &se) {
		return &message.SyntaxError{ErrorMessage: cqlerr.Truncate(se.Error())}
	}
	var ue *statements.UnsupportedError
	if errors.As(err, &ue) {
		return &message.Invalid{ErrorMessage: cqlerr.Truncate(ue.Error())}
	}
	var te *statements.TypeError
	var ut *statements.UnknownTypeError
	if errors.As(err, &te) || errors.As(err, &ut) {
		return &message.Invalid{ErrorMessage: cqlerr.Truncate(err.Error())}
	}
	var ua *cqlerr.Unavailable
	if errors.As(err, &ua) {
		return &message.Unavailable{ErrorMessage: ua.Error(), Consistency: ua.Consistency, Required: ua.Required, Alive: ua.Alive}
	}
	var wt *cqlerr.WriteTimeout
	if errors.As(err, &wt) {
		return &message.WriteTimeout{ErrorMessage: wt.Error(), Consistency: wt.Consistency, Received: wt.Received, BlockFor: wt.BlockFor, WriteType: wt.WriteType,
			Contentions: uint16(min(max(wt.Contentions, 0), 1<<16-1))}
	}
	var cu *cqlerr.CasWriteUnknown
	if errors.As(err, &cu) {
		return &protocol.CasWriteUnknown{ErrorMessage: cu.Error(), Consistency: cu.Consistency, Received: cu.Received, BlockFor: cu.BlockFor}
	}
	var rt *cqlerr.ReadTimeout
	if errors.As(err, &rt) {
		return &message.ReadTimeout{ErrorMessage: rt.Error(), Consistency: rt.Consistency, Received: rt.Received, BlockFor: rt.BlockFor, DataPresent: rt.DataPresent}
	}
	var stale *staleError
	if errors.As(err, &stale) {
		// Before the failures that wrap it: the write was planned against
		// a table that has changed, whichever replica noticed.
		return &message.Invalid{ErrorMessage: cqlerr.Truncate(stale.Error())}
	}
	var wf *cqlerr.WriteFailure
	if errors.As(err, &wf) {
		return &message.WriteFailure{ErrorMessage: wf.Error(), Consistency: wf.Consistency, Received: wf.Received, BlockFor: wf.BlockFor,
			NumFailures: int32(len(wf.Reasons)), FailureReasons: wf.Reasons, WriteType: wf.WriteType}
	}
	var rf *cqlerr.ReadFailure
	if errors.As(err, &rf) {
		return &message.ReadFailure{ErrorMessage: rf.Error(), Consistency: rf.Consistency, Received: rf.Received, BlockFor: rf.BlockFor,
			NumFailures: int32(len(rf.Reasons)), FailureReasons: rf.Reasons, DataPresent: rf.DataPresent}
	}
	var ff *cqlerr.FunctionFailure
	if errors.As(err, &ff) {
		return &message.FunctionFailure{ErrorMessage: ff.Error(), Keyspace: ff.Keyspace, Function: ff.Function, Arguments: ff.Args}
	}
	if errors.Is(err, storage.ErrWriteFailed) {
		// The one replica, this node, failed the write.
		return &message.WriteFailure{ErrorMessage: err.Error(), Consistency: primitive.ConsistencyLevelOne,
			BlockFor: 1, NumFailures: 1, WriteType: primitive.WriteTypeSimple}
	}
	var ce *cqlError
	if !errors.As(err, &ce) {
		return &message.ServerError{ErrorMessage: cqlerr.Truncate(err.Error())}
	}
	switch ce.Code {
	case primitive.ErrorCodeSyntaxError:
		return &message.SyntaxError{ErrorMessage: ce.Msg}
	case primitive.ErrorCodeInvalid:
		return &message.Invalid{ErrorMessage: ce.Msg}
	case primitive.ErrorCodeConfigError:
		return &message.ConfigError{ErrorMessage: ce.Msg}
	case primitive.ErrorCodeUnauthorized:
		return &message.Unauthorized{ErrorMessage: ce.Msg}
	case primitive.ErrorCodeProtocolError:
		return &message.ProtocolError{ErrorMessage: ce.Msg}
	case primitive.ErrorCodeAlreadyExists:
		return &message.AlreadyExists{ErrorMessage: ce.Msg, Keyspace: ce.Keyspace, Table: ce.Table}
	case primitive.ErrorCodeUnprepared:
		return &message.Unprepared{ErrorMessage: ce.Msg, Id: ce.ID}
	case primitive.ErrorCodeOverloaded:
		return &message.Overloaded{ErrorMessage: ce.Msg}
	case primitive.ErrorCodeTruncateError:
		return &message.TruncateError{ErrorMessage: ce.Msg}
	}
	return &message.ServerError{ErrorMessage: ce.Msg}
}
