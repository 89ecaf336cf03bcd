package lincheck

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/gocql/gocql"
)

// GocqlClient runs operations as CQL statements through a gocql session,
// on a table of registers (k int PRIMARY KEY, v bigint): reads at SERIAL,
// writes as INSERT ... IF NOT EXISTS, UPDATE ... IF v = ? and DELETE ...
// IF v = ?, at the commit level of their Input.Level (the session's when
// empty). Safe for concurrent use.
type GocqlClient struct {
	s                            *gocql.Session
	read, insert, update, delete string
	serial                       gocql.SerialConsistency

	mu       sync.Mutex
	failures map[string]int
}

var _ Client = (*GocqlClient)(nil)

// NewGocqlClient returns a client of table (keyspace.name) through s,
// whose serial level is serial. s must be made with DisableSkipMetadata:
// a conditional write's answer has columns of its own, which gocql would
// otherwise read with the prepared statement's (none).
func NewGocqlClient(s *gocql.Session, table string, serial gocql.SerialConsistency) *GocqlClient {
	return &GocqlClient{
		s:      s,
		read:   "SELECT v FROM " + table + " WHERE k = ?",
		insert: "INSERT INTO " + table + " (k, v) VALUES (?, ?) IF NOT EXISTS",
		update: "UPDATE " + table + " SET v = ? WHERE k = ? IF v = ?",
		delete: "DELETE FROM " + table + " WHERE k = ? IF v = ?",
		serial: serial, failures: map[string]int{},
	}
}

// Failures returns how many operations failed, by error, since the last
// call.
func (c *GocqlClient) Failures() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	f := c.failures
	c.failures = map[string]int{}
	return f
}

// classify is Classify, counting the failure.
func (c *GocqlClient) classify(err error) (Outcome, error) {
	o, err2 := Classify(err)
	name := err.Error()
	var re gocql.RequestError
	if errors.As(err, &re) {
		name = fmt.Sprintf("error 0x%04x", re.Code())
	}
	c.mu.Lock()
	c.failures[name]++
	c.mu.Unlock()
	return o, err2
}

// Do runs in.
func (c *GocqlClient) Do(ctx context.Context, in Input) (Output, Outcome, error) {
	if in.Kind == Read {
		return c.doRead(ctx, in)
	}
	var q *gocql.Query
	switch in.Kind {
	case Insert:
		q = c.s.Query(c.insert, in.Key, in.New)
	case CAS:
		q = c.s.Query(c.update, in.New, in.Key, in.Old)
	case Delete:
		q = c.s.Query(c.delete, in.Key, in.Old)
	default:
		return Output{}, Definite, fmt.Errorf("lincheck: unknown kind %v", in.Kind)
	}
	q = q.WithContext(ctx).SerialConsistency(c.serial)
	if in.Level != "" {
		cl, err := gocql.ParseConsistencyWrapper(in.Level)
		if err != nil {
			return Output{}, Definite, err
		}
		q = q.Consistency(cl)
	}
	out, err := scanCAS(q.Iter())
	if err != nil {
		o, err := c.classify(err)
		return Output{}, o, err
	}
	return out, Definite, nil
}

func (c *GocqlClient) doRead(ctx context.Context, in Input) (Output, Outcome, error) {
	var v *int64
	err := c.s.Query(c.read, in.Key).WithContext(ctx).Consistency(gocql.Consistency(c.serial)).Scan(&v)
	switch {
	case errors.Is(err, gocql.ErrNotFound):
		return Output{Current: Absent}, Definite, nil
	case err != nil:
		o, err := c.classify(err)
		return Output{}, o, err
	case v == nil:
		return Output{}, Definite, errors.New("lincheck: a row without v")
	}
	return Output{Current: Some(*v)}, Definite, nil
}

// scanCAS reads a conditional write's answer: [applied] and, when not
// applied, v if the row exists (it is absent, or null, otherwise).
func scanCAS(it *gocql.Iter) (Output, error) {
	cols := it.Columns()
	var out Output
	var v *int64
	dest := make([]any, len(cols))
	seen := false
	for i, col := range cols {
		switch col.Name {
		case "[applied]":
			dest[i], seen = &out.Applied, true
		case "v":
			dest[i] = &v
		default:
			dest[i] = col.TypeInfo.New()
		}
	}
	scanned := it.Scan(dest...)
	if err := it.Close(); err != nil {
		return Output{}, err
	}
	if !seen {
		return Output{}, errors.New("lincheck: a conditional write answered without [applied] (a session without DisableSkipMetadata?)")
	}
	if !scanned {
		return Output{}, errors.New("lincheck: a conditional write answered no row")
	}
	if !out.Applied && v != nil {
		out.Current = Some(*v)
	}
	return out, nil
}

// Classify says what a failed operation's error proves: UNAVAILABLE,
// OVERLOADED, IS_BOOTSTRAPPING and no connection to send on mean it was
// not run; a timeout, a failure reported by replicas, a lost connection
// or a client-side timeout leave its outcome unknown. Any other error
// answered by the server (invalid, syntax, server error, ...) is
// returned: the test does not expect it.
func Classify(err error) (Outcome, error) {
	var re gocql.RequestError
	switch {
	case errors.As(err, &re):
		switch re.Code() {
		case gocql.ErrCodeUnavailable, gocql.ErrCodeOverloaded, gocql.ErrCodeBootstrapping:
			return Refused, nil
		case gocql.ErrCodeWriteTimeout, gocql.ErrCodeReadTimeout, gocql.ErrCodeWriteFailure,
			gocql.ErrCodeReadFailure, gocql.ErrCodeCASWriteUnknown:
			return Indefinite, nil
		}
		return Definite, err
	case errors.Is(err, gocql.ErrNoConnections):
		return Refused, nil
	}
	return Indefinite, nil
}
