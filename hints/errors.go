package hints

import "errors"

var (
	// ErrClosed is returned by every method called after Close.
	ErrClosed = errors.New("hints: closed")
	// ErrTooLarge is returned by Write for a mutation over MaxHintSize.
	ErrTooLarge = errors.New("hints: hint too large")
	// ErrWindowExpired is returned by Write when the target has been down
	// longer than max_hint_window: the hint is not written (and counted),
	// as Cassandra does; the replica needs repair instead.
	ErrWindowExpired = errors.New("hints: target down longer than max_hint_window")
)
