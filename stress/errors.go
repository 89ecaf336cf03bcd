package stress

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"

	"github.com/gocql/gocql"

	"github.com/cqld/cqld/cqlclient"
)

// errorCodes names the CQL error codes as Cassandra's ErrorMessage does.
var errorCodes = map[int]string{
	gocql.ErrCodeServer:          "server_error",
	gocql.ErrCodeProtocol:        "protocol_error",
	gocql.ErrCodeCredentials:     "bad_credentials",
	gocql.ErrCodeUnavailable:     "unavailable",
	gocql.ErrCodeOverloaded:      "overloaded",
	gocql.ErrCodeBootstrapping:   "is_bootstrapping",
	gocql.ErrCodeTruncate:        "truncate_error",
	gocql.ErrCodeWriteTimeout:    "write_timeout",
	gocql.ErrCodeReadTimeout:     "read_timeout",
	gocql.ErrCodeReadFailure:     "read_failure",
	gocql.ErrCodeFunctionFailure: "function_failure",
	gocql.ErrCodeWriteFailure:    "write_failure",
	gocql.ErrCodeCDCWriteFailure: "cdc_write_failure",
	gocql.ErrCodeCASWriteUnknown: "cas_write_unknown",
	gocql.ErrCodeSyntax:          "syntax_error",
	gocql.ErrCodeUnauthorized:    "unauthorized",
	gocql.ErrCodeInvalid:         "invalid",
	gocql.ErrCodeConfig:          "config_error",
	gocql.ErrCodeAlreadyExists:   "already_exists",
	gocql.ErrCodeUnprepared:      "unprepared",
}

// errorKind classifies a failed operation for the summary.
func errorKind(err error) string {
	var re gocql.RequestError
	var se *cqlclient.ServerError
	code := -1
	switch {
	case errors.As(err, &re):
		code = re.Code()
	case errors.As(err, &se):
		code = int(se.Code)
	}
	switch {
	case errors.Is(err, errValidation):
		return "validation"
	case code >= 0:
		if n, ok := errorCodes[code]; ok {
			return n
		}
		return fmt.Sprintf("error_0x%04x", code)
	case errors.Is(err, gocql.ErrTimeoutNoResponse), errors.Is(err, context.DeadlineExceeded), errors.Is(err, errNoAnswer):
		return "client_timeout"
	case errors.Is(err, gocql.ErrNoConnections):
		return "no_connections"
	case errors.Is(err, gocql.ErrConnectionClosed), errors.Is(err, cqlclient.ErrClosed):
		return "connection_closed"
	}
	return "other"
}

// timeoutKinds are the error kinds that count as timeouts.
var timeoutKinds = []string{"write_timeout", "read_timeout", "cas_write_unknown", "client_timeout"}

// timeouts sums the timeouts among error counts by kind.
func timeouts(byKind map[string]int64) int64 {
	var n int64
	for _, k := range timeoutKinds {
		n += byKind[k]
	}
	return n
}

// printedErrors is how many failures are shown with their message.
const printedErrors = 5

// errorLog counts failures by kind and prints the first few. Safe for
// concurrent use.
type errorLog struct {
	mu      sync.Mutex
	byKind  map[string]int64
	printed int
	out     io.Writer
	before  func() // clears the progress line
}

func newErrorLog(out io.Writer, before func()) *errorLog {
	return &errorLog{byKind: map[string]int64{}, out: out, before: before}
}

func (l *errorLog) add(op string, err error) {
	kind := errorKind(err)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.byKind[kind]++
	if l.printed < printedErrors {
		l.printed++
		l.before()
		fmt.Fprintf(l.out, "error: %s: %s: %v\n", op, kind, err)
		if l.printed == printedErrors {
			fmt.Fprintf(l.out, "error: further errors are counted, not printed\n")
		}
	}
}

// take returns the counts so far and starts new ones.
func (l *errorLog) take() map[string]int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	m := l.byKind
	l.byKind = map[string]int64{}
	if len(m) == 0 {
		return nil
	}
	return m
}

// formatKinds renders error counts as "write_timeout=3, overloaded=1".
func formatKinds(m map[string]int64) string {
	var parts []string
	for k, v := range m {
		parts = append(parts, fmt.Sprintf("%s=%d", k, v))
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}
