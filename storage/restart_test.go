package storage

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/cqld/cqld/commitlog"
)

// commitLogFiles counts the segment files and the recycled files in the
// commit log directory of openTestEngine.
func commitLogFiles(t testing.TB, fs vfs.FS) (segments, recycled int) {
	t.Helper()
	names, err := fs.List("commitlog")
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		switch {
		case strings.HasSuffix(n, ".log"):
			segments++
		case strings.HasSuffix(n, ".recycle"):
			recycled++
		}
	}
	return segments, recycled
}

// TestRestartsReleaseSegments restarts an engine many times, after a kill
// (every written byte survives, as the page cache does for kill -9), after
// a power cut (only synced bytes survive) or after a clean Close, with
// and without writes in between: once the engine is open again, the
// segments it replayed are gone, so the commit log never grows with the
// number of restarts, and every acknowledged write reads back.
func TestRestartsReleaseSegments(t *testing.T) {
	tbl := testTable(t, false)
	rng := rand.New(rand.NewPCG(1, 2))
	fs := vfs.NewCrashableMem()
	written := 0
	for round := range 16 {
		e := openTestEngine(t, fs, commitlog.SyncBatch)
		if segs, rec := commitLogFiles(t, fs); segs > 2 || rec > 2 {
			t.Fatalf("round %d: %d segments and %d recycled files after opening, want at most 2 of each", round, segs, rec)
		}
		if got := len(readAll(t, e, tbl, 1, ReadOptions{})); got != written {
			t.Fatalf("round %d: %d rows read back, %d were acknowledged", round, got, written)
		}
		// Every third round writes nothing; the others 0.3 to 3 segments'
		// worth (1 MiB segments), in rows of 4 KiB: the race detector
		// makes each write, not each byte, cost.
		if round%3 != 2 {
			for range 75 + rng.IntN(675) {
				m := e.NewMutation()
				if err := m.WriteCell(tbl, i32(1), CellTarget{Clustering: [][]byte{i32(written)}, Column: "v"},
					live(1, strings.Repeat("v", 4000))); err != nil {
					t.Fatal(err)
				}
				if err := e.Apply(m); err != nil {
					t.Fatal(err)
				}
				written++
			}
		}
		switch round % 4 {
		case 0, 1:
			pct := 100 * (1 - round%4) // a kill, then a power cut
			crashed := fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: pct, RNG: rng})
			_ = e.Close() // on the file system left behind
			fs = crashed
		default:
			if err := e.Close(); err != nil {
				t.Fatal(fmt.Errorf("round %d: Close: %w", round, err))
			}
		}
	}
}
