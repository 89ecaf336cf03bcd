package auth

import (
	"net/netip"
	"sync"
	"time"
)

// Limiter bounds the failed logins from one client address: past Max
// failures in a Window, attempts from that address are refused without a
// password check until the window ends. An attempt counts from when it
// begins (a success gives it back), so many at once from one address cannot
// slip past the limit while their hashes are being checked, nor keep the
// workers busy with bcrypt. Its methods are safe for concurrent use.
type Limiter struct {
	max    int
	window time.Duration
	now    func() time.Time

	mu    sync.Mutex
	addrs map[netip.Addr]*attempts
}

type attempts struct {
	failed int
	start  time.Time
}

// maxTracked bounds the addresses a Limiter remembers; past it, expired
// windows are forgotten, then arbitrary ones.
const maxTracked = 1 << 16

// NewLimiter returns a limiter of max failures per window; now is the clock
// (nil for time.Now). max <= 0 turns limiting off.
func NewLimiter(max int, window time.Duration, now func() time.Time) *Limiter {
	if now == nil {
		now = time.Now
	}
	return &Limiter{max: max, window: window, now: now, addrs: map[netip.Addr]*attempts{}}
}

// Begin counts an attempt from a. ok is false, with how long until the
// address may try again, when it is over its limit.
func (l *Limiter) Begin(a netip.Addr) (retry time.Duration, ok bool) {
	if l == nil || l.max <= 0 {
		return 0, true
	}
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	at := l.addrs[a]
	if at == nil || now.Sub(at.start) >= l.window {
		if at == nil && len(l.addrs) >= maxTracked {
			l.evict(now)
		}
		at = &attempts{start: now}
		l.addrs[a] = at
	}
	if at.failed >= l.max {
		return at.start.Add(l.window).Sub(now), false
	}
	at.failed++
	return 0, true
}

// Succeeded gives back the attempt an address began and that succeeded.
func (l *Limiter) Succeeded(a netip.Addr) {
	if l == nil || l.max <= 0 {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if at := l.addrs[a]; at != nil && at.failed > 0 {
		at.failed--
	}
}

func (l *Limiter) evict(now time.Time) {
	for a, at := range l.addrs {
		if now.Sub(at.start) >= l.window {
			delete(l.addrs, a)
		}
	}
	for a := range l.addrs {
		if len(l.addrs) < maxTracked {
			break
		}
		delete(l.addrs, a)
	}
}
