package storage

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/cqld/cqld/commitlog"
)

// TestFlushesReleaseSegments writes 24 segments' worth through an engine
// whose memtables hold two: as pebble flushes them on its own, the commit
// log segments they covered go, so the log stays near what the memtables
// hold instead of growing to commitlog_total_space. A power cut then keeps
// every acknowledged write: what the freed segments held is in synced
// tables.
func TestFlushesReleaseSegments(t *testing.T) {
	fs := vfs.NewCrashableMem()
	open := func(fs vfs.FS) *Engine {
		return openEngineWith(t, EngineOptions{FS: fs, Dir: "data", MemTableSize: 2 << 20,
			Log: commitlog.Options{Dir: "commitlog", Sync: commitlog.SyncBatch, SegmentSize: 1 << 20}})
	}
	e := open(fs)
	tbl := testTable(t, false)
	// 24 MiB in rows of 4 KiB: the race detector makes each write, not
	// each byte, cost.
	value := strings.Repeat("v", 4000)
	const writers, perWriter = 4, 1500
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range perWriter {
				m := e.NewMutation()
				m.WriteCell(tbl, i32(w), CellTarget{Clustering: [][]byte{i32(i)}, Column: "v"}, live(1, value))
				if err := e.Apply(m); err != nil {
					t.Errorf("write %d/%d: %v", w, i, err)
					return
				}
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	// Pebble flushes in the background: give the last full memtables
	// their flush.
	const bound = 6
	var segs int
	for range 1000 {
		if segs, _ = commitLogFiles(t, fs); segs <= bound {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Logf("%d live segments", segs)
	if segs > bound {
		t.Fatalf("%d live segments after 24 MiB of writes into 2 MiB memtables, want at most %d", segs, bound)
	}

	crashed := fs.CrashClone(vfs.CrashCloneCfg{})
	_ = e.Close()
	e = open(crashed)
	defer e.Close()
	for w := range writers {
		if got := len(readAll(t, e, tbl, w, ReadOptions{})); got != perWriter {
			t.Fatalf("writer %d: %d rows after a power cut, %d acknowledged", w, got, perWriter)
		}
	}
}
