package proxy

import (
	"sync"
	"time"

	"github.com/cqld/cqld/speculate"
	"github.com/cqld/cqld/storage"
)

// DefaultReadTimeout is read_request_timeout's default, the proxy's when
// Options.ReadTimeout is not set.
const DefaultReadTimeout = 5 * time.Second

// tableReads is a table's coordinator read latencies and the speculative
// retry threshold computed from them (ColumnFamilyStore's
// coordinatorReadLatency and sampleReadLatency). Safe for concurrent use.
type tableReads struct {
	hist *speculate.Histogram

	mu sync.Mutex
	// text is the speculative_retry the policy was parsed from.
	text      string
	policy    speculate.Policy
	threshold time.Duration
	// next is when the threshold is computed again.
	next time.Time
}

// reads is t's tableReads, made on first use.
func (p *Proxy) reads(t *storage.Table) *tableReads {
	if r, ok := p.tables.Load(t.Def.ID); ok {
		return r.(*tableReads)
	}
	now := p.opts.Now()
	r, _ := p.tables.LoadOrStore(t.Def.ID, &tableReads{
		hist: speculate.NewHistogram(now),
		// Half the read timeout until there are latencies, as Cassandra
		// starts.
		threshold: p.opts.ReadTimeout / 2,
		next:      now.Add(p.opts.ReadTimeout),
	})
	return r.(*tableReads)
}

// speculation is t's speculative_retry policy and the time a read waits
// for its replicas before it asks another, recomputed from the table's
// latencies once per read timeout (as Cassandra's updater runs) and at
// once when the option changes. A value that does not parse (a table
// made outside the schema's checks) is Cassandra's default, 99p.
func (p *Proxy) speculation(t *storage.Table) (speculate.Policy, time.Duration) {
	r := p.reads(t)
	text := t.Def.Options.SpeculativeRetry
	r.mu.Lock()
	defer r.mu.Unlock()
	now := p.opts.Now()
	if text != r.text {
		pol, err := speculate.Parse(text)
		if err != nil {
			pol = speculate.Policy{Kind: speculate.Percentile, Percentile: 99}
		}
		r.text, r.policy = text, pol
		r.next = now
	}
	if !now.Before(r.next) {
		r.threshold = r.policy.Threshold(r.hist, now, r.threshold)
		r.next = now.Add(p.opts.ReadTimeout)
	}
	return r.policy, r.threshold
}

// speculates reports whether a read of t may ask a replica beyond those
// its level needs: not under NEVER, nor while the threshold is past the
// read timeout (Cassandra's shouldSpeculateAndMaybeWait).
func (p *Proxy) speculates(t *storage.Table) bool {
	pol, wait := p.speculation(t)
	return pol.Kind == speculate.Always || pol.Kind != speculate.Never && wait < p.opts.ReadTimeout
}

// readDone records a read of t that began at start in its latencies.
func (p *Proxy) readDone(t *storage.Table, start time.Time) {
	now := p.opts.Now()
	p.reads(t).hist.Add(now.Sub(start), now)
}
