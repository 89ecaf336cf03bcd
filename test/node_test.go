package test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cqld/cqld/config"
	"github.com/cqld/cqld/server"
)

// freePort returns a port free on 127.0.0.1 for a server to listen on. It
// is drawn below Linux's ephemeral range (32768-60999): a port the kernel
// hands out for bind(0) or for a client's outgoing connection could be
// taken again, by a driver reconnecting say, in the moment between this
// check and the server's bind, or while a killed node restarts on it.
//
// A port is free when picked but not yet bound, so two tests could be
// given the same one: in this process portsGiven prevents it, and across
// the test processes of every checkout on the machine (several run at
// once on a shared machine) a lock on the port's file in portLocksDir,
// held until this process exits, whoever exits first.
var (
	portsMu    sync.Mutex
	portsGiven = map[int]bool{}
	// portLocks are the open, locked files of the ports given: never
	// closed, so the locks last as long as the process.
	portLocks []*os.File
)

// portLocksDir holds one lock file per port a test process reserved.
var portLocksDir = filepath.Join(os.TempDir(), "cqld-test-ports")

func freePort(t testing.TB) int {
	t.Helper()
	portsMu.Lock()
	defer portsMu.Unlock()
	for i := 0; i < 200; i++ {
		port := 20000 + rand.IntN(12000)
		if portsGiven[port] || !reservePort(port) {
			continue
		}
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err != nil {
			continue
		}
		l.Close()
		portsGiven[port] = true
		return port
	}
	t.Fatal("no free port in 20000-31999")
	return 0
}

// reservePort takes port's lock for the rest of this process, or reports
// that another test process holds it. Without a lock directory (an
// unwritable temporary directory) every port counts as reserved here and
// only the listen check guards it.
func reservePort(port int) bool {
	if err := os.MkdirAll(portLocksDir, 0o777); err != nil {
		return true
	}
	f, err := os.OpenFile(filepath.Join(portLocksDir, strconv.Itoa(port)), os.O_RDWR|os.O_CREATE, 0o666)
	if err != nil {
		return true
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return false
	}
	portLocks = append(portLocks, f)
	return true
}

// testConfig is a node's configuration with its data under dir.
func testConfig(t testing.TB, dir string) config.Config {
	cfg := config.Default()
	cfg.NativeTransportPort = freePort(t)
	cfg.PrometheusPort = freePort(t)
	// A node of its own: its own internode port, itself its one seed.
	cfg.StoragePort = freePort(t)
	cfg.SeedProvider.Parameters = map[string]string{"seeds": fmt.Sprintf("127.0.0.1:%d", cfg.StoragePort)}
	cfg.DataFileDirectories = []string{dir + "/data"}
	cfg.CommitlogDirectory = dir + "/commitlog"
	cfg.SavedCachesDirectory = dir + "/saved_caches"
	cfg.HintsDirectory = dir + "/hints"
	return cfg
}

// startNode starts a node and stops it when the test ends.
func startNode(t testing.TB, cfg config.Config) *server.Node {
	t.Helper()
	return startNodeWith(t, cfg, server.Options{})
}

// startNodeWith is startNode with server options (a fake clock, an FS).
func startNodeWith(t testing.TB, cfg config.Config, o server.Options) *server.Node {
	t.Helper()
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	if testing.Verbose() {
		log = slog.Default()
	}
	n, err := server.StartWith(cfg, log, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := stopNode(n); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	})
	return n
}

// stopNode stops n as SIGTERM does, giving requests in flight 10 s.
func stopNode(n *server.Node) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return n.Shutdown(ctx)
}

// newNode starts a node with a fresh data directory.
func newNode(t testing.TB) (*server.Node, config.Config) {
	cfg := testConfig(t, t.TempDir())
	return startNode(t, cfg), cfg
}

// newClockedNode is newNode on a fake clock the test advances, for TTLs
// that run out without sleeping.
func newClockedNode(t testing.TB) (*server.Node, *fakeClock) {
	clock := newFakeClock()
	return startNodeWith(t, testConfig(t, t.TempDir()), server.Options{Now: clock.Now}), clock
}

func hostPort(addr string) (string, int) {
	h, p, _ := net.SplitHostPort(addr)
	n, _ := strconv.Atoi(p)
	return h, n
}

// startStoppable starts a node the test stops itself (to restart it on the
// same data).
func startStoppable(t testing.TB, cfg config.Config) (*server.Node, error) {
	t.Helper()
	return startStoppableWith(t, cfg, server.Options{})
}

// startStoppableWith is startStoppable with server options.
func startStoppableWith(t testing.TB, cfg config.Config, o server.Options) (*server.Node, error) {
	t.Helper()
	return server.StartWith(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), o)
}

func sleep(ms int) { time.Sleep(time.Duration(ms) * time.Millisecond) }

// A second Shutdown, as a signal handler and a deferred stop may both
// call it, returns the first one's result instead of closing the engine
// again.
func TestShutdownTwice(t *testing.T) {
	cfg := testConfig(t, t.TempDir())
	n, err := startStoppable(t, cfg)
	if err != nil {
		t.Fatal(err)
	}
	first := stopNode(n)
	if err := stopNode(n); err != first {
		t.Fatalf("second Shutdown: %v, first: %v", err, first)
	}
}

// A port freePort gave stays locked for this process, and a port whose
// lock another test process holds is not given.
func TestFreePortReserved(t *testing.T) {
	port := freePort(t)
	f, err := os.Open(filepath.Join(portLocksDir, strconv.Itoa(port)))
	if err != nil {
		t.Fatalf("port %d has no lock file: %v", port, err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err == nil {
		t.Fatalf("port %d given but not locked", port)
	}

	var other int
	for p := 20000; p < 32000 && other == 0; p++ {
		portsMu.Lock()
		given := portsGiven[p]
		portsMu.Unlock()
		if given {
			continue
		}
		g, err := os.OpenFile(filepath.Join(portLocksDir, strconv.Itoa(p)), os.O_RDWR|os.O_CREATE, 0o666)
		if err != nil {
			t.Fatal(err)
		}
		defer g.Close()
		if syscall.Flock(int(g.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil {
			other = p
		}
	}
	if reservePort(other) {
		t.Fatalf("port %d reserved while another holder has its lock", other)
	}
}
