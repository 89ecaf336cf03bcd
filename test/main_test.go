package test

import (
	"os"
	"runtime"
	"testing"
)

// TestMain gives the test process one Go processor more than the CPUs,
// unless GOMAXPROCS is set, and removes, once every test has ended, the
// cqld binary the subprocess tests built (36 MB a test process otherwise
// leaves in the temporary directory).
//
// The nodes most tests start run in this process, and so do their clients
// (the drivers, the raw connections): they share its processors, where a
// node serving clients from other processes has its CPUs to itself and
// runs at Go's default (docs/commitlog.md, "Go processors"). With only
// the CPUs' count, eight workers busy with one greedy connection's reads
// kept the good client's goroutines from a processor for hundreds of
// answers (TestFairSchedulingGreedyConnection), a wait that is the test
// process's, not the node's.
func TestMain(m *testing.M) {
	if os.Getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(runtime.NumCPU() + 1)
	}
	code := m.Run()
	removeBinary()
	os.Exit(code)
}
