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

// faultyDisk is the node's file system with ENOSPC injected, while full is
// set, into the writes of the files whose names match.
type faultyDisk struct {
	vfs.FS
	full atomic.Bool
}

func newFaultyDisk(match func(path string) bool, kinds ...errorfs.OpKind) *faultyDisk {
	d := &faultyDisk{}
	d.FS = errorfs.Wrap(vfs.Default, errorfs.InjectorFunc(func(op errorfs.Op) error {
		if !d.full.Load() || !match(op.Path) {
			return nil
		}
		for _, k := range kinds {
			if op.Kind == k {
				return &os.PathError{Op: "write", Path: op.Path, Err: syscall.ENOSPC}
			}
		}
		return nil
	}))
	return d
}

func isSSTable(path string) bool { return strings.HasSuffix(path, ".sst") }

func isSegment(path string) bool { return strings.Contains(path, "CommitLog-") }

// startNodeOn starts a node on fs that the test's cleanup shuts down.
func startNodeOn(t *testing.T, cfg config.Config, fs vfs.FS) *server.Node {
	t.Helper()
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	lg := slog.New(slog.NewTextHandler(io.Discard, nil))
	if testing.Verbose() {
		lg = slog.Default()
	}
	n, err := server.StartWith(cfg, lg, server.Options{FS: fs})
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
// once the flush fails, writes are answered WRITE_FAILURE (reads go on),
// and once the disk has room again they succeed by themselves. Every
// acknowledged row is there, and no refused one.
func TestDataDiskFullAnswersWriteFailure(t *testing.T) {
	disk := newFaultyDisk(isSSTable, errorfs.OpFileWrite, errorfs.OpFileWriteAt)
	cfg := testConfig(t, t.TempDir())
	cfg.CommitlogSegmentSize = config.MiB
	cfg.CommitlogTotalSpace = 2 * config.MiB
	node := startNodeOn(t, cfg, disk)
	s := diskSession(t, node.Addr())
	value := strings.Repeat("v", 1000)
	acked := 0
	insert := func(k int) error {
		err := s.Query(`INSERT INTO diskfull.kv (k, v) VALUES (?, ?)`, k, value).Exec()
		if err == nil {
			acked++
		}
		return err
	}
	for k := range 100 {
		if err := insert(k); err != nil {
			t.Fatal(err)
		}
	}

	disk.full.Store(true)
	k := 100
	var refused error
	for ; k < 20000 && refused == nil; k++ {
		if err := insert(k); err != nil {
			refused = err
		}
	}
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

	disk.full.Store(false)
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
			// close under this one: it is answered as the node stops
			// (OVERLOADED "Server is shutting down") or its connection
			// closes.
			var frame gocql.RequestError
			stopping := err != nil && (!errors.As(err, &frame) ||
				frame.Code() == gocql.ErrCodeOverloaded && strings.Contains(frame.Message(), "shutting down"))
			if !isWriteFailure(err) && (policy != "stop" || !stopping) {
				t.Fatalf("a write whose fsync failed: %v (%T), want WRITE_FAILURE", err, err)
			}
			disk.full.Store(false)

			switch policy {
			case "stop":
				deadline := time.Now().Add(20 * time.Second)
				for {
					c, err := net.Dial("tcp", node.Addr())
					if err != nil {
						break
					}
					c.Close()
					if time.Now().After(deadline) {
						t.Fatal("the native transport still accepts connections after the commit log stopped")
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
