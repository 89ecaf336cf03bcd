package frontend

import (
	"bufio"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"
	"golang.org/x/sys/unix"
)

func TestConnectionCaps(t *testing.T) {
	s := startServer(t, newFakeHandler(), func(o *Options) { o.MaxConnections = 3; o.MaxConnectionsPerIP = 2 })
	ready := func(local string) *client {
		c := dialFrom(t, local, s.Addr())
		c.startup(primitive.ProtocolVersion4, nil)
		return c
	}
	a1 := ready("127.0.0.1")
	ready("127.0.0.1")
	dialFrom(t, "127.0.0.1", s.Addr()).expectClosed() // a third from one address
	ready("127.0.0.2")
	dialFrom(t, "127.0.0.3", s.Addr()).expectClosed() // a fourth in all
	if got := counter(t, s.m.Refused, refusedPerIP); got != 1 {
		t.Errorf("refused{reason=%s} = %v, want 1", refusedPerIP, got)
	}
	if got := counter(t, s.m.Refused, refusedMax); got != 1 {
		t.Errorf("refused{reason=%s} = %v, want 1", refusedMax, got)
	}

	// A closed connection frees its slot.
	a1.nc.Close()
	eventually(t, "down to two connections", func() bool { n, _ := s.Stats(); return n == 2 })
	c := ready("127.0.0.1")
	c.query(1, "void")
	expect[*message.VoidResult](c, 1)
}

// emfileChildEnv makes the test binary, run again by
// TestAcceptSurvivesEMFILE, serve with a low descriptor limit.
const emfileChildEnv = "CQLD_FRONTEND_EMFILE_CHILD"

// spareDescriptors is how many descriptors the child may open past those
// it has once serving.
const spareDescriptors = 12

// TestAcceptSurvivesEMFILE runs a server with a low RLIMIT_NOFILE in a
// child process, opens more connections than it has descriptors for, and
// checks that once some close, the server accepts the ones that waited and
// new ones: running out of descriptors must not end the transport.
func TestAcceptSurvivesEMFILE(t *testing.T) {
	if os.Getenv(emfileChildEnv) != "" {
		emfileChild()
		return
	}
	if testing.Short() {
		t.Skip("starts a child process")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestAcceptSurvivesEMFILE$", "-test.v=false")
	cmd.Env = append(os.Environ(), emfileChildEnv+"=1")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close() // the child exits when its stdin closes
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	addrs := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if a, ok := strings.CutPrefix(sc.Text(), "ADDR "); ok {
				addrs <- a
			}
		}
		io.Copy(io.Discard, stdout)
	}()
	var addr string
	select {
	case addr = <-addrs:
	case <-time.After(30 * time.Second):
		t.Fatal("child did not start serving")
	}

	// More connections than the child has descriptors for. Each asks
	// OPTIONS; those beyond the limit wait in the kernel's accept queue.
	const n = 3 * spareDescriptors
	conns := make([]*client, n)
	for i := range conns {
		conns[i] = dialClient(t, addr)
		conns[i].send(1, &message.Options{})
	}
	var answered, waiting []*client
	deadline := time.Now().Add(2 * time.Second)
	for _, c := range conns {
		c.deadline = deadline
		if _, _, err := c.recv(); err == nil {
			answered = append(answered, c)
		} else {
			waiting = append(waiting, c)
		}
		c.deadline = time.Time{}
	}
	if len(waiting) == 0 {
		t.Fatalf("all %d connections answered: the descriptor limit did not bite", n)
	}
	t.Logf("%d connections answered, %d waiting", len(answered), len(waiting))

	// Free descriptors: the waiting connections are accepted and answered.
	for _, c := range answered {
		c.nc.Close()
	}
	for i, c := range waiting {
		if _, msg, err := c.recv(); err != nil {
			t.Fatalf("waiting connection %d after descriptors were freed: %v", i, err)
		} else if _, ok := msg.(*message.Supported); !ok {
			t.Fatalf("waiting connection %d: got %v", i, msg)
		}
		c.nc.Close()
	}
	c := dialClient(t, addr)
	c.startup(primitive.ProtocolVersion4, nil)
	c.query(1, "void")
	expect[*message.VoidResult](c, 1)
}

// emfileChild serves until its stdin closes, with spareDescriptors
// descriptors to spare.
func emfileChild() {
	fail := func(err error) {
		fmt.Fprintln(os.Stderr, "emfile child:", err)
		os.Exit(2)
	}
	s := New(newFakeHandler(), Options{Addr: "127.0.0.1:0", Workers: 2, EventLoops: 1,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err := s.Start(); err != nil {
		fail(err)
	}
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		fail(err)
	}
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
		fail(err)
	}
	lim.Cur = uint64(len(fds) + spareDescriptors)
	if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
		fail(err)
	}
	fmt.Printf("ADDR %s\n", s.Addr())
	io.Copy(io.Discard, os.Stdin)
	os.Exit(0)
}

// The accept loop's backoff doubles from 5ms to at most a second.
func TestAcceptBackoff(t *testing.T) {
	var d time.Duration
	var got []time.Duration
	for range 10 {
		d = nextBackoff(d)
		got = append(got, d)
	}
	if got[0] != minAcceptBackoff || got[1] != 2*minAcceptBackoff || got[9] != maxAcceptBackoff {
		t.Fatalf("backoff %v", got)
	}
}
