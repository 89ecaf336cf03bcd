package proxy

import "sync"

// maxWorkers bounds the goroutines kept to run background tasks; tasks
// beyond them run on goroutines of their own.
const maxWorkers = 512

// workers run the proxy's background tasks (a replica's read or write, a
// hint) on goroutines kept between tasks, as messaging's handler workers
// are: a task then neither starts a goroutine nor grows a fresh stack,
// which a read or write through the storage engine otherwise does each
// time. Safe for concurrent use.
type workers struct {
	// work hands a task to an idle worker.
	work chan func()

	mu    sync.Mutex
	count int
	// quit ends the workers started since the last stop.
	quit chan struct{}
	wg   sync.WaitGroup
}

func newWorkers() *workers {
	return &workers{work: make(chan func()), quit: make(chan struct{})}
}

// run runs task on an idle worker, a new one, or past maxWorkers a
// goroutine of its own.
func (w *workers) run(task func()) {
	select {
	case w.work <- task:
		return
	default:
	}
	w.mu.Lock()
	if w.count < maxWorkers {
		w.count++
		w.wg.Add(1)
		quit := w.quit
		w.mu.Unlock()
		go w.worker(task, quit)
		return
	}
	w.mu.Unlock()
	go task()
}

func (w *workers) worker(task func(), quit <-chan struct{}) {
	defer w.wg.Done()
	for {
		task()
		select {
		case task = <-w.work:
		case <-quit:
			w.mu.Lock()
			w.count--
			w.mu.Unlock()
			return
		}
	}
}

// stop ends the idle workers and waits for them. REQUIRES: no task
// running or being handed over; run may be called again once stop
// returns.
func (w *workers) stop() {
	w.mu.Lock()
	close(w.quit)
	w.quit = make(chan struct{})
	w.mu.Unlock()
	w.wg.Wait()
}
