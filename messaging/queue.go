package messaging

import (
	"sync"
	"sync/atomic"
	"time"
)

// outMsg is a message on its way out: encoded, its bytes reserved in its
// budget until it is written or given up.
type outMsg struct {
	env      []byte // the envelope; the timeout field is set when written
	verb     Verb
	deadline time.Time // on the transport's clock
	due      time.Time // not written before (InjectedDelay, inmem faults)
	call     *call     // the request waiting for this message's response, if any
	budget   *budget
}

func (m *outMsg) release() {
	if m.budget != nil {
		m.budget.release(len(m.env))
		m.budget = nil
	}
}

// budget bounds the bytes of the messages queued toward one peer (or, for
// an inbound connection, its responses). Safe for concurrent use.
type budget struct {
	used  atomic.Int64
	limit int64
}

// reserve takes n bytes, or reports false and takes nothing when that
// would pass the limit.
func (b *budget) reserve(n int) bool {
	if b.used.Add(int64(n)) > b.limit {
		b.used.Add(-int64(n))
		return false
	}
	return true
}

func (b *budget) release(n int) { b.used.Add(-int64(n)) }

// outQueue holds a connection's outbound messages in order of due time
// (FIFO among equal ones) until its writer takes them. The writer takes
// every message already due at once, so messages waiting out a delay do
// not hold each other up. Safe for concurrent use.
type outQueue struct {
	mu    sync.Mutex
	items []*outMsg // items[head:] are queued
	head  int
	err   error // set by close: push fails with it
	// wake has room for one signal: a push or close since the writer last
	// looked.
	wake chan struct{}
}

func newOutQueue() *outQueue { return &outQueue{wake: make(chan struct{}, 1)} }

// push queues m, or returns the queue's error if it is closed.
func (q *outQueue) push(m *outMsg) error {
	q.mu.Lock()
	if q.err != nil {
		q.mu.Unlock()
		return q.err
	}
	q.items = append(q.items, m)
	// NB: with one delay for every message the new one is already last;
	// inmem faults with varying delays walk it back into place.
	for i := len(q.items) - 1; i > q.head && q.items[i-1].due.After(m.due); i-- {
		q.items[i], q.items[i-1] = q.items[i-1], q.items[i]
	}
	q.mu.Unlock()
	q.signal()
	return nil
}

func (q *outQueue) signal() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// take appends to dst the messages due by now, in order, up to about
// maxBytes of envelopes, and returns the due time of the next message left
// (zero if none).
func (q *outQueue) take(now time.Time, maxBytes int, dst []*outMsg) ([]*outMsg, time.Time) {
	q.mu.Lock()
	defer q.mu.Unlock()
	n := 0
	for i := q.head; i < len(q.items) && n < maxBytes && !q.items[i].due.After(now); i++ {
		dst = append(dst, q.items[i])
		n += len(q.items[i].env)
		q.items[i] = nil
		q.head++
	}
	if q.head == len(q.items) {
		q.items, q.head = q.items[:0], 0
	} else if q.head > len(q.items)/2 {
		q.items = q.items[:copy(q.items, q.items[q.head:])]
		q.head = 0
	}
	if q.head < len(q.items) {
		return dst, q.items[q.head].due
	}
	return dst, time.Time{}
}

// close makes every later push fail with err (the first close's err wins)
// and returns the messages still queued.
func (q *outQueue) close(err error) []*outMsg {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.err == nil {
		q.err = err
	}
	left := q.items[q.head:]
	q.items, q.head = nil, 0
	q.signal()
	return left
}
