package messaging

import (
	"net/netip"
	"sync"
	"sync/atomic"
)

// call is a request waiting for its response.
type call struct {
	id   uint64
	verb Verb
	peer netip.AddrPort
	// done receives the one result: whoever takes the call out of its
	// table sends it, or calls then, for an asynchronous request.
	done chan result
	then func(result)
	// abandoned is set when the caller stops waiting, so a writer skips
	// the request if it has not been written yet.
	abandoned atomic.Bool
	// delivered is set by the one delivery of a result.
	delivered atomic.Bool
	table     *callTable
}

type result struct {
	payload []byte
	err     error
}

// callTable holds the requests waiting for responses on one connection (or
// one in-memory transport). Safe for concurrent use.
type callTable struct {
	mu    sync.Mutex
	calls map[uint64]*call
	err   error // set by failAll: add fails with it
}

func (t *callTable) add(c *call) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.err != nil {
		return t.err
	}
	if t.calls == nil {
		t.calls = make(map[uint64]*call)
	}
	t.calls[c.id] = c
	c.table = t
	return nil
}

// take removes and returns the call with id, or nil if there is none (it
// completed, failed or was abandoned).
func (t *callTable) take(id uint64) *call {
	t.mu.Lock()
	defer t.mu.Unlock()
	c := t.calls[id]
	delete(t.calls, id)
	return c
}

// finish delivers r to the call with id; it reports whether one waited.
func (t *callTable) finish(id uint64, r result) bool {
	c := t.take(id)
	if c == nil {
		return false
	}
	c.deliver(r)
	return true
}

// deliver hands r to the caller, once. REQUIRES: c taken out of its
// table by the caller. NB: a failing connection may deliver a call while
// enqueue is returning the error of its push to the caller of
// RequestAsync, which then delivers it too; the second delivery is
// dropped.
func (c *call) deliver(r result) {
	if c.delivered.Swap(true) {
		return
	}
	if c.then != nil {
		c.then(r)
		return
	}
	c.done <- r
}

// failAll fails every waiting call with err and, when sticky, every later
// add too.
func (t *callTable) failAll(err error, sticky bool) {
	t.mu.Lock()
	if sticky && t.err == nil {
		t.err = err
	}
	t.mu.Unlock()
	t.failWhere(func(*call) bool { return true }, err)
}

// failWhere fails the waiting calls for which match is true with err.
func (t *callTable) failWhere(match func(*call) bool, err error) {
	t.mu.Lock()
	var failed []*call
	for id, c := range t.calls {
		if match(c) {
			failed = append(failed, c)
			delete(t.calls, id)
		}
	}
	t.mu.Unlock()
	for _, c := range failed {
		c.deliver(result{err: err})
	}
}
