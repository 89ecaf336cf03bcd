package test

import (
	"errors"
	"io"
	"log/slog"
	"net"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"
	"github.com/gocql/gocql"

	"github.com/cqld/cqld/cluster"
	"github.com/cqld/cqld/metalog"
	"github.com/cqld/cqld/server"
	"github.com/cqld/cqld/storage"
)

// TestSchemaApplyFailureStopsTheNode breaks the catalog's file while a
// node applies a schema change from its metadata log: the change is not
// skipped. The node stops (disk_failure_policy: stop closes its client
// transports, the process staying up; die ends the process), and once
// restarted on a disk that works it applies the change from its log: the
// table is there.
func TestSchemaApplyFailureStopsTheNode(t *testing.T) {
	for _, policy := range []string{"stop", "die"} {
		t.Run(policy, func(t *testing.T) {
			disk := newFaultyDisk(func(p string) bool { return strings.HasSuffix(p, "schema.json.tmp") }, errorfs.OpCreate)
			s := failStopOnSchemaChange(t, policy, disk, `CREATE TABLE diskfull.broken (k int PRIMARY KEY)`, func(err error) {
				if !errors.Is(err, cluster.ErrStopped) || !errors.Is(err, storage.ErrCatalogWrite) {
					t.Fatalf("died of %v, want ErrStopped wrapping ErrCatalogWrite", err)
				}
			})
			// The node serves once it is up; it applies what its log holds
			// beyond its catalog once it leads (or hears from a leader).
			eventually(t, 30*time.Second, "the table whose CREATE failed to apply, after a restart", func() error {
				return s.Query(`INSERT INTO diskfull.broken (k) VALUES (1)`).Exec()
			})
			var n int
			if err := s.Query(`SELECT count(*) FROM diskfull.broken`).Consistency(gocql.One).Scan(&n); err != nil || n != 1 {
				t.Fatalf("count: %d, %v", n, err)
			}
		})
	}
}

// TestMetalogFullDiskStopsTheNode fills the disk under the metadata log's
// own store (its pebble, WAL on) while a schema change is being logged:
// the change fails, the process does not panic (pebble would end it), and
// the node stops under disk_failure_policy as for the data engine. Once
// restarted on a disk with room, it serves, with the schema logged before.
func TestMetalogFullDiskStopsTheNode(t *testing.T) {
	for _, policy := range []string{"stop", "die"} {
		t.Run(policy, func(t *testing.T) {
			disk := newFaultyDisk(func(p string) bool { return strings.Contains(p, filepath.Join("log", "raft")) },
				errorfs.OpCreate, errorfs.OpFileWrite, errorfs.OpFileSync)
			s := failStopOnSchemaChange(t, policy, disk, `CREATE TABLE diskfull.nospace (k int PRIMARY KEY)`, func(err error) {
				if !errors.Is(err, metalog.ErrStoreFailed) || !strings.Contains(err.Error(), "no space left") {
					t.Fatalf("died of %v, want metalog.ErrStoreFailed about the full disk", err)
				}
			})
			eventually(t, 30*time.Second, "a schema change after the restart", func() error {
				return s.Query(`CREATE TABLE IF NOT EXISTS diskfull.after (k int PRIMARY KEY)`).Exec()
			})
			mustExec(t, s, `INSERT INTO diskfull.kv (k, v) VALUES (1, 'after')`)
		})
	}
}

// failStopOnSchemaChange starts a node under disk_failure_policy policy
// on disk, breaks the disk, expects change to fail and the node to stop
// (stop: its transports close; die: it dies of an error dying checks),
// then restarts it on a disk that works and returns a session to it.
func failStopOnSchemaChange(t *testing.T, policy string, disk *faultyDisk, change string, dying func(error)) *gocql.Session {
	t.Helper()
	cfg := testConfig(t, t.TempDir())
	cfg.DiskFailurePolicy = policy
	var died atomic.Pointer[error]
	lg := slog.New(slog.NewTextHandler(io.Discard, nil))
	if testing.Verbose() {
		lg = slog.Default()
	}
	node, err := server.StartWith(cfg, lg, server.Options{FS: disk, Die: func(err error) { died.Store(&err) }})
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	defer func() {
		if !stopped {
			_ = stopNode(node)
		}
	}()
	s := diskSession(t, node.Addr())

	disk.full.Store(true)
	if err := s.Query(change).Exec(); err == nil {
		t.Fatalf("%s succeeded on a disk that cannot write", change)
	}
	disk.full.Store(false)
	switch policy {
	case "stop":
		eventually(t, 30*time.Second, "the native transport closing", func() error {
			c, err := net.Dial("tcp", node.Addr())
			if err != nil {
				return nil
			}
			c.Close()
			return errors.New("still accepts connections")
		})
		if !node.TransportsStopped() {
			t.Error("TransportsStopped() = false")
		}
	case "die":
		eventually(t, 30*time.Second, "the node dying", func() error {
			if err := died.Load(); err != nil {
				dying(*err)
				return nil
			}
			return errors.New("alive")
		})
	}
	stopped = true
	if err := stopNode(node); err != nil {
		t.Logf("shutdown: %v", err)
	}

	again, err := startStoppableWith(t, cfg, server.Options{FS: vfs.Default})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stopNode(again) })
	return diskSession(t, again.Addr())
}
