package test

import (
	"errors"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"
	"github.com/gocql/gocql"

	"github.com/cqld/cqld/config"
	"github.com/cqld/cqld/server"
)

// faultyDisk is the node's file system with ENOSPC (or another errno)
// injected, while full is set, into the operations of the given kinds on
// the files whose names match.
type faultyDisk struct {
	vfs.FS
	full atomic.Bool
}

func newFaultyDisk(match func(path string) bool, kinds ...errorfs.OpKind) *faultyDisk {
	return newFailingDisk(syscall.ENOSPC, match, kinds...)
}

func newFailingDisk(errno syscall.Errno, match func(path string) bool, kinds ...errorfs.OpKind) *faultyDisk {
	d := &faultyDisk{}
	d.FS = errorfs.Wrap(vfs.Default, errorfs.InjectorFunc(func(op errorfs.Op) error {
		if !d.full.Load() || !match(op.Path) {
			return nil
		}
		for _, k := range kinds {
			if op.Kind == k {
				return &os.PathError{Op: "write", Path: op.Path, Err: errno}
			}
		}
		return nil
	}))
	return d
}

func isSSTable(path string) bool { return strings.HasSuffix(path, ".sst") }

func isSegment(path string) bool { return strings.Contains(path, "CommitLog-") }

// isTablesManifest matches the data engine's MANIFEST (not the metadata
// log's).
func isTablesManifest(path string) bool {
	return strings.Contains(path, "/tables/MANIFEST-")
}

// startNodeOn starts a node on fs that the test's cleanup shuts down; an
// error of the shutdown, after the faults the test injected, is logged.
func startNodeOn(t *testing.T, cfg config.Config, fs vfs.FS) *server.Node {
	t.Helper()
	return startFaultyNode(t, cfg, server.Options{FS: fs})
}

func startFaultyNode(t *testing.T, cfg config.Config, o server.Options) *server.Node {
	t.Helper()
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	lg := slog.New(slog.NewTextHandler(io.Discard, nil))
	if testing.Verbose() {
		lg = slog.Default()
	}
	n, err := server.StartWith(cfg, lg, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := stopNode(n); err != nil {
			t.Logf("shutdown: %v", err)
		}
	})
	return n
}

// diskSession is a session that retries nothing, so that each answer the
// test checks is the node's first.
func diskSession(t *testing.T, addr string) *gocql.Session {
	t.Helper()
	c := gocqlCluster(addr)
	c.RetryPolicy = nil
	c.Logger = log.New(io.Discard, "", 0)
	s, err := c.CreateSession()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	mustExec(t, s, `CREATE KEYSPACE IF NOT EXISTS diskfull WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}`)
	mustExec(t, s, `CREATE TABLE IF NOT EXISTS diskfull.kv (k int PRIMARY KEY, v text)`)
	return s
}

func isWriteFailure(err error) bool {
	var wf *gocql.RequestErrWriteFailure
	return errors.As(err, &wf)
}

// countRows counts diskfull.kv's rows.
func countRows(t *testing.T, s *gocql.Session) int {
	t.Helper()
	var n int
	if err := s.Query(`SELECT count(*) FROM diskfull.kv`).Scan(&n); err != nil {
		t.Fatalf("count: %v", err)
	}
	return n
}

// TestDataDiskFullAnswersWriteFailure fills the data disk under a node
// whose commit log space is small, so that its writes soon need a flush:
// under the sstable the flush writes, or under the MANIFEST that records
// it, which pebble cannot fail to write and live. The node stays up; once
// the flush fails or waits, writes are answered WRITE_FAILURE (reads go
// on), and once the disk has room again they succeed by themselves. Every
// acknowledged row is there, and no refused one.
func TestDataDiskFullAnswersWriteFailure(t *testing.T) {
	for _, tc := range []struct {
		name string
		disk *faultyDisk
	}{
		{"sstable", newFaultyDisk(isSSTable, errorfs.OpFileWrite, errorfs.OpFileWriteAt)},
		{"manifest", newFaultyDisk(isTablesManifest, errorfs.OpFileWrite, errorfs.OpCreate)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			node := startNodeOn(t, smallLogConfig(t), tc.disk)
			s := diskSession(t, node.Addr())
			acked := 0
			insert := inserter(s, &acked)
			for k := range 100 {
				if err := insert(k); err != nil {
					t.Fatal(err)
				}
			}

			tc.disk.full.Store(true)
			refused, k := fillUntilRefused(t, insert, 100)
			if !isWriteFailure(refused) {
				t.Fatalf("a write on a full data disk failed with %v (%T), want WRITE_FAILURE; %d written", refused, refused, k-100)
			}
			if err := insert(k); !isWriteFailure(err) {
				t.Fatalf("the next write failed with %v, want WRITE_FAILURE", err)
			}
			k++
			if got := countRows(t, s); got != acked {
				t.Fatalf("read while the disk is full: %d rows, %d acknowledged", got, acked)
			}

			tc.disk.full.Store(false)
			deadline := time.Now().Add(30 * time.Second)
			for {
				err := insert(k)
				k++
				if err == nil {
					break
				}
				if !isWriteFailure(err) || time.Now().After(deadline) {
					t.Fatalf("writes did not resume once the disk had room: %v", err)
				}
				time.Sleep(20 * time.Millisecond)
			}
			if got := countRows(t, s); got != acked {
				t.Fatalf("after the disk had room: %d rows, %d acknowledged", got, acked)
			}
		})
	}
}

// smallLogConfig is a node's configuration with 2 MiB of commit log, so
// that a few thousand 1 KB writes need a flush.
func smallLogConfig(t *testing.T) config.Config {
	cfg := testConfig(t, t.TempDir())
	cfg.CommitlogSegmentSize = config.MiB
	cfg.CommitlogTotalSpace = 2 * config.MiB
	return cfg
}

// inserter writes row k of 1 KB into diskfull.kv, counting the
// acknowledged ones.
func inserter(s *gocql.Session, acked *int) func(k int) error {
	value := strings.Repeat("v", 1000)
	return func(k int) error {
		err := s.Query(`INSERT INTO diskfull.kv (k, v) VALUES (?, ?)`, k, value).Exec()
		if err == nil {
			*acked++
		}
		return err
	}
}

// fillUntilRefused inserts rows from k on until one is refused, and
// returns the refusal and the next k.
func fillUntilRefused(t *testing.T, insert func(k int) error, k int) (error, int) {
	t.Helper()
	for limit := k + 20000; k < limit; k++ {
		if err := insert(k); err != nil {
			return err, k + 1
		}
	}
	t.Fatalf("20000 writes accepted on a failing data disk")
	return nil, k
}

// stoppingError reports whether err is how a write meets a node stopping
// its transports: OVERLOADED "Server is shutting down", or its connection
// closing.
func stoppingError(err error) bool {
	var frame gocql.RequestError
	return err != nil && (!errors.As(err, &frame) ||
		frame.Code() == gocql.ErrCodeOverloaded && strings.Contains(frame.Message(), "shutting down"))
}

// checkStopped waits for node's native port to close after a failure under
// a stop policy, and checks that its metrics endpoint is still up.
func checkStopped(t *testing.T, node *server.Node) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		c, err := net.Dial("tcp", node.Addr())
		if err != nil {
			break
		}
		c.Close()
		if time.Now().After(deadline) {
			t.Fatal("the native transport still accepts connections after the failure")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !node.TransportsStopped() {
		t.Error("TransportsStopped() = false")
	}
	resp, err := http.Get("http://" + node.MetricsAddr() + "/metrics")
	if err != nil {
		t.Fatalf("metrics endpoint after the stop: %v", err)
	}
	resp.Body.Close()
}

// TestCommitFailurePolicies breaks the commit log's fsync under each
// policy that keeps the process: the write whose sync failed is answered
// WRITE_FAILURE; then stop stops the client transports while the process
// and its metrics stay up, stop_commit keeps serving reads and fails every
// write, and ignore carries on in a new segment once the disk works.
func TestCommitFailurePolicies(t *testing.T) {
	for _, policy := range []string{"stop", "stop_commit", "ignore"} {
		t.Run(policy, func(t *testing.T) {
			disk := newFaultyDisk(isSegment, errorfs.OpFileSyncData, errorfs.OpFileWriteAt)
			cfg := testConfig(t, t.TempDir())
			cfg.CommitFailurePolicy = policy
			cfg.CommitlogSync = "batch"
			node := startNodeOn(t, cfg, disk)
			s := diskSession(t, node.Addr())
			mustExec(t, s, `INSERT INTO diskfull.kv (k, v) VALUES (1, 'a')`)

			disk.full.Store(true)
			err := s.Query(`INSERT INTO diskfull.kv (k, v) VALUES (2, 'b')`).Exec()
			// Under stop another write of the node's (a prepared statement
			// saved) may meet the failure first, and then the transports
			// close under this one.
			if !isWriteFailure(err) && (policy != "stop" || !stoppingError(err)) {
				t.Fatalf("a write whose fsync failed: %v (%T), want WRITE_FAILURE", err, err)
			}
			disk.full.Store(false)

			switch policy {
			case "stop":
				checkStopped(t, node)
			case "stop_commit":
				if err := s.Query(`INSERT INTO diskfull.kv (k, v) VALUES (3, 'c')`).Exec(); !isWriteFailure(err) {
					t.Fatalf("a write after the commit log stopped: %v, want WRITE_FAILURE", err)
				}
				if got := countRows(t, s); got != 1 {
					t.Fatalf("read after the commit log stopped: %d rows, want 1", got)
				}
			case "ignore":
				mustExec(t, s, `INSERT INTO diskfull.kv (k, v) VALUES (3, 'c')`)
				if got := countRows(t, s); got != 2 {
					t.Fatalf("%d rows, want the 2 acknowledged", got)
				}
			}
		})
	}
}

// TestDiskFailurePolicies fails the data engine's MANIFEST sync, which no
// retry can mend, under each disk_failure_policy: the node never panics;
// the writes are answered WRITE_FAILURE; then stop stops the client
// transports while the process and its metrics stay up, best_effort keeps
// serving reads, and die calls the node's Die.
func TestDiskFailurePolicies(t *testing.T) {
	for _, policy := range []string{"stop", "best_effort", "die"} {
		t.Run(policy, func(t *testing.T) {
			disk := newFailingDisk(syscall.EIO, isTablesManifest, errorfs.OpFileSync)
			cfg := smallLogConfig(t)
			cfg.DiskFailurePolicy = policy
			died := make(chan error, 1)
			node := startFaultyNode(t, cfg, server.Options{FS: disk, Die: func(err error) { died <- err }})
			s := diskSession(t, node.Addr())
			acked := 0
			insert := inserter(s, &acked)

			disk.full.Store(true)
			refused, k := fillUntilRefused(t, insert, 0)
			if !isWriteFailure(refused) && (policy != "stop" || !stoppingError(refused)) {
				t.Fatalf("a write once the MANIFEST failed: %v (%T), want WRITE_FAILURE", refused, refused)
			}
			disk.full.Store(false) // the LSM stays failed until a restart

			switch policy {
			case "stop":
				checkStopped(t, node)
			case "best_effort":
				if err := insert(k); !isWriteFailure(err) {
					t.Fatalf("a write after the data disk failed: %v, want WRITE_FAILURE", err)
				}
				if got := countRows(t, s); got != acked {
					t.Fatalf("read after the data disk failed: %d rows, %d acknowledged", got, acked)
				}
			case "die":
				select {
				case err := <-died:
					if !strings.Contains(err.Error(), "MANIFEST sync failed") {
						t.Errorf("Die(%v), want the MANIFEST's failure", err)
					}
				case <-time.After(10 * time.Second):
					t.Fatal("disk_failure_policy die did not end the process")
				}
			}
		})
	}
}
