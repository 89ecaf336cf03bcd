package test

import (
	"errors"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"
	"github.com/gocql/gocql"

	"github.com/cqld/cqld/cluster"
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
			if err := s.Query(`CREATE TABLE diskfull.broken (k int PRIMARY KEY)`).Exec(); err == nil {
				t.Fatal("CREATE TABLE on a disk that cannot write the catalog succeeded")
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
						if !errors.Is(*err, cluster.ErrStopped) || !errors.Is(*err, storage.ErrCatalogWrite) {
							t.Fatalf("died of %v, want ErrStopped wrapping ErrCatalogWrite", *err)
						}
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
			defer func() { _ = stopNode(again) }()
			s = diskSession(t, again.Addr())
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
