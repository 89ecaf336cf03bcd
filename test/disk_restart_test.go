package test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// commitLogDirFiles counts the segment files and the recycled files in a
// node's commit log directory.
func commitLogDirFiles(t *testing.T, dir string) (segments, recycled int) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		switch {
		case strings.HasSuffix(e.Name(), ".log"):
			segments++
		case strings.HasSuffix(e.Name(), ".recycle"):
			recycled++
		}
	}
	return segments, recycled
}

// TestCommitLogShrinksAfterRestarts kills a cqld process after writing
// a few segments' worth, restarts it on the same directories, and repeats;
// then stops it cleanly and starts it with no writes. After every start
// the commit log holds at most two segments (the replayed ones are
// released by the flush that follows replay) and every acknowledged row
// reads back.
func TestCommitLogShrinksAfterRestarts(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	dir := t.TempDir()
	clDir := filepath.Join(dir, "commitlog")
	args := []string{"-commitlog_sync", "batch", "-commitlog_segment_size", "1MiB"}
	value := strings.Repeat("v", 1000)
	rows := 0
	check := func(when string, p *proc) {
		t.Helper()
		if segs, rec := commitLogDirFiles(t, clDir); segs > 2 || rec > 2 {
			t.Fatalf("%s: %d segments and %d recycled files, want at most 2 of each\n%s", when, segs, rec, p.stderr)
		}
		s := killCycleSession(t, p.addr, "")
		var n int
		if err := s.Query(`SELECT count(*) FROM shrink.kv`).Scan(&n); err != nil {
			t.Fatalf("%s: count: %v", when, err)
		}
		s.Close()
		if n != rows {
			t.Fatalf("%s: %d rows, %d acknowledged", when, n, rows)
		}
	}

	p := startProc(t, dir, args...)
	s := killCycleSession(t, p.addr, "")
	mustExec(t, s, `CREATE KEYSPACE shrink WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}`)
	mustExec(t, s, `CREATE TABLE shrink.kv (k int PRIMARY KEY, v text)`)
	s.Close()
	const cycles, perCycle, writers = 5, 3000, 8
	for cycle := range cycles {
		s := killCycleSession(t, p.addr, "shrink")
		var wg sync.WaitGroup
		for w := range writers {
			wg.Go(func() {
				for i := w; i < perCycle; i += writers {
					if err := s.Query(`INSERT INTO shrink.kv (k, v) VALUES (?, ?)`, rows+i, value).Exec(); err != nil {
						t.Errorf("cycle %d: insert: %v", cycle, err)
						return
					}
				}
			})
		}
		wg.Wait()
		if t.Failed() {
			t.FailNow()
		}
		s.Close()
		rows += perCycle
		if segs, _ := commitLogDirFiles(t, clDir); segs < 3 {
			t.Fatalf("cycle %d: %d KiB of rows left only %d segments: the test writes too little", cycle, perCycle, segs)
		}
		p.cmd.Process.Kill()
		p.wait(t)
		p = startProc(t, dir, args...)
		check(fmt.Sprintf("start after kill %d", cycle+1), p)
	}
	for round := range 2 {
		p.cmd.Process.Signal(syscall.SIGTERM)
		if code := p.wait(t); code != 0 {
			t.Fatalf("exit code %d\n%s", code, p.stderr)
		}
		p = startProc(t, dir, args...)
		check(fmt.Sprintf("start %d after a clean stop with no writes", round+1), p)
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	p.wait(t)
}
