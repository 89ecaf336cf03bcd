package test

import (
	"sync"
	"time"
)

// fakeClock is a node's clock (server.Options.Now) that only the test
// moves: server-side timestamps, now() and TTL expiry all read it, so a
// TTL runs out when the test advances the clock past it. It starts at the
// real time, so what the node stamps with it looks like the present.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Now()}
}

// Now is safe for concurrent use.
func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock forward by d.
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}
