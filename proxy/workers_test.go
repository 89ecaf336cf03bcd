package proxy

import (
	"runtime"
	"sync"
	"testing"
	"time"
)

// Tasks run on kept workers, more than maxWorkers at once on goroutines
// of their own; stop ends every worker, and run works again after it.
func TestWorkers(t *testing.T) {
	before := runtime.NumGoroutine()
	w := newWorkers()
	for round := range 2 {
		var wg sync.WaitGroup
		release := make(chan struct{})
		n := maxWorkers + 10
		wg.Add(n)
		for range n {
			w.run(func() {
				defer wg.Done()
				<-release
			})
		}
		close(release)
		wg.Wait()
		// Sequential tasks reuse an idle worker rather than start one.
		for range 100 {
			done := make(chan struct{})
			w.run(func() { close(done) })
			<-done
		}
		if w.count > maxWorkers {
			t.Fatalf("round %d: %d workers kept", round, w.count)
		}
		w.stop()
		if w.count != 0 {
			t.Fatalf("round %d: %d workers after stop", round, w.count)
		}
	}
	for deadline := time.Now().Add(5 * time.Second); runtime.NumGoroutine() > before; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines left, %d before", runtime.NumGoroutine(), before)
		}
	}
}
