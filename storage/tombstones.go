package storage

import "fmt"

// Tombstones counts the tombstones a read meets, as Cassandra's
// ReadCommand counts them for tombstone_warn_threshold and
// tombstone_failure_threshold: each dead cell of a row (deleted or
// expired, and not shadowed by a newer deletion), the deletion of a row
// with nothing live and no dead cell, and each bound of a range tombstone;
// and the live rows. Past Fail tombstones (when Fail > 0) the read stops
// with a *TombstoneOverwhelmError. A Tombstones is one read's: it is not
// safe for concurrent use.
type Tombstones struct {
	Fail     int
	Count    int
	LiveRows int
}

// TombstoneOverwhelmError is a read stopped for its tombstones.
type TombstoneOverwhelmError struct {
	Count int
	// Key is the key of the partition the read was in.
	Key []byte
}

func (e *TombstoneOverwhelmError) Error() string {
	return fmt.Sprintf("storage: scanned over %d tombstones; query aborted (see tombstone_failure_threshold)", e.Count)
}

// add counts n tombstones in the partition whose key prefix (keys.go) is
// prefix.
func (ts *Tombstones) add(n int, prefix []byte) error {
	if ts == nil || n == 0 {
		return nil // inlined: most reads count none
	}
	return ts.count(n, prefix)
}

// count is add of n > 0 tombstones.
func (ts *Tombstones) count(n int, prefix []byte) error {
	ts.Count += n
	if ts.Fail > 0 && ts.Count > ts.Fail {
		return &TombstoneOverwhelmError{Count: ts.Count, Key: partitionKeyOf(prefix)}
	}
	return nil
}

func (ts *Tombstones) live() {
	if ts != nil {
		ts.LiveRows++
	}
}
