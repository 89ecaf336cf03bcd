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
// calls that keep their P until the runtime takes it back. With a P per
// CPU, the goroutines such a call makes runnable (the writers a sync just
// completed, their clients) wait for a P while a CPU idles; one spare P
// lets them run at once. BenchmarkCommitLogModes measures the difference
// (docs/commitlog.md).
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
