package frontend

import (
	"sync"

	"github.com/cqld/cqld/metrics"
)

// pool is a fixed set of worker goroutines fed by a bounded queue. submit
// never blocks: a full queue is the caller's cue to answer OVERLOADED.
type pool struct {
	tasks chan func()
	m     *metrics.Native
	wg    sync.WaitGroup
	once  sync.Once
}

func newPool(workers, queue int, m *metrics.Native) *pool {
	p := &pool{tasks: make(chan func(), queue), m: m}
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
		t()
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
