package test

import (
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestCorruptCommitLogStopsStartup writes rows through a cqld process in
// batch mode, kills it, and damages a record in the middle of the commit
// log segment that holds them: the next start-up refuses, naming the file
// and the offset; with commitlog_ignore_replay_errors it starts and every
// other row reads back.
func TestCorruptCommitLogStopsStartup(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	dir := t.TempDir()
	p := startProc(t, dir, "-commitlog_sync", "batch")
	s := tableSession(t, p.addr, "corrupt")
	mustExec(t, s, `CREATE TABLE t (k int PRIMARY KEY, v text)`)
	const rows = 40
	for i := range rows {
		if err := s.Query(`INSERT INTO t (k, v) VALUES (?, ?)`, i, fmt.Sprint("value-", i)).Exec(); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	p.cmd.Process.Kill()
	p.wait(t)

	// Each batch-mode record was synced before the next was written, so the
	// later records claim the damaged one durable: that is corruption, not
	// a torn tail.
	path, off := dataRecord(t, filepath.Join(dir, "commitlog"), rows/2)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b[off+24] ^= 0xff // the first payload byte
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, cqldBinary(t),
		"-native_transport_port", fmt.Sprint(freePort(t)),
		"-prometheus_port", fmt.Sprint(freePort(t)),
		"-data_file_directories", dir+"/data",
		"-commitlog_directory", dir+"/commitlog")
	out, err := cmd.CombinedOutput()
	if err == nil || ctx.Err() != nil {
		t.Fatalf("cqld started on a corrupt commit log (%v)\n%s", err, out)
	}
	for _, want := range []string{filepath.Base(path), fmt.Sprintf("offset %d", off), "commitlog_ignore_replay_errors"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("start-up error does not name %q:\n%s", want, out)
		}
	}

	p2 := startProc(t, dir, "-commitlog_ignore_replay_errors=true")
	s2 := tableSession(t, p2.addr, "corrupt")
	var n int64
	if err := s2.Query(`SELECT count(*) FROM t`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != rows-1 {
		t.Fatalf("%d rows after skipping one corrupt record, want %d", n, rows-1)
	}
}

// dataRecord finds the segment in dir whose records start at its header and
// returns it with the offset of its nth record (from 0), reading the frozen
// format of commitlog/doc.go: a 24-byte segment header, then records of a
// 24-byte header (length at bytes 4..8, kind at byte 12) and a payload,
// padded to a multiple of 8.
func dataRecord(t *testing.T, dir string, nth int) (string, int64) {
	t.Helper()
	segs, err := filepath.Glob(filepath.Join(dir, "CommitLog-*.log"))
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range segs {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		off := int64(24)
		for i := 0; off+24 <= int64(len(b)) && b[off+12] == 1; i++ {
			if i == nth {
				return path, off
			}
			n := int64(binary.LittleEndian.Uint32(b[off+4 : off+8]))
			off += (24 + n + 7) &^ 7
		}
	}
	t.Fatalf("no segment in %s holds %d records", dir, nth+1)
	return "", 0
}
