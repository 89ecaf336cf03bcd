package frontend

import (
	"sync"
	"sync/atomic"

	"github.com/cqld/cqld/metrics"
)

// pool is a fixed set of worker goroutines that run the connections'
// requests. Each connection queues its own (runq); the connections with
// requests to run wait their turn in one FIFO, and a worker takes the
// first connection's first request, putting the connection back at the
// end of the line when it has more. Workers therefore go round-robin
// across connections: a request that arrives on a connection with nothing
// queued waits for at most one request of each connection ahead of it,
// however many those have queued.
//
// A connection runs at most perConn of its requests at once: past that
// it loses its turn until one of them finishes, so one connection with a
// thousand requests queued leaves the other workers to the others, and a
// request arriving on another connection competes for the CPUs with at
// most perConn of its.
//
// A connection whose answers back up loses its turn (conn.answersBacked,
// write.go): its requests wait in its queue, before they run, so they make
// no answers the node would have to hold, until its event loop sees the
// answers drain and gives it its turn back (resume). Requests waiting in
// a held queue do not count against the node's queue limit, nor against
// the node's requests in flight (Server.admitRequest): they wait on their
// own client, which is bounded per connection (MaxRequestsPerConn), and
// their bytes stay counted as request data, per address and node-wide,
// at least queuedCost each (conn.toWorker). So
// connections that never read their answers cannot fill the node's queue
// and make a well-behaved connection's request OVERLOADED. submit never
// blocks: a refusal is the caller's cue to answer OVERLOADED.
type pool struct {
	m  *metrics.Native
	wg sync.WaitGroup

	mu   sync.Mutex
	work sync.Cond // signalled when a turn is added and a worker idles
	// turns are the connections with requests to run, each at most once
	// (runq.turn).
	turns  fifo[*runq]
	queued int // requests queued, all connections, held ones included
	limit  int
	idle   int // workers waiting on work
	closed bool
	// perConn is how many requests of one connection may run at once.
	perConn int
	// heldTasks are the requests waiting in held queues (runq.held),
	// which count against neither limit nor the node's requests in
	// flight. It changes under mu and is read without.
	heldTasks atomic.Int64

	workers int
	// active, completed and refused are what system_views.thread_pools
	// shows: tasks running, run, and turned away with a full queue.
	active    atomic.Int32
	completed atomic.Int64
	refused   atomic.Int64
}

// runq is one connection's queue of requests. Its fields are guarded by
// pool.mu, except held, which the connection's event loop reads without.
type runq struct {
	cn    *conn
	tasks fifo[task]
	turn  bool // in pool.turns
	gone  bool // the connection closed: its requests were dropped
	// capped: the queue lost its turn with perConn of its requests
	// running; the worker that ends one gives it back (finish).
	capped bool
	// running is how many of its requests run; it grows under pool.mu
	// and drops without (finish).
	running atomic.Int32
	// held: the queue lost its turn because the connection's answers
	// backed up. NB: a worker sets it before it looks at the answers a
	// last time, and the event loop looks at it after it took answers
	// off the count, so one of them always sees the other (resume).
	held atomic.Bool
}

// task is one request to run; t is its ticket, given back unanswered if
// the connection closes first.
type task struct {
	t   *ticket
	run func()
}

func newPool(workers, queue, perConn int, m *metrics.Native) *pool {
	p := &pool{m: m, limit: queue, workers: workers, perConn: max(1, perConn)}
	p.work.L = &p.mu
	p.wg.Add(workers)
	for i := 0; i < workers; i++ {
		go p.worker()
	}
	return p
}

func (p *pool) worker() {
	defer p.wg.Done()
	for {
		t, q, ok := p.next()
		if !ok {
			return
		}
		p.m.QueueDepth.Dec()
		p.active.Add(1)
		t.run()
		p.active.Add(-1)
		p.completed.Add(1)
		p.finish(q)
	}
}

// finish counts one of q's requests done and gives q its turn back if it
// lost it for having perConn running. NB: next sets capped after it saw
// running at perConn, under mu; a worker that takes running below perConn
// afterwards takes mu here and sees capped.
func (p *pool) finish(q *runq) {
	if int(q.running.Add(-1)) < p.perConn-1 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if !q.capped {
		return
	}
	q.capped = false
	p.giveTurn(q)
}

// giveTurn puts q back in line if it has requests to run and may.
// REQUIRES: p.mu held.
func (p *pool) giveTurn(q *runq) {
	if q.gone || q.turn || q.held.Load() || q.tasks.len() == 0 {
		return
	}
	q.turn = true
	p.turns.push(q)
	if p.idle > 0 {
		p.work.Signal()
	}
}

// next waits for the next request to run and returns it with its queue;
// false once the pool is closed and no turn is left.
func (p *pool) next() (task, *runq, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for {
		q, ok := p.turns.pop()
		if !ok {
			if p.closed {
				return task{}, nil, false
			}
			p.idle++
			p.work.Wait()
			p.idle--
			continue
		}
		if q.gone || q.tasks.len() == 0 {
			q.turn = false
			continue
		}
		if int(q.running.Load()) >= p.perConn {
			q.turn = false
			q.capped = true // finish gives it back
			continue
		}
		if q.cn.answersBacked() {
			q.held.Store(true)
			if q.cn.answersBacked() {
				q.turn = false // resume gives it back
				p.heldTasks.Add(int64(q.tasks.len()))
				// Held requests leave the node's count: room for
				// a connection waiting for it (admit.go).
				q.cn.s.wakeWaiter()
				continue
			}
			q.held.Store(false)
		}
		t, _ := q.tasks.pop()
		p.queued--
		q.running.Add(1)
		if q.tasks.len() > 0 {
			p.turns.push(q)
			if p.idle > 0 {
				p.work.Signal()
			}
		} else {
			q.turn = false
		}
		return t, q, true
	}
}

// submit queues t on q and reports whether there was room.
func (p *pool) submit(q *runq, t task) bool {
	p.mu.Lock()
	held := q.held.Load()
	if p.closed || q.gone || (!held && p.queued-int(p.heldTasks.Load()) >= p.limit) {
		p.mu.Unlock()
		if !p.closed && !q.gone {
			p.refused.Add(1)
		}
		return false
	}
	q.tasks.push(t)
	p.queued++
	if held {
		p.heldTasks.Add(1)
	} else if !q.turn && !q.capped {
		q.turn = true
		p.turns.push(q)
		if p.idle > 0 {
			p.work.Signal()
		}
	}
	p.mu.Unlock()
	p.m.QueueDepth.Inc()
	return true
}

// resume gives q its turn back once its connection's answers drained.
// REQUIRES: called by the connection's event loop, after the answers it
// took off were counted.
func (p *pool) resume(q *runq) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !q.held.Load() {
		return
	}
	q.held.Store(false)
	p.heldTasks.Add(-int64(q.tasks.len()))
	if !q.capped {
		p.giveTurn(q)
	}
}

// drop forgets the requests of a closed connection that have not started,
// giving back what they held; their clients are gone.
func (p *pool) drop(q *runq) {
	p.mu.Lock()
	q.gone = true
	if q.held.Swap(false) {
		p.heldTasks.Add(-int64(q.tasks.len()))
	}
	dropped := q.tasks
	q.tasks = fifo[task]{}
	p.queued -= dropped.len()
	p.mu.Unlock()
	p.m.QueueDepth.Sub(float64(dropped.len()))
	for t, ok := dropped.pop(); ok; t, ok = dropped.pop() {
		t.t.done()
	}
}

// close stops the workers once every turn has run. REQUIRES: no submit
// after close.
func (p *pool) close() {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.closed = true
	p.work.Broadcast()
	p.mu.Unlock()
	p.wg.Wait()
}

// fifo is a queue on a slice that reuses its space once emptied, unless
// that space is large.
type fifo[T any] struct {
	buf  []T
	head int
}

func (f *fifo[T]) len() int { return len(f.buf) - f.head }

func (f *fifo[T]) push(v T) {
	if f.head > 0 && f.head == len(f.buf) {
		f.buf, f.head = f.buf[:0], 0
	} else if f.head > 64 && f.head > len(f.buf)/2 {
		// Mostly consumed: slide the rest down rather than grow.
		n := copy(f.buf, f.buf[f.head:])
		clear(f.buf[n:])
		f.buf, f.head = f.buf[:n], 0
	}
	f.buf = append(f.buf, v)
}

func (f *fifo[T]) pop() (T, bool) {
	var zero T
	if f.head == len(f.buf) {
		return zero, false
	}
	v := f.buf[f.head]
	f.buf[f.head] = zero
	f.head++
	if f.head == len(f.buf) && cap(f.buf) > 64 {
		// A connection that once pipelined many requests does not keep
		// room for them while idle.
		f.buf, f.head = nil, 0
	}
	return v, true
}

// pending is how many requests wait in the connections' queues.
func (p *pool) pending() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.queued
}
