package cqlerr

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/datastax/go-cassandra-native-protocol/primitive"
)

// Error is an error with the CQL error code a client must see.
type Error struct {
	Code primitive.ErrorCode
	Msg  string
	// Keyspace and Table name what exists, for ALREADY_EXISTS.
	Keyspace, Table string
	// ID is the unknown statement, for UNPREPARED.
	ID []byte
}

func (e *Error) Error() string { return e.Msg }

func newf(code primitive.ErrorCode, format string, args []any) error {
	return &Error{Code: code, Msg: Truncate(fmt.Sprintf(format, args...))}
}

// MaxMessage is the longest message an ERROR carries: the protocol's
// [string] has a 16-bit length, and a longer one would frame wrongly.
const MaxMessage = 1<<16 - 1

// Truncate shortens s to at most MaxMessage bytes, on a character
// boundary, marking the cut.
func Truncate(s string) string {
	if len(s) <= MaxMessage {
		return s
	}
	const mark = "... (truncated)"
	n := MaxMessage - len(mark)
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + mark
}

// Invalidf is an INVALID (InvalidRequestException) error.
func Invalidf(format string, args ...any) error {
	return newf(primitive.ErrorCodeInvalid, format, args)
}

// ConfigErrorf is a CONFIG_ERROR (ConfigurationException) error.
func ConfigErrorf(format string, args ...any) error {
	return newf(primitive.ErrorCodeConfigError, format, args)
}

// Unauthorizedf is an UNAUTHORIZED error.
func Unauthorizedf(format string, args ...any) error {
	return newf(primitive.ErrorCodeUnauthorized, format, args)
}

// ProtocolErrorf is a PROTOCOL_ERROR error.
func ProtocolErrorf(format string, args ...any) error {
	return newf(primitive.ErrorCodeProtocolError, format, args)
}

// Overloadedf is an OVERLOADED (OverloadedException) error.
func Overloadedf(format string, args ...any) error {
	return newf(primitive.ErrorCodeOverloaded, format, args)
}

// FunctionFailure is FunctionExecutionException: a function failed while
// it ran, on a value it could not convert. Detail is what failed, in
// Cassandra's words.
type FunctionFailure struct {
	Keyspace, Function string
	Args               []string // the argument types, as CQL spells them
	Detail             string
	Err                error // the cause, if any
}

func (e *FunctionFailure) Error() string {
	return Truncate(fmt.Sprintf("execution of '%s.%s[%s]' failed: %s", e.Keyspace, e.Function, strings.Join(e.Args, ", "), e.Detail))
}

func (e *FunctionFailure) Unwrap() error { return e.Err }
