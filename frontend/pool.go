package frontend

import (
	"sync"
	"sync/atomic"

	"github.com/cqld/cqld/metrics"
)

// pool is a fixed set of worker goroutines fed by a bounded queue. submit
// never blocks: a full queue is the caller's cue to answer OVERLOADED.
type pool struct {
	tasks   chan func()
	m       *metrics.Native
	wg      sync.WaitGroup
	once    sync.Once
	workers int
	// active, completed and refused are what system_views.thread_pools
	// shows: tasks running, run, and turned away with a full queue.
	active    atomic.Int32
	completed atomic.Int64
	refused   atomic.Int64
}

func newPool(workers, queue int, m *metrics.Native) *pool {
	p := &pool{tasks: make(chan func(), queue), m: m, workers: workers}
	p.wg.Add(workers)
	for i := 0; i < workers; i++ {
		go p.work()
	}
	return p
}

func (p *pool) work() {
	defer p.wg.Done()
	for t := range p.tasks {
		p.m.QueueDepth.Dec()
		p.active.Add(1)
		t()
		p.active.Add(-1)
		p.completed.Add(1)
	}
}

// submit queues t and reports whether there was room.
func (p *pool) submit(t func()) bool {
	p.m.QueueDepth.Inc()
	select {
	case p.tasks <- t:
		return true
	default:
		p.m.QueueDepth.Dec()
		p.refused.Add(1)
		return false
	}
}

// close stops the workers once the queue is empty. REQUIRES: no submit after
// close.
func (p *pool) close() {
	p.once.Do(func() {
		close(p.tasks)
		p.wg.Wait()
	})
}
