package prepared

import (
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/cqld/cqld/commitlog"
	"github.com/cqld/cqld/metrics"
	"github.com/cqld/cqld/storage"
	"github.com/cqld/cqld/systables"
)

// An EXECUTE that finds its statement stale removes it on the event loop
// it runs on: Remove must not wait for the commit log's sync, and the
// removal is stored once the sync returns.
func TestRemoveDoesNotWaitForTheSync(t *testing.T) {
	fs := &gatedFS{FS: vfs.NewMem()}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	e, err := storage.OpenEngine(storage.EngineOptions{
		FS: fs, Dir: "data", CacheSize: 1 << 20, MemTableSize: 1 << 20,
		Log:    commitlog.Options{Dir: "commitlog", Sync: "batch", SegmentSize: 1 << 20},
		Logger: log,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close() })
	tbl := systables.Lookup("system", "prepared_statements")
	store := OpenStore(e, tbl.Storage, log, nil)
	cache := func() *Cache {
		return NewCache(Options{MaxBytes: 1 << 20, Metrics: metrics.NewPrepared(prometheus.NewRegistry()), Store: store})
	}
	stored := func() int {
		pc := cache()
		if err := pc.Load(func(id [16]byte, keyspace, query string) (*Statement, error) {
			return &Statement{ID: id, Keyspace: keyspace, Query: query, Plan: sized(10)}, nil
		}); err != nil {
			t.Fatal(err)
		}
		return pc.Len()
	}

	pc := cache()
	const ks, q = "ks", "SELECT * FROM t"
	ps := &Statement{ID: ID(ks, q), Keyspace: ks, Query: q, Plan: sized(10)}
	var w Writes
	if err := pc.Put(ps, true, &w); err != nil {
		t.Fatal(err)
	}
	pc.Persist(&w)
	if n := stored(); n != 1 {
		t.Fatalf("%d statements stored after the PREPARE", n)
	}

	fs.hold()
	removed := make(chan struct{})
	go func() {
		pc.Remove(ps)
		close(removed)
	}()
	select {
	case <-removed:
	case <-time.After(10 * time.Second):
		fs.release()
		t.Fatal("Remove waited for the commit log's sync")
	}
	if pc.Get(ps.ID) != nil {
		t.Fatal("the statement is still cached")
	}
	fs.release()
	for deadline := time.Now().Add(10 * time.Second); stored() != 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the removal was never stored")
		}
	}
}

// gatedFS holds the commit log segments' syncs while hold is in force.
type gatedFS struct {
	vfs.FS
	mu   sync.Mutex
	gate chan struct{} // closed, or nil, when syncs pass
}

func (g *gatedFS) hold() {
	g.mu.Lock()
	g.gate = make(chan struct{})
	g.mu.Unlock()
}

func (g *gatedFS) release() {
	g.mu.Lock()
	if g.gate != nil {
		close(g.gate)
		g.gate = nil
	}
	g.mu.Unlock()
}

func (g *gatedFS) wait() {
	g.mu.Lock()
	gate := g.gate
	g.mu.Unlock()
	if gate != nil {
		<-gate
	}
}

func (g *gatedFS) OpenReadWrite(name string, category vfs.DiskWriteCategory, opts ...vfs.OpenOption) (vfs.File, error) {
	f, err := g.FS.OpenReadWrite(name, category, opts...)
	if err != nil || !strings.HasPrefix(g.PathBase(name), "CommitLog-") {
		return f, err
	}
	return &gatedFile{File: f, fs: g}, nil
}

type gatedFile struct {
	vfs.File
	fs *gatedFS
}

func (f *gatedFile) SyncData() error {
	f.fs.wait()
	return f.File.SyncData()
}
