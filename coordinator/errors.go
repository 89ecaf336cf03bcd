package coordinator

import (
	"errors"
	"fmt"

	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"

	"github.com/cqld/cqld/statements"
	"github.com/cqld/cqld/storage"
)

// cqlError is an error with the CQL error code a client must see.
type cqlError struct {
	code     primitive.ErrorCode
	msg      string
	keyspace string // ALREADY_EXISTS
	table    string // ALREADY_EXISTS
	id       []byte // UNPREPARED
}

func (e *cqlError) Error() string { return e.msg }

func invalidf(format string, args ...any) error {
	return &cqlError{code: primitive.ErrorCodeInvalid, msg: fmt.Sprintf(format, args...)}
}

func configErrorf(format string, args ...any) error {
	return &cqlError{code: primitive.ErrorCodeConfigError, msg: fmt.Sprintf(format, args...)}
}

func unauthorizedf(format string, args ...any) error {
	return &cqlError{code: primitive.ErrorCodeUnauthorized, msg: fmt.Sprintf(format, args...)}
}

func protocolErrorf(format string, args ...any) error {
	return &cqlError{code: primitive.ErrorCodeProtocolError, msg: fmt.Sprintf(format, args...)}
}

// userModifiable refuses a schema or data change in a system keyspace with
// Cassandra's words.
func userModifiable(ks string) error {
	if isSystemKeyspace(ks) {
		return unauthorizedf("%s keyspace is not user-modifiable.", ks)
	}
	return nil
}

func keyspaceExists(ks string) error {
	return &cqlError{code: primitive.ErrorCodeAlreadyExists,
		msg: fmt.Sprintf("Cannot add existing keyspace \"%s\"", ks), keyspace: ks}
}

func unprepared(id []byte) error {
	return &cqlError{code: primitive.ErrorCodeUnprepared,
		msg: fmt.Sprintf("Prepared query with ID %x not found (either the query was not prepared on this host (maybe the host has been restarted?) or you have prepared too many queries and it has been evicted from the internal cache)", id),
		id:  id}
}

// errorMessage converts an error from any layer below into the ERROR
// message the client gets. It is the only place where internal errors
// become CQL error codes; anything it does not know is a SERVER_ERROR.
func errorMessage(err error) message.Error {
	var se *statements.SyntaxError
	if errors.As(err, &se) {
		return &message.SyntaxError{ErrorMessage: se.Error()}
	}
	var ue *statements.UnsupportedError
	if errors.As(err, &ue) {
		return &message.Invalid{ErrorMessage: ue.Error()}
	}
	var te *statements.TypeError
	var ut *statements.UnknownTypeError
	if errors.As(err, &te) || errors.As(err, &ut) {
		return &message.Invalid{ErrorMessage: err.Error()}
	}
	var ua *unavailableError
	if errors.As(err, &ua) {
		return &message.Unavailable{ErrorMessage: ua.Error(), Consistency: ua.cl, Required: ua.required, Alive: ua.alive}
	}
	var stale *staleError
	if errors.As(err, &stale) {
		return &message.Invalid{ErrorMessage: stale.Error()}
	}
	if errors.Is(err, storage.ErrWriteFailed) {
		// The one replica, this node, failed the write.
		return &message.WriteFailure{ErrorMessage: err.Error(), Consistency: primitive.ConsistencyLevelOne,
			BlockFor: 1, NumFailures: 1, WriteType: primitive.WriteTypeSimple}
	}
	var ce *cqlError
	if !errors.As(err, &ce) {
		return &message.ServerError{ErrorMessage: err.Error()}
	}
	switch ce.code {
	case primitive.ErrorCodeSyntaxError:
		return &message.SyntaxError{ErrorMessage: ce.msg}
	case primitive.ErrorCodeInvalid:
		return &message.Invalid{ErrorMessage: ce.msg}
	case primitive.ErrorCodeConfigError:
		return &message.ConfigError{ErrorMessage: ce.msg}
	case primitive.ErrorCodeUnauthorized:
		return &message.Unauthorized{ErrorMessage: ce.msg}
	case primitive.ErrorCodeProtocolError:
		return &message.ProtocolError{ErrorMessage: ce.msg}
	case primitive.ErrorCodeAlreadyExists:
		return &message.AlreadyExists{ErrorMessage: ce.msg, Keyspace: ce.keyspace, Table: ce.table}
	case primitive.ErrorCodeUnprepared:
		return &message.Unprepared{ErrorMessage: ce.msg, Id: ce.id}
	case primitive.ErrorCodeOverloaded:
		return &message.Overloaded{ErrorMessage: ce.msg}
	}
	return &message.ServerError{ErrorMessage: ce.msg}
}
