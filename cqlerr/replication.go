package cqlerr

import (
	"fmt"
	"strings"

	"github.com/datastax/go-cassandra-native-protocol/primitive"
)

// The errors of a request its replicas could not serve at its consistency
// level, with the fields Cassandra's UNAVAILABLE, WRITE_TIMEOUT,
// READ_TIMEOUT, WRITE_FAILURE and READ_FAILURE carry. Their messages are
// Cassandra's (UnavailableException, RequestTimeoutException,
// RequestFailureException).

// Unavailable is UnavailableException: fewer replicas alive than the level
// needs, known before anything was sent.
type Unavailable struct {
	Consistency     primitive.ConsistencyLevel
	Required, Alive int32
	// Message, when set, replaces the usual one (a lightweight transaction
	// refused during more than one range movement says why).
	Message string
}

func (e *Unavailable) Error() string {
	if e.Message != "" {
		return e.Message
	}
	return "Cannot achieve consistency level " + ConsistencyName(e.Consistency)
}

// WriteTimeout is WriteTimeoutException: the deadline passed before
// BlockFor replicas acknowledged the write; Received did.
type WriteTimeout struct {
	Consistency        primitive.ConsistencyLevel
	Received, BlockFor int32
	WriteType          primitive.WriteType
	// Contentions is how many Paxos rounds a lightweight transaction lost
	// to other proposers (CasWriteTimeoutException's; protocol v5 sends it
	// with write type CAS).
	Contentions int32
}

func (e *WriteTimeout) Error() string { return timedOut(e.Received) }

// CasWriteUnknown is CasWriteUnknownResultException: a lightweight
// transaction's proposal Received replicas accepted, fewer than BlockFor
// and not none, so a later round may complete it or not. Protocol v5
// sends it as CAS_WRITE_UNKNOWN, earlier protocols as a WRITE_TIMEOUT of
// write type CAS.
type CasWriteUnknown struct {
	Consistency        primitive.ConsistencyLevel
	Received, BlockFor int32
}

func (e *CasWriteUnknown) Error() string {
	return fmt.Sprintf("CAS operation result is unknown - proposal accepted by %d but not a quorum.", e.Received)
}

// ReadTimeout is ReadTimeoutException: the deadline passed before BlockFor
// replicas answered; DataPresent says whether the one asked for data did.
type ReadTimeout struct {
	Consistency        primitive.ConsistencyLevel
	Received, BlockFor int32
	DataPresent        bool
}

func (e *ReadTimeout) Error() string { return timedOut(e.Received) }

func timedOut(received int32) string {
	return fmt.Sprintf("Operation timed out - received only %d responses.", received)
}

// WriteFailure is WriteFailureException: so many replicas failed the write
// that the level can no longer be met. Reasons name the failed replicas
// (protocol v5's reason map).
type WriteFailure struct {
	Consistency        primitive.ConsistencyLevel
	Received, BlockFor int32
	WriteType          primitive.WriteType
	Reasons            []*primitive.FailureReason
	// Err is one replica's failure, for logs and errors.Is.
	Err error
}

func (e *WriteFailure) Error() string { return failed(e.Received, len(e.Reasons), e.Err) }

func (e *WriteFailure) Unwrap() error { return e.Err }

// ReadFailure is ReadFailureException, as WriteFailure for a read.
type ReadFailure struct {
	Consistency        primitive.ConsistencyLevel
	Received, BlockFor int32
	DataPresent        bool
	Reasons            []*primitive.FailureReason
	Err                error
}

func (e *ReadFailure) Error() string { return failed(e.Received, len(e.Reasons), e.Err) }

func (e *ReadFailure) Unwrap() error { return e.Err }

func failed(received int32, failures int, err error) string {
	s := fmt.Sprintf("Operation failed - received %d responses and %d failures", received, failures)
	if err != nil {
		s += ": " + err.Error()
	}
	return Truncate(s)
}

// ConsistencyName is a level as Cassandra spells it: QUORUM, LOCAL_ONE.
func ConsistencyName(cl primitive.ConsistencyLevel) string {
	s := cl.String() // "ConsistencyLevel QUORUM [0x0004]"
	s = strings.TrimPrefix(s, "ConsistencyLevel ")
	if i := strings.IndexByte(s, ' '); i > 0 {
		s = s[:i]
	}
	return s
}
