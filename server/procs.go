package server

import (
	"log/slog"
	"os"
	"runtime"
	"sync"
)

var spareOnce sync.Once

// spareProc gives the Go runtime one processor (P) more than it would take
// by default, once per process, unless the GOMAXPROCS environment variable
// sets the count. The commit log's flusher spends most of its time in
// fdatasync and the network event loops in epoll_wait: blocking system
// calls that keep their P until the runtime takes it back, tens to
// hundreds of microseconds later. With a P per CPU, runnable goroutines
// (the writers a sync just completed, their clients) wait meanwhile while a
// CPU idles: a runtime trace of 64 writers in adaptive mode on 2 CPUs found
// a P held by fdatasync with work waiting 24% of the time, by epoll_wait
// 21%. With one spare P, the same benchmark (BenchmarkCommitLogModes, 64
// threads, two 2 s runs each) did 53-55k durable writes/s against 40-46k,
// and 79-84k periodic-mode writes/s against 68-74k.
func spareProc(log *slog.Logger) {
	spareOnce.Do(func() {
		if os.Getenv("GOMAXPROCS") != "" {
			return
		}
		n := runtime.GOMAXPROCS(0) + 1
		runtime.GOMAXPROCS(n)
		log.Info("GOMAXPROCS is one more than the CPUs: the commit log and the event loops block in system calls", "gomaxprocs", n)
	})
}
